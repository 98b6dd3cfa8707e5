// Reading IDX files (the MNIST / Fashion-MNIST array format), gzipped or plain. Every claim of
// the header is checked against limits and against the bytes actually present before the data
// is trusted, so a corrupt or hostile file fails with a message instead of a huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

/// The largest payload an IDX header may claim. Real data sets are far smaller (Fashion-MNIST's
/// training images are 47 MB); a header beyond this is rejected before anything is allocated.
inline constexpr uint64_t kMaxIdxBytes = uint64_t(4) << 30;

/// An unsigned-byte IDX array: its dimensions (outermost first) and its row-major bytes.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

/// Reads `path`, which must hold an unsigned-byte IDX array of `rank` dimensions (magic
/// 0x00000800 + rank: 3 for images, 1 for labels). gzip is detected from the content, not the
/// name. `items` names the outer dimension in messages ("images", "labels").
///
/// Bytes after the payload the header declares are an error: they mean the header and the data
/// disagree (a wrong count would otherwise silently drop samples). Throws
/// Error(ErrorKind::Data, "<path>: <problem>") when the file is missing, unreadable, not IDX,
/// of another rank or type, larger than `maxBytes`, truncated, or followed by trailing data.
IdxArray readIdx(const std::string &path, int rank, const std::string &items,
                 uint64_t maxBytes = kMaxIdxBytes);

/// Writes an unsigned-byte IDX file (plain, or gzipped when `gzip`). For tests and tools that
/// make small data sets. Throws Error(ErrorKind::Runtime) on I/O failure.
void writeIdx(const std::string &path, const std::vector<uint32_t> &dims,
              const std::vector<uint8_t> &data, bool gzip);

} // namespace dp::rt
