// The training loop and the run behind `dprun PLAN --data DIR`; see Trainer.h.
#include "runtime/train/Trainer.h"

#include "runtime/core/Error.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

namespace dp::rt {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

Trainer::Trainer(Program &program, const std::string &planName, std::ostream &out, bool interactive,
                 bool quiet)
    : program_(program), planName_(planName), out_(out), interactive_(interactive), quiet_(quiet),
      batch_(program.plan().batch()) {
  auto fail = [&](const std::string &problem) {
    throw Error(ErrorKind::Plan, planName_ + ": " + problem);
  };
  imageBuffer_ = program.inputBuffer("image");
  labelBuffer_ = program.inputBuffer("label");
  if (imageBuffer_ < 0 || labelBuffer_ < 0)
    fail(std::string("the plan has no '") + (imageBuffer_ < 0 ? "image" : "label") +
         "' input; dprun feeds 'image' and 'label'");
  const fb::Buffer &image = program.buffer(imageBuffer_);
  const fb::Buffer &label = program.buffer(labelBuffer_);
  const int64_t imageElements = numElements(image);
  if (DType(image.dtype()) != DType::F32 || image.shape()->size() < 2 ||
      image.shape()->Get(0) != batch_ || imageElements % batch_ != 0)
    fail("input 'image' is " + shapeText(image) + ", expected f32[" + std::to_string(batch_) +
         ", ...] (batch " + std::to_string(batch_) + ")");
  if (DType(label.dtype()) != DType::I32 || numElements(label) != batch_)
    fail("input 'label' is " + shapeText(label) + ", expected i32[" + std::to_string(batch_) + "]");
  sampleElements_ = imageElements / batch_;

  auto scalarOutput = [&](StepKind step, const char *name, bool required) {
    int id = program.outputBuffer(step, name);
    const char *stepName = step == StepKind::Train ? "train" : "eval";
    if (id < 0) {
      if (required)
        fail(std::string("the ") + stepName + " step has no '" + name + "' output");
      return id;
    }
    const fb::Buffer &b = program.buffer(id);
    if (DType(b.dtype()) != DType::F32 || numElements(b) != 1)
      fail(std::string("the ") + stepName + " step's '" + name + "' output is " + shapeText(b) +
           ", expected an f32 scalar");
    return id;
  };
  trainLoss_ = scalarOutput(StepKind::Train, "loss", true);
  trainCorrect_ = scalarOutput(StepKind::Train, "correct", false);
  evalLoss_ = scalarOutput(StepKind::Eval, "loss", true);
  evalCorrect_ = scalarOutput(StepKind::Eval, "correct", true);
}

void Trainer::checkData(const Dataset &data) const {
  if (data.pixels() != sampleElements_)
    throw Error(ErrorKind::Data, data.imagesPath() + ": samples have " +
                                     std::to_string(data.height()) + "x" +
                                     std::to_string(data.width()) + " = " +
                                     std::to_string(data.pixels()) + " pixels but " + planName_ +
                                     " takes " + std::to_string(sampleElements_) + " per sample");
}

float Trainer::readScalar(int buffer) {
  return *static_cast<const float *>(program_.bufferData(static_cast<uint32_t>(buffer)));
}

EpochStats Trainer::trainEpoch(Batcher &batcher, int64_t epoch, int64_t epochs, int64_t maxSteps) {
  auto start = Clock::now();
  batcher.setEpoch(epoch - 1);
  int64_t steps = batcher.numBatches();
  if (maxSteps > 0 && maxSteps < steps)
    steps = maxSteps;
  auto *images = static_cast<float *>(program_.bufferData(imageBuffer_));
  auto *labels = static_cast<int32_t *>(program_.bufferData(labelBuffer_));

  ProgressBar bar(out_, interactive_ && !quiet_,
                  "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs), steps);
  double lossSum = 0, correct = 0;
  for (int64_t b = 0; b < steps; ++b) {
    batcher.fillBatch(b, 0, batch_, images, labels);
    program_.run(StepKind::Train, StepContext{batch_, ++step_});
    // Every train batch is full, so the mean of the batch means is the mean over samples.
    lossSum += readScalar(trainLoss_);
    if (trainCorrect_ >= 0)
      correct += readScalar(trainCorrect_);
    bar.update(b + 1, lossSum / static_cast<double>(b + 1));
  }
  bar.finish();

  EpochStats stats;
  stats.epoch = epoch;
  stats.steps = steps;
  stats.samples = steps * batch_;
  stats.loss = steps ? lossSum / static_cast<double>(steps) : std::nan("");
  stats.trainAccuracy = trainCorrect_ >= 0 && stats.samples
                            ? correct / static_cast<double>(stats.samples)
                            : std::numeric_limits<double>::quiet_NaN();
  stats.seconds = secondsSince(start);
  stats.samplesPerSec = stats.seconds > 0 ? stats.samples / stats.seconds : 0;
  if (!quiet_)
    out_ << epochLine(stats, epochs) << std::endl;
  return stats;
}

EvalStats Trainer::evaluate(const Dataset &data) {
  Batcher batcher(data, batch_, BatchOrder::Sequential, Remainder::Pad);
  auto *images = static_cast<float *>(program_.bufferData(imageBuffer_));
  auto *labels = static_cast<int32_t *>(program_.bufferData(labelBuffer_));
  ProgressBar bar(out_, interactive_ && !quiet_, "evaluate", batcher.numBatches());
  double lossSum = 0, correct = 0;
  int64_t samples = 0;
  for (int64_t b = 0; b < batcher.numBatches(); ++b) {
    int64_t valid = batcher.fillBatch(b, 0, batch_, images, labels);
    // The eval step does not update anything; its step number only has to be valid.
    program_.run(StepKind::Eval, StepContext{valid, step_ > 0 ? step_ : 1});
    // The loss is a mean over the valid rows: weight it by them to average over samples.
    lossSum += static_cast<double>(readScalar(evalLoss_)) * static_cast<double>(valid);
    correct += readScalar(evalCorrect_);
    samples += valid;
    bar.update(b + 1, lossSum / static_cast<double>(samples));
  }
  bar.finish();
  EvalStats stats;
  stats.samples = samples;
  stats.loss = samples ? lossSum / static_cast<double>(samples) : std::nan("");
  stats.accuracy = samples ? correct / static_cast<double>(samples) : std::nan("");
  return stats;
}

TrainReport runTraining(const std::string &planPath, const TrainOptions &options,
                        std::ostream &out) {
  if (options.epochs < 0)
    throw Error(ErrorKind::Usage, "--epochs must not be negative");
  if (!options.metricsPath.empty())
    checkWritable(options.metricsPath);

  TrainReport report;
  auto start = Clock::now();
  std::unique_ptr<Program> program = Program::load(PlanFile::read(planPath));
  Trainer trainer(*program, planPath, out, options.interactive, options.quiet);
  const fb::Plan &plan = program->plan();
  const int64_t classes = numClasses(plan);
  if (classes < 1 || classes > 256)
    throw Error(ErrorKind::Plan, planPath + ": the model predicts " + std::to_string(classes) +
                                     " classes; byte labels allow 1 to 256");
  Dataset train = Dataset::loadSplit(options.dataDir, "train", static_cast<int>(classes));
  Dataset test = Dataset::loadSplit(options.dataDir, "t10k", static_cast<int>(classes));
  trainer.checkData(train);
  trainer.checkData(test);
  const int64_t batch = plan.batch();
  Batcher batcher(train, batch, BatchOrder::Shuffled, Remainder::Drop, options.seed);
  if (batcher.numBatches() == 0)
    throw Error(ErrorKind::Data, train.imagesPath() + ": holds " + std::to_string(train.size()) +
                                     " samples, fewer than one batch of " + std::to_string(batch));
  report.params = countWeights(plan);
  report.phases.load = secondsSince(start);

  if (!options.quiet) {
    int64_t steps = batcher.numBatches();
    if (options.maxSteps > 0 && options.maxSteps < steps)
      steps = options.maxSteps;
    out << "model " << (plan.model() ? plan.model()->str() : "(unnamed)") << ": "
        << withCommas(report.params) << " parameters, batch " << batch << ", " << classes
        << " classes\n";
    out << "train " << withCommas(train.size()) << " samples: " << steps << " steps per epoch";
    if (int64_t dropped = train.size() - batcher.samplesPerEpoch())
      out << " (the last " << dropped
          << " samples of each shuffled epoch do not fill a batch and are skipped)";
    out << "\ntest " << withCommas(test.size()) << " samples\n" << std::flush;
  }

  start = Clock::now();
  program->initParams(options.seed);
  report.phases.init = secondsSince(start);

  start = Clock::now();
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch)
    report.epochs.push_back(trainer.trainEpoch(batcher, epoch, options.epochs, options.maxSteps));
  report.phases.train = secondsSince(start);

  start = Clock::now();
  report.test = trainer.evaluate(test);
  report.phases.evaluate = secondsSince(start);

  char line[120];
  std::snprintf(line, sizeof(line), "test  loss %.4f  accuracy %.4f  (%s samples)\n",
                report.test.loss, report.test.accuracy, withCommas(report.test.samples).c_str());
  out << line;
  if (!options.quiet)
    printPhaseTable(report.phases, out);
  out << std::flush;
  if (!options.metricsPath.empty())
    writeFileAtomically(options.metricsPath, metricsJson(report));
  return report;
}

} // namespace dp::rt
