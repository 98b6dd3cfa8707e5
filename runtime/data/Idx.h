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

/// The element types this reader takes: unsigned bytes (images, labels) and 32-bit floats
/// (regression targets), big-endian as IDX stores them.
enum class IdxElement { U8, F32 };

/// An IDX array: its dimensions (outermost first) and its row-major bytes as the file holds
/// them (idxFloats converts a float array's).
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

/// What an IDX file's header declares, read without its body.
struct IdxHeader {
  std::vector<uint32_t> dims;
  uint64_t itemBytes = 0; // bytes of one outer item (the product of the inner dimensions)
  uint64_t payload = 0;   // bytes of the body: dims[0] x itemBytes
  bool compressed = false;
  IdxElement element = IdxElement::U8;
};

/// Reads and checks the header of `path`, which must hold an IDX array of `element`s (unsigned
/// bytes by default) of `rank` dimensions (magic 0x00000800 + rank for bytes: 3 for images, 1
/// for labels; 0x00000d00 + rank for floats), declaring at most `maxBytes`.
/// Nothing past the header is decompressed or read: a loader checks the headers of both files of a
/// data set against each other first, so that a file whose body is a decompression bomb costs
/// nothing when its header does not fit. gzip is detected from the content, not the name. `items`
/// names the outer dimension in messages ("images", "labels"). Throws as readIdx.
IdxHeader readIdxHeader(const std::string &path, int rank, const std::string &items,
                        uint64_t maxBytes = kMaxIdxBytes, IdxElement element = IdxElement::U8);

/// Reads `path` whole: readIdxHeader's checks, then the body: a plain file's size is checked
/// against the declared size before anything is allocated; a gzip stream is decompressed into
/// a buffer grown as the data arrives (never past the declared size, so a false claim costs at
/// most about twice the bytes really there), and reading stops at the first byte past the
/// declared size.
///
/// Bytes after the payload the header declares are an error: they mean the header and the data
/// disagree (a wrong count would otherwise silently drop samples). Throws
/// Error(ErrorKind::Data, "<path>: <problem>") when the file is missing, unreadable, not IDX,
/// of another rank or type, larger than `maxBytes`, truncated (how many items and bytes it
/// holds against the header's claim), or followed by trailing data.
IdxArray readIdx(const std::string &path, int rank, const std::string &items,
                 uint64_t maxBytes = kMaxIdxBytes);

/// The same, for a file whose header was read (and checked against another file's) before:
/// refuses it if the header now declares anything else (the file was replaced in between),
/// so no more than `declared.payload` is ever allocated. Reads the element type declared.
IdxArray readIdx(const std::string &path, int rank, const std::string &items,
                 const IdxHeader &declared);

/// The values of a float IDX array (its big-endian bytes converted).
std::vector<float> idxFloats(const IdxArray &array);

/// Writes an unsigned-byte IDX file (plain, or gzipped when `gzip`). For tests and tools that
/// make small data sets. Throws Error(ErrorKind::Runtime) on I/O failure.
void writeIdx(const std::string &path, const std::vector<uint32_t> &dims,
              const std::vector<uint8_t> &data, bool gzip);

/// Writes a float IDX file (plain, or gzipped when `gzip`); `values` has the product of `dims`.
void writeIdxFloats(const std::string &path, const std::vector<uint32_t> &dims,
                    const std::vector<float> &values, bool gzip);

} // namespace dp::rt
