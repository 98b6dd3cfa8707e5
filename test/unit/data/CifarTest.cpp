// Tests of the CIFAR-10 binary loader, format detection and the bilinear resize: generated
// batches of a few records in the exact format, the CHW -> HWC reordering, the order of the
// training files, and each way a batch can be malformed (a Data error naming file and record).
#include "TestFiles.h"
#include "runtime/base/Error.h"
#include "runtime/data/Batcher.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/Idx.h"

#include <gtest/gtest.h>

#include <functional>
#include <sys/stat.h>

namespace dp::rt {
namespace {

using test::cifarPixel;
using test::cifarRecord;
using test::cifarRecords;
using test::idxHeader;
using test::imageBytes;
using test::labelBytes;
using test::TempDir;
using test::writeRaw;
using test::expectDataError;

/// Writes data_batch_1.bin .. data_batch_5.bin (file k holding k records, numbered on across
/// the files) and test_batch.bin (3 records numbered from 100) into `dir`.
void writeCifar(const std::string &dir) {
  uint32_t next = 0;
  for (uint32_t k = 1; k <= 5; ++k) {
    writeRaw(dir + "/data_batch_" + std::to_string(k) + ".bin", cifarRecords(next, k), false);
    next += k;
  }
  writeRaw(dir + "/test_batch.bin", cifarRecords(100, 3), false);
}

/// Checks that sample `i` of `data` is record `record` in HWC order.
void expectRecord(const Dataset &data, int64_t i, uint32_t record) {
  EXPECT_EQ(data.label(i), record % 10) << "sample " << i;
  const uint8_t *image = data.image(i);
  for (uint32_t y = 0; y < 32; ++y)
    for (uint32_t x = 0; x < 32; ++x)
      for (uint32_t c = 0; c < 3; ++c)
        ASSERT_EQ(image[(y * 32 + x) * 3 + c], cifarPixel(record, c, y, x))
            << "sample " << i << " y " << y << " x " << x << " channel " << c;
}

TEST(Cifar10, TestSplitLoadsHwc) {
  TempDir dir;
  writeCifar(dir.path());
  Dataset data = Dataset::loadCifar10(dir.path(), "test");
  ASSERT_EQ(data.size(), 3);
  EXPECT_EQ(data.height(), 32);
  EXPECT_EQ(data.width(), 32);
  EXPECT_EQ(data.channels(), 3);
  EXPECT_EQ(data.pixels(), 32 * 32 * 3);
  EXPECT_EQ(data.imagesPath(), dir.file("test_batch.bin"));
  for (int64_t i = 0; i < 3; ++i)
    expectRecord(data, i, 100 + static_cast<uint32_t>(i));
  // Spelled out for the first pixels: R, G, B of (0, 0), then of (0, 1).
  std::string record = cifarRecord(100, 0);
  const uint8_t *image = data.image(0);
  EXPECT_EQ(image[0], static_cast<uint8_t>(record[1]));
  EXPECT_EQ(image[1], static_cast<uint8_t>(record[1 + 1024]));
  EXPECT_EQ(image[2], static_cast<uint8_t>(record[1 + 2048]));
  EXPECT_EQ(image[3], static_cast<uint8_t>(record[2]));
  EXPECT_EQ(image[5], static_cast<uint8_t>(record[2 + 2048]));
  // dprun asks for "t10k"; it means the same file.
  EXPECT_EQ(Dataset::loadCifar10(dir.path(), "t10k").size(), 3);
}

TEST(Cifar10, TrainSplitConcatenatesTheFiveFilesInOrder) {
  TempDir dir;
  writeCifar(dir.path());
  Dataset data = Dataset::loadCifar10(dir.path(), "train");
  ASSERT_EQ(data.size(), 1 + 2 + 3 + 4 + 5);
  for (int64_t i = 0; i < data.size(); ++i)
    expectRecord(data, i, static_cast<uint32_t>(i));
  EXPECT_EQ(data.classCounts(10), (std::vector<int64_t>{2, 2, 2, 2, 2, 1, 1, 1, 1, 1}));
  EXPECT_NE(data.imagesPath().find("data_batch_[1-5].bin"), std::string::npos);
}

TEST(Cifar10, ArchiveFolderIsFound) {
  TempDir dir;
  std::string nested = dir.file("cifar-10-batches-bin");
  ASSERT_EQ(::mkdir(nested.c_str(), 0755), 0);
  writeCifar(nested);
  EXPECT_EQ(detectDataFormat(dir.path()), DataFormat::Cifar10);
  Dataset test = Dataset::loadSplit(dir.path(), "t10k");
  EXPECT_EQ(test.size(), 3);
  EXPECT_EQ(test.imagesPath(), nested + "/test_batch.bin");
  EXPECT_EQ(Dataset::loadSplit(dir.path(), "train").size(), 15);
}

TEST(Cifar10, BatcherGathersHwcFloats) {
  TempDir dir;
  writeCifar(dir.path());
  Dataset data = Dataset::loadSplit(dir.path(), "test");
  Batcher batcher(data, 2, BatchOrder::Sequential, Remainder::Pad);
  std::vector<float> images(2 * 3072);
  std::vector<int32_t> labels(2);
  EXPECT_EQ(batcher.fillBatch(1, 0, 2, images.data(), labels.data()), 1);
  EXPECT_EQ(labels[0], 102 % 10);
  // Row 0 is record 102; pixel (y 3, x 5), green.
  EXPECT_EQ(images[(3 * 32 + 5) * 3 + 1], cifarPixel(102, 1, 3, 5) / 255.0f);
  EXPECT_EQ(images[3072 + 17], 0.0f); // the padding row
}

TEST(DatasetFormat, DetectsIdxAndCifarAndListsBothWhenNeither) {
  TempDir idx, cifar, empty;
  writeRaw(idx.file("train-images-idx3-ubyte"), idxHeader({4, 2, 3}) + imageBytes(4, 2, 3), false);
  writeRaw(idx.file("train-labels-idx1-ubyte"), idxHeader({4}) + labelBytes(4), false);
  writeCifar(cifar.path());
  EXPECT_EQ(detectDataFormat(idx.path()), DataFormat::Idx);
  EXPECT_EQ(detectDataFormat(cifar.path()), DataFormat::Cifar10);

  // IDX data sets keep their one channel and their bytes.
  Dataset mnist = Dataset::loadSplit(idx.path(), "train");
  EXPECT_EQ(mnist.channels(), 1);
  EXPECT_EQ(mnist.pixels(), 6);
  EXPECT_EQ(mnist.image(1)[0], 7);
  EXPECT_EQ(Dataset::loadSplit(cifar.path(), "train").channels(), 3);

  for (const std::string &part :
       {empty.path() + ": no data set found", std::string("train-images-idx3-ubyte"),
        std::string("t10k-labels-idx1-ubyte"), std::string("data_batch_1.bin"),
        std::string("data_batch_5.bin"), std::string("test_batch.bin"),
        std::string("cifar-10-batches-bin/")})
    expectDataError([&] { Dataset::loadSplit(empty.path(), "train"); }, {part});
  expectDataError([&] { detectDataFormat(empty.file("nowhere")); },
                  {empty.file("nowhere") + ": data directory not found"});
}

TEST(Cifar10, TruncatedFile) {
  TempDir dir;
  writeCifar(dir.path());
  std::string path = dir.file("test_batch.bin");
  writeRaw(path, cifarRecords(0, 2) + std::string(100, '\0'), false);
  expectDataError([&] { Dataset::loadSplit(dir.path(), "test"); },
                  {path + ": 6246 bytes is not a whole number of 3073-byte records",
                   "truncated, record 2 (at byte 6146) has only 100 of its 3073 bytes"});
  // Shorter than one record.
  writeRaw(path, cifarRecord(0, 1).substr(0, 3000), false);
  expectDataError([&] { Dataset::loadCifar10(dir.path(), "test"); },
                  {path, "record 0 (at byte 0) has only 3000 of its 3073 bytes"});
}

TEST(Cifar10, LabelOutOfRange) {
  TempDir dir;
  writeCifar(dir.path());
  std::string path = dir.file("data_batch_4.bin");
  writeRaw(path, cifarRecords(0, 1) + cifarRecord(1, 10) + cifarRecords(2, 2), false);
  expectDataError([&] { Dataset::loadCifar10(dir.path(), "train"); },
                  {path + ": record 1 (at byte 3073) has label 10, not a CIFAR-10 class (0..9)"});
  writeRaw(path, cifarRecord(0, 255), false);
  expectDataError([&] { Dataset::loadCifar10(dir.path(), "train"); },
                  {path + ": record 0 (at byte 0) has label 255"});
  // A valid CIFAR-10 label the model has no class for.
  writeCifar(dir.path());
  expectDataError(
      [&] { Dataset::loadCifar10(dir.path(), "train", 5); },
      {dir.file("data_batch_[1-5].bin") + ": label 5 of sample 5", "model with 5 classes"});
}

TEST(Cifar10, MissingBatchFile) {
  TempDir dir;
  writeCifar(dir.path());
  ASSERT_EQ(std::remove(dir.file("data_batch_3.bin").c_str()), 0);
  expectDataError(
      [&] { Dataset::loadSplit(dir.path(), "train"); },
      {dir.file("data_batch_3.bin") + ": file not found", "data_batch_1.bin .. data_batch_5.bin"});
  ASSERT_EQ(std::remove(dir.file("test_batch.bin").c_str()), 0);
  expectDataError([&] { Dataset::loadSplit(dir.path(), "t10k"); },
                  {dir.file("test_batch.bin") + ": file not found"});
  expectDataError([&] { Dataset::loadCifar10(dir.path(), "valid"); },
                  {"unknown CIFAR-10 split 'valid'"});
}

TEST(Cifar10, EmptyFile) {
  TempDir dir;
  writeCifar(dir.path());
  writeRaw(dir.file("data_batch_1.bin"), "", false);
  expectDataError([&] { Dataset::loadSplit(dir.path(), "train"); },
                  {dir.file("data_batch_1.bin") + ": empty file", "3073-byte records"});
}

TEST(Cifar10, ResizeAtLoad) {
  TempDir dir;
  writeRaw(dir.file("test_batch.bin"), cifarRecords(0, 2), false);
  Dataset data = Dataset::loadSplit(dir.path(), "test", 10, {64, 48});
  EXPECT_EQ(data.height(), 64);
  EXPECT_EQ(data.width(), 48);
  EXPECT_EQ(data.channels(), 3);
  EXPECT_EQ(data.pixels(), 64 * 48 * 3);
  EXPECT_EQ(data.label(1), 1);
  // Output (0, 0) lies on input (0, 0) by the half-pixel clamp; so does the asked-for size of
  // the files themselves, which changes nothing.
  for (int c = 0; c < 3; ++c)
    EXPECT_EQ(data.image(1)[c], cifarPixel(1, c, 0, 0));
  Dataset same = Dataset::loadCifar10(dir.path(), "test", 10, {32, 32});
  expectRecord(same, 1, 1);
}

/// Resizes one h x w x c image given as bytes.
std::vector<uint8_t> resize(std::vector<uint8_t> image, int64_t h, int64_t w, int64_t c,
                            int64_t toH, int64_t toW) {
  Dataset data = Dataset::fromBytes(std::move(image), {0}, h, w, 10, "tiny", c);
  Dataset out = data.resized(toH, toW);
  EXPECT_EQ(out.size(), 1);
  EXPECT_EQ(out.height(), toH);
  EXPECT_EQ(out.width(), toW);
  EXPECT_EQ(out.channels(), c);
  return std::vector<uint8_t>(out.image(0), out.image(0) + out.pixels());
}

// Expected values by hand: source = (o + 0.5) * in / out - 0.5, clamped to [0, in - 1]; for
// 2 -> 4 the source coordinates are 0 (clamped from -0.25), 0.25, 0.75, 1 (the last neighbour).
TEST(DatasetResize, UpsampleMatchesHandComputedBilinear) {
  std::vector<uint8_t> expected = {0,   25,  75, 100, //
                                   50,  59,  76, 85,  // 58.75, 76.25
                                   150, 126, 79, 55,  // 126.25, 78.75
                                   200, 160, 80, 40};
  EXPECT_EQ(resize({0, 100, 200, 40}, 2, 2, 1, 4, 4), expected);
}

TEST(DatasetResize, DownsampleAveragesBlocksByHalf) {
  // 4 -> 2 samples at 0.5 and 2.5: each output is the mean of a 2x2 block.
  std::vector<uint8_t> image;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      image.push_back(static_cast<uint8_t>(y * 40 + x * 10));
  EXPECT_EQ(resize(image, 4, 4, 1, 2, 2), (std::vector<uint8_t>{25, 45, 105, 125}));
  // 3 -> 2 samples at 0.25 and 1.75.
  EXPECT_EQ(resize({0, 100, 200}, 1, 3, 1, 1, 2), (std::vector<uint8_t>{25, 175}));
}

TEST(DatasetResize, ChannelsInterpolateOnTheirOwn) {
  // 1x2 RGB -> 1x4: R 0..100, G 255..55, B 10..30.
  EXPECT_EQ(resize({0, 255, 10, 100, 55, 30}, 1, 2, 3, 1, 4),
            (std::vector<uint8_t>{0, 255, 10, 25, 205, 15, 75, 105, 25, 100, 55, 30}));
}

TEST(DatasetResize, BadSizesAreDataErrors) {
  Dataset data = Dataset::fromBytes({1, 2, 3, 4}, {0}, 2, 2, 10, "tiny");
  expectDataError([&] { data.resized(0, 4); }, {"tiny: cannot resize to 0x4 pixels"});
  // Refused before anything is allocated.
  expectDataError([&] { data.resized(int64_t(1) << 20, int64_t(1) << 20); },
                  {"tiny: resizing 1 images to 1048576x1048576", "more than the limit"});
  expectDataError([&] { data.resized(int64_t(1) << 62, int64_t(1) << 62); },
                  {"more than the limit"});
}

} // namespace
} // namespace dp::rt
