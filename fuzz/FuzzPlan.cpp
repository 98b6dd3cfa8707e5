// Fuzz target: bytes as a .dpx plan, through everything `dprun PLAN --inspect` does: the header,
// the checksum, the FlatBuffer verifier, the plan's semantic checks, the checks every path of
// dprun makes before it runs a plan (checkRunnable: every kernel contract check, the
// parameters, the training loop's inputs and outputs) and the description. The first byte picks the mode: odd rewrites the header's version, payload
// size and CRC-32 to match the rest (as a hostile plan with a valid checksum would have them),
// so that mutations reach the checks behind the checksum; even leaves the bytes as they are.
#include "runtime/base/Error.h"
#include "runtime/format/Plan.h"
#include "runtime/format/PlanFile.h"
#include "runtime/train/PlanCheck.h"
#include "runtime/train/PlanInfo.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <vector>

namespace {

void putLE(std::vector<uint8_t> &bytes, size_t at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i)
    bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const bool fixUp = data[0] & 1;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (fixUp && bytes.size() >= dp::rt::kPlanHeaderBytes) {
    // This build's format version too, so that inputs saved under an older one still reach
    // the checks behind the header.
    putLE(bytes, 8, dp::rt::kFormatVersion, 4);
    const size_t payload = bytes.size() - dp::rt::kPlanHeaderBytes;
    putLE(bytes, 16, payload, 8);
    const uint8_t *start = bytes.data() + dp::rt::kPlanHeaderBytes;
    putLE(bytes, 24, crc32(crc32(0L, Z_NULL, 0), start, static_cast<uInt>(payload)), 4);
  }
  try {
    const dp::rt::Plan plan = dp::rt::Plan::fromBytes(std::move(bytes), "fuzz.dpx");
    dp::rt::checkRunnable(plan, "fuzz.dpx");
    std::ostringstream description;
    dp::rt::describePlan(plan, "fuzz.dpx", description);
  } catch (const dp::rt::Error &) {
    // The expected answer to a broken plan.
  }
  return 0;
}
