// Tests of PlanFile: every way a plan file can be broken must be rejected with a Plan error that
// names the problem, and a good plan must survive a write/read round trip intact.
#include "runtime/format/PlanFile.h"

#include "test/unit/ErrorMatchers.h"
#include "test/unit/PlanBuilder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <random>

namespace dp::rt {
namespace {

using testing::InitSpec;
using testing::PlanBuilder;

// Buffer ids of the plan built by mlpPlan().
struct Ids {
  uint32_t w, gw, x, labels, logits, loss, dlogits, one;
};

// A small but complete plan: a dense layer, softmax cross-entropy, its gradient and SGD.
PlanBuilder mlpPlan(Ids *ids = nullptr) {
  PlanBuilder b(2);
  Ids i;
  i.gw = b.buffer({3, 4});
  i.w = b.param("w", {3, 4}, {InitKind::GlorotUniform, 0, 0, 3, 4}, static_cast<int32_t>(i.gw));
  i.x = b.buffer({2, 3});
  i.labels = b.buffer({2}, DType::I32);
  i.logits = b.buffer({2, 4});
  i.loss = b.buffer({});
  i.dlogits = b.buffer({2, 4});
  i.one = b.buffer({});
  b.input("image", i.x, InputRole::Samples).input("label", i.labels, InputRole::Targets);
  b.kernel(StepKind::Train, KernelKind::Dense, {i.x, i.w}, {i.logits}).at("mlp.py:3");
  b.kernel(StepKind::Train, KernelKind::SoftmaxXent, {i.logits, i.labels}, {i.loss});
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {i.one}).attrF("value", 1.0);
  b.kernel(StepKind::Train, KernelKind::SoftmaxXentGrad, {i.logits, i.labels, i.one}, {i.dlogits});
  b.kernel(StepKind::Train, KernelKind::MatMul, {i.x, i.dlogits}, {i.gw}).attrI("transpose_a", 1);
  b.kernel(StepKind::Train, KernelKind::SgdUpdate, {i.gw}, {i.w}).attrF("lr", 0.1);
  b.output(StepKind::Train, "loss", i.loss, OutputRole::Loss);
  b.kernel(StepKind::Eval, KernelKind::Dense, {i.x, i.w}, {i.logits});
  b.kernel(StepKind::Eval, KernelKind::SoftmaxXent, {i.logits, i.labels}, {i.loss});
  b.output(StepKind::Eval, "loss", i.loss, OutputRole::Loss);
  if (ids)
    *ids = i;
  return b;
}

PlanFile parse(std::vector<uint8_t> bytes) {
  return PlanFile::fromBytes(std::move(bytes), "t.dpx");
}

void putU32(std::vector<uint8_t> &bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

TEST(PlanFileTest, RoundTripThroughAFile) {
  Ids ids;
  std::vector<uint8_t> bytes = mlpPlan(&ids).fileBytes();
  std::string path = ::testing::TempDir() + "/roundtrip.dpx";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }
  PlanFile file = PlanFile::read(path);
  std::remove(path.c_str());

  EXPECT_EQ(file.sizeBytes(), bytes.size());
  // The checksum is the CRC stored at header bytes 24..27.
  uint32_t stored = bytes[24] | bytes[25] << 8 | bytes[26] << 16 | uint32_t(bytes[27]) << 24;
  EXPECT_EQ(file.checksum(), stored);
  const fb::Plan &plan = file.plan();
  EXPECT_EQ(plan.batch(), 2);
  EXPECT_EQ(plan.model()->str(), "test");
  ASSERT_EQ(plan.buffers()->size(), 8u);
  EXPECT_EQ(plan.buffers()->Get(ids.x)->shape()->size(), 2u);
  EXPECT_EQ(plan.buffers()->Get(ids.x)->shape()->Get(1), 3);
  EXPECT_EQ(plan.buffers()->Get(ids.labels)->dtype(), static_cast<uint8_t>(DType::I32));
  EXPECT_EQ(plan.buffers()->Get(ids.loss)->shape()->size(), 0u);
  ASSERT_EQ(plan.params()->size(), 1u);
  EXPECT_EQ(plan.params()->Get(0)->name()->str(), "w");
  EXPECT_EQ(plan.params()->Get(0)->grad(), static_cast<int32_t>(ids.gw));
  EXPECT_EQ(plan.params()->Get(0)->init()->fan_out(), 4);
  EXPECT_LE(plan.buffers()->Get(ids.w)->offset() + 48, plan.persistent_bytes());
  ASSERT_EQ(plan.train()->kernels()->size(), 6u);
  EXPECT_EQ(plan.train()->kernels()->Get(0)->kind(), static_cast<uint16_t>(KernelKind::Dense));
  EXPECT_EQ(plan.train()->kernels()->Get(0)->loc()->str(), "mlp.py:3");
  EXPECT_EQ(plan.train()->kernels()->Get(4)->attrs()->Get(0)->name()->str(), "transpose_a");
  EXPECT_EQ(plan.train()->kernels()->Get(5)->attrs()->Get(0)->f(), 0.1);
  EXPECT_EQ(plan.eval()->outputs()->Get(0)->buffer(), ids.loss);
}

TEST(PlanFileTest, UnknownDeviceKind) {
  PlanBuilder b = mlpPlan();
  b.deviceKind(7);
  EXPECT_DP_ERROR(parse(b.fileBytes()), ErrorKind::Plan, "unknown device kind 7");
}

TEST(PlanFileTest, LearningRateScheduleRoundTripsAndIsChecked) {
  PlanBuilder p = mlpPlan();
  EXPECT_TRUE(p.plan().lrSchedule.isConstant()); // none recorded: constant
  LrSchedule cosine;
  cosine.kind = LrScheduleKind::Cosine;
  cosine.epochs = 30;
  cosine.minScale = 0.01;
  cosine.warmupEpochs = 5;
  cosine.warmupStart = 0.125;
  const Plan plan = p.setLrSchedule(cosine).plan();
  EXPECT_EQ(lrScheduleText(plan.lrSchedule),
            "warmup-linear:epochs=5,start=0.125+cosine:epochs=30,min=0.01");
  cosine.epochs = 0;
  EXPECT_DP_ERROR(p.setLrSchedule(cosine).plan(), ErrorKind::Plan,
                  "test.dpx: the learning-rate schedule is invalid: cosine: epochs must be "
                  "positive (from 0.001 to 1000000000 epochs), found 0");
  LrSchedule unknown;
  unknown.kind = LrScheduleKind(7);
  EXPECT_DP_ERROR(p.setLrSchedule(unknown).plan(), ErrorKind::Plan, "unknown schedule kind 7");
}

TEST(PlanFileTest, VerifyImageReportsWithoutThrowing) {
  std::vector<uint8_t> good = mlpPlan().fileBytes();
  EXPECT_EQ(PlanFile::verifyImage(good.data(), good.size()), "");
  std::vector<uint8_t> bad = good;
  bad.back() ^= 0xff;
  EXPECT_NE(PlanFile::verifyImage(bad.data(), bad.size()).find("checksum mismatch"),
            std::string::npos);
}

TEST(PlanFileTest, MissingFile) {
  EXPECT_DP_ERROR(PlanFile::read("/nonexistent/dir/model.dpx"), ErrorKind::Plan,
                  "/nonexistent/dir/model.dpx: file not found");
}

TEST(PlanFileTest, EmptyFile) {
  EXPECT_DP_ERROR(parse({}), ErrorKind::Plan, "0 bytes is shorter than the 32-byte plan header");
}

TEST(PlanFileTest, TruncatedInsideTheHeader) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  bytes.resize(20);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "20 bytes is shorter than the 32-byte");
}

TEST(PlanFileTest, TruncatedPayload) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  const size_t payload = bytes.size() - kPlanHeaderBytes;
  bytes.resize(bytes.size() - 10);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan,
                  "truncated or padded: header says " + std::to_string(payload) +
                      " payload bytes, file has " + std::to_string(payload - 10));
}

TEST(PlanFileTest, PaddedPayload) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  bytes.push_back(0);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "truncated or padded");
}

TEST(PlanFileTest, HeaderClaimsAnotherPayloadSize) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  putU32(bytes, 16, static_cast<uint32_t>(bytes.size())); // payload size field: bytes 16..23
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan,
                  "header says " + std::to_string(bytes.size()) + " payload bytes");
}

TEST(PlanFileTest, BadMagic) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  bytes[0] = 'Z';
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "not a dp plan: bad magic");
}

TEST(PlanFileTest, WrongVersion) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  putU32(bytes, 8, kFormatVersion + 1);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan,
                  "plan format version " + std::to_string(kFormatVersion + 1) +
                      " is not supported");
}

TEST(PlanFileTest, WrongHeaderSize) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  putU32(bytes, 12, 48);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "header size 48, expected 32");
}

TEST(PlanFileTest, EveryFlippedPayloadBitFailsTheChecksum) {
  const std::vector<uint8_t> good = mlpPlan().fileBytes();
  ASSERT_NO_THROW(parse(good));
  for (size_t at = kPlanHeaderBytes; at < good.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bytes = good;
      bytes[at] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_TRUE(testing::throwsError([&] { parse(bytes); }, ErrorKind::Plan, "checksum mismatch"))
          << "byte " << at << " bit " << bit;
    }
}

TEST(PlanFileTest, FlippedChecksumBitIsCaught) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  bytes[24] ^= 0x10;
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "checksum mismatch");
}

TEST(PlanFileTest, GarbagePayloadWithValidChecksum) {
  std::mt19937 gen(7);
  std::vector<uint8_t> garbage(300);
  for (uint8_t &byte : garbage)
    byte = static_cast<uint8_t>(gen());
  std::string file = wrapPlanPayload(garbage.data(), garbage.size());
  EXPECT_DP_ERROR(parse(std::vector<uint8_t>(file.begin(), file.end())), ErrorKind::Plan,
                  "fails FlatBuffer verification");
}

TEST(PlanFileTest, CutFlatBufferWithValidChecksum) {
  std::vector<uint8_t> payload = mlpPlan().payload();
  payload.resize(payload.size() / 2);
  std::string file = wrapPlanPayload(payload.data(), payload.size());
  EXPECT_DP_ERROR(parse(std::vector<uint8_t>(file.begin(), file.end())), ErrorKind::Plan,
                  "fails FlatBuffer verification");
}

TEST(PlanFileTest, EmptyPayloadWithValidChecksum) {
  const uint8_t none[1] = {0};
  std::string file = wrapPlanPayload(none, 0);
  EXPECT_DP_ERROR(parse(std::vector<uint8_t>(file.begin(), file.end())), ErrorKind::Plan,
                  "fails FlatBuffer verification");
}

/// Two devices, two buckets (0 then 1 in the manifest) of 4 floats each; the train step's
/// collectives in the order `script` gives: "s0" starts bucket 0, "w1" waits for bucket 1.
PlanBuilder collectivePlan(const std::vector<std::string> &script) {
  PlanBuilder b{4};
  b.devices(2);
  uint32_t bucket[2][2];
  for (int d = 0; d < 2; ++d) {
    b.onDevice(d);
    bucket[0][d] = b.buffer({4});
    bucket[1][d] = b.buffer({4});
  }
  b.manifestEntry(0, 4, "a").manifestEntry(1, 4, "b");
  for (int d = 0; d < 2; ++d)
    b.onDevice(d).kernel(StepKind::Train, KernelKind::Fill, {}, {bucket[0][d]}).attrF("value", 1);
  for (const std::string &op : script) {
    const int n = op[1] - '0';
    b.collective(StepKind::Train, op[0] == 's' ? KernelKind::AllReduceStart
                                               : KernelKind::AllReduceWait,
                 n, {bucket[n][0], bucket[n][1]});
  }
  return b;
}

TEST(PlanFileTest, CollectivesFollowTheManifestProtocol) {
  EXPECT_NO_THROW(collectivePlan({"s0", "s1", "w0", "w1"}).planFile());
  EXPECT_NO_THROW(collectivePlan({"s0", "s1", "w1", "w0"}).planFile());
  EXPECT_DP_ERROR(collectivePlan({"w1", "s0", "s1", "w0"}).planFile(), ErrorKind::Plan,
                  "train kernel #2 (allreduce_wait) waits for bucket 1 before the step starts "
                  "it: it could never complete");
  EXPECT_DP_ERROR(collectivePlan({"s0", "s0", "s1", "w0", "w1"}).planFile(), ErrorKind::Plan,
                  "train kernel #3 (allreduce_start) starts bucket 0 a second time in the step");
  EXPECT_DP_ERROR(collectivePlan({"s0", "s1", "w0", "w1", "w1"}).planFile(), ErrorKind::Plan,
                  "train kernel #6 (allreduce_wait) waits for bucket 1 a second time in the step");
  EXPECT_DP_ERROR(collectivePlan({"s1", "s0", "w0", "w1"}).planFile(), ErrorKind::Plan,
                  "train kernel #2 (allreduce_start) starts bucket 1 out of the manifest's "
                  "order (start #1 of the step must be bucket 0)");
  EXPECT_DP_ERROR(collectivePlan({"s0", "s1", "w0"}).planFile(), ErrorKind::Plan,
                  "train step starts bucket 1 and never waits for it");
  EXPECT_DP_ERROR(collectivePlan({"s0", "w0"}).planFile(), ErrorKind::Plan,
                  "the train step starts 1 of the manifest's 2 buckets");
}

// One bucket of 4 floats on one device, started and waited for, with the manifest entry given.
PlanBuilder oneBucketPlan(CollectiveKind kind, GroupKind group = GroupKind::World, int groupId = -1,
                          DType wire = DType::F32) {
  PlanBuilder b{4};
  const uint32_t bucket = b.buffer({4});
  b.manifestEntry(0, 4, "a", kind, group, groupId, wire);
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {bucket}).attrF("value", 1);
  b.collective(StepKind::Train, KernelKind::AllReduceStart, 0, {bucket});
  b.collective(StepKind::Train, KernelKind::AllReduceWait, 0, {bucket});
  return b;
}

TEST(PlanFileTest, AnAllreduceMaySendItsBucketAsBf16) {
  auto plan = [](DType wire) {
    return oneBucketPlan(CollectiveKind::AllReduceMean, GroupKind::World, -1, wire);
  };
  Plan sent = plan(DType::BF16).plan();
  ASSERT_EQ(sent.collectives.size(), 1u);
  EXPECT_EQ(sent.collectives[0].dtype, DType::BF16);
  EXPECT_DP_ERROR(plan(DType::I32).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 (allreduce_mean) has dtype 1: f32, or bf16 for "
                  "allreduce_mean");
}

// A plan of 2 devices that broadcasts one parameter from device `root` (sharded optimizer
// state), with the manifest's root `manifestRoot` and kernels of kinds `start` and `wait`.
PlanBuilder broadcastPlan(int root, int manifestRoot, KernelKind start = KernelKind::BroadcastStart,
                          KernelKind wait = KernelKind::BroadcastWait,
                          CollectiveKind kind = CollectiveKind::Broadcast,
                          GroupKind group = GroupKind::Replicas) {
  PlanBuilder b{4};
  b.devices(2);
  const uint32_t w0 = b.onDevice(0).param("w", {4});
  const uint32_t w1 = b.onDevice(1).param("w", {4});
  b.onDevice(0);
  b.manifestEntry(0, 4, "w", kind, group, -1, DType::F32, manifestRoot);
  b.collective(StepKind::Train, start, 0, {w0, w1}).attrI("root", root);
  b.collective(StepKind::Train, wait, 0, {w0, w1}).attrI("root", root);
  return b;
}

TEST(PlanFileTest, ABroadcastComesFromOneOfTheDevicesItsManifestNames) {
  Plan ok = broadcastPlan(1, 1).plan();
  ASSERT_EQ(ok.collectives.size(), 1u);
  EXPECT_EQ(ok.collectives[0].kind, CollectiveKind::Broadcast);
  EXPECT_EQ(ok.collectives[0].root, 1);
  EXPECT_TRUE(ok.shardsOptimizerState());
  // The root joins the manifest's line (and hash) of a broadcast only.
  EXPECT_EQ(manifestLine(CollectiveKind::Broadcast, 2, 0, 4, GroupKind::Replicas, -1, {"w"}, "", 1),
            "broadcast|2|0|4|replicas|w||root=1\n");
  EXPECT_DP_ERROR(broadcastPlan(2, 2).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 (broadcast) has root 2, not one of its group's 2 "
                  "device(s)");
  EXPECT_DP_ERROR(broadcastPlan(1, 0).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) has root 1 but the manifest's broadcast of "
                  "bucket 0 has 0");
  EXPECT_DP_ERROR(
      broadcastPlan(-1, 1, KernelKind::AllReduceStart, KernelKind::AllReduceWait).planFile(),
      ErrorKind::Plan,
      "train kernel #0 (allreduce_start) exchanges bucket 0, which is broadcast in "
      "the manifest");
  EXPECT_DP_ERROR(broadcastPlan(-1, -1, KernelKind::BroadcastStart, KernelKind::BroadcastWait,
                                CollectiveKind::AllReduceMean, GroupKind::World)
                      .planFile(),
                  ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) exchanges bucket 0, which is allreduce_mean "
                  "in the manifest");
  EXPECT_DP_ERROR(broadcastPlan(1, 1, KernelKind::BroadcastStart, KernelKind::BroadcastWait,
                                CollectiveKind::Broadcast, GroupKind::World)
                      .planFile(),
                  ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) broadcasts over the job from replica 1 of "
                  "process -1, not one of the 2 x 1 of the plan");
  EXPECT_DP_ERROR(broadcastPlan(-1, 1, KernelKind::AllReduceStart, KernelKind::AllReduceWait,
                                CollectiveKind::AllReduceMean, GroupKind::World)
                      .planFile(),
                  ErrorKind::Plan,
                  "manifest entry for bucket 0 (allreduce_mean) has root 1: only a broadcast has "
                  "one");
}

// A plan of 2 processes of 1 device whose optimizer state "w/m" process `holder` alone holds
// (sharded over the processes): its update (a copy into the weight here), run by process
// `updater`, and the weight's broadcast over the job from process `rootProcess`, with the
// manifest's root `manifestRoot` (the job's replica) over `group`.
PlanBuilder processPlan(int holder, int updater, int rootProcess, int manifestRoot,
                        GroupKind group = GroupKind::World) {
  PlanBuilder b{4};
  b.setProcesses(2);
  const uint32_t w = b.param("w", {4});
  const uint32_t m = b.param("w/m", {4}, {}, -1, ParamKind::OptimizerState);
  b.heldBy(static_cast<int16_t>(holder));
  b.kernel(StepKind::Train, KernelKind::Copy, {m}, {w}).onProcess(static_cast<int16_t>(updater));
  b.manifestEntry(0, 4, "w", CollectiveKind::Broadcast, group, -1, DType::F32, manifestRoot);
  b.collective(StepKind::Train, KernelKind::BroadcastStart, 0, {w})
      .attrI("root", 0)
      .attrI("root_process", rootProcess);
  b.collective(StepKind::Train, KernelKind::BroadcastWait, 0, {w})
      .attrI("root", 0)
      .attrI("root_process", rootProcess);
  return b;
}

// State sharded over the processes: one process holds it and runs the kernels that touch it;
// the broadcast over the job names that process's replica; keepProcess() leaves a process the
// kernels it runs.
TEST(PlanFileTest, StateOneProcessHoldsIsTouchedByThatProcessAlone) {
  Plan plan = processPlan(1, 1, 1, 1).plan();
  EXPECT_TRUE(plan.shardsAcrossProcesses());
  EXPECT_EQ(plan.params[1].process, 1);
  EXPECT_EQ(plan.train.kernels[0].process, 1);
  EXPECT_EQ(plan.collectives[0].group, GroupKind::World);
  EXPECT_EQ(plan.collectives[0].root, 1);
  EXPECT_TRUE(plan.holds(plan.params[1])); // before keepProcess: every one counts
  Plan zero = plan;
  zero.keepProcess(0);
  EXPECT_FALSE(zero.holds(zero.params[1]));
  EXPECT_TRUE(zero.holds(zero.params[0]));
  ASSERT_EQ(zero.train.kernels.size(), 2u); // the update goes, the broadcast stays
  EXPECT_EQ(zero.train.kernels[0].kind, KernelKind::BroadcastStart);
  plan.keepProcess(1);
  EXPECT_TRUE(plan.holds(plan.params[1]));
  EXPECT_EQ(plan.train.kernels.size(), 3u);

  EXPECT_DP_ERROR(processPlan(1, -1, 1, 1).planFile(), ErrorKind::Plan,
                  "train kernel #0 (copy) runs on every process but uses buffer 1, optimizer "
                  "state that process 1 alone holds");
  EXPECT_DP_ERROR(processPlan(1, 0, 1, 1).planFile(), ErrorKind::Plan,
                  "train kernel #0 (copy) runs on process 0 but uses buffer 1, optimizer state "
                  "that process 1 alone holds");
  EXPECT_DP_ERROR(processPlan(2, 1, 1, 1).planFile(), ErrorKind::Plan,
                  "param 'w/m' on device 0 is held by process 2: only optimizer state is held "
                  "by one process, one of the plan's 2");
  EXPECT_DP_ERROR(processPlan(1, 2, 1, 1).planFile(), ErrorKind::Plan,
                  "train kernel #0 (copy) runs on process 2 of 2");
  EXPECT_DP_ERROR(processPlan(1, 1, 0, 1).planFile(), ErrorKind::Plan,
                  "train kernel #1 (broadcast_start) has root 0 but the manifest's broadcast of "
                  "bucket 0 has 1");
  EXPECT_DP_ERROR(processPlan(1, 1, 2, 1).planFile(), ErrorKind::Plan,
                  "train kernel #1 (broadcast_start) broadcasts over the job from replica 0 of "
                  "process 2, not one of the 1 x 2 of the plan");
  EXPECT_DP_ERROR(processPlan(1, 1, 1, 2).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 (broadcast) has root 2, not one of its group's 2 "
                  "device(s)");
  EXPECT_DP_ERROR(processPlan(1, 1, 1, 0, GroupKind::Replicas).planFile(), ErrorKind::Plan,
                  "train kernel #1 (broadcast_start) names root process 1, which only a "
                  "broadcast over the job has");
  {
    // The eval step is every process's.
    PlanBuilder b = processPlan(1, 1, 1, 1);
    const uint32_t x = b.buffer({4});
    b.kernel(StepKind::Eval, KernelKind::Copy, {0}, {x}).onProcess(1);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "eval kernel #0 (copy) runs on process 1 alone, which only a train step's "
                    "kernel may");
  }
  {
    // No collective exchanges a process's state: an allreduce of it, or its broadcast.
    PlanBuilder b{4};
    b.setProcesses(2);
    const uint32_t m = b.param("w/m", {4}, {}, -1, ParamKind::OptimizerState);
    b.heldBy(0);
    b.manifestEntry(0, 4, "w/m");
    b.collective(StepKind::Train, KernelKind::AllReduceStart, 0, {m});
    b.collective(StepKind::Train, KernelKind::AllReduceWait, 0, {m});
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "train kernel #0 (allreduce_start) exchanges buffer 0, optimizer state that "
                    "process 0 alone holds");
  }
  {
    PlanBuilder b{4};
    b.setProcesses(2);
    const uint32_t m = b.param("w/m", {4}, {}, -1, ParamKind::OptimizerState);
    b.manifestEntry(0, 4, "w/m", CollectiveKind::Broadcast, GroupKind::World, -1, DType::F32, 1);
    b.collective(StepKind::Train, KernelKind::BroadcastStart, 0, {m})
        .attrI("root", 0)
        .attrI("root_process", 1);
    b.collective(StepKind::Train, KernelKind::BroadcastWait, 0, {m})
        .attrI("root", 0)
        .attrI("root_process", 1);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "train kernel #0 (broadcast_start) broadcasts 'w/m', which is no weight of "
                    "the plan");
  }
  {
    PlanBuilder b = processPlan(1, 1, 1, 1);
    b.param("v", {4});
    b.heldBy(0);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "param 'v' on device 0 is held by process 0: only optimizer state is held");
  }
}

// A broadcast's buffers are its parameter's copies; the copies of a parameter agree; a weight
// is on every device (only optimizer state may be sharded); the eval step exchanges nothing.
TEST(PlanFileTest, ABroadcastCopiesItsParameterAndCopiesAgree) {
  {
    PlanBuilder b{4};
    b.devices(2);
    const uint32_t w0 = b.onDevice(0).param("w", {4});
    b.onDevice(1).param("w", {4});
    const uint32_t t1 = b.onDevice(1).persistentBuffer({4});
    b.onDevice(0);
    b.manifestEntry(0, 4, "w", CollectiveKind::Broadcast, GroupKind::Replicas, -1, DType::F32, 0);
    b.collective(StepKind::Train, KernelKind::BroadcastStart, 0, {w0, t1}).attrI("root", 0);
    b.collective(StepKind::Train, KernelKind::BroadcastWait, 0, {w0, t1}).attrI("root", 0);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "train kernel #0 (broadcast_start) input 1 must hold device 1's copy of "
                    "parameter 'w'");
  }
  {
    PlanBuilder b{4};
    b.devices(2);
    b.onDevice(0).param("w", {4});
    b.onDevice(1).param("w", {8});
    EXPECT_DP_ERROR(b.onDevice(0).planFile(), ErrorKind::Plan,
                    "param 'w' on device 1 is not of the kind, type and shape of its copy on "
                    "device 0");
  }
  {
    PlanBuilder b{4};
    b.devices(2);
    b.onDevice(0).param("w", {4});
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "weight 'w' has copies on 1 of the plan's 2 device(s); every device holds one");
  }
  {
    PlanBuilder b{4};
    b.devices(2);
    const uint32_t w0 = b.onDevice(0).param("w", {4});
    const uint32_t w1 = b.onDevice(1).param("w", {4});
    b.onDevice(0);
    b.manifestEntry(0, 4, "w", CollectiveKind::Broadcast, GroupKind::Replicas, -1, DType::F32, 0);
    b.collective(StepKind::Train, KernelKind::BroadcastStart, 0, {w0, w1}).attrI("root", 0);
    b.collective(StepKind::Train, KernelKind::BroadcastWait, 0, {w0, w1}).attrI("root", 0);
    b.collective(StepKind::Eval, KernelKind::BroadcastStart, 0, {w0, w1}).attrI("root", 0);
    b.collective(StepKind::Eval, KernelKind::BroadcastWait, 0, {w0, w1}).attrI("root", 0);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "eval kernel #0 (broadcast_start) does not belong in the eval step of an "
                    "allreduce plan");
  }
}

// A broadcast's bucket (format 11) holds the copies of its parameters on each device, one
// slot each (64-byte aligned); the loader refuses a parameter outside it and a parameter that
// two broadcasts name.
struct BucketParts {
  bool uOutside = false; // device 1's copy of 'u' in a buffer of its own, past the bucket
  std::vector<std::string> tensors = {"w", "u"};
  uint64_t uPlace0 = 64, uPlace1 = 64; // where each device's 'u' lies in its bucket
  bool stranger = false;               // device 1's copy of weight 'v' inside its bucket
  int64_t elements = 32;               // the bucket's
  std::optional<uint64_t> persistentBytes;
};

PlanBuilder bucketPlan(const BucketParts &parts = {}) {
  PlanBuilder b{4};
  b.devices(2);
  std::vector<uint32_t> buckets;
  for (int d = 0; d < 2; ++d) {
    // The bucket is each device's first persistent buffer: at offset 0 of its arena.
    const uint32_t bucket = b.onDevice(d).persistentBuffer({parts.elements});
    buckets.push_back(bucket);
    const uint32_t w = b.alias(bucket, {4});
    b.paramOn("w", w);
    if (parts.stranger) {
      const uint32_t v = d == 1 ? b.alias(bucket, {4}) : b.persistentBuffer({4});
      if (d == 1)
        b.setOffset(v, 64);
      b.paramOn("v", v);
    }
    if (d == 1 && parts.uOutside) {
      b.param("u", {4});
      continue;
    }
    const uint32_t u = b.alias(bucket, {4});
    b.setOffset(u, d == 0 ? parts.uPlace0 : parts.uPlace1);
    b.paramOn("u", u);
  }
  b.onDevice(0);
  b.manifestEntry(0, parts.elements, parts.tensors, CollectiveKind::Broadcast, GroupKind::Replicas,
                  -1, DType::F32, 1);
  b.collective(StepKind::Train, KernelKind::BroadcastStart, 0, buckets).attrI("root", 1);
  b.collective(StepKind::Train, KernelKind::BroadcastWait, 0, buckets).attrI("root", 1);
  if (parts.persistentBytes)
    b.setPersistentBytes(*parts.persistentBytes);
  return b;
}

TEST(PlanFileTest, ABroadcastBucketHoldsItsParameters) {
  Plan plan = bucketPlan().plan();
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].kind, CollectiveKind::Broadcast);
  EXPECT_EQ(plan.collectives[0].tensors, (std::vector<std::string>{"w", "u"}));
  EXPECT_EQ(plan.collectives[0].elements, 32);
  // Device 1's 'u' past its bucket's end.
  EXPECT_DP_ERROR(bucketPlan({.uOutside = true}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) input 1 must hold device 1's copy of "
                  "parameter 'u'");
  EXPECT_DP_ERROR(bucketPlan({.tensors = {"w", "w"}}).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 (broadcast) names 'w', which another broadcast (or "
                  "this one) names too");
  EXPECT_DP_ERROR(bucketPlan({.tensors = {}}).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 (broadcast) names no parameter");
  // The root's bytes land at the same place in every device's bucket.
  EXPECT_DP_ERROR(bucketPlan({.uPlace1 = 0}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) input 1 holds parameter 'u' at byte 0 of "
                  "its bucket, device 0's at 64: the root's copy would land elsewhere");
  EXPECT_DP_ERROR(bucketPlan({.uPlace0 = 0, .uPlace1 = 0}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) input 0 holds two of its parameters in the "
                  "same bytes");
  // The broadcast would overwrite a parameter it does not name.
  EXPECT_DP_ERROR(bucketPlan({.stranger = true}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) input 1 overlaps parameter 'v', which it "
                  "does not broadcast");
  // A bucket that runs past the persistent region shares its bytes with the step's buffers.
  EXPECT_DP_ERROR(bucketPlan({.elements = 64, .persistentBytes = 128}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (broadcast_start) input 0 lies outside the persistent region");
}

// A reduce-scattered gradient bucket (sharded optimizer state, format 12) over 2 devices: 'w'
// (4 elements, owner 0) then 'u' (4, owner 1), each device's gradients in its bucket; each
// owner's update reads its own mean only.
struct ScatterParts {
  std::vector<int64_t> segments = {0, 16, 32};
  int uReader = 1; // the device whose kernel reads 'u''s gradient
};

PlanBuilder scatterPlan(const ScatterParts &parts = {}) {
  PlanBuilder b{4};
  b.devices(2);
  std::vector<uint32_t> buckets, wGrads, uGrads;
  for (int d = 0; d < 2; ++d) {
    const uint32_t bucket = b.onDevice(d).persistentBuffer({32});
    buckets.push_back(bucket);
    const uint32_t wg = b.alias(bucket, {4}), ug = b.alias(bucket, {4});
    b.setOffset(ug, 64);
    b.param("w", {4}, {}, int32_t(wg));
    b.param("u", {4}, {}, int32_t(ug));
    wGrads.push_back(wg);
    uGrads.push_back(ug);
  }
  b.onDevice(0);
  b.manifestEntry(0, 32, std::vector<std::string>{"w", "u"}, CollectiveKind::AllReduceMean)
      .segments(parts.segments);
  b.collective(StepKind::Train, KernelKind::AllReduceStart, 0, buckets);
  b.collective(StepKind::Train, KernelKind::AllReduceWait, 0, buckets);
  b.onDevice(0).kernel(StepKind::Train, KernelKind::Relu6, {wGrads[0]}, {b.buffer({4})});
  b.onDevice(parts.uReader)
      .kernel(StepKind::Train, KernelKind::Relu6, {uGrads[parts.uReader]}, {b.buffer({4})});
  return b;
}

TEST(PlanFileTest, AReduceScatteredMeanIsReadByItsOwnerOnly) {
  Plan plan = scatterPlan().plan();
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].segments, (std::vector<int64_t>{0, 16, 32}));
  EXPECT_DP_ERROR(scatterPlan({.segments = {0, 32}}).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 has 2 segment offsets; its 2 owner(s) need 3");
  EXPECT_DP_ERROR(scatterPlan({.segments = {0, 20, 16}}).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0's segments do not run in order from 0 to its 32 "
                  "elements (offset 2 is 16)");
  // Device 0 reads 'u''s gradient, which only device 1 receives averaged.
  EXPECT_DP_ERROR(scatterPlan({.uReader = 0}).planFile(), ErrorKind::Plan,
                  "train kernel #3 (relu6) reads buffer 2, a gradient whose bucket is "
                  "reduce-scattered to replica 1 of "
                  "the job alone");
  // 'u''s gradient across the owners' boundary.
  EXPECT_DP_ERROR(scatterPlan({.segments = {0, 18, 32}}).planFile(), ErrorKind::Plan,
                  "train kernel #0 (allreduce_start) scatters the gradient of 'u' on device 0, "
                  "which straddles its owners' segments");
}

// A parameter-server plan: the workers' (2 workers) with one server's inside it; `tweak` changes
// what a test breaks.
struct PsParts {
  int groupServer = 0; // the server the workers' manifest names
  int serverIndex = 0;
  int64_t serverParamElements = 4;
  KernelKind push = KernelKind::PushStart, pull = KernelKind::PullWait;
  int64_t staleness = -1;
  bool sync = false;
  bool serverManifest = true;
  bool serverInput = false;
};

PlanBuilder psPlan(const PsParts &parts = {}) {
  PlanBuilder server{4};
  server.setServer(parts.serverIndex);
  const uint32_t sw = server.param("w", {parts.serverParamElements});
  const uint32_t sbucket = server.buffer({4});
  if (parts.serverManifest)
    server.manifestEntry(0, 4, "w", CollectiveKind::ReceiveReply, GroupKind::Workers);
  if (parts.serverInput)
    server.input("image", server.buffer({4}), InputRole::Samples);
  server.collective(StepKind::Train, KernelKind::ReceivePush, 0, {sbucket});
  server.kernel(StepKind::Train, KernelKind::SgdUpdate, {sbucket}, {sw}).attrF("lr", 0.1);
  server.collective(StepKind::Train, KernelKind::ReplyPull, 0, {sbucket});

  PlanBuilder b{4};
  b.param("w", {4});
  const uint32_t bucket = b.buffer({4});
  b.manifestEntry(0, 4, "w", CollectiveKind::PushPull, GroupKind::Server, parts.groupServer);
  b.kernel(StepKind::Train, KernelKind::Fill, {}, {bucket}).attrF("value", 1);
  b.collective(StepKind::Train, parts.push, 0, {bucket});
  b.collective(StepKind::Train, parts.pull, 0, {bucket});
  b.setProcesses(2).setStrategy(parts.staleness, parts.sync).addServer(std::move(server));
  return b;
}

TEST(PlanFileTest, ParameterServerPlanRoundTrips) {
  Plan plan = psPlan({.staleness = 3}).plan();
  EXPECT_TRUE(plan.parameterServer());
  EXPECT_EQ(plan.jobProcesses(), 3);
  EXPECT_EQ(plan.staleness, 3);
  EXPECT_FALSE(plan.sync);
  EXPECT_EQ(plan.server, -1);
  ASSERT_EQ(plan.servers.size(), 1u);
  const Plan &server = plan.servers[0];
  EXPECT_EQ(server.server, 0);
  EXPECT_EQ(server.train.name, "serve");
  ASSERT_EQ(server.train.kernels.size(), 3u);
  EXPECT_EQ(server.train.kernels[0].kind, KernelKind::ReceivePush);
  EXPECT_EQ(server.train.kernels[2].kind, KernelKind::ReplyPull);
  ASSERT_EQ(plan.collectives.size(), 1u);
  EXPECT_EQ(plan.collectives[0].kind, CollectiveKind::PushPull);
  EXPECT_EQ(plan.collectives[0].group, GroupKind::Server);
  EXPECT_EQ(plan.collectives[0].groupId, 0);
  EXPECT_EQ(server.collectives[0].kind, CollectiveKind::ReceiveReply);
  EXPECT_EQ(server.collectives[0].group, GroupKind::Workers);
  EXPECT_EQ(server.collectives[0].groupId, -1);
  EXPECT_TRUE(psPlan({.sync = false}).plan().parameterServer());
}

TEST(PlanFileTest, ParameterServerPlansMustAgreeWithTheirServers) {
  EXPECT_DP_ERROR(psPlan({.serverIndex = 1}).planFile(), ErrorKind::Plan,
                  "server 0's plan says it is server 1");
  EXPECT_DP_ERROR(psPlan({.groupServer = 1}).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 is push_pull over server 1, which this plan's "
                  "strategy does not run (a worker: push_pull over server s, for one of its "
                  "servers)");
  EXPECT_DP_ERROR(psPlan({.serverParamElements = 8}).planFile(), ErrorKind::Plan,
                  "server 0's plan's bucket 0: parameter 'w' has 8 elements on the server and 4 "
                  "on the workers");
  EXPECT_DP_ERROR(psPlan({.serverManifest = false}).planFile(), ErrorKind::Plan,
                  "receive_push) names no bucket of the collective manifest");
  EXPECT_DP_ERROR(psPlan({.serverInput = true}).planFile(), ErrorKind::Plan,
                  "server 0's plan must run one 'serve' step on one device of one process, with "
                  "no inputs and an empty eval step");
  EXPECT_DP_ERROR(psPlan({.sync = true}).planFile(), ErrorKind::Plan,
                  "a synchronous parameter-server plan has staleness 0, not -1");
  EXPECT_DP_ERROR(psPlan({.staleness = -2}).planFile(), ErrorKind::Plan,
                  "staleness -2 is below -1 (unbounded)");
}

TEST(PlanFileTest, ManifestKindsAndGroupsAreTyped) {
  auto plan = [](CollectiveKind kind, GroupKind group, int groupId = -1) {
    return oneBucketPlan(kind, group, groupId);
  };
  Plan plain = plan(CollectiveKind::AllReduceMean, GroupKind::World).plan();
  ASSERT_EQ(plain.collectives.size(), 1u);
  EXPECT_EQ(plain.collectives[0].kind, CollectiveKind::AllReduceMean);
  EXPECT_EQ(plain.collectives[0].group, GroupKind::World);
  EXPECT_EQ(plain.collectives[0].groupId, -1);
  // The manifest hash reads the kind and group by name, as when they were names (format 4).
  EXPECT_EQ(manifestLine(CollectiveKind::AllReduceMean, 3, 0, 16, GroupKind::World, -1, {"a", "b"},
                         "m.mlir:2:3"),
            "allreduce_mean|3|0|16|world|a,b|m.mlir:2:3\n");
  EXPECT_EQ(manifestLine(CollectiveKind::PushPull, 0, 0, 4, GroupKind::Server, 2, {"w"}, ""),
            "push_pull|0|0|4|server 2|w|\n");
  // Kinds the format names but this plan's strategy does not run, and numbers past the lists.
  EXPECT_DP_ERROR(plan(CollectiveKind::ReduceScatter, GroupKind::World).planFile(), ErrorKind::Plan,
                  "manifest entry for bucket 0 is reduce_scatter over world, which this plan's "
                  "strategy does not run (allreduce_mean over world, broadcast over replicas or "
                  "world)");
  EXPECT_DP_ERROR(plan(CollectiveKind::AllReduceMean, GroupKind::Node, 1).planFile(),
                  ErrorKind::Plan, "is allreduce_mean over node 1, which");
  EXPECT_DP_ERROR(plan(CollectiveKind(kNumCollectiveKinds), GroupKind::World).planFile(),
                  ErrorKind::Plan,
                  "manifest entry for bucket 0 has collective kind 6 over group 0, past the "
                  "kinds this dprun knows");
  EXPECT_DP_ERROR(plan(CollectiveKind::AllReduceMean, GroupKind(200)).planFile(), ErrorKind::Plan,
                  "over group 200, past the kinds this dprun knows");
}

TEST(PlanFileTest, EachStrategyHasItsOwnExchangeKernels) {
  EXPECT_DP_ERROR(psPlan({.push = KernelKind::AllReduceStart, .pull = KernelKind::AllReduceWait})
                      .planFile(),
                  ErrorKind::Plan,
                  "train kernel #1 (allreduce_start) does not belong in the train step of a "
                  "parameter-server workers' plan");
  PlanBuilder plain{4};
  const uint32_t bucket = plain.buffer({4});
  plain.manifestEntry(0, 4, "w");
  plain.collective(StepKind::Train, KernelKind::PushStart, 0, {bucket});
  plain.collective(StepKind::Train, KernelKind::PullWait, 0, {bucket});
  EXPECT_DP_ERROR(
      plain.planFile(), ErrorKind::Plan,
      "train kernel #0 (push_start) does not belong in the train step of an allreduce plan");
  PlanBuilder stale{4};
  stale.setStrategy(4, false);
  EXPECT_DP_ERROR(stale.planFile(), ErrorKind::Plan,
                  "staleness or sync is set, but the plan has no servers");
  PlanBuilder lone{4};
  lone.setServer(0);
  EXPECT_DP_ERROR(lone.planFile(), ErrorKind::Plan,
                  "a plan with server index 0 is not a server's plan inside a workers' plan");
}

TEST(PlanFileTest, KernelInputOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.kernel(StepKind::Train, KernelKind::Add, {0, 42}, {1});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "train kernel #6 (add) refers to buffer 42 but the plan has 8 buffers");
}

TEST(PlanFileTest, KernelOutputOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.kernel(StepKind::Eval, KernelKind::Copy, {0}, {8});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "eval kernel #2 (copy) refers to buffer 8 but the plan has 8 buffers");
}

TEST(PlanFileTest, ParamBufferOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.paramOn("bias", 100);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "param 'bias' refers to buffer 100");
}

TEST(PlanFileTest, DataInitialisersNameATableOfTheirSize) {
  InitSpec init;
  init.kind = InitKind::Data;
  {
    PlanBuilder b(2);
    init.data = b.initData({1, 2, 3, 4});
    b.param("w", {2, 2}, init);
    Plan plan = Plan::decode(b.planFile(), "t.dpx");
    ASSERT_NE(plan.params[0].init.values, nullptr);
    EXPECT_EQ(*plan.params[0].init.values, (std::vector<float>{1, 2, 3, 4}));
  }
  {
    PlanBuilder b(2);
    init.data = b.initData({1, 2, 3});
    b.param("w", {2, 2}, init);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "param 'w' has 4 elements but its data table 0 holds 3 values");
  }
  {
    PlanBuilder b(2);
    init.data = 5;
    b.param("w", {2, 2}, init);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "param 'w' names data table 5 but the plan has 0");
  }
  {
    PlanBuilder b(2);
    init.data = -1;
    b.param("w", {2, 2}, init);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "param 'w' is initialised from data but names no data table");
  }
  {
    PlanBuilder b(2);
    InitSpec zeros;
    zeros.data = b.initData({1, 2, 3, 4});
    b.param("w", {2, 2}, zeros);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "param 'w' names data table 0 but is not initialised from data");
  }
}

TEST(PlanFileTest, ExportSourceMapsWeightsOfTheirSize) {
  // An imported model's source (dprun --export): each entry a weight of the plan, once, of the
  // size its shape in the model has; the rest is the exporter's.
  auto build = [](ExportSourceDesc source) {
    PlanBuilder b(2);
    b.param("w", {2, 3});
    b.setExportSource(std::move(source));
    return b;
  };
  ExportSourceDesc good;
  good.format = "onnx";
  good.model = std::string("\x08\x07", 2);
  good.params.push_back({"w", "fc.weight", true, {{1, 2}}, 1, {3, 2}, {}});
  {
    Plan plan = Plan::decode(build(good).planFile(), "t.dpx");
    ASSERT_NE(plan.exportSource, nullptr);
    EXPECT_EQ(plan.exportSource->format, "onnx");
    EXPECT_EQ(plan.exportSource->model, good.model);
    ASSERT_EQ(plan.exportSource->params.size(), 1u);
    const ExportParamDesc &p = plan.exportSource->params[0];
    EXPECT_EQ(p.param, "w");
    EXPECT_EQ(p.value, "fc.weight");
    EXPECT_EQ(p.rewire, (std::vector<std::pair<int, int>>{{1, 2}}));
    EXPECT_EQ(p.layout, 1);
    EXPECT_EQ(p.dims, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(Plan::decode(PlanBuilder(2).planFile(), "t.dpx").exportSource, nullptr);
  }
  ExportSourceDesc bad = good;
  bad.format = "tflite";
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source has unknown format 'tflite'");
  bad = good;
  bad.params[0].param = "v";
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'v' is not a weight of the plan");
  bad = good;
  bad.params.push_back(good.params[0]);
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'w' appears twice");
  bad = good;
  bad.params[0].dims = {4, 2};
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'w' has 8 values in the model, 6 in the plan");
  bad = good;
  bad.params[0].dims = {0, 6};
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'w' has a dimension 0");
  bad = good;
  bad.params[0].layout = 3;
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'w' has unknown layout 3");
  bad = good;
  bad.params[0].rewire = {{1, -2}};
  EXPECT_DP_ERROR(build(bad).planFile(), ErrorKind::Plan,
                  "the export source's parameter 'w' has a malformed rewiring list");
}

TEST(PlanFileTest, ParamGradientOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.paramOn("bias", 0, {}, 9);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "param 'bias' gradient refers to buffer 9");
}

TEST(PlanFileTest, InputOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.input("mask", 1000, InputRole::Samples);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "input 'mask' refers to buffer 1000");
}

TEST(PlanFileTest, StepOutputOutOfRange) {
  PlanBuilder b = mlpPlan();
  b.output(StepKind::Eval, "correct", 77, OutputRole::Correct);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "eval output 'correct' refers to buffer 77");
}

TEST(PlanFileTest, RolesAreKnownAndOneOfEachPerDevice) {
  {
    PlanBuilder b = mlpPlan();
    b.input("mask", 0, static_cast<InputRole>(kNumInputRoles));
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "input 'mask' has unknown role 2");
  }
  {
    PlanBuilder b = mlpPlan();
    b.output(StepKind::Eval, "accuracy", 0, static_cast<OutputRole>(7));
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "eval output 'accuracy' has unknown role 7");
  }
  {
    // The runtime finds inputs by role: a second samples input of device 0 is ambiguous.
    PlanBuilder b = mlpPlan();
    b.input("mask", 0, InputRole::Samples);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "input 'mask' is a second samples input of device 0");
  }
  {
    PlanBuilder b = mlpPlan();
    b.output(StepKind::Train, "xent", 0, OutputRole::Loss);
    EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                    "train output 'xent' is a second loss output of device 0");
  }
  {
    // The same role in each step is one output per step.
    Plan plan = Plan::decode(mlpPlan().planFile(), "t.dpx");
    EXPECT_EQ(plan.output(StepKind::Train, OutputRole::Loss)->buffer,
              plan.output(StepKind::Eval, OutputRole::Loss)->buffer);
    EXPECT_EQ(plan.input(InputRole::Targets)->name, "label");
    EXPECT_EQ(plan.output(StepKind::Eval, OutputRole::Correct), nullptr);
  }
}

TEST(PlanFileTest, TooFewInputs) {
  PlanBuilder b = mlpPlan();
  b.kernel(StepKind::Train, KernelKind::Dense, {0}, {1});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "train kernel #6 (dense) has 1 inputs, expected 2 to 3");
}

TEST(PlanFileTest, TooManyInputs) {
  PlanBuilder b = mlpPlan();
  b.kernel(StepKind::Train, KernelKind::Fill, {0}, {1});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "(fill) has 1 inputs, expected 0");
}

TEST(PlanFileTest, WrongOutputCount) {
  PlanBuilder b = mlpPlan();
  b.kernel(StepKind::Eval, KernelKind::AdamUpdate, {0}, {1, 2});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "eval kernel #2 (adam_update) has 2 outputs, expected 3");
}

TEST(PlanFileTest, UnknownKernelKind) {
  PlanBuilder b = mlpPlan();
  b.rawKernel(StepKind::Train, 999, {0}, {1});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "train kernel #6 has unknown kernel kind 999");
}

TEST(PlanFileTest, FirstUnknownKernelKind) {
  PlanBuilder b = mlpPlan();
  b.rawKernel(StepKind::Train, static_cast<uint16_t>(KernelKind::NumKinds), {}, {});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "unknown kernel kind " +
                      std::to_string(static_cast<unsigned>(KernelKind::NumKinds)));
}

TEST(PlanFileTest, BufferPastTheArena) {
  Ids ids;
  PlanBuilder b = mlpPlan(&ids);
  b.setOffset(ids.dlogits, 64 * 1000);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "buffer " + std::to_string(ids.dlogits) + " ends at byte 64032, past the arena");
}

TEST(PlanFileTest, ArenaTooSmall) {
  PlanBuilder b = mlpPlan();
  b.setArenaBytes(64);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "past the arena of 64 bytes");
}

TEST(PlanFileTest, ArenaLargerThanItsBuffersNeed) {
  // A 4 KiB plan asked for 6 GiB that no buffer uses (allocated, had the machine had it).
  PlanBuilder b = mlpPlan();
  b.setArenaBytes(uint64_t(6) << 30);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "the arena of 6442450944 bytes is larger than its buffers need");
  // An arena near 2^64, whose rounding once wrapped to 0.
  b.setArenaBytes(std::numeric_limits<uint64_t>::max() - 7);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "is larger than its buffers need");
}

TEST(PlanFileTest, ReservedHeaderBytesMustBeZero) {
  std::vector<uint8_t> bytes = mlpPlan().fileBytes();
  putU32(bytes, 28, 0xdeadbeef);
  EXPECT_DP_ERROR(parse(bytes), ErrorKind::Plan, "its reserved bytes 28-31 are not zero");
}

TEST(PlanFileTest, OffsetThatWrapsAroundIsPastTheArena) {
  // An aligned offset whose end wraps to byte 64 would look like a small in-arena buffer.
  PlanBuilder b = mlpPlan();
  uint32_t big = b.buffer({32});
  b.setOffset(big, std::numeric_limits<uint64_t>::max() - 63);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "buffer " + std::to_string(big) + " ends past the arena");
}

TEST(PlanFileTest, MisalignedOffset) {
  Ids ids;
  PlanBuilder b = mlpPlan(&ids);
  b.setOffset(ids.logits, 4);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan,
                  "buffer " + std::to_string(ids.logits) + " offset 4 is not 64-byte aligned");
}

TEST(PlanFileTest, UnknownDType) {
  Ids ids;
  PlanBuilder b = mlpPlan(&ids);
  b.setRawDType(ids.x, 9);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "has unknown dtype 9");
}

TEST(PlanFileTest, DimensionsWhoseProductOverflows) {
  // Each dimension is allowed on its own; their product (2^80) once wrapped to 0 elements and
  // the buffer was accepted as empty (found by fuzz_plan; UBSan: signed overflow).
  PlanBuilder b = mlpPlan();
  b.buffer({int64_t(1) << 40, int64_t(1) << 40});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "buffer 8 is implausibly large");
}

TEST(PlanFileTest, ZeroDimension) {
  PlanBuilder b = mlpPlan();
  b.buffer({4, 0});
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "buffer 8 has invalid dimension 0");
}

TEST(PlanFileTest, NonPositiveBatch) {
  PlanBuilder b = mlpPlan();
  b.setBatch(0);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "batch size 0 is not positive");
}

TEST(PlanFileTest, PersistentRegionLargerThanArena) {
  PlanBuilder b = mlpPlan();
  b.setPersistentBytes(1 << 20);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "persistent region is larger than the arena");
}

TEST(PlanFileTest, ParamOutsideThePersistentRegion) {
  Ids ids;
  PlanBuilder b = mlpPlan(&ids);
  b.paramOn("x", ids.x);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "param 'x' lies outside the persistent region");
}

TEST(PlanFileTest, ParamStraddlingThePersistentEnd) {
  Ids ids;
  PlanBuilder b = mlpPlan(&ids);
  b.setPersistentBytes(32); // w starts at 0 but its 48 bytes run past byte 32
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "param 'w' lies outside the persistent region");
}

TEST(PlanFileTest, UnknownInitKind) {
  PlanBuilder b = mlpPlan();
  InitSpec init;
  init.kind = InitKind::NumKinds;
  b.param("b", {4}, init);
  EXPECT_DP_ERROR(b.planFile(), ErrorKind::Plan, "param 'b' has unknown initialiser kind");
}

} // namespace
} // namespace dp::rt
