// The callbacks of `dprun PLAN --data DIR` (Callback.h), one source each, and the run state
// they share. Run.cpp adds them in this order, which is the order each hook reaches them:
//   ProgressBar    the live bar on a terminal
//   Console        the banner, the epoch and evaluation lines, the results
//   TrainingLog    --log FILE (JSON lines), --tensorboard DIR
//   ServerFigures  parameter servers' figures after each epoch; the workers' finish
//   Evaluations    the validation set after every epoch and every --eval-every steps; without
//                  one, the test set after every epoch when Plateau or EarlyStop watch it
//   Plateau        the learning-rate plateau schedule
//   EarlyStop      --early-stop
//   Signals        the ranks' agreement on a signal after each epoch
//   Checkpointing  --checkpoint-dir, --resume
//   SaveState      --save-state (before RestoreBest: the state training ended in)
//   RestoreBest    --restore-best (after Checkpointing: the last checkpoint holds the last
//                  weights, from which a resume goes on)
//   Timeline       --trace (before the files rank 0 alone writes: its merge is a collective)
//   Metrics        --metrics
//   SaveParams     --save-params
//   ClassMetrics   --top-k, --confusion-matrix
//   PredictionsFile  --predictions
//   ExportModel    --export
//   Profile        --profile
#pragma once

#include "runtime/train/Callback.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Job.h"
#include "runtime/train/Run.h"

#include <iosfwd>
#include <memory>

namespace dp::rt {

/// What the run's callbacks share: set up by the run before onTrainBegin, then changed by the
/// callbacks named beside each field.
struct RunState {
  RunState(const TrainOptions &options, Job &job, Trainer &trainer, TrainReport &report,
           std::ostream &out)
      : options(options), job(job), trainer(trainer), report(report), out(out) {}

  const TrainOptions &options;
  Job &job;
  Trainer &trainer;
  TrainReport &report;
  /// The console of the process that prints (rank 0, worker 0); elsewhere a sink.
  std::ostream &out;
  /// This process prints and writes the run's files.
  bool printer = false;
  /// Print only the results (--quiet, or not the printer); draw a live bar.
  bool quiet = false, interactive = false;
  /// Seconds a wait for the other ranks may take.
  double timeout = 0;
  /// Input: batches a loader thread gathers ahead (0: none); the cores the process may use.
  int prefetch = 0, cores = 0;
  /// The run's seed (the resumed checkpoint's, when it differs: Checkpointing::find).
  uint64_t seed = 1;
  /// The data, and the shuffled batches of the training set (set once loaded). The
  /// validation set is null without --validation-split or --validation-data.
  const Dataset *train = nullptr, *test = nullptr, *validation = nullptr;
  const Batcher *batcher = nullptr;

  // Checkpointing, at onTrainBegin: where training starts.
  bool resumed = false;
  int64_t firstEpoch = 1, firstBatch = 0;
  /// The place in its epoch a resumed run continues from (null: the epoch's start).
  const TrainPosition *resumeAt = nullptr;
  /// EarlyStop: the test losses it has seen (checkpointed with the run).
  PlateauState earlyStop;
  /// RestoreBest: the best validation so far (an index into report.validations; -1: none)
  /// and device 0's weights after it, which checkpoints keep (set from one on resume).
  struct BestWeights {
    int64_t validation = -1;
    std::vector<ParamsEntry> weights;
  } best;
  /// EarlyStop: training ends after this epoch.
  bool stopTraining = false;
  /// Signals: the signal the ranks agreed on after the epoch (0: none).
  int signal = 0;
  /// EpochEvaluation: seconds spent evaluating after epochs (counted in the evaluate phase).
  double epochEvalSeconds = 0;
  /// The final evaluation's predictions, with --predictions (for PredictionsFile).
  Predictions predictions;
};

/// The live bar of each epoch (of `epochs`) and evaluation on `out` (a terminal).
std::unique_ptr<Callback> makeProgressBar(std::ostream &out, int64_t epochs);
/// A callback of the run, which keeps the run's state.
class RunCallback : public Callback {
public:
  explicit RunCallback(RunState &state) : s_(state) {}

protected:
  RunState &s_;
};

std::unique_ptr<Callback> makeConsole(RunState &state);
std::unique_ptr<Callback> makeTrainingLog(RunState &state);
std::unique_ptr<Callback> makeServerFigures(RunState &state);
/// Evaluates the validation set after every epoch and every --eval-every steps, or the test
/// set after every epoch without one, and tells `all` (onEvalEnd).
std::unique_ptr<Callback> makeEvaluations(RunState &state, Callback &all);
/// The figure a plateau schedule, early stopping and --restore-best watch in `stats` (smaller
/// is better): the loss, or the accuracy negated (--monitor val_accuracy).
double watchedValue(const RunState &state, const EvalStats &stats);
/// Its name in messages: "val_loss", "val_accuracy", or "the test loss" without a validation
/// set.
std::string watchedName(const RunState &state);
std::unique_ptr<Callback> makeRestoreBest(RunState &state);
std::unique_ptr<Callback> makeSaveState(RunState &state);
/// The records of a checkpoint of the run at `position` (the place, the seed, the layout, the
/// schedules' states and the finished epochs).
CheckpointMeta checkpointMeta(RunState &state, const TrainPosition &position);
std::unique_ptr<Callback> makePlateau(RunState &state);
std::unique_ptr<Callback> makeEarlyStop(RunState &state);
std::unique_ptr<Callback> makeSignals(RunState &state);
std::unique_ptr<Callback> makeMetrics(RunState &state);
std::unique_ptr<Callback> makeSaveParams(RunState &state);
std::unique_ptr<Callback> makePredictionsFile(RunState &state);
std::unique_ptr<Callback> makeExportModel(RunState &state);
/// The CSV of --predictions: a header, then per sample of `data` its index, label, predicted
/// class (the first largest logit), its probabilities (softmax) and logits; for a
/// regression's data, its index, targets and predicted values; for yes/no outputs (`binary`:
/// binary cross-entropy), its index, targets, probabilities (sigmoid) and logits.
std::string predictionsCsv(const Predictions &predictions, const Dataset &data,
                           bool binary = false);
std::unique_ptr<Callback> makeProfile(RunState &state);
std::unique_ptr<Callback> makeClassMetrics(RunState &state);
/// The top-K accuracy and the confusion matrix of `data` from its predictions (the predicted
/// class: the first largest logit; a label is in the top K when fewer than K classes score
/// above it, a tie counted for the lower class).
ClassReport classReport(const Predictions &predictions, const Dataset &data, int64_t topK);
/// The per-class table of a report: each label's samples and accuracy, then its row of the
/// confusion matrix.
std::string confusionTable(const ClassReport &report);
/// The lines the console prints after the test line: the top-K accuracy (`topK`) and the
/// per-class table (`table`).
std::string classesText(const ClassReport &report, bool topK, bool table);

/// --checkpoint-dir: takes the directory's lock (the printer) at construction; find() looks
/// for the checkpoint to resume (a collective), onTrainBegin loads it.
class Checkpointing : public Callback {
public:
  explicit Checkpointing(RunState &state);
  ~Checkpointing() override;
  /// With --resume: reads the newest usable checkpoint on rank 0 and hands it to every rank;
  /// returns whether there is one. Its seed is then the run's (state.seed).
  bool find();
  void onTrainBegin() override;
  bool wantsBoundary(int64_t step) const override;
  bool keepsPlace() const override { return true; }
  void onBoundary(const TrainPosition &position, int signal) override;
  void onEpochEnd(EpochStats &epoch) override;
  void onStop(Stop &stop) override;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// --trace: the timeline starts (start(), a collective on every rank) before the data is
/// loaded, and is written at the end (merged on rank 0, a collective, or one file per rank).
class Timeline : public Callback {
public:
  /// The time every rank takes as the timeline's start.
  static int64_t start(ProcessGroup &group, double timeout);
  Timeline(RunState &state, int64_t zero) : s_(state), zero_(zero) {}
  void onRunEnd() override;
  void onStop(Stop &stop) override;

private:
  void write();
  RunState &s_;
  int64_t zero_ = 0;
};

} // namespace dp::rt
