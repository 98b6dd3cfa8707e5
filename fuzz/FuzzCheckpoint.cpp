// Fuzz target: bytes as a checkpoint file, through the reader `dprun --resume` uses: the header,
// the checksum, every record and the tensor table, then each tensor's values read end to end (so
// that an offset the reader let through past the file is an ASan report), then the bounds a
// resumed run checks against its data (checkCheckpointPosition), with every figure of a position
// that passes them used as a resume uses it (the first batch, the epoch to start from, the step
// counter run on to the end of the run). The first byte picks the mode: its lowest bit set
// rewrites the header's payload size and CRC-32 to match the rest (as a hostile file with a
// valid checksum would have them), so that mutations reach the checks behind the checksum; clear
// leaves the bytes as they are. Its other bits pick the run's training samples an epoch: 64 << k
// (64 for the seeds, whose global batch is 8). The bytes after the first are also read as a
// parameters file (--params: safetensors or the older raw format), whose reader shares the
// hostile-file concerns; a safetensors seed is among the checkpoint seeds. The first half of the
// bytes is also parsed as the beginning of the file (a sharded resume's records).
#include "runtime/base/Error.h"
#include "runtime/base/ParamsFile.h"
#include "runtime/train/Checkpoint.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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
  {
    std::vector<dp::rt::ParamsEntry> entries;
    const std::string problem = dp::rt::parseParamsFile(bytes, "fuzz.safetensors", entries);
    volatile float sum = 0;
    for (const dp::rt::ParamsEntry &e : entries)
      for (float v : e.values)
        sum = sum + v;
    (void)problem;
  }
  if (fixUp && bytes.size() >= dp::rt::kCheckpointHeaderBytes) {
    const size_t payload = bytes.size() - dp::rt::kCheckpointHeaderBytes;
    putLE(bytes, 16, payload, 8);
    const auto *start = reinterpret_cast<const Bytef *>(bytes.data()) +
                        dp::rt::kCheckpointHeaderBytes;
    // From version 3 the CRC-32 covers the header's version bytes, then the payload.
    uLong crc = crc32(0L, Z_NULL, 0);
    if (static_cast<uint8_t>(bytes[8]) >= 3 || bytes[9] || bytes[10] || bytes[11])
      crc = crc32(crc, reinterpret_cast<const Bytef *>(bytes.data()) + 8, 4);
    putLE(bytes, 24, crc32(crc, start, static_cast<uInt>(payload)), 4);
  }
  const int64_t epochSamples = int64_t(64) << ((data[0] >> 1) & 31);
  // Its first half as the records a sharded resume receives before the values
  // (Checkpoint::parse of a prefix, which leaves the checksum to the rounds after it).
  try {
    const dp::rt::Checkpoint head =
        dp::rt::Checkpoint::parse(bytes.substr(0, bytes.size() / 2), bytes.size(), "fuzz.dpk");
    volatile uint64_t sink = 0;
    for (const dp::rt::CheckpointTensor &t : head.tensors)
      sink = sink + t.offset + t.bytes;
  } catch (const dp::rt::Error &) {
  }
  try {
    const dp::rt::Checkpoint checkpoint = dp::rt::Checkpoint::fromBytes(std::move(bytes), "fuzz.dpk");
    volatile uint8_t sum = 0;
    for (const dp::rt::CheckpointTensor &t : checkpoint.tensors) {
      const uint8_t *values = checkpoint.data(t);
      for (uint64_t i = 0; i < t.bytes; ++i)
        sum = sum + values[i];
    }
    dp::rt::checkCheckpointPosition(checkpoint.meta, epochSamples, "fuzz.dpk");
    // What a resumed run computes from an accepted position (Run.cpp, Trainer::trainEpoch),
    // with UBSan watching for an overflow: a run of this model's batch and of 1000 more epochs
    // than the checkpoint has done.
    const dp::rt::TrainPosition &p = checkpoint.meta.position;
    const int64_t batch = checkpoint.meta.globalBatch;
    const int64_t epochSteps = epochSamples / batch;
    const int64_t firstEpoch = p.epochsDone + 1, lastEpoch = p.epochsDone + 1000;
    const int64_t firstBatch = p.samplesInEpoch / batch;
    int64_t step = p.step + (epochSteps - firstBatch);
    step += (lastEpoch - firstEpoch) * epochSteps;
    volatile int64_t sink = step + (int64_t(lastEpoch) - 1);
    (void)sink;
  } catch (const dp::rt::Error &) {
    // The expected answer to a broken file.
  }
  return 0;
}
