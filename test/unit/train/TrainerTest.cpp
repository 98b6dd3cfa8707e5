// Tests of the trainer in-process on the tiny softmax-regression plan: the plan and data checks,
// evaluation that does not depend on the batch size (padding and valid rows), step counting
// across epochs, and the plan queries used for reports.
#include "runtime/train/Trainer.h"
#include "dprun/TinyPlan.h"
#include "runtime/base/Error.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dp::rt {
namespace {

/// `n` samples of 2x2 pixels in 3 classes; the pixel of the sample's class is bright.
Dataset makeData(int64_t n, int64_t side = 2) {
  std::vector<uint8_t> images, labels;
  uint32_t noise = 99;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < side * side; ++p) {
      noise = noise * 1103515245u + 12345u;
      images.push_back(static_cast<uint8_t>(p == i % 3 ? 180 + (noise >> 26) : noise >> 26));
    }
    labels.push_back(static_cast<uint8_t>(i % 3));
  }
  return Dataset::fromBytes(images, labels, side, side, 3, "synthetic");
}

/// Runs `body`, expecting an Error of `kind` whose message contains `part`.
template <typename F> void expectError(F body, ErrorKind kind, const std::string &part) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing '" << part << "'";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Trainer, EvaluationDoesNotDependOnBatchSize) {
  // Parameters depend only on (seed, name), so plans differing only in batch size start from
  // the same weights: evaluating them must agree, whatever padding the last batch needs.
  Dataset test = makeData(13);
  std::ostringstream out;
  double referenceLoss = 0, referenceAccuracy = 0;
  for (int64_t batch : {13, 1, 5, 8, 20}) {
    std::unique_ptr<Program> program = test::tinyPlan(batch, 4, 3).load();
    program->initParams(5);
    Trainer trainer(*program, "tiny.dpx");
    EvalStats stats = trainer.evaluate(test);
    EXPECT_EQ(stats.samples, 13) << "batch " << batch;
    if (batch == 13) {
      referenceLoss = stats.loss;
      referenceAccuracy = stats.accuracy;
      EXPECT_GT(stats.loss, 0.0);
      continue;
    }
    EXPECT_NEAR(stats.loss, referenceLoss, 1e-6) << "batch " << batch;
    EXPECT_DOUBLE_EQ(stats.accuracy, referenceAccuracy) << "batch " << batch;
  }
}

TEST(Trainer, PredictionsAreEverySamplesLogitsInOrder) {
  // Whatever the batch (and so the padding of the last one), each sample's logits are the
  // dense layer's on it: x W + b, with the weights every plan draws alike.
  Dataset test = makeData(13);
  std::vector<float> reference;
  for (int64_t batch : {13, 1, 5, 20}) {
    test::TinyPlanIds ids;
    std::unique_ptr<Program> program = test::tinyPlan(batch, 4, 3, 0.5f, true, &ids).load();
    program->initParams(5);
    Trainer trainer(*program, "tiny.dpx");
    Predictions predictions;
    const EvalStats stats = trainer.evaluate(test, &predictions);
    ASSERT_EQ(predictions.classes, 3);
    ASSERT_EQ(predictions.logits.size(), 13u * 3);
    // The accuracy the predictions imply is the evaluation's.
    int64_t right = 0;
    for (int64_t i = 0; i < 13; ++i) {
      const float *row = &predictions.logits[size_t(i * 3)];
      right += std::max_element(row, row + 3) - row == test.label(i);
    }
    EXPECT_DOUBLE_EQ(double(right) / 13, stats.accuracy) << "batch " << batch;
    if (reference.empty()) {
      std::vector<float> w(12), b(3), x(4);
      program->read(ids.w, w.data());
      program->read(ids.b, b.data());
      for (int64_t i = 0; i < 13; ++i) {
        Batcher one(test, 13, BatchOrder::Sequential, Remainder::Pad);
        std::vector<float> images(13 * 4);
        std::vector<int32_t> labels(13);
        one.fillBatch(0, 0, 13, images.data(), labels.data());
        for (int c = 0; c < 3; ++c) {
          float expected = b[size_t(c)];
          for (int k = 0; k < 4; ++k)
            expected += images[size_t(i * 4 + k)] * w[size_t(k * 3 + c)];
          EXPECT_NEAR(predictions.logits[size_t(i * 3 + c)], expected, 1e-5)
              << "sample " << i << " class " << c;
        }
      }
      reference = predictions.logits;
      continue;
    }
    for (size_t k = 0; k < reference.size(); ++k)
      EXPECT_NEAR(predictions.logits[k], reference[k], 1e-6) << "batch " << batch;
  }
}

TEST(Trainer, UpdatesUseTheScheduleFactorOfTheirStep) {
  // The kernels: one SGD step from the same parameters and inputs moves them by the factor.
  test::TinyPlanIds ids;
  std::unique_ptr<Program> program = test::tinyPlan(4, 4, 3, 0.5f, true, &ids).load();
  std::vector<float> image(16), w0(12), w1(12), wq(12), b0(3);
  for (size_t i = 0; i < image.size(); ++i)
    image[i] = 0.1f * float(i % 5);
  const std::vector<int32_t> label = {0, 1, 2, 1};
  program->initParams(3);
  program->read(ids.w, w0.data());
  program->read(ids.b, b0.data());
  auto step = [&](double scale, std::vector<float> &after) {
    program->write(ids.w, w0.data());
    program->write(ids.b, b0.data());
    program->write(ids.image, image.data());
    program->write(ids.label, label.data());
    StepContext ctx{4, 4, 1, 0, 1, 0, scale};
    program->run(StepKind::Train, ctx);
    program->read(ids.w, after.data());
  };
  step(1.0, w1);
  step(0.25, wq);
  for (size_t i = 0; i < w0.size(); ++i)
    EXPECT_NEAR(wq[i] - w0[i], 0.25f * (w1[i] - w0[i]), 1e-6f) << i;

  // The trainer: each epoch's last step has the schedule's factor at its place.
  LrSchedule s;
  std::string error;
  ASSERT_TRUE(parseLrSchedule("warmup-linear:epochs=2,start=0.2+step:every=1,factor=0.5", 0, s,
                              error))
      << error;
  std::unique_ptr<Program> scheduled = test::tinyPlan(8, 4, 3).setLrSchedule(s).load();
  scheduled->initParams(1);
  std::ostringstream out;
  Trainer trainer(*scheduled, "tiny.dpx");
  Dataset train = makeData(43);
  Batcher batcher(train, 8, BatchOrder::Shuffled, Remainder::Drop, 1);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    EpochStats stats = trainer.trainEpoch(batcher, epoch, 3, 0);
    const double t = (epoch - 1) + 4.0 / 5; // the last of 5 steps
    const double warm = t < 2 ? 0.2 + 0.8 * t / 2 : 1;
    EXPECT_NEAR(stats.lrScale, warm * std::pow(0.5, epoch - 1), 1e-12) << epoch;
  }
}

TEST(Trainer, StepsCountAcrossEpochsAndLossFalls) {
  Dataset train = makeData(43);
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(1);
  std::ostringstream out;
  Trainer trainer(*program, "tiny.dpx");
  Batcher batcher(train, 8, BatchOrder::Shuffled, Remainder::Drop, 1);
  EpochStats first = trainer.trainEpoch(batcher, 1, 3, 0);
  EXPECT_EQ(first.steps, 5);
  EXPECT_EQ(first.samples, 40);
  EXPECT_EQ(trainer.stepsRun(), 5);
  EpochStats second = trainer.trainEpoch(batcher, 2, 3, 0);
  EXPECT_EQ(trainer.stepsRun(), 10);
  EpochStats capped = trainer.trainEpoch(batcher, 3, 3, 2);
  EXPECT_EQ(capped.steps, 2);
  EXPECT_EQ(trainer.stepsRun(), 12);
  EXPECT_LT(second.loss, first.loss);
  EXPECT_GE(second.trainAccuracy, 0.0);
  EXPECT_LE(second.trainAccuracy, 1.0);
}

TEST(Trainer, TellsItsCallbackOfStepsBoundariesAndEvaluations) {
  // A callback that records the hooks and wants a boundary after every second step of the run.
  struct Recorder : Callback {
    std::vector<std::string> calls;
    void onEpochBegin(int64_t epoch, int64_t steps) override {
      calls.push_back("epoch " + std::to_string(epoch) + " of " + std::to_string(steps));
    }
    void onStepEnd(const StepEnd &step) override {
      calls.push_back("step " + std::to_string(step.done) + "/" + std::to_string(step.steps));
    }
    bool wantsBoundary(int64_t step) const override { return step % 2 == 0; }
    void onBoundary(const TrainPosition &position, int signal) override {
      calls.push_back("boundary " + std::to_string(position.step) + " at " +
                      std::to_string(position.stepsInEpoch));
    }
    void onEvalBegin(int64_t batches) override {
      calls.push_back("eval of " + std::to_string(batches));
    }
    void onEvalStepEnd(int64_t done, double) override {
      calls.push_back("eval " + std::to_string(done));
    }
  } recorder;
  Dataset train = makeData(40), test = makeData(12);
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(1);
  Trainer trainer(*program, "tiny.dpx");
  trainer.setCallback(&recorder);
  Batcher batcher(train, 8, BatchOrder::Shuffled, Remainder::Drop, 1);
  trainer.trainEpoch(batcher, 1, 1, 0);
  trainer.evaluate(test);
  // Step n's results are read after step n + 1 is enqueued; a boundary first reads what is
  // in flight, so the position counts every step before it.
  const std::vector<std::string> expected = {
      "epoch 1 of 5",    "step 1/5", "step 2/5",  "boundary 2 at 2", "step 3/5", "step 4/5",
      "boundary 4 at 4", "step 5/5", "eval of 2", "eval 1",          "eval 2"};
  EXPECT_EQ(recorder.calls, expected);
}

TEST(Trainer, ProgressBarWhenInteractive) {
  Dataset train = makeData(40);
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(1);
  std::ostringstream out;
  Trainer trainer(*program, "tiny.dpx");
  std::unique_ptr<Callback> bar = makeProgressBar(out, 1);
  trainer.setCallback(bar.get());
  Batcher batcher(train, 8, BatchOrder::Shuffled, Remainder::Drop, 1);
  EpochStats stats = trainer.trainEpoch(batcher, 1, 1, 0);
  bar->onEpochEnd(stats);
  out << epochLine(stats, 1) << "\n";
  // The bar is drawn (at least its first and last states), then erased before the epoch line.
  EXPECT_NE(out.str().find("\repoch 1/1 ["), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("5/5"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\r\033[Kepoch 1/1  loss"), std::string::npos) << out.str();
}

TEST(Trainer, TrainAccuracyUnavailableWithoutCorrectOutput) {
  Dataset train = makeData(16);
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3, 0.5f, false).load();
  program->initParams(1);
  std::ostringstream out;
  Trainer trainer(*program, "tiny.dpx");
  Batcher batcher(train, 8, BatchOrder::Shuffled, Remainder::Drop, 1);
  EXPECT_TRUE(std::isnan(trainer.trainEpoch(batcher, 1, 1, 0).trainAccuracy));
}

TEST(Trainer, ChecksDataShape) {
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  std::ostringstream out;
  Trainer trainer(*program, "tiny.dpx");
  EXPECT_EQ(trainer.sampleElements(), 4);
  EXPECT_NO_THROW(trainer.checkData(makeData(10)));
  expectError([&] { trainer.checkData(makeData(10, 3)); }, ErrorKind::Data,
              "synthetic: samples have 3x3x1 = 9 values but tiny.dpx takes 4 per sample");
}

/// A plan with the inputs and outputs the trainer needs, each replaceable by a test.
struct MinimalPlan {
  DType imageType = DType::F32, labelType = DType::I32;
  std::vector<int64_t> imageShape = {4, 2, 2}, labelShape = {4};
  bool image = true, label = true, evalCorrect = true;
  std::string samplesName = "image", targetsName = "label", lossName = "loss";
  std::vector<int64_t> lossShape = {};
  /// The predictions output, in the eval step (or the train step); none when empty.
  std::vector<int64_t> logitsShape = {4, 3};
  DType logitsType = DType::F32;
  StepKind logitsStep = StepKind::Eval;

  std::unique_ptr<Program> load() const {
    testing::PlanBuilder p(4);
    uint32_t x = p.buffer(imageShape, imageType), y = p.buffer(labelShape, labelType);
    uint32_t loss = p.buffer(lossShape), correct = p.buffer({});
    if (!logitsShape.empty()) {
      uint32_t logits = p.buffer(logitsShape, logitsType);
      if (logitsType != DType::BF16) // (fill writes f32 and i32)
        p.kernel(logitsStep, KernelKind::Fill, {}, {logits}).attrF("value", 0.0);
      p.output(logitsStep, "logits", logits, OutputRole::Logits);
    }
    if (image)
      p.input(samplesName, x, InputRole::Samples);
    if (label)
      p.input(targetsName, y, InputRole::Targets);
    for (StepKind step : {StepKind::Train, StepKind::Eval}) {
      p.kernel(step, KernelKind::Fill, {}, {loss}).attrF("value", 0.5);
      p.output(step, lossName, loss, OutputRole::Loss);
    }
    p.kernel(StepKind::Eval, KernelKind::Fill, {}, {correct}).attrF("value", 1.0);
    if (evalCorrect)
      p.output(StepKind::Eval, "correct", correct, OutputRole::Correct);
    return p.load();
  }
};

TEST(Trainer, ChecksThePlanInterface) {
  std::ostringstream out;
  auto expectPlanError = [&](const MinimalPlan &plan, const std::string &part) {
    std::unique_ptr<Program> program = plan.load();
    expectError([&] { Trainer(*program, "m.dpx"); }, ErrorKind::Plan, "m.dpx: " + part);
  };
  {
    std::unique_ptr<Program> program = MinimalPlan{}.load();
    Trainer trainer(*program, "m.dpx");
    EXPECT_EQ(trainer.sampleElements(), 4); // [4, 2, 2]: 4 elements per sample
  }
  MinimalPlan plan;
  plan.image = false;
  expectPlanError(plan, "the plan has no samples input");
  plan = {};
  plan.label = false;
  expectPlanError(plan, "the plan has no targets input");
  plan = {};
  plan.imageType = DType::BF16;
  expectPlanError(plan, "samples input 'image' is bf16[4,2,2], expected f32 or i32[4, ...]");
  plan = {};
  plan.imageShape = {2, 8};
  expectPlanError(plan, "samples input 'image' is f32[2,8]");
  plan = {};
  plan.labelType = DType::F32;
  expectPlanError(plan, "targets input 'label' is f32[4], expected i32[4]");
  plan = {};
  plan.labelShape = {4, 1, 2};
  expectPlanError(plan, "targets input 'label' is i32[4,1,2]");
  plan = {};
  plan.evalCorrect = false;
  expectPlanError(plan, "the eval step has no correct output");
  plan = {};
  plan.lossShape = {2};
  expectPlanError(plan, "the train step's loss output 'loss' is f32[2], expected an f32 scalar");
  // The predictions: a row per sample of the shard, f32 or bf16, in the eval step only (or
  // none: plans from before them).
  plan = {};
  plan.logitsShape = {2, 3};
  expectPlanError(plan, "the eval step's logits output 'logits' is f32[2,3], expected f32 or "
                        "bf16 [4, classes]");
  plan = {};
  plan.logitsShape = {12};
  expectPlanError(plan, "the eval step's logits output 'logits' is f32[12]");
  plan = {};
  plan.logitsType = DType::I32;
  expectPlanError(plan, "the eval step's logits output 'logits' is i32[4,3]");
  plan = {};
  plan.logitsStep = StepKind::Train;
  expectPlanError(plan, "the train step has a logits output 'logits': only the eval step's "
                        "predictions are read");
  for (DType type : {DType::F32, DType::BF16}) {
    plan = {};
    plan.logitsType = type;
    std::unique_ptr<Program> program = plan.load();
    EXPECT_NO_THROW(Trainer(*program, "m.dpx"));
  }
  plan = {};
  plan.logitsShape = {};
  std::unique_ptr<Program> without = plan.load();
  EXPECT_NO_THROW(Trainer(*without, "m.dpx"));
  // The loop finds the inputs and outputs by role, whatever the model named them.
  plan = {};
  plan.samplesName = "pixels", plan.targetsName = "y", plan.lossName = "xent";
  std::unique_ptr<Program> renamed = plan.load();
  Trainer trainer(*renamed, "m.dpx");
  EXPECT_EQ(trainer.sampleElements(), 4);
  // A targets input named "image" is still the targets.
  plan = {};
  plan.samplesName = "label", plan.targetsName = "image";
  plan.labelType = DType::F32;
  expectPlanError(plan, "targets input 'image' is f32[4], expected i32[4]");
}

TEST(Trainer, PredictingNeedsThePredictionsOutput) {
  // A plan without the output (from an older dpc) cannot predict, and says so.
  MinimalPlan plan;
  plan.logitsShape = {};
  std::unique_ptr<Program> program = plan.load();
  Trainer trainer(*program, "m.dpx");
  Predictions predictions;
  expectError([&] { trainer.evaluate(makeData(8), &predictions); }, ErrorKind::Plan,
              "m.dpx has no predictions output");
}

TEST(PlanInfo, ClassesAndWeights) {
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  EXPECT_EQ(numClasses(program->plan()), 3);
  EXPECT_EQ(countWeights(program->plan()), 15);

  // Optimizer state is not counted; a plan without loss kernels falls back.
  testing::PlanBuilder p(2);
  p.param("w", {5, 7});
  p.param("w/momentum", {5, 7}, {}, -1, ParamKind::OptimizerState);
  std::unique_ptr<Program> bare = p.load();
  EXPECT_EQ(countWeights(bare->plan()), 35);
  EXPECT_EQ(numClasses(bare->plan()), 10);
  EXPECT_EQ(numClasses(bare->plan(), 0), 0);
}

TEST(PlanInfo, DescribePlan) {
  std::ostringstream out;
  describePlan(test::tinyPlan(8, 4, 3).plan(), "tiny.dpx", out);
  const std::string text = out.str();
  for (const char *part :
       {"plan tiny.dpx: ", "batch: 8", "classes: 3", "arena: ", "dense/bias  weight  f32[3]",
        "init zeros", "input label (targets): buffer 5 i32[8]",
        "#0 dense (4,2,3) -> (6) activation=none  [tiny.py:3]", "lr=0.5",
        "output loss (loss): buffer 8 f32[]", "step eval: 3 kernels"})
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from:\n" << text;
}

} // namespace
} // namespace dp::rt
