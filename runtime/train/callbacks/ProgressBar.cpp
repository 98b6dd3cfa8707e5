// The live progress bar of each epoch and evaluation, on a terminal; see Callbacks.h.
#include "runtime/train/Progress.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <optional>

namespace dp::rt {
namespace {

class ProgressCallback final : public Callback {
public:
  ProgressCallback(std::ostream &out, int64_t epochs) : out_(out), epochs_(epochs) {}

  void onEpochBegin(int64_t epoch, int64_t steps) override {
    label_ = "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs_);
    steps_ = steps;
    bar_.emplace(out_, true, label_, steps);
  }
  void onStepEnd(const StepEnd &step) override {
    done_ = step.done;
    loss_ = step.runningLoss;
    // After an evaluation within the epoch (--eval-every): its line is printed, the bar goes on.
    if (!bar_ && steps_ > 0)
      bar_.emplace(out_, true, label_, steps_);
    if (bar_)
      bar_->update(step.done, step.runningLoss);
  }
  // The bar is erased before anything else is printed about the epoch or evaluation.
  void onEpochEnd(EpochStats &) override {
    bar_.reset();
    steps_ = 0;
  }
  void onEvalBegin(int64_t batches) override { bar_.emplace(out_, true, "evaluate", batches); }
  void onEvalStepEnd(int64_t done, double runningLoss) override {
    if (bar_)
      bar_->update(done, runningLoss);
  }
  void onEvalEnd(const Evaluation &e) override {
    // Erased before the evaluation's line is printed; an epoch's bar comes back at its next
    // step.
    bar_.reset();
  }
  void onStop(Stop &) override { bar_.reset(); }

private:
  std::ostream &out_;
  int64_t epochs_;
  std::optional<ProgressBar> bar_;
  // The epoch under way: its bar's label, steps, and the last step's figures.
  std::string label_;
  int64_t steps_ = 0, done_ = 0;
  double loss_ = 0;
};

} // namespace

std::unique_ptr<Callback> makeProgressBar(std::ostream &out, int64_t epochs) {
  return std::make_unique<ProgressCallback>(out, epochs);
}

} // namespace dp::rt
