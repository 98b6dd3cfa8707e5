// Tests of IDX reading and data set loading: good files (plain and gzipped), and each way a file
// can be wrong, checking that the error is a Data error naming the file and the problem.
#include "runtime/data/Idx.h"
#include "TestFiles.h"
#include "runtime/base/Error.h"
#include "runtime/data/Dataset.h"

#include <gtest/gtest.h>

#include <limits>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

// Whether AddressSanitizer instruments this build (clang's spelling; GCC defines
// __SANITIZE_ADDRESS__).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DP_HAS_ASAN 1
#endif
#endif
#ifndef DP_HAS_ASAN
#define DP_HAS_ASAN 0
#endif

namespace dp::rt {
namespace {

using test::idxHeader;
using test::imageBytes;
using test::labelBytes;
using test::TempDir;
using test::writeRaw;
using test::expectDataError;

/// Every test runs on plain and on gzipped files.
class IdxFiles : public ::testing::TestWithParam<bool> {
protected:
  bool gzip() const { return GetParam(); }
  std::string name(const std::string &base) const { return base + (gzip() ? ".gz" : ""); }
  /// Writes an images and a labels file with `n` samples of h x w; returns their paths.
  std::pair<std::string, std::string> writePair(uint32_t n, uint32_t h, uint32_t w) {
    std::string images = dir.file(name("train-images-idx3-ubyte"));
    std::string labels = dir.file(name("train-labels-idx1-ubyte"));
    writeRaw(images, idxHeader({n, h, w}) + imageBytes(n, h, w), gzip());
    writeRaw(labels, idxHeader({n}) + labelBytes(n), gzip());
    return {images, labels};
  }
  TempDir dir;
};

TEST_P(IdxFiles, GoodFilesLoad) {
  auto [images, labels] = writePair(25, 4, 3);
  Dataset data = Dataset::load(images, labels);
  ASSERT_EQ(data.size(), 25);
  EXPECT_EQ(data.height(), 4);
  EXPECT_EQ(data.width(), 3);
  EXPECT_EQ(data.pixels(), 12);
  for (int64_t i = 0; i < 25; ++i) {
    EXPECT_EQ(data.label(i), i % 10);
    for (int64_t p = 0; p < 12; ++p)
      ASSERT_EQ(data.image(i)[p], (i * 7 + p) % 256) << "sample " << i << " pixel " << p;
  }
  EXPECT_EQ(data.classCounts(10), (std::vector<int64_t>{3, 3, 3, 3, 3, 2, 2, 2, 2, 2}));
}

TEST_P(IdxFiles, LoadSplitFindsFilesInDirectory) {
  writePair(12, 2, 2);
  Dataset data = Dataset::loadSplit(dir.path(), "train");
  EXPECT_EQ(data.size(), 12);
  EXPECT_NE(data.imagesPath().find("train-images-idx3-ubyte"), std::string::npos);
}

TEST_P(IdxFiles, LoadSplitAcceptsDottedNames) {
  writeRaw(dir.file(name("t10k-images.idx3-ubyte")), idxHeader({3, 2, 2}) + imageBytes(3, 2, 2),
           gzip());
  writeRaw(dir.file(name("t10k-labels.idx1-ubyte")), idxHeader({3}) + labelBytes(3), gzip());
  Dataset data = Dataset::loadSplit(dir.path(), "t10k");
  EXPECT_EQ(data.size(), 3);
  EXPECT_NE(data.labelsPath().find("t10k-labels.idx1-ubyte"), std::string::npos);
}

TEST_P(IdxFiles, WrongMagicSaysExpectedAndFound) {
  auto [images, labels] = writePair(5, 2, 2);
  // A labels file where images are expected.
  expectDataError([&] { readIdx(labels, 3, "images"); },
                  {labels, "bad magic 0x00000801", "expected 0x00000803"});
  writeRaw(images, "GIF89a-not-idx", gzip());
  expectDataError([&] { readIdx(images, 3, "images"); },
                  {images, "bad magic 0x47494638", "not an IDX file"});
  // Right rank, wrong element type (32-bit floats).
  writeRaw(images, idxHeader({1, 1, 1}, 0x00000d03) + std::string(4, '\0'), gzip());
  expectDataError([&] { readIdx(images, 3, "images"); }, {"bad magic 0x00000d03", "32-bit floats"});
}

TEST_P(IdxFiles, TruncatedImages) {
  std::string images = dir.file(name("train-images-idx3-ubyte"));
  writeRaw(images, idxHeader({100, 28, 28}) + imageBytes(3, 28, 28), gzip());
  expectDataError(
      [&] { readIdx(images, 3, "images"); },
      {images, "header claims 100 images (78400 bytes) but the file holds 3 (2352 bytes)"});
}

TEST_P(IdxFiles, TruncatedLabels) {
  std::string labels = dir.file(name("t10k-labels-idx1-ubyte"));
  writeRaw(labels, idxHeader({10000}) + labelBytes(3), gzip());
  expectDataError([&] { readIdx(labels, 1, "labels"); },
                  {labels, "header claims 10000 labels", "but the file holds 3"});
}

TEST_P(IdxFiles, PartialLastItemCountsAsTruncated) {
  std::string images = dir.file(name("images"));
  writeRaw(images, idxHeader({4, 2, 2}) + imageBytes(3, 2, 2) + "xx", gzip());
  expectDataError([&] { readIdx(images, 3, "images"); },
                  {"header claims 4 images (16 bytes) but the file holds 3 (14 bytes)"});
}

TEST_P(IdxFiles, TruncatedHeader) {
  std::string images = dir.file(name("images"));
  writeRaw(images, idxHeader({4, 2, 2}).substr(0, 9), gzip());
  expectDataError([&] { readIdx(images, 3, "images"); }, {images, "header truncated"});
  writeRaw(images, "", gzip());
  expectDataError([&] { readIdx(images, 3, "images"); }, {images, "empty"});
}

TEST_P(IdxFiles, TrailingDataIsAnError) {
  std::string labels = dir.file(name("labels"));
  writeRaw(labels, idxHeader({5}) + labelBytes(8), gzip());
  expectDataError([&] { readIdx(labels, 1, "labels"); },
                  {labels, "trailing data after the 5 labels"});
}

TEST_P(IdxFiles, CountMismatch) {
  std::string images = dir.file(name("images"));
  std::string labels = dir.file(name("labels"));
  writeRaw(images, idxHeader({6, 2, 2}) + imageBytes(6, 2, 2), gzip());
  writeRaw(labels, idxHeader({7}) + labelBytes(7), gzip());
  expectDataError([&] { Dataset::load(images, labels); },
                  {labels + ": header declares 7 labels but " + images + " declares 6 images",
                   "nothing was read past their headers"});
}

TEST_P(IdxFiles, HeadersAreCheckedAgainstEachOtherBeforeEitherBody) {
  std::string images = dir.file(name("images"));
  std::string labels = dir.file(name("labels"));
  // The labels' body is cut short, but the images' header does not match it: the mismatch is
  // what is reported (the body was not read).
  writeRaw(images, idxHeader({10, 2, 2}) + imageBytes(10, 2, 2), gzip());
  writeRaw(labels, idxHeader({4000000000u}) + labelBytes(3), gzip());
  expectDataError([&] { Dataset::load(images, labels); },
                  {labels + ": header declares 4000000000 labels but " + images +
                   " declares 10 images"});
  // Matching headers, a body cut short: how many labels (and bytes) it has against the claim.
  writeRaw(labels, idxHeader({10}) + labelBytes(3), gzip());
  expectDataError([&] { Dataset::load(images, labels); },
                  {labels, "header claims 10 labels (10 bytes) but the file holds 3 (3 bytes)"});
  // Images whose sides are 0 or past 16384 pixels: refused on the header.
  writeRaw(labels, idxHeader({10}) + labelBytes(10), gzip());
  for (auto [h, w] : {std::pair<uint32_t, uint32_t>{0, 28}, {28, 0}, {20000, 1}}) {
    writeRaw(images, idxHeader({10, h, w}), gzip());
    expectDataError([&] { Dataset::load(images, labels); },
                    {images + ": header declares images of " + std::to_string(h) + "x" +
                         std::to_string(w) + " pixels; each side must be from 1 to 16384"});
  }
}

TEST_P(IdxFiles, AFileReplacedAfterItsHeaderWasCheckedIsRefused) {
  std::string labels = dir.file(name("labels"));
  writeRaw(labels, idxHeader({5}) + labelBytes(5), gzip());
  const IdxHeader declared = readIdxHeader(labels, 1, "labels");
  EXPECT_EQ(declared.payload, 5u);
  EXPECT_EQ(declared.compressed, gzip());
  EXPECT_EQ(readIdx(labels, 1, "labels", declared).data.size(), 5u);
  writeRaw(labels, idxHeader({50}) + labelBytes(50), gzip());
  expectDataError([&] { readIdx(labels, 1, "labels", declared); },
                  {labels + ": header changed while being read: it declared 5 labels, now 50 "
                            "labels"});
}

TEST_P(IdxFiles, LabelOutOfRange) {
  std::string images = dir.file(name("images"));
  std::string labels = dir.file(name("labels"));
  writeRaw(images, idxHeader({4, 2, 2}) + imageBytes(4, 2, 2), gzip());
  writeRaw(labels, idxHeader({4}) + std::string("\x01\x02\x0c\x03", 4), gzip());
  expectDataError([&] { Dataset::load(images, labels); },
                  {labels, "label 12 of sample 2 is out of range for a model with 10 classes"});
  EXPECT_EQ(Dataset::load(images, labels, 13).size(), 4);
  // The class count comes from the model: with 3 classes, label 3 is already out of range.
  writeRaw(labels, idxHeader({4}) + std::string("\x00\x01\x02\x03", 4), gzip());
  expectDataError([&] { Dataset::load(images, labels, 3); }, {"label 3 of sample 3", "3 classes"});
  EXPECT_EQ(Dataset::load(images, labels, 4).size(), 4);
}

TEST_P(IdxFiles, HugeClaimsRejectedBeforeAllocation) {
  std::string images = dir.file(name("images"));
  // 2^96 bytes claimed: must fail on the header alone (an attempt to allocate would throw
  // bad_alloc, not a Data error).
  writeRaw(images, idxHeader({0xffffffffu, 0xffffffffu, 0xffffffffu}) + "abc", gzip());
  expectDataError([&] { readIdx(images, 3, "images"); },
                  {images, "header claims 4294967295 images of 4294967295x4294967295", "limit"});
  // Within the reader's limit, the claim is still only believed as far as the bytes go.
  writeRaw(images, idxHeader({1000000, 28, 28}) + imageBytes(2, 28, 28), gzip());
  expectDataError([&] { readIdx(images, 3, "images"); },
                  {"header claims 1000000 images (784000000 bytes) but the file holds 2"});
  // The limit is a parameter.
  writeRaw(images, idxHeader({10, 10, 10}) + imageBytes(10, 10, 10), gzip());
  expectDataError([&] { readIdx(images, 3, "images", 999); }, {"limit"});
  EXPECT_EQ(readIdx(images, 3, "images", 1000).data.size(), 1000u);
}

TEST_P(IdxFiles, NoSamples) {
  std::string images = dir.file(name("images"));
  std::string labels = dir.file(name("labels"));
  writeRaw(images, idxHeader({0, 28, 28}), gzip());
  writeRaw(labels, idxHeader({0}), gzip());
  expectDataError([&] { Dataset::load(images, labels); }, {images, "holds no samples"});
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, IdxFiles, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "Gzip" : "Plain";
                         });

TEST(Idx, MissingFileIsNamed) {
  TempDir dir;
  std::string path = dir.file("train-images-idx3-ubyte.gz");
  expectDataError([&] { readIdx(path, 3, "images"); }, {path + ": file not found"});
  expectDataError([&] { readIdx(dir.path(), 3, "images"); }, {dir.path() + ": is a directory, not a data file"});
}

TEST(Idx, MissingFileInDirectoryListsNamesTried) {
  TempDir dir;
  // The images are there (so the directory is IDX), the labels are not.
  writeRaw(dir.file("train-images-idx3-ubyte"), idxHeader({1, 1, 1}) + "x", false);
  expectDataError(
      [&] { Dataset::loadSplit(dir.path(), "train"); },
      {dir.path() + "/train-labels-idx1-ubyte.gz: file not found", "train-labels.idx1-ubyte"});
  expectDataError([&] { Dataset::loadSplit(dir.file("nowhere"), "train"); },
                  {dir.file("nowhere") + ": data directory not found"});
}

TEST(Idx, GzipStreamCutShort) {
  // A gzip file cut in the middle of its compressed data: zlib reports an unexpected end, which
  // the reader reports as the shortfall against the header's claim.
  TempDir dir;
  std::string path = dir.file("labels.gz");
  std::string payload;
  for (int i = 0; i < 20000; ++i)
    payload.push_back(
        static_cast<char>((i * 2654435761u) >> 29)); // labels 0..7, incompressible-ish
  writeRaw(path, idxHeader({20000}) + payload, true);
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  ASSERT_EQ(truncate(path.c_str(), info.st_size / 2), 0);
  expectDataError([&] { readIdx(path, 1, "labels"); }, {path, "header claims 20000 labels"});
}

TEST(Idx, CorruptGzipData) {
  TempDir dir;
  std::string path = dir.file("labels.gz");
  writeRaw(path, idxHeader({5000}) + labelBytes(5000), true);
  // Damage the compressed stream: the trailer's CRC (or the deflate data) no longer matches.
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  for (std::streamoff at : {size / 2, size - 6}) {
    file.seekg(at);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(at);
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
  }
  file.close();
  expectDataError([&] { readIdx(path, 1, "labels"); }, {path + ": corrupt gzip data"});
}

/// Writes a gzipped IDX labels file declaring `declared` labels and holding `zeros` zero
/// labels, streamed through zlib: zeros compress about 1000:1, so 256 MiB of them take 256 KiB.
void writeZeroLabels(const std::string &path, uint32_t declared, uint64_t zeros) {
  gzFile file = gzopen(path.c_str(), "wb1");
  ASSERT_NE(file, nullptr) << path;
  const std::string header = idxHeader({declared});
  ASSERT_EQ(gzwrite(file, header.data(), unsigned(header.size())), int(header.size()));
  const std::vector<char> chunk(1 << 20, 0);
  for (uint64_t done = 0; done < zeros;) {
    const unsigned n = unsigned(std::min<uint64_t>(chunk.size(), zeros - done));
    ASSERT_EQ(gzwrite(file, chunk.data(), n), int(n));
    done += n;
  }
  ASSERT_EQ(gzclose(file), Z_OK);
}

/// Runs `body` in a forked child whose address space may grow by only `headroom` bytes
/// (RLIMIT_AS, as `ulimit -v` sets it), and returns the message of the Error it throws: "" if
/// it throws none, or what else happened to it (out of memory, a signal). Under AddressSanitizer,
/// whose shadow memory an address-space limit breaks, the child runs without the limit.
std::string errorUnderMemoryLimit(uint64_t headroom, const std::function<void()> &body) {
  int pipeFds[2];
  if (pipe(pipeFds) != 0)
    return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipeFds[0]);
#if !defined(__SANITIZE_ADDRESS__) && !DP_HAS_ASAN
    uint64_t inUse = 0; // VmSize, bytes
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmSize:", 0) == 0)
        inUse = std::stoull(line.substr(7)) * 1024;
    const rlimit limit{inUse + headroom, inUse + headroom};
    if (inUse == 0 || setrlimit(RLIMIT_AS, &limit) != 0)
      _exit(3);
#endif
    std::string message;
    try {
      body();
    } catch (const Error &e) {
      message = e.what();
    } catch (const std::bad_alloc &) {
      message = "bad_alloc: out of memory under the limit";
    }
    if (write(pipeFds[1], message.data(), message.size()) < 0)
      _exit(4);
    _exit(0);
  }
  close(pipeFds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof(buffer))) > 0;)
    message.append(buffer, size_t(n));
  close(pipeFds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "the child ended with status " + std::to_string(status);
  return message;
}

// A gzip bomb: a 256 KiB labels file that declares 4e9 labels and holds 256 MiB of them (the
// red team's held all 4e9: 4 MB, 6 GB and 20 s to inflate). The images declare 10: the headers
// disagree, and the load is refused before a byte of either body is inflated, within 64 MiB
// of address space and well under a second.
TEST(Idx, GzipBombRefusedOnTheHeadersWithoutInflatingIt) {
  TempDir dir;
  const std::string images = dir.file("train-images-idx3-ubyte.gz");
  const std::string labels = dir.file("train-labels-idx1-ubyte.gz");
  writeRaw(images, idxHeader({10, 28, 28}) + imageBytes(10, 28, 28), true);
  writeZeroLabels(labels, 4000000000u, uint64_t(256) << 20);
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      errorUnderMemoryLimit(uint64_t(64) << 20, [&] { Dataset::loadSplit(dir.path(), "train"); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(message, labels + ": header declares 4000000000 labels but " + images +
                         " declares 10 images; the two files are not a pair (nothing was read "
                         "past their headers)");
  EXPECT_LT(seconds, 2.0);
  // Headers that agree, a body with 256 MiB past the 10 labels declared: reading stops at the
  // first byte past them.
  writeZeroLabels(labels, 10, uint64_t(256) << 20);
  EXPECT_NE(errorUnderMemoryLimit(uint64_t(64) << 20,
                                  [&] { Dataset::loadSplit(dir.path(), "train"); })
                .find(labels + ": trailing data after the 10 labels the header declares"),
            std::string::npos);
}

TEST(Idx, WriterRoundTrip) {
  TempDir dir;
  for (bool gzip : {false, true}) {
    std::string path = dir.file(gzip ? "a.gz" : "a");
    std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6};
    writeIdx(path, {2, 3, 1}, bytes, gzip);
    IdxArray array = readIdx(path, 3, "images");
    EXPECT_EQ(array.dims, (std::vector<uint32_t>{2, 3, 1}));
    EXPECT_EQ(array.data, bytes);
  }
}

// A regression's targets: an IDX array of big-endian floats [samples, K] beside the images,
// found as <split>-targets-idx2-float, checked against the images and the model's K.
TEST_P(IdxFiles, RegressionTargetsLoadBesideTheImages) {
  writeRaw(dir.file(name("train-images-idx3-ubyte")), idxHeader({6, 2, 2}) + imageBytes(6, 2, 2),
           gzip());
  std::vector<float> values;
  for (int i = 0; i < 18; ++i)
    values.push_back(0.25f * float(i) - 1.0f);
  writeIdxFloats(dir.file(name("train-targets-idx2-float")), {6, 3}, values, gzip());
  Dataset data = Dataset::loadSplit(dir.path(), "train", 10, {}, 3);
  ASSERT_EQ(data.size(), 6);
  EXPECT_EQ(data.targetWidth(), 3);
  EXPECT_EQ(data.targetBytes(), 12);
  EXPECT_EQ(data.target(5)[2], values[17]);
  EXPECT_EQ(data.image(5)[1], (5 * 7 + 1) % 256);
  // Another K than the model's, and labels asked of a directory without them.
  expectDataError([&] { Dataset::loadSplit(dir.path(), "train", 10, {}, 4); },
                  {"train-targets-idx2-float", "header declares 3 targets per sample, but the "
                                               "model predicts 4 values per sample"});
  expectDataError([&] { Dataset::loadSplit(dir.path(), "train", 10); },
                  {"train-labels-idx1-ubyte.gz: file not found"});
}

TEST_P(IdxFiles, BadRegressionTargetsAreRefusedByName) {
  const std::string images = dir.file(name("train-images-idx3-ubyte"));
  const std::string targets = dir.file(name("train-targets-idx2-float"));
  writeRaw(images, idxHeader({4, 2, 2}) + imageBytes(4, 2, 2), gzip());
  // Bytes, not floats.
  writeRaw(targets, idxHeader({4, 2}) + std::string(8, '\1'), gzip());
  expectDataError([&] { Dataset::loadWithTargets(images, targets, 2); },
                  {targets, "IDX of unsigned bytes", "expected 0x00000d02 (IDX of 32-bit floats"});
  // Another count than the images'.
  writeIdxFloats(targets, {5, 2}, std::vector<float>(10, 0.5f), gzip());
  expectDataError([&] { Dataset::loadWithTargets(images, targets, 2); },
                  {"header declares 5 rows of targets but", "declares 4 images"});
  // Cut short.
  writeRaw(targets, idxHeader({4, 2}, 0x0d02) + std::string(30, '\0'), gzip());
  expectDataError([&] { Dataset::loadWithTargets(images, targets, 2); },
                  {targets, "header claims 4 targets", "holds 3 (30 bytes)"});
  // A target that is not a number.
  std::vector<float> values(8, 0.5f);
  values[5] = std::numeric_limits<float>::quiet_NaN();
  writeIdxFloats(targets, {4, 2}, values, gzip());
  expectDataError([&] { Dataset::loadWithTargets(images, targets, 2); },
                  {"target 1 of sample 2 is", "not a finite number"});
  // A regression's directory of CIFAR-10 batches has no float targets.
  TempDir cifar;
  writeRaw(cifar.file("test_batch.bin"), test::cifarRecords(0, 2), false);
  expectDataError([&] { Dataset::loadSplit(cifar.path(), "test", 10, {}, 2); },
                  {"holds CIFAR-10 batches", "t10k-targets-idx2-float"});
}

TEST(Dataset, FromBytesChecksLikeLoad) {
  Dataset data = Dataset::fromBytes({0, 255, 10, 20}, {1, 0}, 1, 2, 10, "mem");
  EXPECT_EQ(data.size(), 2);
  EXPECT_EQ(data.image(1)[0], 10);
  expectDataError(
      [] {
        Dataset::fromBytes({0, 1, 2, 3}, {1, 0, 1}, 1, 2, 10, "mem");
      },
      {"holds 3 labels but mem holds 2 images"});
  expectDataError(
      [] {
        Dataset::fromBytes({0, 1, 2, 3}, {1, 9}, 1, 2, 5, "mem");
      },
      {"label 9 of sample 1"});
}

TEST(Dataset, TakeLastHoldsOutTheLastSamples) {
  // Three 1x2 images, labels 0, 1, 2: the last two become the held-out set.
  Dataset data = Dataset::fromBytes({1, 2, 3, 4, 5, 6}, {0, 1, 2}, 1, 2, 10, "mem");
  Dataset held = data.takeLast(2, "mem (its last 2)");
  ASSERT_EQ(data.size(), 1);
  ASSERT_EQ(held.size(), 2);
  EXPECT_EQ(data.image(0)[1], 2);
  EXPECT_EQ(held.image(0)[0], 3);
  EXPECT_EQ(held.image(1)[1], 6);
  EXPECT_EQ(held.label(0), 1);
  EXPECT_EQ(held.label(1), 2);
  EXPECT_EQ(held.imagesPath(), "mem (its last 2)");
  // A regression's targets go with their images.
  Dataset reg = Dataset::fromTargets({1, 2, 3}, {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, 2, 1, 1, "r");
  Dataset tail = reg.takeLast(1, "r (its last 1)");
  EXPECT_EQ(reg.size(), 2);
  EXPECT_EQ(tail.image(0)[0], 3);
  EXPECT_EQ(tail.target(0)[1], 5.5f);
  EXPECT_EQ(reg.target(1)[0], 2.5f);
  // Nothing, or everything, is no split.
  EXPECT_THROW(reg.takeLast(0, "none"), Error);
  EXPECT_THROW(reg.takeLast(2, "all"), Error);
}

// The real data set, when installed (Debian package dataset-fashion-mnist).
TEST(FashionMnist, TrainLabelsHave6000PerClass) {
  std::string dir = DP_FASHION_MNIST_DIR;
  std::string path = dir + "/train-labels-idx1-ubyte.gz";
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    GTEST_SKIP() << path << " is absent (install dataset-fashion-mnist to run this test)";
  IdxArray labels = readIdx(path, 1, "labels");
  ASSERT_EQ(labels.dims, std::vector<uint32_t>{60000});
  std::vector<int64_t> counts(10, 0);
  for (uint8_t label : labels.data) {
    ASSERT_LT(label, 10);
    ++counts[label];
  }
  EXPECT_EQ(counts, std::vector<int64_t>(10, 6000));
}

TEST(FashionMnist, TestSplitLoads) {
  std::string dir = DP_FASHION_MNIST_DIR;
  struct stat info;
  if (stat((dir + "/t10k-images-idx3-ubyte.gz").c_str(), &info) != 0)
    GTEST_SKIP() << dir << "/t10k-images-idx3-ubyte.gz is absent";
  Dataset data = Dataset::loadSplit(dir, "t10k");
  EXPECT_EQ(data.size(), 10000);
  EXPECT_EQ(data.height(), 28);
  EXPECT_EQ(data.width(), 28);
  EXPECT_EQ(data.classCounts(10), std::vector<int64_t>(10, 1000));
}

} // namespace
} // namespace dp::rt
