// Program: arena layout and lookups, run-time argument checks, and a whole training step of a
// hand-built plan (dense, softmax cross-entropy, gradients, SGD) checked against a hand
// computation and run until the loss has gone down and every sample is classified right.
#include "runtime/core/Program.h"
#include "runtime/kernels/reference/Reference.h"

#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

// Counts heap allocations so that a test can check that running a step allocates nothing.
// GCC cannot tell that these replacements pair malloc with free on purpose.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<long> gAllocations{0};
void *operator new(std::size_t size) {
  ++gAllocations;
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

constexpr int64_t kRows = 8, kFeatures = 4, kClasses = 3;
constexpr double kLr = 0.5;

struct Classifier {
  std::unique_ptr<Program> program;
  uint32_t x, labels, w, b, loss, correct, evalLoss, evalCorrect;
};

// One dense layer trained with softmax cross-entropy and plain SGD.
Classifier classifier() {
  PlanBuilder pb(kRows);
  Classifier c;
  uint32_t gw = pb.buffer({kFeatures, kClasses}), gb = pb.buffer({kClasses});
  c.w = pb.param("dense/kernel", {kFeatures, kClasses},
                 {InitKind::GlorotUniform, 0, 0, kFeatures, kClasses}, static_cast<int32_t>(gw));
  c.b = pb.param("dense/bias", {kClasses}, {InitKind::Zeros}, static_cast<int32_t>(gb));
  c.x = pb.buffer({kRows, kFeatures});
  c.labels = pb.buffer({kRows}, DType::I32);
  uint32_t logits = pb.buffer({kRows, kClasses}), dlogits = pb.buffer({kRows, kClasses});
  uint32_t one = pb.buffer({});
  c.loss = pb.buffer({});
  c.correct = pb.buffer({});
  c.evalLoss = pb.buffer({});
  c.evalCorrect = pb.buffer({});
  pb.input("image", c.x, InputRole::Samples).input("label", c.labels, InputRole::Targets);

  const StepKind train = StepKind::Train, eval = StepKind::Eval;
  pb.kernel(train, KernelKind::Dense, {c.x, c.w, c.b}, {logits});
  pb.kernel(train, KernelKind::SoftmaxXent, {logits, c.labels}, {c.loss});
  pb.kernel(train, KernelKind::CountCorrect, {logits, c.labels}, {c.correct});
  pb.kernel(train, KernelKind::Fill, {}, {one}).attrF("value", 1.0);
  pb.kernel(train, KernelKind::SoftmaxXentGrad, {logits, c.labels, one}, {dlogits});
  pb.kernel(train, KernelKind::MatMul, {c.x, dlogits}, {gw}).attrI("transpose_a", 1);
  pb.kernel(train, KernelKind::ReduceRows, {dlogits}, {gb});
  pb.kernel(train, KernelKind::SgdUpdate, {gw}, {c.w}).attrF("lr", kLr);
  pb.kernel(train, KernelKind::SgdUpdate, {gb}, {c.b}).attrF("lr", kLr);
  pb.output(train, "loss", c.loss, OutputRole::Loss)
      .output(train, "correct", c.correct, OutputRole::Correct);
  pb.kernel(eval, KernelKind::Dense, {c.x, c.w, c.b}, {logits});
  pb.kernel(eval, KernelKind::SoftmaxXent, {logits, c.labels}, {c.evalLoss});
  pb.kernel(eval, KernelKind::CountCorrect, {logits, c.labels}, {c.evalCorrect});
  pb.output(eval, "loss", c.evalLoss, OutputRole::Loss)
      .output(eval, "correct", c.evalCorrect, OutputRole::Correct);
  c.program = pb.load();
  return c;
}

// Linearly separable data: the label is the largest of the first three features.
void feed(Classifier &c) {
  RandomData rd(31);
  std::vector<float> x = rd.uniform(kRows * kFeatures);
  std::vector<int32_t> labels(kRows);
  for (int64_t r = 0; r < kRows; ++r) {
    const float *row = &x[r * kFeatures];
    labels[r] = static_cast<int32_t>(std::max_element(row, row + kClasses) - row);
  }
  put(*c.program, c.x, x);
  put(*c.program, c.labels, labels);
}

TEST(ProgramTest, ArenaIsAlignedZeroedAndSized) {
  Classifier c = classifier();
  const Plan &plan = c.program->plan();
  EXPECT_EQ(c.program->arenaBytes(), plan.arenaBytes);
  const uintptr_t base =
      reinterpret_cast<uintptr_t>(c.program->bufferData(0)) - plan.buffers[0].offset;
  EXPECT_EQ(base % 64, 0u);
  for (uint32_t id = 0; id < plan.buffers.size(); ++id) {
    auto address = reinterpret_cast<uintptr_t>(c.program->bufferData(id));
    EXPECT_EQ(address - base, plan.buffers[id].offset) << "buffer " << id;
    for (float v : get(*c.program, id))
      ASSERT_EQ(v, 0.0f) << "buffer " << id;
  }
}

TEST(ProgramTest, LooksUpInputsAndOutputsByRole) {
  Classifier c = classifier();
  EXPECT_EQ(c.program->inputBuffer(InputRole::Samples), static_cast<int>(c.x));
  EXPECT_EQ(c.program->inputBuffer(InputRole::Targets), static_cast<int>(c.labels));
  EXPECT_EQ(c.program->inputBuffer(InputRole::Samples, 1), -1); // one device
  EXPECT_EQ(c.program->outputBuffer(StepKind::Train, OutputRole::Loss), static_cast<int>(c.loss));
  EXPECT_EQ(c.program->outputBuffer(StepKind::Eval, OutputRole::Correct),
            static_cast<int>(c.evalCorrect));
  EXPECT_EQ(c.program->plan().input(InputRole::Targets)->name, "label");
  EXPECT_EQ(c.program->plan().output(StepKind::Eval, OutputRole::Loss)->name, "loss");
}

TEST(ProgramTest, BufferDataRejectsUnknownIds) {
  Classifier c = classifier();
  const uint32_t n = c.program->plan().buffers.size();
  EXPECT_DP_ERROR(c.program->bufferData(n), ErrorKind::Runtime,
                  "buffer " + std::to_string(n) + " does not exist");
}

TEST(ProgramTest, RunChecksItsContext) {
  Classifier c = classifier();
  EXPECT_DP_ERROR(c.program->run(StepKind::Train, stepContext(0)), ErrorKind::Runtime,
                  "train step: 0 valid rows is outside [1, batch 8]");
  EXPECT_DP_ERROR(c.program->run(StepKind::Eval, stepContext(9)), ErrorKind::Runtime,
                  "eval step: 9 valid rows");
  EXPECT_DP_ERROR(c.program->run(StepKind::Train, stepContext(8, 0)), ErrorKind::Runtime,
                  "step number 0 is not 1-based");
}

TEST(ProgramTest, ParamsMustBeF32) {
  PlanBuilder b(1);
  uint32_t id = b.param("steps", {1});
  b.setRawDType(id, static_cast<uint8_t>(DType::I32));
  EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                  "param 'steps' (buffer 0) is i32, parameters must be f32");
}

TEST(ProgramTest, InitialisesParamsFromTheirData) {
  // An imported model's weights: every replica's copy gets the plan's values, whatever the
  // seed; a table may serve several parameters.
  PlanBuilder b(2);
  const int32_t table = b.initData({0.5f, -1.5f, 2.0f});
  InitSpec init;
  init.kind = InitKind::Data;
  init.data = table;
  const uint32_t w = b.param("w", {3}, init);
  const uint32_t v = b.param("v", {3}, init);
  std::unique_ptr<Program> program = b.load();
  for (uint64_t seed : {1, 2}) {
    program->initParams(seed);
    EXPECT_EQ(get(*program, w), (std::vector<float>{0.5f, -1.5f, 2.0f}));
    EXPECT_EQ(get(*program, v), (std::vector<float>{0.5f, -1.5f, 2.0f}));
  }
  // Values that cannot train are refused before anything runs.
  PlanBuilder nan(2);
  init.data = nan.initData({1.0f, std::nanf(""), 0.0f});
  nan.param("w", {3}, init);
  EXPECT_DP_ERROR(nan.load(), ErrorKind::Plan, "param 'w': data initialiser value 1 is not finite");
}

TEST(ProgramTest, OneTrainStepMatchesAHandComputation) {
  Classifier c = classifier();
  c.program->initParams(5);
  feed(c);
  const std::vector<float> x = get(*c.program, c.x), w0 = get(*c.program, c.w);
  const std::vector<int32_t> labels = get<int32_t>(*c.program, c.labels);
  c.program->run(StepKind::Train, stepContext(kRows));

  // b0 = 0. dlogits = (softmax(x w0) - onehot) / N; w1 = w0 - lr x^T dlogits; b1 = -lr
  // sum(dlogits).
  std::vector<float> probs(kRows * kClasses);
  ref::dense(x.data(), w0.data(), static_cast<const float *>(nullptr), probs.data(), kRows,
             kFeatures, kClasses, Activation::Softmax);
  std::vector<double> w1(w0.begin(), w0.end()), b1(kClasses, 0.0);
  double loss = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    loss -= std::log(probs[r * kClasses + labels[r]]) / kRows;
    for (int64_t j = 0; j < kClasses; ++j) {
      const double d = (probs[r * kClasses + j] - (j == labels[r] ? 1.0 : 0.0)) / kRows;
      b1[j] -= kLr * d;
      for (int64_t f = 0; f < kFeatures; ++f)
        w1[f * kClasses + j] -= kLr * x[r * kFeatures + f] * d;
    }
  }
  EXPECT_NEAR(get(*c.program, c.loss)[0], loss, 1e-6);
  EXPECT_TRUE(allNear(get(*c.program, c.w), w1, 1e-6));
  EXPECT_TRUE(allNear(get(*c.program, c.b), b1, 1e-6));
}

TEST(ProgramTest, TrainingLowersTheLossUntilEverySampleIsRight) {
  Classifier c = classifier();
  c.program->initParams(11);
  feed(c);
  c.program->run(StepKind::Eval, stepContext(kRows));
  const float initialLoss = get(*c.program, c.evalLoss)[0];
  float previous = INFINITY;
  for (int64_t step = 1; step <= 300; ++step) {
    c.program->run(StepKind::Train, stepContext(kRows, step));
    const float loss = get(*c.program, c.loss)[0];
    // Full-batch gradient descent on a convex loss with a small step only goes down.
    ASSERT_LT(loss, previous) << "step " << step;
    previous = loss;
  }
  c.program->run(StepKind::Eval, stepContext(kRows));
  EXPECT_LT(get(*c.program, c.evalLoss)[0], 0.5f * initialLoss);
  EXPECT_EQ(get(*c.program, c.evalCorrect)[0], static_cast<float>(kRows));
}

TEST(ProgramTest, LoopKernelsDoNotAllocate) {
  // Every kernel kind that is not built on oneDNN, in one step.
  PlanBuilder b(4);
  uint32_t logits = b.buffer({4, 3}), labels = b.buffer({4}, DType::I32), loss = b.buffer({});
  uint32_t one = b.buffer({}), dlogits = b.buffer({4, 3}), probs = b.buffer({4, 3});
  uint32_t dprobs = b.buffer({4, 3}), sum = b.buffer({3}), correct = b.buffer({});
  uint32_t copy = b.buffer({12}), p = b.persistentBuffer({3}), v = b.persistentBuffer({3});
  uint32_t m = b.persistentBuffer({3}), s = b.persistentBuffer({3});
  const StepKind t = StepKind::Train;
  b.kernel(t, KernelKind::Fill, {}, {one}).attrF("value", 1);
  b.kernel(t, KernelKind::SoftmaxXent, {logits, labels}, {loss});
  b.kernel(t, KernelKind::SoftmaxXentGrad, {logits, labels, one}, {dlogits});
  b.kernel(t, KernelKind::CountCorrect, {logits, labels}, {correct});
  b.kernel(t, KernelKind::Activation, {logits}, {probs}).activation(Activation::Softmax);
  b.kernel(t, KernelKind::Activation, {probs}, {probs}).activation(Activation::Relu);
  b.kernel(t, KernelKind::ActivationGrad, {probs, dlogits}, {dprobs})
      .activation(Activation::Softmax);
  b.kernel(t, KernelKind::Add, {dprobs, dlogits}, {dprobs});
  b.kernel(t, KernelKind::ReduceRows, {dprobs}, {sum});
  b.kernel(t, KernelKind::Copy, {dprobs}, {copy});
  b.kernel(t, KernelKind::SgdUpdate, {sum}, {p}).attrF("lr", 0.1);
  b.kernel(t, KernelKind::MomentumUpdate, {sum}, {p, v}).attrF("lr", 0.1).attrF("momentum", 0.9);
  b.kernel(t, KernelKind::AdamUpdate, {sum}, {p, m, s})
      .attrF("lr", 0.1)
      .attrF("beta1", 0.9)
      .attrF("beta2", 0.999)
      .attrF("epsilon", 1e-7);
  auto program = b.load();
  put(*program, labels, std::vector<int32_t>{0, 1, 2, 1});
  program->run(t, stepContext(4));
  const long before = gAllocations.load();
  for (int64_t step = 2; step < 12; ++step)
    program->run(t, stepContext(3, step));
  EXPECT_EQ(gAllocations.load() - before, 0);
}

TEST(ProgramTest, OneDnnKernelsDoNotBuildAnythingPerStep) {
  // oneDNN's execute() allocates a small execution context internally (a handful of blocks per
  // call) which no caller can avoid; creating primitives or memory objects per step would cost
  // far more. The classifier runs two oneDNN kernels per train step and one per eval step.
  Classifier c = classifier();
  c.program->initParams(1);
  feed(c);
  const StepContext ctx = stepContext(kRows);
  c.program->run(StepKind::Train, ctx);
  c.program->run(StepKind::Eval, ctx);
  const long before = gAllocations.load();
  const int rounds = 10, oneDnnCallsPerRound = 3, allowedPerCall = 10;
  for (int i = 0; i < rounds; ++i) {
    c.program->run(StepKind::Train, ctx);
    c.program->run(StepKind::Eval, ctx);
  }
  EXPECT_LE(gAllocations.load() - before, rounds * oneDnnCallsPerRound * allowedPerCall);
}

} // namespace
} // namespace dp::rt
