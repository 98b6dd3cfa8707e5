// Tests of input prefetch: the loader's batches equal the batcher's own gather, it never runs
// more than its slots ahead of the oldest held batch, a stop releases a waiting reader, and
// misuse is refused.
#include "runtime/data/Prefetcher.h"
#include "runtime/base/Error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

namespace dp::rt {
namespace {

/// `n` samples of 2x2 pixels, each a function of its index; label i % 10.
Dataset makeData(int64_t n) {
  std::vector<uint8_t> images, labels;
  for (int64_t i = 0; i < n; ++i) {
    images.insert(images.end(), {uint8_t(i % 256), uint8_t(i * 7), 255, uint8_t(i / 256)});
    labels.push_back(uint8_t(i % 10));
  }
  return Dataset::fromBytes(images, labels, 2, 2, 10, "synthetic");
}

/// Slot memory for a prefetcher of `rows` rows of 4 values.
struct Slots {
  Slots(int count, int64_t rows, int64_t targetBytes = 4)
      : bytes(Prefetcher::slotBytes(rows, 4, targetBytes)) {
    for (int i = 0; i < count; ++i)
      memory.emplace_back(bytes);
  }
  std::vector<void *> pointers() {
    std::vector<void *> out;
    for (auto &m : memory)
      out.push_back(m.data());
    return out;
  }
  size_t bytes;
  std::vector<std::vector<uint8_t>> memory;
};

TEST(Prefetcher, BatchesEqualTheBatchersGather) {
  Dataset data = makeData(1000);
  Batcher batcher(data, 100, BatchOrder::Shuffled, Remainder::Drop, 3);
  batcher.setEpoch(2);
  Slots slots(3, 40);
  // Rows 30..70 of each batch: a middle rank's share.
  Prefetcher prefetcher(30, 70, 4, slots.pointers());
  prefetcher.start(batcher, 1, 10);
  std::vector<float> images(40 * 4);
  std::vector<int32_t> labels(40);
  for (int64_t b = 1; b < 10; ++b) {
    Prefetcher::Batch got = prefetcher.acquire(b);
    batcher.fillBatch(b, 30, 70, images.data(), labels.data());
    EXPECT_EQ(0, std::memcmp(got.images, images.data(), images.size() * sizeof(float)))
        << "batch " << b;
    EXPECT_EQ(0, std::memcmp(got.targets, labels.data(), labels.size() * sizeof(int32_t)))
        << "batch " << b;
    prefetcher.release(b);
  }
  prefetcher.stop();
}

// A regression's rows of 3 float targets travel beside the images as the batcher gathers them.
TEST(Prefetcher, ARegressionsFloatTargetsEqualTheBatchersGather) {
  std::vector<uint8_t> images;
  std::vector<float> targets;
  for (int64_t i = 0; i < 300; ++i) {
    images.insert(images.end(), {uint8_t(i % 256), uint8_t(i * 3), 7, uint8_t(i / 256)});
    targets.insert(targets.end(), {float(i), -0.5f * float(i), 1.0f / float(i + 1)});
  }
  Dataset data = Dataset::fromTargets(images, targets, 3, 2, 2, "synthetic regression");
  Batcher batcher(data, 64, BatchOrder::Shuffled, Remainder::Drop, 5);
  Slots slots(2, 32, 3 * sizeof(float));
  Prefetcher prefetcher(16, 48, 4, slots.pointers(), 3 * sizeof(float));
  prefetcher.start(batcher, 0, batcher.numBatches());
  std::vector<float> want(32 * 4), wantTargets(32 * 3);
  for (int64_t b = 0; b < batcher.numBatches(); ++b) {
    Prefetcher::Batch got = prefetcher.acquire(b);
    batcher.fillBatch(b, 16, 48, want.data(), wantTargets.data());
    EXPECT_EQ(0, std::memcmp(got.images, want.data(), want.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(got.targets, wantTargets.data(), wantTargets.size() * sizeof(float)))
        << "batch " << b;
    // Each row's targets are its sample's: the first is the sample's index.
    const auto *rows = reinterpret_cast<const float *>(got.targets);
    for (int row = 0; row < 32; ++row)
      EXPECT_FLOAT_EQ(rows[row * 3 + 1], -0.5f * rows[row * 3]) << "row " << row;
    prefetcher.release(b);
  }
  prefetcher.stop();
}

TEST(Prefetcher, APaddedEvaluationBatchHasZeroRowsPastTheData) {
  Dataset data = makeData(250);
  Batcher batcher(data, 100, BatchOrder::Sequential, Remainder::Pad);
  Slots slots(2, 100);
  Prefetcher prefetcher(0, 100, 4, slots.pointers());
  prefetcher.start(batcher, 0, batcher.numBatches());
  for (int64_t b = 0; b < 3; ++b) {
    Prefetcher::Batch got = prefetcher.acquire(b);
    if (b == 2) {
      EXPECT_FLOAT_EQ(got.images[49 * 4 + 2], 1.0f) << "row 49 is sample 249";
      for (int row = 50; row < 100; ++row) {
        EXPECT_EQ(reinterpret_cast<const int32_t *>(got.targets)[row], 0);
        EXPECT_EQ(got.images[row * 4 + 2], 0.0f) << "padding row " << row;
      }
    }
    prefetcher.release(b);
  }
}

TEST(Prefetcher, NeverGathersMoreThanItsSlotsAhead) {
  Dataset data = makeData(1000);
  Batcher batcher(data, 10, BatchOrder::Shuffled, Remainder::Drop, 1);
  Slots slots(3, 10);
  Prefetcher prefetcher(0, 10, 4, slots.pointers());
  prefetcher.start(batcher, 0, 100);
  // Batch 0 held and unreleased: the loader fills slots 0..2 and then must wait, so batch 1's
  // slot keeps its contents however long the reader takes.
  Prefetcher::Batch first = prefetcher.acquire(0);
  Prefetcher::Batch second = prefetcher.acquire(1);
  std::vector<float> copy(second.images, second.images + 40);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(0, std::memcmp(copy.data(), second.images, copy.size() * sizeof(float)));
  (void)first;
  // Batch 3 would need slot 0, still held by batch 0: it is not gathered yet.
  auto waiting = std::async(std::launch::async, [&] { return prefetcher.acquire(3).images; });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  prefetcher.release(0);
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  std::vector<float> images(40);
  std::vector<int32_t> labels(10);
  batcher.fillBatch(3, 0, 10, images.data(), labels.data());
  EXPECT_EQ(0, std::memcmp(waiting.get(), images.data(), images.size() * sizeof(float)));
  EXPECT_GT(prefetcher.waitSeconds(), 0.1) << "the reader of batch 3 waited";
}

TEST(Prefetcher, StopReleasesAWaitingReader) {
  Dataset data = makeData(1000);
  Batcher batcher(data, 10, BatchOrder::Shuffled, Remainder::Drop, 1);
  Slots slots(1, 10);
  Prefetcher prefetcher(0, 10, 4, slots.pointers());
  prefetcher.start(batcher, 0, 100);
  prefetcher.acquire(0);
  // One slot, held by batch 0: batch 1 never comes until 0 is released.
  auto waiting = std::async(std::launch::async, [&] {
    try {
      prefetcher.acquire(1);
      return std::string("no error");
    } catch (const Error &e) {
      return std::string(e.what());
    }
  });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  prefetcher.stop();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_NE(waiting.get().find("stopped before batch 1"), std::string::npos);
}

TEST(Prefetcher, RefusesBatchesOutsideThePassAndReleasesOutOfOrder) {
  Dataset data = makeData(100);
  Batcher batcher(data, 10, BatchOrder::Sequential, Remainder::Drop);
  Slots slots(2, 10);
  Prefetcher prefetcher(0, 10, 4, slots.pointers());
  EXPECT_THROW(prefetcher.acquire(0), Error) << "before any pass";
  prefetcher.start(batcher, 2, 5);
  EXPECT_THROW(prefetcher.acquire(1), Error);
  EXPECT_THROW(prefetcher.acquire(5), Error);
  prefetcher.acquire(2);
  EXPECT_THROW(prefetcher.release(3), Error);
  prefetcher.release(2);
  EXPECT_THROW(prefetcher.acquire(2), Error) << "released";
  // A new pass starts over.
  prefetcher.start(batcher, 0, 2);
  prefetcher.acquire(0);
  prefetcher.release(0);
  EXPECT_THROW(Prefetcher(5, 4, 4, slots.pointers()), Error);
  EXPECT_THROW(Prefetcher(0, 4, 4, {}), Error);
}

// A rank whose rows of the padded last evaluation batch are all past the data runs no step on
// it and releases it unread: the release waits for the loader to gather it (it threw "out of
// order" when it came first, ending 3-rank jobs at random in their test evaluation).
TEST(Prefetcher, ABatchReleasedUnreadIsWaitedFor) {
  Dataset data = makeData(1000);
  Batcher batcher(data, 10, BatchOrder::Sequential, Remainder::Drop);
  for (int round = 0; round < 200; ++round) {
    Slots slots(1, 10);
    Prefetcher prefetcher(0, 10, 4, slots.pointers());
    prefetcher.start(batcher, 0, 3);
    prefetcher.acquire(0);
    // One slot: batch 1 is gathered only once batch 0 is released, so releasing 1 right after
    // 0 comes before the loader has gathered it.
    prefetcher.release(0);
    ASSERT_NO_THROW(prefetcher.release(1)) << "round " << round;
    EXPECT_NO_THROW(prefetcher.acquire(2));
    prefetcher.release(2);
  }
}

TEST(Prefetcher, ALoaderErrorReachesTheReader) {
  Dataset data = makeData(100);
  Batcher batcher(data, 10, BatchOrder::Sequential, Remainder::Drop);
  Slots slots(2, 20);
  // Rows 0..20 of batches of 10: the gather refuses the range.
  Prefetcher prefetcher(0, 20, 4, slots.pointers());
  prefetcher.start(batcher, 0, 3);
  try {
    prefetcher.acquire(0);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace dp::rt
