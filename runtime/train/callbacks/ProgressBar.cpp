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
    bar_.emplace(out_, true, "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs_),
                 steps);
  }
  void onStepEnd(const StepEnd &step) override {
    if (bar_)
      bar_->update(step.done, step.runningLoss);
  }
  // The bar is erased before anything else is printed about the epoch or evaluation.
  void onEpochEnd(EpochStats &) override { bar_.reset(); }
  void onEvalBegin(int64_t batches) override { bar_.emplace(out_, true, "evaluate", batches); }
  void onEvalStepEnd(int64_t done, double runningLoss) override {
    if (bar_)
      bar_->update(done, runningLoss);
  }
  void onEvalEnd(const EvalStats &, int64_t) override { bar_.reset(); }
  void onStop(Stop &) override { bar_.reset(); }

private:
  std::ostream &out_;
  int64_t epochs_;
  std::optional<ProgressBar> bar_;
};

} // namespace

std::unique_ptr<Callback> makeProgressBar(std::ostream &out, int64_t epochs) {
  return std::make_unique<ProgressCallback>(out, epochs);
}

} // namespace dp::rt
