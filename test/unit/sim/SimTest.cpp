#include "sim/Model.h"
#include "sim/Schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace dp::sim {
namespace {

/// The message of `e`, "" for success.
std::string messageOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : ""; }

Link link(double latencyUs, double gbps) {
  Link l;
  l.latencyUs = latencyUs;
  l.bandwidthGBps = gbps;
  return l;
}

TEST(Allreduce, RingTreeAndReduceFormulas) {
  const Link l = link(10, 1); // 10 us, 1 GB/s: 1 MB takes 1 ms
  EXPECT_DOUBLE_EQ(ringAllreduce(1, 1e6, l), 0);
  // 2(p-1) latencies and 2(p-1)/p of the data.
  EXPECT_NEAR(ringAllreduce(4, 1e6, l), 6 * 10e-6 + 1.5e-3, 1e-12);
  // 2 ceil(log2 p) latencies and twice the data.
  EXPECT_NEAR(treeAllreduce(5, 1e6, l), 6 * 10e-6 + 2e-3, 1e-12);
  // Large messages ring, small ones climb trees.
  EXPECT_DOUBLE_EQ(allreduce(64, 1e8, l), ringAllreduce(64, 1e8, l));
  EXPECT_DOUBLE_EQ(allreduce(64, 1e3, l), treeAllreduce(64, 1e3, l));
  EXPECT_NEAR(treeReduce(8, 1e6, l), 3 * (10e-6 + 1e-3), 1e-12);
  EXPECT_DOUBLE_EQ(treeReduce(1, 1e6, l), 0);
  // (p-1) latencies and (p-1)/p of the data: half a ring allreduce.
  EXPECT_NEAR(ringReduceScatter(4, 1e6, l), 3 * 10e-6 + 0.75e-3, 1e-12);
  EXPECT_DOUBLE_EQ(ringReduceScatter(1, 1e6, l), 0);
  // Recursive halving: ceil(log2 p) latencies, the same data; the faster is taken.
  EXPECT_NEAR(halvingReduceScatter(5, 1e6, l), 3 * 10e-6 + 0.8e-3, 1e-12);
  EXPECT_DOUBLE_EQ(reduceScatter(5, 1e6, l), halvingReduceScatter(5, 1e6, l));
  EXPECT_DOUBLE_EQ(reduceScatter(2, 1e6, l), ringReduceScatter(2, 1e6, l));
}

Topology machine(int nodes, int ranksPerNode, int devicesPerRank) {
  Topology t;
  t.device = link(1, 10);
  t.host = link(5, 2);
  t.network = link(20, 0.5);
  t.nodes = nodes;
  t.ranksPerNode = ranksPerNode;
  t.devicesPerRank = devicesPerRank;
  return t;
}

TEST(Allreduce, AReduceScatteredBucketCostsHalfARingUnderFlatSums) {
  Topology t = machine(1, 4, 2);
  const BucketCost all = bucketCost(1e6, t, Layout::Flat), half = scatterCost(1e6, t, Layout::Flat);
  EXPECT_DOUBLE_EQ(half.device, all.device); // the replicas' sum in memory is the same
  EXPECT_NEAR(half.host, reduceScatter(4, 1e6, t.host), 1e-12);
  EXPECT_LT(half.host, 0.6 * all.host);
  // Across nodes the ring runs at the network's pace.
  t = machine(2, 2, 1);
  EXPECT_NEAR(scatterCost(1e6, t, Layout::Flat).network, reduceScatter(4, 1e6, t.network), 1e-12);
  // Hierarchical: reduced within the node, reduce-scattered over the 2 leaders (half the
  // bucket each), then the leader sends its other rank its quarter.
  const BucketCost hier = scatterCost(1e6, t, Layout::Hierarchical);
  EXPECT_NEAR(hier.network, reduceScatter(2, 1e6, t.network), 1e-12);
  EXPECT_NEAR(hier.host, treeReduce(2, 1e6, t.host) + t.host.latency() + t.host.transfer(0.25e6),
              1e-12);
  EXPECT_LT(hier.total(), bucketCost(1e6, t, Layout::Hierarchical).total());
  // The tree: up as a sum, then back down in each subtree's segments: rank 0 sends node 1's
  // half across (1 message), then each node's leader its other rank's quarter.
  const BucketCost tree = scatterCost(1e6, t, Layout::Tree);
  EXPECT_NEAR(tree.host, treeReduce(2, 1e6, t.host) + t.host.latency() + t.host.transfer(0.25e6),
              1e-12);
  EXPECT_NEAR(tree.network,
              treeReduce(2, 1e6, t.network) + t.network.latency() + t.network.transfer(0.5e6),
              1e-12);
  EXPECT_LT(tree.total(), bucketCost(1e6, t, Layout::Tree).total());
  // At 4,096 ranks rank 0 sends 12 messages down, not 4,095.
  t = machine(512, 8, 1);
  EXPECT_NEAR(scatterCost(1e6, t, Layout::Tree).network,
              treeReduce(512, 1e6, t.network) + 9 * t.network.latency() +
                  t.network.transfer(1e6 * 511 / 512),
              1e-12);
}

TEST(Allreduce, BucketCostByLevelAndLayout) {
  const double bytes = 1e6;
  // One rank: only the replicas' sum in memory and the copy back.
  BucketCost one = bucketCost(bytes, machine(1, 1, 4), Layout::Flat);
  EXPECT_NEAR(one.device, 1e-6 + 2 * 3 * bytes / 10e9, 1e-12);
  EXPECT_EQ(one.host + one.network, 0);
  // One node: the host link.
  BucketCost node = bucketCost(bytes, machine(1, 4, 1), Layout::Hierarchical);
  EXPECT_DOUBLE_EQ(node.host, allreduce(4, bytes, machine(1, 4, 1).host));
  EXPECT_EQ(node.network, 0);
  // Flat across nodes: every rank in one ring at the network's pace.
  Topology t = machine(4, 8, 1);
  BucketCost flat = bucketCost(bytes, t, Layout::Flat);
  EXPECT_DOUBLE_EQ(flat.network, allreduce(32, bytes, t.network));
  EXPECT_EQ(flat.host, 0);
  // Hierarchical: reduce and broadcast on the host, the leaders' allreduce on the network.
  BucketCost hier = bucketCost(bytes, t, Layout::Hierarchical);
  EXPECT_DOUBLE_EQ(hier.host, 2 * treeReduce(8, bytes, t.host));
  EXPECT_DOUBLE_EQ(hier.network, allreduce(4, bytes, t.network));
  EXPECT_LT(hier.network, flat.network);
  // dp's tree (--reproducible): the whole bucket up and down 3 levels within the node and 2
  // across, by hand: 2 x levels x (latency + bytes / bandwidth).
  BucketCost tree = bucketCost(bytes, t, Layout::Tree);
  EXPECT_NEAR(tree.host, 2 * 3 * (t.host.latency() + bytes / (t.host.bandwidthGBps * 1e9)), 1e-12);
  EXPECT_NEAR(tree.network, 2 * 2 * (t.network.latency() + bytes / (t.network.bandwidthGBps * 1e9)),
              1e-12);
  EXPECT_GT(tree.network, flat.network);
  // 3 ranks on one node: the aligned tree has 2 levels.
  EXPECT_NEAR(bucketCost(bytes, machine(1, 3, 1), Layout::Tree).host,
              2 * 2 * (t.host.latency() + bytes / (t.host.bandwidthGBps * 1e9)), 1e-12);
}

rt::KernelDesc kernel(rt::KernelKind kind, int device) {
  rt::KernelDesc k;
  k.kind = kind;
  k.device = device;
  return k;
}

rt::KernelDesc collective(rt::KernelKind kind, int bucket) {
  rt::KernelDesc k = kernel(kind, -1);
  rt::CollectiveAttrs attrs;
  attrs.bucket = bucket;
  k.attrs = attrs;
  return k;
}

/// Per replica: 4 kernels; bucket 0 starts after the second and is waited for after the fourth,
/// bucket 1 starts after the third and is waited for last.
rt::Plan twoBucketPlan(int processes, std::vector<int> order = {0, 1}) {
  rt::Plan plan;
  plan.model = "m";
  plan.batch = 8 * processes;
  plan.processes = processes;
  for (int b : order) {
    rt::CollectiveDesc c;
    c.kind = rt::CollectiveKind::AllReduceMean;
    c.bucket = b;
    c.elements = b == 0 ? 250000 : 25000; // 1 MB and 100 kB
    c.tensors = {"w" + std::to_string(b)};
    plan.collectives.push_back(c);
  }
  using K = rt::KernelKind;
  auto &ks = plan.train.kernels;
  ks.push_back(kernel(K::Dense, 0));
  ks.push_back(kernel(K::MatMul, 0));
  ks.push_back(collective(K::AllReduceStart, order[0]));
  ks.push_back(kernel(K::MatMul, 0));
  ks.push_back(collective(K::AllReduceStart, order[1]));
  ks.push_back(kernel(K::SgdUpdate, 0));
  ks.push_back(collective(K::AllReduceWait, 0));
  ks.push_back(collective(K::AllReduceWait, 1));
  return plan;
}

/// predict's answer, which must not be a refusal.
Prediction predicted(const rt::Plan &plan, const Profile &profile, const Topology &t,
                     Layout layout, double computeScale = 1.0) {
  llvm::Expected<Prediction> p = predict(plan, profile, t, layout, computeScale);
  if (!p) {
    ADD_FAILURE() << "refused: " << llvm::toString(p.takeError());
    return Prediction();
  }
  return std::move(*p);
}

/// The message of predict's refusal, "" when it predicts.
std::string refusalOf(const rt::Plan &plan, const Profile &profile, const Topology &t,
                      double computeScale = 1.0) {
  llvm::Expected<Prediction> p = predict(plan, profile, t, Layout::Flat, computeScale);
  return p ? "" : llvm::toString(p.takeError());
}

Profile profileOf(const rt::Plan &plan, std::vector<double> us, double stepUs) {
  Profile p;
  p.path = "profile.json";
  p.model = plan.model;
  p.globalBatch = plan.batch;
  p.replicasPerProcess = 1;
  p.processes = plan.processes;
  p.stepsMeasured = 3;
  p.stepUs = stepUs;
  const char *kinds[] = {"dense", "matmul", "matmul", "sgd_update"};
  for (size_t i = 0; i < us.size(); ++i)
    p.kernels.push_back({int64_t(i), kinds[i], us[i]});
  return p;
}

TEST(Predict, OverlapsBucketsWithTheKernelsAfterTheirStart) {
  rt::Plan plan = twoBucketPlan(2);
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1100); // 100 us on the host
  ASSERT_EQ(messageOf(matchProfile(plan, profile)), "");
  Topology t = machine(2, 1, 1);
  t.network = link(0, 1); // 1 MB: 1000 us (ring over 2: n / bandwidth)
  Prediction p = predicted(plan, profile, t, Layout::Flat);
  ASSERT_EQ(p.buckets.size(), 2u);
  // Bucket 0 is ready after host + 2 kernels = 400 us and takes 1000 us.
  EXPECT_DOUBLE_EQ(p.buckets[0].readyUs, 400);
  EXPECT_DOUBLE_EQ(p.buckets[0].endUs, 1400);
  // Bucket 1 is ready at 700 us but waits for the network until 1400, then 100 us.
  EXPECT_DOUBLE_EQ(p.buckets[1].readyUs, 700);
  EXPECT_DOUBLE_EQ(p.buckets[1].startUs, 1400);
  EXPECT_DOUBLE_EQ(p.buckets[1].endUs, 1500);
  // The replica reaches the first wait at 1100 us: 300 + 100 us exposed.
  EXPECT_DOUBLE_EQ(p.stepUs, 1500);
  EXPECT_DOUBLE_EQ(p.computeUs, 1100);
  EXPECT_DOUBLE_EQ(p.exposedUs, 400);
  EXPECT_DOUBLE_EQ(p.commUs, 1100);
  EXPECT_NEAR(p.hidden(), 1.0 - 400.0 / 1100.0, 1e-12);
  EXPECT_NEAR(p.efficiency(), 1100.0 / 1500.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.samplesPerSecond(), 16 * 1e6 / 1500);
  // A faster compute hides less; a single device communicates nothing.
  Prediction fast = predicted(plan, profile, t, Layout::Flat, 0.5);
  EXPECT_DOUBLE_EQ(fast.computeUs, 550);
  EXPECT_GT(fast.exposedUs, p.exposedUs);
  Prediction alone = predicted(plan, profile, machine(1, 1, 1), Layout::Flat);
  EXPECT_DOUBLE_EQ(alone.stepUs, 1100);
  EXPECT_TRUE(alone.buckets.empty());
}

// Gradient accumulation over 2 micro-shards: the kernels outside the final phase run twice a
// step (the profile's time is a run's), the first micro-shard alone, the collectives, the
// update and the waits only on the last, whose backward pass the buckets overlap.
TEST(Predict, AccumulationComputesTheFirstMicroShardsAloneAndOverlapsTheLast) {
  rt::Plan plan = twoBucketPlan(2);
  plan.accumulation = 2;
  for (rt::KernelDesc &k : plan.train.kernels)
    k.final = rt::isCollective(k.kind) || k.kind == rt::KernelKind::SgdUpdate;
  // 100 us on the host: 1700 - (100 + 200 + 300) x 2 - 400.
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1700);
  ASSERT_EQ(messageOf(matchProfile(plan, profile)), "");
  EXPECT_EQ(profile.kernels[0].runs, 2);
  EXPECT_EQ(profile.kernels[3].runs, 1);
  EXPECT_DOUBLE_EQ(profile.kernelUs(), 1600);
  EXPECT_DOUBLE_EQ(profile.hostUs(), 100);
  Topology t = machine(2, 1, 1);
  t.network = link(0, 1);
  Prediction p = predicted(plan, profile, t, Layout::Flat);
  // The step without accumulation (OverlapsBucketsWithTheKernelsAfterTheirStart), 600 us
  // later: the first micro-shard's kernels come before it, and the buckets wait as much.
  const rt::Plan whole = twoBucketPlan(2);
  const Prediction once = predicted(whole, profileOf(whole, {100, 200, 300, 400}, 1100), t,
                                    Layout::Flat);
  ASSERT_EQ(p.buckets.size(), 2u);
  ASSERT_EQ(once.buckets.size(), 2u);
  for (size_t b = 0; b < 2; ++b) {
    EXPECT_DOUBLE_EQ(p.buckets[b].readyUs, once.buckets[b].readyUs + 600);
    EXPECT_DOUBLE_EQ(p.buckets[b].endUs, once.buckets[b].endUs + 600);
  }
  EXPECT_DOUBLE_EQ(p.buckets[0].readyUs, 1000);
  EXPECT_DOUBLE_EQ(p.stepUs, once.stepUs + 600);
  EXPECT_DOUBLE_EQ(p.computeUs, 1700);
  EXPECT_DOUBLE_EQ(p.exposedUs, once.exposedUs);
}

// Sharded optimizer state: a broadcast bucket (an owner's parameters) from the device that updated
// it costs (R - 1) copies at the device level and nothing across ranks; it starts after its update,
// and the step waits for it at its end.
TEST(Predict, ABroadcastCopiesAtTheDeviceLevelAfterTheAllreduces) {
  const Topology t = machine(2, 1, 4);
  const BucketCost cost = broadcastCost(1e6, t);
  EXPECT_NEAR(cost.device, 1e-6 + 3 * 1e6 / 10e9, 1e-12);
  EXPECT_EQ(cost.host + cost.network, 0);
  EXPECT_EQ(broadcastCost(1e6, machine(4, 8, 1)).total(), 0) << "one device a rank: nothing";

  rt::Plan plan = twoBucketPlan(2);
  plan.devicesPerProcess = 4;
  plan.batch = 8 * 2 * 4;
  rt::CollectiveDesc c;
  c.kind = rt::CollectiveKind::Broadcast;
  c.group = rt::GroupKind::Replicas;
  c.root = 1;
  c.bucket = 2;
  c.elements = 250000; // 1 MB
  c.tensors = {"w0"};
  plan.collectives.push_back(c);
  auto &ks = plan.train.kernels;
  ks.push_back(collective(rt::KernelKind::BroadcastStart, 2));
  ks.push_back(collective(rt::KernelKind::BroadcastWait, 2));
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1100);
  Topology net = t;
  net.network = link(0, 1);
  Prediction p = predicted(plan, profile, net, Layout::Flat);
  ASSERT_EQ(p.buckets.size(), 3u);
  const BucketTiming &b = p.buckets[2];
  EXPECT_TRUE(b.broadcast);
  EXPECT_FALSE(p.buckets[0].broadcast);
  // Started after the update and the allreduces' waits before it (the engine is free then).
  EXPECT_GT(p.buckets[1].endUs, 1100);
  EXPECT_DOUBLE_EQ(b.readyUs, p.buckets[1].endUs);
  EXPECT_DOUBLE_EQ(b.startUs, b.readyUs);
  EXPECT_NEAR(b.endUs - b.startUs, cost.total() * 1e6, 1e-9);
  EXPECT_DOUBLE_EQ(p.stepUs, b.endUs) << "the step ends with the broadcast's wait";
}

TEST(Predict, ABroadcastOverTheJobCrossesTheRanks) {
  // 2 nodes x 8 ranks x 4 devices: the owner's rank sends 1 MB to the 15 others over the
  // network's link (the faster of a binomial tree, 4 rounds, and a scatter with a ring
  // allgather), then each rank copies it to its 3 other devices.
  const Topology t = machine(2, 8, 4);
  const BucketCost cost = broadcastCost(1e6, t, /*acrossRanks=*/true);
  EXPECT_NEAR(cost.device, 1e-6 + 3 * 1e6 / 10e9, 1e-12);
  EXPECT_NEAR(cost.network,
              std::min(4 * (20e-6 + 1e6 / 0.5e9), 2 * 15 * 20e-6 + 2.0 * 15 / 16 * 1e6 / 0.5e9),
              1e-12);
  EXPECT_EQ(cost.host, 0);
  // One node: the host's link.
  const BucketCost one = broadcastCost(1e6, machine(1, 4, 1), true);
  EXPECT_EQ(one.device + one.network, 0);
  EXPECT_NEAR(one.host, std::min(2 * (5e-6 + 1e6 / 2e9), 2 * 3 * 5e-6 + 1.5 * 1e6 / 2e9), 1e-12);
  EXPECT_EQ(broadcastCost(1e6, machine(1, 1, 4), true).host, 0) << "one rank: no crossing";
}

TEST(Predict, ComputeSlowsWhileBucketsMoveOnCoresTheThreadsFill) {
  rt::Plan plan = twoBucketPlan(2);
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1100);
  Topology t = machine(2, 1, 1);
  t.network = link(0, 1);
  // Unknown cores, or a core to spare: no change.
  profile.computeThreads = 1;
  EXPECT_DOUBLE_EQ(predicted(plan, profile, t, Layout::Flat).stepUs, 1500);
  t.coresPerNode = 2;
  EXPECT_DOUBLE_EQ(computeShareDuringAllreduce(t, 1), 1.0);
  EXPECT_DOUBLE_EQ(predicted(plan, profile, t, Layout::Flat).stepUs, 1500);
  // One thread on the node's one core: the engine's thread takes every other turn while a
  // bucket moves. Bucket 0 moves from 400 to 1400 us and bucket 1 (ready at 1000) from 1400
  // to 1500: the 300 us kernel takes 600 us (to 1000), the 400 us one does 250 us of its work
  // at half speed (to 1500) and the other 150 at full (to 1650).
  t.coresPerNode = 1;
  EXPECT_DOUBLE_EQ(computeShareDuringAllreduce(t, 1), 0.5);
  EXPECT_DOUBLE_EQ(computeShareDuringAllreduce(t, 3), 0.75);
  Prediction p = predicted(plan, profile, t, Layout::Flat);
  EXPECT_DOUBLE_EQ(p.buckets[1].readyUs, 1000);
  EXPECT_DOUBLE_EQ(p.stepUs, 1650);
  EXPECT_DOUBLE_EQ(p.sharedCoreUs, 550);
  EXPECT_DOUBLE_EQ(p.computeUs, 1100);
  EXPECT_DOUBLE_EQ(p.exposedUs, 0);
}

TEST(Predict, RefusesAProfileOfAnotherStep) {
  rt::Plan plan = twoBucketPlan(2);
  Profile other = profileOf(plan, {100, 200, 300, 400}, 1100);
  other.kernels[3].kind = "adam_update";
  EXPECT_NE(messageOf(matchProfile(plan, other)).find("'adam_update', the plan's is 'sgd_update'"),
            std::string::npos);
  other = profileOf(plan, {100, 200, 300, 400}, 1100);
  other.globalBatch = 32;
  EXPECT_NE(messageOf(matchProfile(plan, other)).find("measured 16 rows per replica, the plan has 8"),
            std::string::npos);
}

/// `text` contains `part` (with both in the failure message).
#define EXPECT_CONTAINS(text, part)                                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST(Predict, RefusesCountsAndProductsPastTheBounds) {
  rt::Plan plan = twoBucketPlan(2);
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1100); // 8 rows per replica
  // Each count within 2^30, the devices exactly 2^30: predicted.
  EXPECT_EQ(refusalOf(plan, profile, machine(1 << 10, 1 << 10, 1 << 10)), "");
  EXPECT_EQ(predicted(plan, profile, machine(1 << 10, 1 << 10, 1 << 10), Layout::Flat).globalBatch,
            int64_t(8) << 30);
  // Counts that multiply past int64 (2^90) or past 2^30 devices, and a count past 2^30 alone:
  // refused, never a negative global batch.
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(1 << 30, 1 << 30, 1 << 30)),
                  "1,073,741,824 node(s) x 1,073,741,824 rank(s) x 1,073,741,824 device(s) is "
                  "more than the 1,073,741,824 devices");
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(1 << 11, 1 << 10, 1 << 10)), "more than the");
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(2000000000, 1, 1)),
                  "2000000000 nodes is outside 1..1,073,741,824");
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(1, 0, 1)), "0 ranks per node is outside");
  // The global batch: 2^40 rows per replica (what a profile may claim) x 2^30 devices.
  profile.globalBatch = int64_t(1) << 41;
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(1 << 10, 1 << 10, 1 << 10)),
                  "a global batch of 1,099,511,627,776 rows per replica x 1,073,741,824 devices "
                  "is more than the 9,007,199,254,740,992 rows");
}

TEST(Predict, RefusesScalesAndResultsThatAreNotNumbers) {
  rt::Plan plan = twoBucketPlan(2);
  Profile profile = profileOf(plan, {100, 200, 300, 400}, 1100);
  const Topology t = machine(2, 1, 1);
  for (double scale : {0.0, -1.0, 1e308, std::nan(""), HUGE_VAL, 1e-7, 1e7})
    EXPECT_CONTAINS(refusalOf(plan, profile, t, scale), "a compute scale of");
  EXPECT_EQ(refusalOf(plan, profile, t, 1e6), "");
  // Times past a double's range (the struct, not a file, can hold them): refused, not inf.
  profile = profileOf(plan, {1e308, 1e308, 1e308, 1e308}, 0);
  EXPECT_CONTAINS(refusalOf(plan, profile, t), "the predicted step is not a finite number");
  Topology slow = t;
  slow.network = link(1e308, 1e-300);
  EXPECT_CONTAINS(refusalOf(plan, profileOf(plan, {1, 1, 1, 1}, 4), slow),
                  "the predicted step is not a finite number");
  // A step of 4e-300 us: samples per second past int64, which the table prints whole.
  profile = profileOf(plan, {1e-300, 1e-300, 1e-300, 1e-300}, 0);
  EXPECT_CONTAINS(refusalOf(plan, profile, machine(1, 1, 1)),
                  "samples/s, more than the 1e+18 dpc simulate reports");
}

const char *const kTopology = R"({"name": "t", "levels": {
  "device": {"latency_us": 0, "bandwidth_GBps": 10},
  "host": {"latency_us": 5, "bandwidth_GBps": 1},
  "network": {"latency_us": 10, "bandwidth_GBps": 0.1}}})";

std::string topologyRefusal(const std::string &text) {
  llvm::Expected<Topology> t = parseTopology(text, "t.json");
  return t ? "" : llvm::toString(t.takeError());
}

TEST(ReadTopology, RefusesDeepNestingBeforeParsing) {
  ASSERT_EQ(topologyRefusal(kTopology), "");
  // 100,000 levels would overflow the parser's stack: refused where level 65 opens.
  EXPECT_EQ(topologyRefusal(std::string(100000, '[')),
            "t.json:1:65: JSON nested deeper than 64 levels here; a profile or a topology "
            "nests 3");
  EXPECT_CONTAINS(topologyRefusal("{\n  \"a\": " + std::string(70, '{')),
                  "t.json:2:71: JSON nested");
  // 64 levels are left to the parser (this is not a topology, but it parses).
  EXPECT_CONTAINS(topologyRefusal(std::string(64, '[') + std::string(64, ']')),
                  "expected a JSON object");
  // Brackets in strings, escaped quotes among them, do not nest.
  std::string text = kTopology;
  text.insert(1, "\"source\": \"\\\"" + std::string(100, '[') + "\", ");
  EXPECT_EQ(topologyRefusal(text), "");
}

TEST(ReadTopology, RefusesTimesSpeedsAndCountsPastTheBounds) {
  auto with = [](const std::string &from, const std::string &to) {
    std::string text = kTopology;
    text.replace(text.find(from), from.size(), to);
    return topologyRefusal(text);
  };
  EXPECT_EQ(with("\"latency_us\": 10", "\"latency_us\": 1e308"),
            "t.json: levels.network: 'latency_us' is 1e+308, expected a number from 0 to 1e+09");
  EXPECT_CONTAINS(with("\"bandwidth_GBps\": 10", "\"bandwidth_GBps\": 1e300"),
                  "levels.device: 'bandwidth_GBps' is 1e+300, expected a number from 1e-09 to "
                  "1e+09");
  EXPECT_CONTAINS(with("\"bandwidth_GBps\": 1}", "\"bandwidth_GBps\": 0}"),
                  "levels.host: 'bandwidth_GBps' is 0, expected");
  // Each count within its bound (2^20), the product (2^60) past 2^30 devices.
  EXPECT_EQ(with("\"name\": \"t\"", "\"nodes\": 1048576, \"ranks_per_node\": 1048576, "
                                  "\"devices_per_rank\": 1048576"),
            "t.json: 1,048,576 node(s) x 1,048,576 rank(s) x 1,048,576 device(s) is more than "
            "the 1,073,741,824 devices dpc simulate predicts for");
  EXPECT_EQ(with("\"name\": \"t\"", "\"nodes\": 1048576, \"ranks_per_node\": 1024"), "");
}

TEST(ReadProfile, RefusesDeepNestingAndTimesPastTheBounds) {
  llvm::Expected<Profile> deep = parseProfile("{\"kernels\": " + std::string(100000, '[') +
                                                  std::string(100000, ']') + "}",
                                              "p.json");
  ASSERT_FALSE(deep);
  EXPECT_EQ(llvm::toString(deep.takeError()),
            "p.json:1:76: JSON nested deeper than 64 levels here; a profile or a topology nests 3");
  const std::string profile = R"({"global_batch": 16, "replicas_per_process": 1, "processes": 2,
    "nodes": 1, "steps_measured": 3, "step_us": {"mean": 1e13},
    "kernels": [{"index": 0, "kind": "dense", "mean_us": 1}]})";
  llvm::Expected<Profile> slow = parseProfile(profile, "p.json");
  ASSERT_FALSE(slow);
  EXPECT_EQ(llvm::toString(slow.takeError()),
            "p.json: step_us: 'mean' is 1e+13, expected a number from 0 to 1e+12");
}

TEST(Schedule, SamePlanEverywhereIsConsistent) {
  rt::Plan plan = twoBucketPlan(4);
  std::vector<const rt::Plan *> ranks(4, &plan);
  std::vector<std::string> names(4, "a.dpx");
  ScheduleCheck flat = checkSchedule(ranks, names, 1, Layout::Flat);
  EXPECT_TRUE(flat.ok) << flat.problems[0];
  ScheduleCheck hier = checkSchedule(ranks, names, 2, Layout::Hierarchical);
  EXPECT_TRUE(hier.ok);
  EXPECT_NE(hier.summary.find("5 communicators"), std::string::npos) << hier.summary;
}

TEST(Schedule, AnotherOrderOnOneRankDeadlocks) {
  rt::Plan plan = twoBucketPlan(2), swapped = twoBucketPlan(2, {1, 0});
  ScheduleCheck check = checkSchedule({&plan, &swapped}, {"a.dpx", "b.dpx"}, 1, Layout::Flat);
  ASSERT_FALSE(check.ok);
  EXPECT_EQ(check.problems[0].rfind("deadlock: the 1st collective on world pairs allreduce of "
                                    "bucket 0 (250000 f32: w0) on rank 0 (a.dpx) with allreduce "
                                    "of bucket 1 (25000 f32: w1) on rank 1 (b.dpx)",
                                    0),
            0u)
      << check.problems[0];
}

TEST(Schedule, SameSizesOfOtherTensorsAreWrongSums) {
  rt::Plan plan = twoBucketPlan(2), renamed = twoBucketPlan(2);
  renamed.collectives[0].tensors = {"other"};
  ScheduleCheck check = checkSchedule({&plan, &renamed}, {"a.dpx", "b.dpx"}, 1, Layout::Flat);
  ASSERT_FALSE(check.ok);
  EXPECT_EQ(check.problems[0].rfind("wrong sums: ", 0), 0u) << check.problems[0];
}

TEST(Schedule, AWaitBeforeItsBucketCanBePostedDeadlocksEveryRank) {
  rt::Plan plan = twoBucketPlan(2);
  // The replica waits for bucket 1 before it starts bucket 0, which the thread must post first.
  auto &ks = plan.train.kernels;
  std::rotate(ks.begin() + 2, ks.begin() + 7, ks.end()); // wait(1) right after the 2nd kernel
  ScheduleCheck check = checkSchedule({&plan, &plan}, {"a.dpx", "a.dpx"}, 1, Layout::Flat);
  ASSERT_FALSE(check.ok);
  ASSERT_EQ(check.problems.size(), 3u);
  EXPECT_NE(check.problems[1].find("rank 0 (a.dpx): train step 0 waits at kernel #2 for bucket 1"),
            std::string::npos)
      << check.problems[1];
}

TEST(Schedule, ARankWithoutCollectivesLeavesTheOthersWaiting) {
  rt::Plan plan = twoBucketPlan(2), none = twoBucketPlan(2);
  none.collectives.clear();
  none.train.kernels.erase(std::remove_if(none.train.kernels.begin(), none.train.kernels.end(),
                                          [](const rt::KernelDesc &k) { return k.device < 0; }),
                           none.train.kernels.end());
  ScheduleCheck check = checkSchedule({&plan, &none}, {"a.dpx", "b.dpx"}, 1, Layout::Flat);
  ASSERT_FALSE(check.ok);
  EXPECT_NE(check.problems[1].find("which rank(s) 1 have not posted"), std::string::npos)
      << check.problems[1];
}

} // namespace
} // namespace dp::sim
