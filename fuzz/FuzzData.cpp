// Fuzz target: bytes as a data file, through the readers dprun's --data uses. The first byte
// picks the reader: 0 an IDX image file (rank 3), 1 an IDX label file (rank 1), 2 a CIFAR-10
// test batch, 3 a pair of IDX files loaded as one data set (Dataset::load: both headers read
// and checked against each other before either body; then the second file as a regression's
// float targets, Dataset::loadWithTargets); the rest is the file, written to a
// private temporary directory (the readers take paths, as dprun gives them). For a pair, 4
// bytes (big-endian) give the length of the images file, which comes next; the labels file is
// the rest. gzip is detected from the content, so the seeds' gzipped IDX files fuzz the
// decompression too. The IDX limit of modes 0 and 1 is lowered to 64 MiB so that a header (or
// a gzip stream) claiming more is refused, not allocated, within the fuzzer's memory limit; a
// pair is bounded by its headers (a plain file's size, a gzip stream's data, which 64 KiB of
// input hold no more than about 64 MiB of).
#include "runtime/base/Error.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/Idx.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

/// The run's scratch folder, removed when the fuzzer exits.
const std::string &workDir() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dp-fuzz-data.XXXXXX";
    if (!mkdtemp(pattern.data()))
      std::abort();
    return pattern;
  }();
  static const bool cleanup =
      std::atexit([] { std::system(("rm -rf '" + dir + "'").c_str()); }) == 0;
  (void)cleanup;
  return dir;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0)
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const int mode = data[0] % 4;
  const std::string dir = workDir();
  if (mode == 3) {
    if (size < 5)
      return 0;
    const uint64_t want = (uint64_t(data[1]) << 24) | (uint64_t(data[2]) << 16) |
                          (uint64_t(data[3]) << 8) | data[4];
    const size_t imagesSize = static_cast<size_t>(std::min<uint64_t>(want, size - 5));
    const std::string images = dir + "/images-idx3-ubyte", labels = dir + "/labels-idx1-ubyte";
    writeFile(images, data + 5, imagesSize);
    writeFile(labels, data + 5 + imagesSize, size - 5 - imagesSize);
    try {
      (void)dp::rt::Dataset::load(images, labels);
    } catch (const dp::rt::Error &) {
      // The expected answer to a broken pair.
    }
    // The second file as a regression's float targets (IDX of floats, samples x K), K from
    // the length's top byte.
    try {
      (void)dp::rt::Dataset::loadWithTargets(images, labels, 1 + data[1] % 64);
    } catch (const dp::rt::Error &) {
    }
    unlink(images.c_str());
    unlink(labels.c_str());
    return 0;
  }
  const std::string path = dir + (mode == 2 ? "/test_batch.bin" : "/file-ubyte");
  writeFile(path, data + 1, size - 1);
  try {
    if (mode == 2)
      (void)dp::rt::Dataset::loadCifar10(dir, "test");
    else
      (void)dp::rt::readIdx(path, mode == 0 ? 3 : 1, mode == 0 ? "images" : "labels",
                            uint64_t(64) << 20);
  } catch (const dp::rt::Error &) {
    // The expected answer to a broken file.
  }
  unlink(path.c_str());
  return 0;
}
