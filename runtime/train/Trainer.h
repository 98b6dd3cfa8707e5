// The training loop: feeds shuffled full batches through a plan's train step for some epochs,
// then runs its eval step over every test sample, reporting progress, per-epoch figures, test
// results and where the time went.
#pragma once

#include "runtime/core/Program.h"
#include "runtime/data/Batcher.h"
#include "runtime/data/Dataset.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace dp::rt {

struct TrainOptions {
  /// Directory holding train-{images,labels} and t10k-{images,labels} IDX files.
  std::string dataDir;
  int64_t epochs = 1;
  /// Seeds parameter initialisation and the shuffle (through separate streams).
  uint64_t seed = 1;
  /// Caps the train steps of each epoch (0: no cap); evaluation still sees every test sample.
  int64_t maxSteps = 0;
  /// Where to write the metrics JSON; empty for none.
  std::string metricsPath;
  /// Print only the final test result line.
  bool quiet = false;
  /// Draw a live progress bar with carriage returns (the output is a terminal).
  bool interactive = false;
};

/// Figures of one training epoch. trainAccuracy is NaN when the plan's train step has no
/// "correct" output.
struct EpochStats {
  int64_t epoch = 0;
  int64_t steps = 0;
  int64_t samples = 0;
  double loss = 0;
  double trainAccuracy = 0;
  double seconds = 0;
  double samplesPerSec = 0;
};

/// Figures of one pass of the eval step over a data set.
struct EvalStats {
  int64_t samples = 0;
  double loss = 0;
  double accuracy = 0;
};

/// Wall-clock seconds of each phase of a run.
struct PhaseTimes {
  double load = 0;     // reading the plan and data, creating the kernels
  double init = 0;     // drawing the initial parameters
  double train = 0;    // all train steps, with their batch gathering
  double evaluate = 0; // the eval step over the test set
};

/// Everything a run measured; what --metrics writes.
struct TrainReport {
  std::vector<EpochStats> epochs;
  EvalStats test;
  int64_t params = 0; // trainable weight elements
  PhaseTimes phases;
};

/// Runs a loaded program's steps on data sets. Construction checks that the plan has what the
/// loop needs (inputs "image" f32 [batch, ...] and "label" i32 [batch], a scalar f32 "loss"
/// output in both steps and "correct" in the eval step) and throws Error(Plan) otherwise.
class Trainer {
public:
  /// `planName` names the plan in messages; `out` receives progress and epoch lines.
  Trainer(Program &program, const std::string &planName, std::ostream &out, bool interactive,
          bool quiet);

  /// Elements per sample of the "image" input (784 for 28x28 images).
  int64_t sampleElements() const { return sampleElements_; }
  /// Throws Error(Data) unless `data`'s samples have sampleElements() pixels.
  void checkData(const Dataset &data) const;

  /// Runs one epoch (`epoch` of `epochs`, 1-based) of train steps over `batcher`'s full
  /// batches, at most `maxSteps` of them when positive.
  EpochStats trainEpoch(Batcher &batcher, int64_t epoch, int64_t epochs, int64_t maxSteps);

  /// Runs the eval step over every sample of `data`, the last batch padded.
  EvalStats evaluate(const Dataset &data);

  /// Train steps run so far (the StepContext step counter of the last one).
  int64_t stepsRun() const { return step_; }

private:
  float readScalar(int buffer);

  Program &program_;
  std::string planName_;
  std::ostream &out_;
  bool interactive_, quiet_;
  int64_t batch_ = 0, sampleElements_ = 0;
  int imageBuffer_ = -1, labelBuffer_ = -1;
  int trainLoss_ = -1, trainCorrect_ = -1, evalLoss_ = -1, evalCorrect_ = -1;
  int64_t step_ = 0;
};

/// The whole job behind `dprun PLAN --data DIR`: loads the plan and both data splits, draws
/// the parameters, trains, evaluates, prints the results and the phase table to `out`, and
/// writes the metrics file when asked. Throws Error on any failure.
TrainReport runTraining(const std::string &planPath, const TrainOptions &options,
                        std::ostream &out);

} // namespace dp::rt
