// Reading and writing .dpx plan files: a fixed 32-byte header (magic, format version, payload
// size, CRC-32 of the payload) followed by a FlatBuffer (plan.fbs). Reading verifies everything
// before a byte of the plan is used: header, checksum, FlatBuffer structure, and the plan's own
// consistency (buffer ids, offsets within the arena, kernel arities and dtypes).
#pragma once

#include "runtime/format/Enums.h"
#include "runtime/format/plan_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

inline constexpr char kPlanMagic[8] = {'D', 'P', 'X', 'P', 'L', 'A', 'N', '\0'};
inline constexpr size_t kPlanHeaderBytes = 32;

/// Prefixes a FlatBuffer payload with the plan file header; the result is a complete .dpx image.
std::string wrapPlanPayload(const uint8_t *payload, size_t size);

/// A verified plan held in memory; `plan()` stays valid as long as this object lives.
class PlanFile {
public:
  const fb::Plan &plan() const { return *plan_; }
  /// CRC-32 of the payload, as the header records it.
  uint32_t checksum() const { return checksum_; }
  /// FNV-1a 64 of the whole file: identifies the plan across ranks.
  uint64_t hash() const { return hash_; }
  size_t sizeBytes() const { return bytes_.size(); }

  /// Parses and verifies a whole file image; `what` names it in error messages.
  /// Throws Error(ErrorKind::Plan) saying what is wrong.
  static PlanFile fromBytes(std::vector<uint8_t> bytes, const std::string &what);
  /// Reads and verifies `path`.
  static PlanFile read(const std::string &path);
  /// Verifies a whole file image as `fromBytes` does, without throwing: the error message, or
  /// an empty string when the image is a plan this runtime accepts. For the compiler, which
  /// checks every plan it writes (and is built without exceptions).
  static std::string verifyImage(const void *data, size_t size) noexcept;

private:
  std::vector<uint8_t> bytes_;
  const fb::Plan *plan_ = nullptr;
  uint32_t checksum_ = 0;
  uint64_t hash_ = 0;
};

/// FNV-1a, 64 bits, continuing from `h`.
uint64_t fnv1a64(const void *data, size_t size, uint64_t h = 0xcbf29ce484222325ull);

/// The canonical text of one manifest entry, with the kind and the group by name (so the
/// hash of a plan is the one it had when they were names, format 4); the manifest hash is the
/// FNV-1a 64 of the concatenated lines of all entries, in order. A broadcast's root (format
/// 9) ends its line as "|root=N"; other entries have none (their hash is the one of before).
/// A reduce-scattered allreduce's segments (format 12) end it as "|segments=0,5,9".
std::string manifestLine(CollectiveKind kind, int bucket, int dtype, int64_t elements,
                         GroupKind group, int groupId, const std::vector<std::string> &tensors,
                         const std::string &loc, int root = -1,
                         const std::vector<int64_t> &segments = {});
/// The manifest hash of `plan`'s collectives, recomputed from the entries (0 for none).
uint64_t manifestHash(const fb::Plan &plan);

/// Checks the plan's internal consistency (ids, sizes, arities, dtypes). Throws Error(Plan).
void verifyPlanSemantics(const fb::Plan &plan, const std::string &what);

/// Number of elements of a buffer (product of its shape).
int64_t numElements(const fb::Buffer &buffer);

} // namespace dp::rt
