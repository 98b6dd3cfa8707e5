// The hooks of a training run. The training loop (Trainer) runs steps; everything around it -
// the console, checkpoints, the learning-rate plateau, early stopping, the metrics file, the
// timeline, the profile, parameter servers' figures, signals - is a Callback that the run
// (Run.cpp) wires in a fixed order. Each callback keeps what it needs from construction (as a
// Keras callback keeps its model) and shares the run's state through RunState.
//
// The hooks, in the order a run calls them (docs/architecture.md):
//   onTrainBegin                      once, after the data is loaded (resume, banner)
//   per epoch:
//     onEpochBegin                    before the epoch's first step
//     onStepEnd                       after each train step's results are read
//     wantsBoundary / onBoundary      at a step every rank reaches with its devices idle
//     onEpochEnd                      after the epoch's figures are summed over the ranks
//       onEvalBegin, onEvalStepEnd, onEvalEnd   (when a callback evaluates then; also at
//                                       boundaries within the epoch, --eval-every)
//   onTrainEnd                        after the last epoch
//   onEvalBegin, onEvalStepEnd, onEvalEnd       the test set, once
//   onRunEnd                          the results are final
// A signal that stops training (SIGINT, SIGTERM, SIGUSR1) calls onStop instead of the rest.
#pragma once

#include "runtime/train/Trainer.h"

#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

/// A train step whose results were read: the figures the progress bar and step logs show.
struct StepEnd {
  int64_t epoch = 0;
  /// Steps of the epoch done so far, of `steps`.
  int64_t done = 0, steps = 0;
  /// The step's loss (this process's mean) and the epoch's running mean loss.
  double loss = 0, runningLoss = 0;
  /// The run's train steps so far (this one included); this process's samples of the step
  /// and how many of them its replicas predicted right (NaN without a correct count).
  int64_t step = 0, samples = 0;
  double correct = 0;
  /// The learning-rate schedule's factor at the step.
  double lrScale = 1;
};

/// A signal ended training: the error the run ends with, which callbacks may amend (the
/// checkpoint that holds the place, the metrics written).
struct Stop {
  ErrorKind kind;
  std::string message;
};

class Callback {
public:
  virtual ~Callback() = default;

  virtual void onTrainBegin() {}
  virtual void onEpochBegin(int64_t epoch, int64_t steps) {}
  virtual void onStepEnd(const StepEnd &step) {}
  /// Whether the run must stop at a boundary after train step `step` of the run (every
  /// replica's steps finished, the figures summed over the ranks): the same answer on every
  /// rank.
  virtual bool wantsBoundary(int64_t step) const { return false; }
  /// Whether the callback records the place where a signal stops the run (a checkpoint):
  /// then the run stops at a boundary (onBoundary) for it.
  virtual bool keepsPlace() const { return false; }
  /// At a boundary some callback wanted, or where the ranks agreed to stop for `signal`
  /// (else 0) when some callback keeps the place; not after an epoch's last step (onEpochEnd
  /// is that boundary).
  virtual void onBoundary(const TrainPosition &position, int signal) {}
  /// `epoch` is the run's record of it (TrainReport::epochs), which callbacks may add to.
  virtual void onEpochEnd(EpochStats &epoch) {}
  virtual void onEvalBegin(int64_t batches) {}
  virtual void onEvalStepEnd(int64_t done, double runningLoss) {}
  /// An evaluation's figures, and which one it was.
  virtual void onEvalEnd(const Evaluation &evaluation) {}
  virtual void onTrainEnd() {}
  virtual void onRunEnd() {}
  virtual void onStop(Stop &stop) {}
};

/// Callbacks called in the order they were added; itself a Callback.
class CallbackList final : public Callback {
public:
  /// Adds `callback` and returns it.
  template <typename T> T &add(std::unique_ptr<T> callback) {
    T &added = *callback;
    list_.push_back(std::move(callback));
    return added;
  }

  void onTrainBegin() override;
  void onEpochBegin(int64_t epoch, int64_t steps) override;
  void onStepEnd(const StepEnd &step) override;
  bool wantsBoundary(int64_t step) const override;
  bool keepsPlace() const override;
  void onBoundary(const TrainPosition &position, int signal) override;
  void onEpochEnd(EpochStats &epoch) override;
  void onEvalBegin(int64_t batches) override;
  void onEvalStepEnd(int64_t done, double runningLoss) override;
  void onEvalEnd(const Evaluation &evaluation) override;
  void onTrainEnd() override;
  void onRunEnd() override;
  void onStop(Stop &stop) override;

private:
  std::vector<std::unique_ptr<Callback>> list_;
};

} // namespace dp::rt
