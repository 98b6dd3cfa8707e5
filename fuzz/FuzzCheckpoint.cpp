// Fuzz target: bytes as a checkpoint file, through the reader `dprun --resume` uses: the header,
// the checksum, every record and the tensor table, then each tensor's values read end to end (so
// that an offset the reader let through past the file is an ASan report). The first byte picks
// the mode: odd rewrites the header's payload size and CRC-32 to match the rest (as a hostile
// file with a valid checksum would have them), so that mutations reach the checks behind the
// checksum; even leaves the bytes as they are.
#include "runtime/base/Error.h"
#include "runtime/train/Checkpoint.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

void putLE(std::string &bytes, size_t at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i)
    bytes[at + i] = static_cast<char>(value >> (8 * i));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const bool fixUp = data[0] & 1;
  std::string bytes(reinterpret_cast<const char *>(data + 1), size - 1);
  if (fixUp && bytes.size() >= dp::rt::kCheckpointHeaderBytes) {
    const size_t payload = bytes.size() - dp::rt::kCheckpointHeaderBytes;
    putLE(bytes, 16, payload, 8);
    const auto *start = reinterpret_cast<const Bytef *>(bytes.data()) +
                        dp::rt::kCheckpointHeaderBytes;
    putLE(bytes, 24, crc32(crc32(0L, Z_NULL, 0), start, static_cast<uInt>(payload)), 4);
  }
  try {
    const dp::rt::Checkpoint checkpoint = dp::rt::Checkpoint::fromBytes(std::move(bytes), "fuzz.dpk");
    volatile uint8_t sum = 0;
    for (const dp::rt::CheckpointTensor &t : checkpoint.tensors) {
      const uint8_t *values = checkpoint.data(t);
      for (uint64_t i = 0; i < t.bytes; ++i)
        sum = sum + values[i];
    }
  } catch (const dp::rt::Error &) {
    // The expected answer to a broken file.
  }
  return 0;
}
