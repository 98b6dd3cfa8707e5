// --log FILE (JSON lines) and --tensorboard DIR: the run's figures as it goes, one record per
// interval of --log-every steps, per evaluation and per epoch, each on disk before the run goes
// on (a run killed with -9 leaves every record up to the kill); see Callbacks.h.
//
// An interval's figures are the job's: every rank adds its own (losses, correct predictions,
// samples, waits, its mean step time) in one sum at the interval's last step, which every rank
// reaches in the same order. A parameter-server worker's are its own (the workers do not meet).
#include "runtime/base/EventFile.h"
#include "runtime/base/Files.h"
#include "runtime/base/Json.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <cmath>
#include <memory>
#include <optional>

namespace dp::rt {
namespace {

class TrainingLog final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onTrainBegin() override {
    lr_ = learningRate(s_.job.program().plan());
    start_ = intervalStart_ = Clock::now();
    waitsAtStart();
  }

  // The files are opened once training starts: a resume is known then (Checkpointing's
  // onTrainBegin, after this one's, loads it). A run that trains nothing opens them at its
  // final evaluation's line.
  void onEpochBegin(int64_t, int64_t) override { open(); }

  void onStepEnd(const StepEnd &step) override {
    ++steps_;
    lossSum_ += step.loss;
    hasCorrect_ = !std::isnan(step.correct);
    correct_ += hasCorrect_ ? step.correct : 0;
    samples_ += double(step.samples);
    lrScale_ = step.lrScale;
    if (step.step % s_.options.logEvery == 0)
      interval(step);
  }

  void onEpochEnd(EpochStats &e) override {
    if (!s_.printer)
      return;
    const int64_t step = s_.trainer.stepsRun();
    line("{\"kind\": \"epoch\", \"epoch\": " + std::to_string(e.epoch) +
         ", \"step\": " + std::to_string(step) + ", \"loss\": " + jsonNumber(e.loss) +
         ", \"accuracy\": " + jsonNumber(e.trainAccuracy) + ", \"seconds\": " +
         jsonNumber(e.seconds) + ", \"samples_per_sec\": " + jsonNumber(e.samplesPerSec) +
         ", \"lr_scale\": " + jsonNumber(e.lrScale) + ", \"time\": " + jsonNumber(elapsed()) + "}");
    scalar("epoch/loss", step, e.loss);
    scalar("epoch/accuracy", step, e.trainAccuracy);
  }

  void onEvalEnd(const Evaluation &e) override {
    if (!s_.printer)
      return;
    const bool validation = e.set == Evaluation::Set::Validation;
    line(std::string("{\"kind\": \"") + (validation ? "validation" : "test") +
         "\", \"step\": " + std::to_string(e.step) + ", \"epoch\": " + std::to_string(e.epoch) +
         ", \"epoch_end\": " + (e.epochEnd ? "true" : "false") + ", \"final\": " +
         (e.final ? "true" : "false") + ", \"loss\": " + jsonNumber(e.stats.loss) +
         ", \"accuracy\": " + jsonNumber(e.stats.accuracy) + ", \"samples\": " +
         std::to_string(e.stats.samples) + ", \"time\": " + jsonNumber(elapsed()) + "}");
    const std::string set = validation ? "validation/" : "test/";
    scalar(set + "loss", e.step, e.stats.loss);
    scalar(set + "accuracy", e.step, e.stats.accuracy);
  }

private:
  /// Opens the log and the event file (the printer, once) and writes the log's first line.
  void open() {
    if (opened_ || !s_.printer)
      return;
    opened_ = true;
    const Plan &plan = s_.job.program().plan();
    const TrainOptions &o = s_.options;
    if (!o.logPath.empty()) {
      // A resumed run goes on after the lines of the run it continues.
      log_ = std::make_unique<AppendFile>(
          o.logPath, s_.resumed ? AppendFile::Mode::Append : AppendFile::Mode::Truncate, "--log");
      line("{\"kind\": \"start\", \"model\": " + jsonString(plan.model) + ", \"batch\": " +
           std::to_string(plan.batch) + ", \"processes\": " + std::to_string(s_.report.processes) +
           ", \"replicas_per_process\": " + std::to_string(s_.report.replicas) +
           ", \"steps_per_epoch\": " + std::to_string(stepsPerEpoch()) + ", \"epochs\": " +
           std::to_string(o.epochs) + ", \"log_every\": " + std::to_string(o.logEvery) +
           ", \"resumed_at_step\": " + std::to_string(s_.resumed ? s_.trainer.stepsRun() : 0) +
           "}");
    }
    if (!o.tensorboardDir.empty())
      events_.emplace(o.tensorboardDir);
  }

  /// The interval that ends with `step`: summed over the ranks, then written by the printer.
  void interval(const StepEnd &step) {
    ProcessGroup &group = s_.job.group();
    const bool together = group.size() > 1 && !s_.job.pushPull();
    const int ranks = together ? group.size() : 1;
    const double seconds = secondsSince(intervalStart_);
    const auto [inputWait, allreduceWait] = waitsSince();
    // loss sum, correct, samples, input wait, allreduce wait, then each rank's step time.
    std::vector<double> sums(5 + size_t(ranks), 0.0);
    sums[0] = lossSum_;
    sums[1] = correct_;
    sums[2] = samples_;
    sums[3] = inputWait;
    sums[4] = allreduceWait;
    sums[5 + (together ? group.rank() : 0)] = seconds / double(steps_);
    if (together)
      group.sumDoubles(sums.data(), int(sums.size()), s_.timeout, "the training log's figures");
    if (s_.printer) {
      const double loss = sums[0] / double(ranks) / double(steps_);
      const double accuracy =
          hasCorrect_ && sums[2] > 0 ? sums[1] / sums[2] : std::numeric_limits<double>::quiet_NaN();
      std::string rankTimes = "[";
      for (int r = 0; r < ranks; ++r)
        rankTimes += (r ? ", " : "") + jsonNumber(sums[5 + size_t(r)]);
      line("{\"kind\": \"train\", \"step\": " + std::to_string(step.step) + ", \"epoch\": " +
           std::to_string(step.epoch) + ", \"epoch_step\": " + std::to_string(step.done) +
           ", \"steps\": " + std::to_string(steps_) + ", \"loss\": " + jsonNumber(loss) +
           ", \"accuracy\": " + jsonNumber(accuracy) +
           ", \"lr\": " + (lr_ > 0 ? jsonNumber(lr_ * lrScale_) : std::string("null")) +
           ", \"lr_scale\": " + jsonNumber(lrScale_) +
           ", \"samples_per_sec\": " + jsonNumber(seconds > 0 ? sums[2] / seconds : 0.0) +
           ", \"input_wait_seconds\": " + jsonNumber(sums[3] / double(ranks)) +
           ", \"allreduce_wait_seconds\": " + jsonNumber(sums[4] / double(ranks)) +
           ", \"rank_step_seconds\": " + rankTimes + "], \"time\": " + jsonNumber(elapsed()) + "}");
      scalar("train/loss", step.step, loss);
      scalar("train/accuracy", step.step, accuracy);
      if (lr_ > 0)
        scalar("train/learning_rate", step.step, lr_ * lrScale_);
      scalar("train/samples_per_sec", step.step, seconds > 0 ? sums[2] / seconds : 0.0);
    }
    steps_ = 0;
    lossSum_ = correct_ = samples_ = 0;
    intervalStart_ = Clock::now();
  }

  int64_t stepsPerEpoch() const {
    const int64_t steps = s_.batcher->numBatches();
    const int64_t cap = s_.options.stepsPerEpoch;
    return cap > 0 && cap < steps ? cap : steps;
  }

  /// The input and allreduce waits so far (this process's), and their change since the last
  /// interval.
  void waitsAtStart() {
    inputWait_ = s_.trainer.inputWaitSeconds();
    allreduceWait_ = s_.job.collectives() ? s_.job.collectives()->waitSeconds() : 0;
  }
  std::pair<double, double> waitsSince() {
    const double input = inputWait_, allreduce = allreduceWait_;
    waitsAtStart();
    return {inputWait_ - input, allreduceWait_ - allreduce};
  }

  double elapsed() const { return secondsSince(start_); }

  void line(const std::string &json) {
    open();
    if (log_)
      log_->append(json + "\n");
  }
  void scalar(const std::string &tag, int64_t step, double value) {
    open();
    if (events_ && std::isfinite(value))
      events_->scalar(tag, step, value);
  }

  bool opened_ = false;
  std::unique_ptr<AppendFile> log_;
  std::optional<EventFileWriter> events_;
  double lr_ = 0, lrScale_ = 1;
  Clock::time_point start_, intervalStart_;
  double inputWait_ = 0, allreduceWait_ = 0;
  // The interval's figures so far (this process's).
  int64_t steps_ = 0;
  double lossSum_ = 0, correct_ = 0, samples_ = 0;
  bool hasCorrect_ = false;
};

} // namespace

std::unique_ptr<Callback> makeTrainingLog(RunState &state) {
  return std::make_unique<TrainingLog>(state);
}

} // namespace dp::rt
