// The replica engine in one process: R = 1..4 replica threads average random buckets exactly
// over several steps; a replica that never starts a bucket is named when the others time out;
// abort() wakes the waiters; misuse is reported.
#include "runtime/comm/Comm.h"

#include "runtime/base/Heartbeat.h"
#include "runtime/comm/Internal.h"

#include "test/unit/ErrorMatchers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace dp::rt {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

std::vector<BucketInfo> makeBuckets(const std::vector<int64_t> &sizes) {
  std::vector<BucketInfo> buckets;
  for (size_t i = 0; i < sizes.size(); ++i) {
    BucketInfo b;
    b.index = static_cast<int>(i);
    b.elements = sizes[i];
    b.tensors = "layer" + std::to_string(i) + ".kernel, layer" + std::to_string(i) + ".bias";
    b.loc = "model.mlir:" + std::to_string(10 + i) + ":3";
    buckets.push_back(b);
  }
  return buckets;
}

/// Replica `replica`'s copy of a bucket at a step: random, but the same in every thread.
std::vector<float> contents(int step, int replica, int bucket, int64_t n) {
  std::mt19937 rng(static_cast<uint32_t>(step * 1000003 + replica * 1009 + bucket));
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> data(n);
  for (float &x : data)
    x = value(rng);
  return data;
}

/// The engine's mean: the sum in a binary tree over the replicas' indices, ((0 + 1) + (2 + 3))
/// + ..., times 1/R (all in float).
std::vector<float> expectedMean(int step, int replicas, int bucket, int64_t n) {
  std::vector<std::vector<float>> partial;
  for (int r = 0; r < replicas; ++r)
    partial.push_back(contents(step, r, bucket, n));
  for (int stride = 1; stride < replicas; stride *= 2)
    for (int r = 0; r + stride < replicas; r += 2 * stride)
      for (int64_t i = 0; i < n; ++i)
        partial[r][i] += partial[r + stride][i];
  std::vector<float> sum = partial[0];
  for (float &x : sum)
    x *= 1.0f / static_cast<float>(replicas);
  return sum;
}

/// Runs `replicas` threads over `steps` steps; `interleave` waits for each bucket right after
/// starting the next (as a backward pass overlaps), else starts all and then waits for all.
/// Returns the number of mismatching elements.
int64_t runReplicas(int replicas, const std::vector<int64_t> &sizes, int steps, bool interleave,
                    std::vector<int> order = {}) {
  auto group = ProcessGroup::create(false);
  std::vector<BucketInfo> buckets = makeBuckets(sizes);
  if (!order.empty()) {
    std::vector<BucketInfo> reordered;
    for (int b : order)
      reordered.push_back(buckets[b]);
    buckets = reordered;
  }
  Collectives engine(*group, replicas, buckets, 10.0);
  std::vector<int64_t> wrong(replicas, 0);
  std::vector<std::string> errors(replicas);
  std::vector<std::thread> threads;
  for (int r = 0; r < replicas; ++r)
    threads.emplace_back([&, r] {
      try {
        std::vector<std::vector<float>> data(buckets.size());
        for (int step = 0; step < steps; ++step) {
          for (size_t k = 0; k < buckets.size(); ++k) {
            const BucketInfo &b = buckets[k];
            data[k] = contents(step, r, b.index, b.elements);
            engine.start(b.index, r, data[k].data());
            if (interleave && k > 0)
              engine.wait(buckets[k - 1].index, r);
          }
          for (size_t k = interleave ? buckets.size() - 1 : 0; k < buckets.size(); ++k)
            engine.wait(buckets[k].index, r);
          for (size_t k = 0; k < buckets.size(); ++k) {
            const BucketInfo &b = buckets[k];
            std::vector<float> want = expectedMean(step, replicas, b.index, b.elements);
            for (int64_t i = 0; i < b.elements; ++i)
              wrong[r] += data[k][i] != want[i];
          }
        }
      } catch (const std::exception &e) {
        errors[r] = e.what();
        engine.abort(e.what());
      }
    });
  for (std::thread &t : threads)
    t.join();
  int64_t total = 0;
  for (int r = 0; r < replicas; ++r) {
    EXPECT_EQ(errors[r], "") << "replica " << r;
    total += wrong[r];
  }
  if (replicas > 1) {
    EXPECT_GE(engine.reduceSeconds(), 0.0);
    EXPECT_GE(engine.waitSeconds(), 0.0);
  }
  return total;
}

class CollectivesReplicas : public ::testing::TestWithParam<int> {};

TEST_P(CollectivesReplicas, EveryReplicaHoldsTheExactMean) {
  EXPECT_EQ(runReplicas(GetParam(), {1000, 3, 25000, 1, 4096}, 6, false), 0);
}

TEST_P(CollectivesReplicas, OverlappedWaitsHoldTheExactMean) {
  EXPECT_EQ(runReplicas(GetParam(), {513, 7000, 64}, 8, true), 0);
}

TEST_P(CollectivesReplicas, ManifestOrderAndIndicesMayDiffer) {
  // The manifest lists bucket 2 first: the replicas start buckets in that order.
  EXPECT_EQ(runReplicas(GetParam(), {100, 200, 300}, 4, true, {2, 0, 1}), 0);
}

TEST_P(CollectivesReplicas, EmptyBucketsAndManySteps) {
  EXPECT_EQ(runReplicas(GetParam(), {0, 5, 0}, 200, false), 0);
}

INSTANTIATE_TEST_SUITE_P(R, CollectivesReplicas, ::testing::Values(1, 2, 3, 4));

TEST(Collectives, OneReplicaLeavesTheBufferAlone) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 1, makeBuckets({3}), 1.0);
  float data[3] = {1.5f, -2.0f, 3.25f};
  engine.start(0, 0, data);
  engine.wait(0, 0);
  EXPECT_EQ(data[0], 1.5f);
  EXPECT_EQ(data[1], -2.0f);
  EXPECT_EQ(data[2], 3.25f);
}

TEST(Collectives, RefusesACollectiveItDoesNotRun) {
  auto group = ProcessGroup::create(false);
  std::vector<BucketInfo> buckets = makeBuckets({3, 4});
  buckets[1].kind = CollectiveKind::ReduceScatter;
  EXPECT_DP_ERROR(Collectives(*group, 2, buckets, 1.0), ErrorKind::Plan,
                  "bucket 1 is reduce_scatter over world, but the MPI engine runs allreduce_mean "
                  "over world only");
  buckets[1].kind = CollectiveKind::AllReduceMean;
  buckets[1].group = GroupKind::Node;
  buckets[1].groupId = 0;
  EXPECT_DP_ERROR(Collectives(*group, 2, buckets, 1.0), ErrorKind::Plan,
                  "bucket 1 is allreduce_mean over node 0, but the MPI engine");
}

// Sharded optimizer state: a parameter's bucket goes from its root replica, as it is, to the
// others, between allreduces of the manifest, step after step; a root outside the replicas
// is refused.
TEST(Collectives, ABroadcastCopiesTheRootsBufferToTheOthers) {
  auto group = ProcessGroup::create(false);
  std::vector<BucketInfo> buckets = makeBuckets({4, 3});
  buckets[1].kind = CollectiveKind::Broadcast;
  buckets[1].group = GroupKind::Replicas;
  buckets[1].root = 2;
  Collectives engine(*group, 3, buckets, 10.0);
  std::vector<std::vector<float>> grads(3, std::vector<float>(4)), params(3, std::vector<float>(3));
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      for (int step = 0; step < 5; ++step) {
        for (float &g : grads[r])
          g = float(r + step);
        for (size_t i = 0; i < 3; ++i)
          params[r][i] = r == 2 ? 0.1f * float(i + step) + 1e-8f : -float(r);
        engine.start(0, r, grads[r].data());
        engine.start(1, r, params[r].data());
        engine.wait(0, r);
        engine.wait(1, r);
        for (size_t i = 0; i < 3; ++i)
          EXPECT_EQ(params[r][i], 0.1f * float(i + step) + 1e-8f) << "replica " << r;
        EXPECT_EQ(grads[r][0], float(1 + step)) << "the mean of 0, 1, 2 plus the step";
      }
    });
  for (std::thread &t : threads)
    t.join();
  buckets[1].root = 3;
  EXPECT_DP_ERROR(Collectives(*group, 3, buckets, 1.0), ErrorKind::Plan,
                  "bucket 1 is a broadcast from replica 3, but the process has 3 replica(s)");
}

TEST(Collectives, ReplicaThatNeverStartsIsNamed) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 3, makeBuckets({16, 8}), 0.3);
  std::vector<std::string> errors(2);
  std::vector<double> seconds(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      std::vector<float> a(16, 1.0f), b(8, 1.0f);
      Clock::time_point begin = Clock::now();
      try {
        engine.start(0, r, a.data());
        engine.start(1, r, b.data());
        engine.wait(0, r);
      } catch (const Error &e) {
        errors[r] = e.kind() == ErrorKind::Launch ? e.what() : "wrong kind";
      }
      seconds[r] = secondsSince(begin);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("allreduce of bucket 0 (layer0.kernel, layer0.bias; model.mlir:10:3) "
                             "timed out after 0.3 s"),
              std::string::npos)
        << errors[r];
    EXPECT_NE(errors[r].find("replica 2 never started it (replicas 0, 1 did)"), std::string::npos)
        << errors[r];
    EXPECT_LT(seconds[r], 3.0); // the timeout, and a second look that found no work done
  }
  // Later waits fail at once with the same message.
  EXPECT_DP_ERROR(engine.wait(1, 0), ErrorKind::Launch, "replica 2 never started it");
}

TEST(Collectives, ReplicaThatIsBehindButWorksIsWaitedFor) {
  // Replica 2 starts long after the 0.3 s timeout, but its kernels keep counting in the process's
  // heartbeat meanwhile: the others wait for it, and the average is right.
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 3, makeBuckets({16, 8}), 0.3);
  std::vector<std::string> errors(3);
  std::vector<std::vector<float>> a(3), b(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      a[r].assign(16, float(r));
      b[r].assign(8, float(2 * r));
      try {
        if (r == 2)
          for (Clock::time_point begin = Clock::now(); secondsSince(begin) < 1.5;) {
            heartbeat::beat();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        engine.start(0, r, a[r].data());
        engine.start(1, r, b[r].data());
        engine.wait(0, r);
        engine.wait(1, r);
      } catch (const Error &e) {
        errors[r] = e.what();
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(errors[r], "");
    EXPECT_EQ(a[r][15], 1.0f);
    EXPECT_EQ(b[r][7], 2.0f);
  }
}

TEST(StallWatch, WaitsWhileSomeRankWorks) {
  comm::StallWatch watch;
  // Rank 1 (this one) asked ranks 0 and 2: the first look takes their counts.
  EXPECT_EQ(watch.next({"", {10, -1, 7}}, 20), 5);
  EXPECT_EQ(watch.stalled(), "");
  // Rank 2 worked since: wait a whole timeout more.
  EXPECT_EQ(watch.next({"", {10, -1, 9}}, 20), 20);
  // Nobody worked since: give up.
  EXPECT_EQ(watch.next({"", {10, -1, 9}}, 20), 0);
  EXPECT_EQ(watch.stalled(), ", with no progress on the other ranks in the last 20 s");
}

TEST(StallWatch, GivesUpAtOnceOnARankThatDoesNotAnswer) {
  // This rank is 0 of 3; rank 2 did not answer.
  comm::StallWatch watch;
  EXPECT_EQ(watch.next({"", {-1, 3, -1}}, 20), 0);
  comm::StallWatch later;
  EXPECT_EQ(later.next({"", {-1, 3}}, 0.3), 0.3); // short timeouts are rechecked after as long
  EXPECT_EQ(later.next({"", {-1, 3}}, 0.3), 0);
  comm::StallWatch alone;
  EXPECT_EQ(alone.next({"no other process", {}}, 20), 0);
}

TEST(Collectives, AbortWakesWaiters) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 2, makeBuckets({4}), 30.0);
  std::string error;
  double seconds = 0;
  std::thread waiter([&] {
    std::vector<float> data(4, 1.0f);
    Clock::time_point begin = Clock::now();
    try {
      engine.start(0, 0, data.data());
      engine.wait(0, 0);
    } catch (const Error &e) {
      error = e.what();
    }
    seconds = secondsSince(begin);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  engine.abort("replica 1 failed: out of memory");
  waiter.join();
  EXPECT_EQ(error, "replica 1 failed: out of memory");
  EXPECT_LT(seconds, 5.0);
  EXPECT_DP_ERROR(engine.wait(0, 0), ErrorKind::Launch, "replica 1 failed");
}

TEST(Collectives, AbortWithOneReplica) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 1, makeBuckets({4}), 30.0);
  float data[4] = {};
  engine.start(0, 0, data);
  engine.abort("stop");
  EXPECT_DP_ERROR(engine.wait(0, 0), ErrorKind::Launch, "stop");
}

TEST(Collectives, NoTimeoutWaitsAsLongAsNeeded) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 2, makeBuckets({2}), 0);
  std::vector<float> a = {1, 2}, b = {3, 4};
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    engine.start(0, 1, b.data());
    engine.wait(0, 1);
  });
  engine.start(0, 0, a.data());
  engine.wait(0, 0);
  late.join();
  EXPECT_EQ(a, (std::vector<float>{2, 3}));
  EXPECT_EQ(b, (std::vector<float>{2, 3}));
  EXPECT_GT(engine.waitSeconds(), 0.05);
}

TEST(Collectives, MisuseIsReported) {
  auto group = ProcessGroup::create(false);
  Collectives engine(*group, 2, makeBuckets({2, 2}), 1.0);
  float data[2] = {};
  EXPECT_DP_ERROR(engine.start(5, 0, data), ErrorKind::Runtime, "bucket 5 is not in the manifest");
  EXPECT_DP_ERROR(engine.start(0, 2, data), ErrorKind::Runtime, "replica 2 is outside 0..1");
  EXPECT_DP_ERROR(engine.wait(1, 0), ErrorKind::Runtime, "never started");
  EXPECT_DP_ERROR(engine.start(0, 0, nullptr), ErrorKind::Runtime, "without a buffer");
  engine.start(0, 0, data);
  EXPECT_DP_ERROR(engine.start(0, 0, data), ErrorKind::Runtime, "again before");
  EXPECT_DP_ERROR(Collectives(*group, 0, makeBuckets({1}), 1.0), ErrorKind::Runtime,
                  "at least one");
  std::vector<BucketInfo> twice = makeBuckets({1, 1});
  twice[1].index = 0;
  EXPECT_DP_ERROR(Collectives(*group, 2, twice, 1.0), ErrorKind::Runtime, "listed twice");
}

} // namespace
} // namespace dp::rt
