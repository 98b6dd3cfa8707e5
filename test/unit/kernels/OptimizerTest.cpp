// Optimizer updates against values worked out by hand from the Keras 2 update rules, and against
// the reference on large random vectors (which take the multi-threaded path).
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

TEST(SgdUpdateTest, HandComputed) {
  PlanBuilder b(1);
  uint32_t grad = b.buffer({3}), param = b.persistentBuffer({3});
  b.kernel(StepKind::Train, KernelKind::SgdUpdate, {grad}, {param}).attrF("lr", 0.1);
  auto program = b.load();
  put(*program, param, std::vector<float>{1.0f, -2.0f, 0.5f});
  put(*program, grad, std::vector<float>{0.5f, 1.0f, -4.0f});
  program->run(StepKind::Train, stepContext(1));
  EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{0.95, -2.1, 0.9}, 1e-7));
  program->run(StepKind::Train, stepContext(1, 2));
  EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{0.9, -2.2, 1.3}, 1e-6));
}

TEST(MomentumUpdateTest, HandComputed) {
  for (bool nesterov : {false, true}) {
    PlanBuilder b(1);
    uint32_t grad = b.buffer({2}), param = b.persistentBuffer({2}),
             velocity = b.persistentBuffer({2});
    b.kernel(StepKind::Train, KernelKind::MomentumUpdate, {grad}, {param, velocity})
        .attrF("lr", 0.1)
        .attrF("momentum", 0.9)
        .attrI("nesterov", nesterov);
    auto program = b.load();
    put(*program, param, std::vector<float>{1.0f, 0.0f});
    put(*program, velocity, std::vector<float>{0.5f, 0.0f});
    put(*program, grad, std::vector<float>{2.0f, -1.0f});
    program->run(StepKind::Train, stepContext(1));
    // v = 0.9 v - 0.1 g; plain: p += v; nesterov: p += 0.9 v - 0.1 g.
    EXPECT_TRUE(allNear(get(*program, velocity), std::vector<double>{0.25, 0.1}, 1e-7));
    if (nesterov)
      EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{1.025, 0.19}, 1e-7));
    else
      EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{1.25, 0.1}, 1e-7));
    // A second step with zero gradient only coasts on the velocity.
    put(*program, grad, std::vector<float>{0.0f, 0.0f});
    program->run(StepKind::Train, stepContext(1, 2));
    EXPECT_TRUE(allNear(get(*program, velocity), std::vector<double>{0.225, 0.09}, 1e-7));
    if (nesterov)
      EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{1.2275, 0.271}, 1e-6));
    else
      EXPECT_TRUE(allNear(get(*program, param), std::vector<double>{1.475, 0.19}, 1e-6));
  }
}

TEST(AdamUpdateTest, HandComputedKerasSteps) {
  PlanBuilder b(1);
  uint32_t grad = b.buffer({1}), param = b.persistentBuffer({1});
  uint32_t m = b.persistentBuffer({1}), v = b.persistentBuffer({1});
  b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {param, m, v})
      .attrF("lr", 0.001)
      .attrF("beta1", 0.9)
      .attrF("beta2", 0.999)
      .attrF("epsilon", 1e-7);
  auto program = b.load();
  put(*program, param, std::vector<float>{1.0f});
  put(*program, grad, std::vector<float>{0.5f});
  // t = 1: lr_t = 0.001 sqrt(0.001) / 0.1, m = 0.05, v = 0.00025,
  // p = 1 - lr_t * 0.05 / (sqrt(0.00025) + 1e-7) = 0.99900000632...
  program->run(StepKind::Train, stepContext(1, 1));
  EXPECT_NEAR(get(*program, m)[0], 0.05, 1e-8);
  EXPECT_NEAR(get(*program, v)[0], 0.00025, 1e-10);
  EXPECT_NEAR(get(*program, param)[0], 0.9990000063245154, 1e-7);
  // t = 2 with g = -0.2: lr_t = 0.001 sqrt(1 - 0.999^2) / (1 - 0.9^2), m = 0.025,
  // v = 0.00028975, p = 0.99865440250...
  put(*program, grad, std::vector<float>{-0.2f});
  program->run(StepKind::Train, stepContext(1, 2));
  EXPECT_NEAR(get(*program, m)[0], 0.025, 1e-8);
  EXPECT_NEAR(get(*program, v)[0], 0.00028975, 1e-10);
  EXPECT_NEAR(get(*program, param)[0], 0.9986544025069336, 1e-7);
}

TEST(AdamUpdateTest, TheStepNumberDrivesTheBiasCorrection) {
  // With m = v = 0 and step t, the first update is lr * sqrt(1 - b2^t) / (1 - b1^t) * g / |g|
  // (up to epsilon): the same data at t = 1 and t = 10 must move the parameter differently.
  auto firstMove = [](int64_t t) {
    PlanBuilder b(1);
    uint32_t grad = b.buffer({1}), param = b.persistentBuffer({1});
    uint32_t m = b.persistentBuffer({1}), v = b.persistentBuffer({1});
    b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {param, m, v})
        .attrF("lr", 0.01)
        .attrF("beta1", 0.9)
        .attrF("beta2", 0.99)
        .attrF("epsilon", 0.0);
    auto program = b.load();
    put(*program, grad, std::vector<float>{3.0f});
    program->run(StepKind::Train, stepContext(1, t));
    return -get(*program, param)[0];
  };
  // m = 0.3, v = 0.09 after one update: m / sqrt(v) = 1.
  EXPECT_NEAR(firstMove(1), 0.01 * std::sqrt(1 - 0.99) / (1 - 0.9), 1e-7);
  EXPECT_NEAR(firstMove(10), 0.01 * std::sqrt(1 - std::pow(0.99, 10)) / (1 - std::pow(0.9, 10)),
              1e-7);
}

TEST(OptimizerTest, LargeVectorsMatchTheReference) {
  const int64_t n = 100003;
  RandomData rd(99);
  const auto g = rd.uniform(n), p0 = rd.uniform(n), s1 = rd.uniform(n), s2 = rd.uniform(n, 0, 1);
  PlanBuilder b(1);
  uint32_t grad = b.buffer({n});
  uint32_t ps = b.persistentBuffer({n});
  uint32_t pm = b.persistentBuffer({n}), vel = b.persistentBuffer({n});
  uint32_t pa = b.persistentBuffer({n}), m = b.persistentBuffer({n}), v = b.persistentBuffer({n});
  b.kernel(StepKind::Train, KernelKind::SgdUpdate, {grad}, {ps}).attrF("lr", 0.05);
  b.kernel(StepKind::Train, KernelKind::MomentumUpdate, {grad}, {pm, vel})
      .attrF("lr", 0.05)
      .attrF("momentum", 0.8)
      .attrI("nesterov", 1);
  b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {pa, m, v})
      .attrF("lr", 0.002)
      .attrF("beta1", 0.8)
      .attrF("beta2", 0.95)
      .attrF("epsilon", 1e-6);
  auto program = b.load();
  put(*program, grad, g);
  for (uint32_t id : {ps, pm, pa})
    put(*program, id, p0);
  put(*program, vel, s1);
  put(*program, m, s1);
  put(*program, v, s2);
  program->run(StepKind::Train, stepContext(1, 7));

  std::vector<float> wantS = p0, wantM = p0, wantVel = s1, wantA = p0, wantMom = s1, wantV = s2;
  ref::sgdUpdate(wantS.data(), g.data(), n, 0.05f);
  ref::momentumUpdate(wantM.data(), wantVel.data(), g.data(), n, 0.05f, 0.8f, true);
  ref::adamUpdate(wantA.data(), wantMom.data(), wantV.data(), g.data(), n, 0.002, 0.8, 0.95, 1e-6,
                  7);
  // Within two ulps of the parameters' magnitude (1): the CPU's AVX2 and AVX-512 clones of the
  // loops (Parallel.h) contract p - lr g into one fused multiply-add, which rounds once where
  // the reference rounds twice.
  EXPECT_TRUE(allNear(get(*program, ps), wantS, 2.4e-7));
  EXPECT_TRUE(allNear(get(*program, pm), wantM, 1e-6));
  EXPECT_TRUE(allNear(get(*program, vel), wantVel, 1e-6));
  EXPECT_TRUE(allNear(get(*program, pa), wantA, 1e-6));
  EXPECT_TRUE(allNear(get(*program, m), wantMom, 1e-6));
  EXPECT_TRUE(allNear(get(*program, v), wantV, 1e-6));
}

// torch_epsilon: PyTorch's Adam (epsilon added to the bias-corrected sqrt(v_hat)), against the
// reference written as PyTorch writes it; where epsilon is large beside sqrt(v) it differs
// from Keras's form, so the flag is seen.
TEST(Optimizers, AdamWithPyTorchsEpsilonMatchesReference) {
  const int64_t n = 1000;
  RandomData rd(21);
  const auto g = rd.uniform(n, -1e-3f, 1e-3f), p0 = rd.uniform(n);
  PlanBuilder b(1);
  uint32_t grad = b.buffer({n});
  uint32_t pk = b.persistentBuffer({n}), mk = b.persistentBuffer({n}), vk = b.persistentBuffer({n});
  uint32_t pt = b.persistentBuffer({n}), mt = b.persistentBuffer({n}), vt = b.persistentBuffer({n});
  b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {pk, mk, vk})
      .attrF("lr", 0.01)
      .attrF("beta1", 0.9)
      .attrF("beta2", 0.999)
      .attrF("epsilon", 1e-3);
  b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {pt, mt, vt})
      .attrF("lr", 0.01)
      .attrF("beta1", 0.9)
      .attrF("beta2", 0.999)
      .attrF("epsilon", 1e-3)
      .attrI("torch_epsilon", 1);
  auto program = b.load();
  put(*program, grad, g);
  for (uint32_t id : {pk, pt})
    put(*program, id, p0);
  for (uint32_t id : {mk, vk, mt, vt})
    put(*program, id, std::vector<float>(n, 0.0f));
  std::vector<float> wantK = p0, wantT = p0, m1(n, 0), v1(n, 0), m2(n, 0), v2(n, 0);
  for (int64_t step = 1; step <= 3; ++step) {
    program->run(StepKind::Train, stepContext(1, step));
    ref::adamUpdate(wantK.data(), m1.data(), v1.data(), g.data(), n, 0.01, 0.9, 0.999, 1e-3, step);
    ref::adamUpdate(wantT.data(), m2.data(), v2.data(), g.data(), n, 0.01, 0.9, 0.999, 1e-3, step,
                    /*torchEpsilon=*/true);
  }
  EXPECT_TRUE(allNear(get(*program, pk), wantK, 1e-6));
  EXPECT_TRUE(allNear(get(*program, pt), wantT, 1e-6));
  // The two forms differ by far more than the tolerance here.
  EXPECT_FALSE(allNear(wantK, wantT, 1e-5));
}

// weight_decay: decoupled, param -= lr * weight_decay * param before the update, at the step's
// scheduled rate (not Adam's bias-corrected step): with a zero gradient every rule only decays;
// with gradients, each matches the reference's decay then its update (the threaded path).
TEST(Optimizers, WeightDecayIsDecoupledAndScheduled) {
  const int64_t n = 50001;
  RandomData rd(5);
  const auto g = rd.uniform(n), p0 = rd.uniform(n);
  for (bool zeroGradient : {true, false}) {
    PlanBuilder b(1);
    uint32_t grad = b.buffer({n});
    uint32_t ps = b.persistentBuffer({n});
    uint32_t pm = b.persistentBuffer({n}), vel = b.persistentBuffer({n});
    uint32_t pa = b.persistentBuffer({n}), m = b.persistentBuffer({n}), v = b.persistentBuffer({n});
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {grad}, {ps})
        .attrF("lr", 0.1)
        .attrF("weight_decay", 0.5);
    b.kernel(StepKind::Train, KernelKind::MomentumUpdate, {grad}, {pm, vel})
        .attrF("lr", 0.1)
        .attrF("momentum", 0.9)
        .attrF("weight_decay", 0.5);
    b.kernel(StepKind::Train, KernelKind::AdamUpdate, {grad}, {pa, m, v})
        .attrF("lr", 0.01)
        .attrF("beta1", 0.9)
        .attrF("beta2", 0.999)
        .attrF("epsilon", 1e-7)
        .attrF("weight_decay", 0.25);
    auto program = b.load();
    const std::vector<float> gradient = zeroGradient ? std::vector<float>(n, 0.0f) : g;
    put(*program, grad, gradient);
    for (uint32_t id : {ps, pm, pa})
      put(*program, id, p0);
    for (uint32_t id : {vel, m, v})
      put(*program, id, std::vector<float>(n, 0.0f));
    StepContext ctx = stepContext(1, 3);
    ctx.lrScale = 0.5; // a schedule's factor scales the decay too
    program->run(StepKind::Train, ctx);
    std::vector<float> wantS = p0, wantM = p0, wantA = p0, vel0(n, 0), m0(n, 0), v0(n, 0);
    ref::decoupledDecay(wantS.data(), n, 0.05, 0.5);
    ref::decoupledDecay(wantM.data(), n, 0.05, 0.5);
    ref::decoupledDecay(wantA.data(), n, 0.005, 0.25);
    if (zeroGradient) {
      // p0 * (1 - lr * lrScale * weight_decay), whatever the rule.
      EXPECT_TRUE(allNear(get(*program, ps), wantS, 1e-7));
      EXPECT_TRUE(allNear(get(*program, pm), wantM, 1e-7));
      EXPECT_TRUE(allNear(get(*program, pa), wantA, 1e-7));
      continue;
    }
    ref::sgdUpdate(wantS.data(), g.data(), n, 0.05f);
    ref::momentumUpdate(wantM.data(), vel0.data(), g.data(), n, 0.05f, 0.9f, false);
    ref::adamUpdate(wantA.data(), m0.data(), v0.data(), g.data(), n, 0.005, 0.9, 0.999, 1e-7, 3);
    EXPECT_TRUE(allNear(get(*program, ps), wantS, 1e-6));
    EXPECT_TRUE(allNear(get(*program, pm), wantM, 1e-6));
    EXPECT_TRUE(allNear(get(*program, pa), wantA, 1e-6));
    // Without the decay the results are another's.
    std::vector<float> undecayed = p0;
    ref::sgdUpdate(undecayed.data(), g.data(), n, 0.05f);
    EXPECT_FALSE(allNear(get(*program, ps), undecayed, 1e-4));
  }
}

/// The mean of `g` over its micro-shards summed in the binary tree over their indices:
/// sum(lo, hi) = sum(lo, mid) + sum(mid, hi), mid the largest power-of-two boundary inside.
float treeSum(const std::vector<std::vector<float>> &g, size_t lo, size_t hi, int64_t i) {
  if (hi - lo == 1)
    return g[lo][i];
  size_t half = 1;
  while (half * 2 < hi - lo)
    half *= 2;
  return treeSum(g, lo, lo + half, i) + treeSum(g, lo + half, hi, i);
}

// Gradient accumulation over M = 2, 3, 4, 6 and 8 micro-shards: the sum of the micro-shards'
// gradients in the binary tree over their indices (the tree the replicas of a process are
// summed in), divided by M, exactly (the float computation of treeSum); the update marked
// final runs with the last micro-shard only, on the mean. 100003 elements take the threaded
// path: the same bits on 1 and 2 threads. A micro-shard past the plan's is refused.
TEST(Optimizers, AccumulateSumsTheMicroShardsInATree) {
  RandomData rd(23);
  const int64_t n = 100003;
  for (int count : {2, 3, 4, 6, 8}) {
    std::vector<std::vector<float>> g;
    for (int m = 0; m < count; ++m)
      g.push_back(rd.uniform(n, -1.0f, 1.0f));
    const std::vector<float> p0 = rd.uniform(n);
    std::vector<float> mean(n);
    for (int64_t i = 0; i < n; ++i)
      mean[i] = treeSum(g, 0, g.size(), i) / static_cast<float>(count);
    std::vector<float> want = p0;
    ref::sgdUpdate(want.data(), mean.data(), n, 0.5f);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2}) {
      const ComputeThreads computeThreads(threads);
      PlanBuilder b(count);
      b.accumulation(count);
      const uint32_t grad = b.buffer({n}), sum = b.persistentBuffer({n});
      const uint32_t param = b.param("w", {n});
      std::vector<uint32_t> outs{sum};
      if (int64_t levels = accumulatePartialLevels(count))
        outs.push_back(b.persistentBuffer({levels, n}));
      b.kernel(StepKind::Train, KernelKind::Accumulate, {grad}, outs).attrI("count", count);
      b.kernel(StepKind::Train, KernelKind::SgdUpdate, {sum}, {param}).attrF("lr", 0.5).markFinal();
      auto program = b.load();
      put(*program, param, p0);
      for (int m = 0; m < count; ++m) {
        put(*program, grad, g[m]);
        StepContext ctx = stepContext(1, 1);
        ctx.microShard = m;
        program->run(StepKind::Train, ctx);
        if (m + 1 < count) {
          EXPECT_EQ(get(*program, param), p0) << "the update ran on micro-shard " << m;
        }
      }
      EXPECT_EQ(get(*program, sum), mean) << count << " micro-shards";
      EXPECT_EQ(get(*program, param), want) << count << " micro-shards";
      results.push_back(get(*program, param));
      StepContext past = stepContext(1, 1);
      past.microShard = count;
      EXPECT_THROW(program->run(StepKind::Train, past), Error);
    }
    EXPECT_EQ(results[0], results[1]);
  }
  EXPECT_EQ(accumulatePartialLevels(2), 0);
  EXPECT_EQ(accumulatePartialLevels(3), 1);
  EXPECT_EQ(accumulatePartialLevels(4), 1);
  EXPECT_EQ(accumulatePartialLevels(5), 2);
  EXPECT_EQ(accumulatePartialLevels(8), 2);
  EXPECT_EQ(accumulatePartialLevels(9), 3);
}

// The loader's rules of the phases: a kernel marked final, or an accumulate kernel, needs a plan
// with accumulation (and the train step); its count must be the plan's; a collective of such a
// plan must be final.
TEST(Optimizers, PhasesOfAccumulationAreChecked) {
  auto refused = [](const PlanBuilder &b, const std::string &words) {
    try {
      b.plan();
      ADD_FAILURE() << "accepted; expected: " << words;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  {
    PlanBuilder b(2);
    const uint32_t g = b.buffer({4}), p = b.param("w", {4});
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {g}, {p}).attrF("lr", 0.1).markFinal();
    refused(b, "train kernel #0 (sgd_update) is marked final, which only the train step of a "
               "plan with accumulation does");
  }
  {
    PlanBuilder b(2);
    b.accumulation(2);
    const uint32_t g = b.buffer({4}), s = b.persistentBuffer({4});
    b.kernel(StepKind::Eval, KernelKind::Accumulate, {g}, {s}).attrI("count", 2);
    refused(b, "eval kernel #0 (accumulate) accumulates a gradient");
  }
  {
    PlanBuilder b(2);
    b.accumulation(2);
    const uint32_t g = b.buffer({4}), s = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::Accumulate, {g}, {s}).attrI("count", 4);
    refused(b, "sums 4 micro-shards, the plan's accumulation is 2");
  }
  {
    PlanBuilder b(3);
    b.accumulation(2);
    refused(b, "accumulation 2 does not cut the batch of 3 rows into equal micro-shards");
  }
  {
    PlanBuilder b(4);
    b.accumulation(4);
    const uint32_t g = b.buffer({4}), s = b.persistentBuffer({4});
    b.kernel(StepKind::Train, KernelKind::Accumulate, {g}, {s}).attrI("count", 4);
    auto program = [&] { b.load(); };
    EXPECT_DP_ERROR(program(), ErrorKind::Plan, "takes an output 1 of 1 partial sums");
  }
  {
    PlanBuilder b(2);
    b.accumulation(2);
    const uint32_t g = b.buffer({4}), s = b.buffer({4});
    b.kernel(StepKind::Train, KernelKind::Accumulate, {g}, {s}).attrI("count", 2);
    refused(b, "train kernel #0 (accumulate) sums into buffer 1, which is not persistent");
  }
  {
    PlanBuilder b(4);
    b.devices(2).accumulation(2);
    const uint32_t b0 = b.onDevice(0).persistentBuffer({16});
    const uint32_t b1 = b.onDevice(1).persistentBuffer({16});
    b.manifestEntry(0, 16, "w");
    b.collective(StepKind::Train, KernelKind::AllReduceStart, 0, {b0, b1});
    b.collective(StepKind::Train, KernelKind::AllReduceWait, 0, {b0, b1}).markFinal();
    refused(b, "train kernel #0 (allreduce_start) is a collective of a plan with accumulation but "
               "is not final");
  }
}

// clip_factor against the reference on gradients of several blocks (the threaded path), with
// the same bits on 1 and 2 threads; and each update with the factor as its scale against the
// reference on the gradient times the factor. A norm under the limit gives 1, which changes no
// bit of an update.
TEST(Optimizers, ClipFactorScalesTheUpdatesToTheGlobalNorm) {
  RandomData rd(17);
  // 41 blocks of the sum: the threaded path (32 or more).
  const std::vector<int64_t> sizes{600000, 7, 40000};
  std::vector<std::vector<float>> grads;
  for (int64_t n : sizes)
    grads.push_back(rd.uniform(n));
  const float want =
      ref::clipFactor({grads[0].data(), grads[1].data(), grads[2].data()}, sizes, 5.0);
  ASSERT_LT(want, 0.1f); // the norm is about 460: clipping is active
  std::vector<float> factors;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    PlanBuilder b(1);
    std::vector<uint32_t> ids;
    for (int64_t n : sizes)
      ids.push_back(b.buffer({n}));
    uint32_t factor = b.buffer({});
    uint32_t ps = b.persistentBuffer({sizes[0]});
    uint32_t pm = b.persistentBuffer({sizes[0]}), vel = b.persistentBuffer({sizes[0]});
    uint32_t pa = b.persistentBuffer({sizes[0]}), m = b.persistentBuffer({sizes[0]}),
             v = b.persistentBuffer({sizes[0]});
    b.kernel(StepKind::Train, KernelKind::ClipFactor, {ids[0], ids[1], ids[2]}, {factor})
        .attrF("max_norm", 5.0);
    b.kernel(StepKind::Train, KernelKind::SgdUpdate, {ids[0], factor}, {ps}).attrF("lr", 0.05);
    b.kernel(StepKind::Train, KernelKind::MomentumUpdate, {ids[0], factor}, {pm, vel})
        .attrF("lr", 0.05)
        .attrF("momentum", 0.8)
        .attrI("nesterov", 1);
    b.kernel(StepKind::Train, KernelKind::AdamUpdate, {ids[0], factor}, {pa, m, v})
        .attrF("lr", 0.002)
        .attrF("beta1", 0.8)
        .attrF("beta2", 0.95)
        .attrF("epsilon", 1e-6);
    auto program = b.load();
    for (size_t i = 0; i < sizes.size(); ++i)
      put(*program, ids[i], grads[i]);
    const std::vector<float> p0 = rd.uniform(sizes[0]);
    for (uint32_t id : {ps, pm, pa})
      put(*program, id, p0);
    for (uint32_t id : {vel, m, v})
      put(*program, id, std::vector<float>(sizes[0], 0.0f));
    program->run(StepKind::Train, stepContext(1, 1));
    factors.push_back(get(*program, factor)[0]);
    EXPECT_NEAR(factors.back(), want, 1e-6 * want);

    std::vector<float> scaled(sizes[0]);
    for (int64_t i = 0; i < sizes[0]; ++i)
      scaled[i] = grads[0][i] * factors.back();
    std::vector<float> wantS = p0, wantM = p0, wantA = p0, vel0(sizes[0], 0.0f), m0(sizes[0], 0.0f),
                       v0(sizes[0], 0.0f);
    ref::sgdUpdate(wantS.data(), scaled.data(), sizes[0], 0.05f);
    ref::momentumUpdate(wantM.data(), vel0.data(), scaled.data(), sizes[0], 0.05f, 0.8f, true);
    ref::adamUpdate(wantA.data(), m0.data(), v0.data(), scaled.data(), sizes[0], 0.002, 0.8, 0.95,
                    1e-6, 1);
    // Two ulps, as in LargeVectorsMatchTheReference.
    EXPECT_TRUE(allNear(get(*program, ps), wantS, 2.4e-7));
    EXPECT_TRUE(allNear(get(*program, pm), wantM, 1e-6));
    EXPECT_TRUE(allNear(get(*program, pa), wantA, 1e-6));
  }
  omp_set_num_threads(2);
  // The order of the sum is fixed by the sizes alone: the same bits on every thread count.
  EXPECT_EQ(factors[0], factors[1]);

  // Under the limit: a factor of exactly 1, and an update with it is the update without it.
  PlanBuilder b(1);
  uint32_t grad = b.buffer({sizes[0]}), factor = b.buffer({});
  uint32_t p1 = b.persistentBuffer({sizes[0]}), p2 = b.persistentBuffer({sizes[0]});
  b.kernel(StepKind::Train, KernelKind::ClipFactor, {grad}, {factor}).attrF("max_norm", 1e6);
  b.kernel(StepKind::Train, KernelKind::SgdUpdate, {grad, factor}, {p1}).attrF("lr", 0.05);
  b.kernel(StepKind::Train, KernelKind::SgdUpdate, {grad}, {p2}).attrF("lr", 0.05);
  auto program = b.load();
  put(*program, grad, grads[0]);
  const std::vector<float> p0 = rd.uniform(sizes[0]);
  put(*program, p1, p0);
  put(*program, p2, p0);
  program->run(StepKind::Train, stepContext(1, 1));
  EXPECT_EQ(get(*program, factor)[0], 1.0f);
  EXPECT_EQ(get(*program, p1), get(*program, p2));
}

TEST(Optimizers, ClipFactorPropagatesANaNGradient) {
  PlanBuilder b(1);
  uint32_t grad = b.buffer({3}), factor = b.buffer({});
  b.kernel(StepKind::Train, KernelKind::ClipFactor, {grad}, {factor}).attrF("max_norm", 1.0);
  auto program = b.load();
  put(*program, grad, std::vector<float>{1.0f, std::nanf(""), 2.0f});
  program->run(StepKind::Train, stepContext(1, 1));
  EXPECT_TRUE(std::isnan(get(*program, factor)[0]));
}

} // namespace
} // namespace dp::rt
