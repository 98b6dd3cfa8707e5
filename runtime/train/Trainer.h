// The training loop: feeds shuffled full batches through a plan's train step for some epochs,
// and runs its eval step over every sample of a data set, returning per-epoch figures. It gets
// a loaded program (and the process group, for totals over ranks) and tells a Callback
// (Callback.h) of its steps and boundaries; launching the job is Job's, and what surrounds the
// loop (data, printing, checkpoints, metrics) is the run's callbacks' (Run.cpp).
#pragma once

#include "runtime/comm/Comm.h"
#include "runtime/core/Program.h"
#include "runtime/data/Batcher.h"
#include "runtime/data/Dataset.h"
#include "runtime/data/Prefetcher.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dp::rt {

class Callback;

/// A parameter server's figures over one epoch: what it did between worker 0's questions at
/// the epoch's start and end (the last epoch's end: once every worker has finished).
struct ServerEpochStats {
  int64_t updates = 0;
  double updatesPerSec = 0; // on the server's clock, between the questions
  /// staleness[k]: the epoch's gradients applied k updates after their parameters.
  std::vector<int64_t> staleness;
  int64_t pullsHeld = 0;
  double heldSeconds = 0;
};

/// Figures of one training epoch. trainAccuracy is NaN when the plan's train step has no
/// correct-count output; `regression` says it never has one (a regression's loss).
struct EpochStats {
  int64_t epoch = 0;
  bool regression = false;
  int64_t steps = 0;
  int64_t samples = 0;
  double loss = 0;
  double trainAccuracy = 0;
  double seconds = 0;
  double samplesPerSec = 0;
  /// Samples per second each rank processed (its replicas' shards), indexed by rank.
  std::vector<double> rankSamplesPerSec;
  /// The loss of each step, in order: its mean over every replica of the job.
  std::vector<float> stepLosses;
  /// The learning-rate schedule's factor at the epoch's last step.
  double lrScale = 1;
  /// The test set's loss and accuracy after the epoch, when the run evaluates every epoch
  /// (a plateau schedule, early stopping); NaN otherwise.
  double testLoss = std::numeric_limits<double>::quiet_NaN();
  double testAccuracy = std::numeric_limits<double>::quiet_NaN();
  /// The validation set's loss and accuracy after the epoch (--validation-split,
  /// --validation-data); NaN without one.
  double valLoss = std::numeric_limits<double>::quiet_NaN();
  double valAccuracy = std::numeric_limits<double>::quiet_NaN();
  /// Seconds a replica's compute waited for its input during the epoch (the mean over this
  /// process's replicas): for the loader thread with prefetch, gathering the batch itself
  /// without.
  double inputWaitSeconds = 0;
  /// Parameter servers (worker 0's run): each server's figures over the epoch. A worker's
  /// loss, accuracy and step losses are then its own shards'.
  std::vector<ServerEpochStats> servers;
};

/// Where a run is between two steps: what a checkpoint records so that a resumed run goes on
/// exactly as the uninterrupted one would.
struct TrainPosition {
  /// Train steps run so far (the StepContext step of the last one).
  int64_t step = 0;
  /// Finished epochs, and the steps and global samples done of the next one.
  int64_t epochsDone = 0, stepsInEpoch = 0, samplesInEpoch = 0;
  /// The unfinished epoch's running figures over all ranks: the sum of its steps' mean losses,
  /// the correct predictions and the seconds spent; and its steps' losses (as
  /// EpochStats::stepLosses).
  double epochLossSum = 0, epochCorrect = 0, epochSeconds = 0;
  std::vector<float> epochStepLosses;
  /// The test losses seen so far, for a plateau schedule and for early stopping.
  PlateauState plateau, earlyStop;
};

/// Figures of one pass of the eval step over a data set.
struct EvalStats {
  int64_t samples = 0;
  double loss = 0;
  double accuracy = 0;
};

/// One evaluation of a run: its figures, which set, and when.
struct Evaluation {
  enum class Set { Validation, Test };
  Set set = Set::Test;
  EvalStats stats;
  /// The epoch it follows, or falls in (--eval-every); 0 for the final test evaluation.
  int64_t epoch = 0;
  /// Train steps run before it.
  int64_t step = 0;
  /// After an epoch's last step: the evaluations a plateau schedule and early stopping count.
  bool epochEnd = false;
  /// The test set's, once, after training.
  bool final = false;
};

/// The eval step's predictions over a data set (Trainer::evaluate with them asked for): the
/// logits of every sample, in the set's order.
struct Predictions {
  int64_t classes = 0;
  /// [samples, classes], row-major.
  std::vector<float> logits;
};

/// Runs a loaded program's steps on data sets. Construction checks that the plan has what the
/// loop needs (PlanCheck.h: on each device a samples input f32 [rows, ...] and a targets input
/// i32 [rows], whatever the model named them; a scalar f32 loss output in both steps and a
/// correct count in the eval step) and throws Error(Plan) otherwise.
class Trainer {
public:
  /// `planName` names the plan in messages. With a `group` of several processes, this process
  /// trains its replicas' shards of every global batch and per-epoch figures are totals over
  /// all ranks. With `worker` >= 0 instead (a parameter-server worker), it trains shard `worker`
  /// of the plan's processes of every global batch without meeting the other workers: its
  /// figures are its own, each worker stops on its own signal, and evaluate() runs the whole
  /// data set here.
  Trainer(Program &program, const std::string &planName, ProcessGroup *group = nullptr,
          int worker = -1);
  ~Trainer();

  /// Tells `callback` of the epochs' beginnings, the steps, the boundaries it wants and the
  /// evaluations' progress (onEpochBegin, onStepEnd, wantsBoundary, onBoundary, onEvalBegin,
  /// onEvalStepEnd); the caller tells it the rest. Null: nobody.
  void setCallback(Callback *callback) { callback_ = callback; }

  /// Elements per sample of the samples input (784 for 28x28 images).
  int64_t sampleElements() const { return sampleElements_; }
  /// How the samples input takes the data's bytes: scaled floats, or i32 token ids.
  SampleForm sampleForm() const { return sampleForm_; }
  /// Floats of targets per sample a regression's plan takes (its loss's [rows, K] targets);
  /// 0 for a plan that takes class labels.
  int64_t targetWidth() const { return targetWidth_; }
  /// Throws Error(Data) unless `data`'s samples have sampleElements() values and its targets
  /// are what the plan takes (class labels, or targetWidth() floats), and, where the samples
  /// are token ids, each picks a row of every embedding table.
  void checkData(const Dataset &data) const;
  /// Throws Error(Runtime) unless `data` fills what the plan's inputs hold (the sizes checkData
  /// checks, fed in `form`): the guard of every gather into them.
  void checkFeeds(const Dataset &data, SampleForm form) const;
  /// Height and width of an NHWC image input; zero for a flat one.
  ImageSize imageSize() const;

  /// Runs one epoch (`epoch` of `epochs`, 1-based) of train steps over `batcher`'s full
  /// batches, at most `maxSteps` of them when positive. With `resume`, the epoch goes on from a
  /// checkpoint's place in it: its first `firstBatch` batches were run before, and its running
  /// figures (resume->epochLossSum, ...) count in the returned stats. With `stopAfter` > 0 the
  /// epoch ends after batch stopAfter - 1 (the run's --max-steps), while the learning-rate
  /// schedule still sees its whole length. Throws the Error of a signal (Interrupted,
  /// Terminated, UserSignal1) after onBoundary when the ranks agreed to stop.
  EpochStats trainEpoch(Batcher &batcher, int64_t epoch, int64_t epochs, int64_t maxSteps,
                        const TrainPosition *resume = nullptr, int64_t firstBatch = 0,
                        int64_t stopAfter = 0);

  /// The signal that any rank of the job received (SIGTERM, then SIGUSR1, then SIGINT, when
  /// several did), now recorded on this rank too; 0 when none did. With several processes it
  /// is a collective: every rank calls it at the same point and gets the same answer, after
  /// train step `afterStep` of the run (-1: the last one enqueued), which a timeout names.
  /// With `stepLoss`, that step's loss on this rank becomes its mean over the ranks.
  int agreeOnStop(int64_t afterStep = -1, float *stepLoss = nullptr);

  /// Sets the train steps run so far (a resumed run's).
  void setStepsRun(int64_t steps) { step_ = steps; }

  /// The plateau schedule's state (its factor and the best test loss); the caller updates it
  /// after each epoch's evaluation, and the next steps use its factor.
  PlateauState &plateau() { return plateau_; }
  /// The schedule's factor for the step after `epochsDone` epochs (with fractions).
  double lrScaleAt(double epochsDone) const;

  /// Runs the eval step over every sample of `data`, the last batch padded. With
  /// `predictions`, also gathers every sample's logits into it (from all ranks, on every
  /// rank); throws Error(Plan) when the plan's eval step has no predictions output.
  /// A process alone stops for a signal within the pass (`stopForSignal`), unless the
  /// evaluation is one during training: the signal is then taken at the next step or epoch
  /// end, where the run keeps its place (a checkpoint).
  EvalStats evaluate(const Dataset &data, Predictions *predictions = nullptr,
                     bool stopForSignal = true);

  /// Train steps run so far (the StepContext step counter of the last one).
  int64_t stepsRun() const { return step_; }

  /// The run's seed, handed to random kernels (dropout) through the StepContext.
  void setSeed(uint64_t seed) { seed_ = seed; }

  /// Seconds the cross-process metric exchanges may wait for the other ranks.
  void setTimeout(double seconds) { timeout_ = seconds; }

  /// Shared batches (a parameter-server worker under asynchronous servers): the epoch's
  /// shards come from `next` (PushPull::nextUnit: shard u is rows u % W of batch u / W, -1
  /// once all are taken) instead of this worker's fixed rows, so that a faster worker trains
  /// more of them. Needs no prefetch.
  void setUnitSource(std::function<int64_t(int64_t epoch, int64_t units)> next) {
    unitSource_ = std::move(next);
  }
  /// Batches a loader thread gathers ahead of the steps (0: each replica gathers its rows on
  /// its own stream, before its step). Call before the first epoch.
  void setPrefetch(int ahead);

  /// Seconds replicas waited for input so far (the mean over this process's replicas).
  double inputWaitSeconds() const;

private:
  struct Epoch;
  /// The epoch's steps: batches [first, steps) of `batcher` in order, with boundaries and the
  /// ranks' votes on signals; or (shared batches) the shards the unit source hands out.
  void trainBatches(Epoch &e, Batcher &batcher);
  void trainSharedUnits(Epoch &e, Batcher &batcher);
  /// The epoch's figures over every rank, once its steps are done.
  EpochStats finishEpoch(Epoch &e);
  /// Enqueues train step `b` of the epoch on every replica: rows of `process` (-1: this one's),
  /// results into host slot `slot`.
  void enqueueTrain(Epoch &e, int64_t b, int slot, int process);
  /// Reads the results of the epoch's step `b` on every replica into its figures.
  void collectTrain(Epoch &e, int64_t b);
  /// The run's place before the epoch's step `b`, with the figures summed over the ranks (a
  /// collective).
  TrainPosition position(Epoch &e, int64_t b);
  /// Global-batch rows replica `r` of this process holds: [first, first + deviceRows()); with
  /// `process` >= 0, those of that process's place instead (a shared batch's shard). Its
  /// micro-shard m (gradient accumulation) is rows [first + m * shardRows_, + shardRows_).
  int64_t shardBegin(int r, int process = -1) const;
  /// Rows of a global batch each replica holds: its micro-shards'.
  int64_t deviceRows() const { return shardRows_ * microShards_; }
  /// Real (unpadded) rows of micro-shard `m` of replica `r`'s shard of global batch `batch`.
  int64_t shardValidRows(const Batcher &batcher, int64_t batch, int r, int m = 0) const;
  /// Enqueues on replica `r`'s stream: gathering rows [ctx.firstRow, + shardRows_) of global
  /// batch `batch` into its inputs, `step` with `ctx`, and reading the step's loss and correct
  /// count into host slot `slot` (its place for micro-shard ctx.microShard), then marks the
  /// slot's event. On a device the host cannot address, the rows are gathered here into the
  /// slot's staging memory and copied.
  void enqueueStep(const Batcher &batcher, int64_t batch, int r, StepKind step,
                   const StepContext &ctx, int slot);
  /// Starts gathering batches [first, last) of `batcher` ahead (with prefetch); the returned
  /// guard ends the pass, however the caller leaves.
  struct PassGuard {
    Prefetcher *prefetcher;
    ~PassGuard() {
      if (prefetcher)
        prefetcher->stop();
    }
  };
  PassGuard startPass(const Batcher &batcher, int64_t first, int64_t last);
  /// Step `batch` of the pass was collected on every replica: its input may be dropped.
  void endStep(int64_t batch) {
    if (prefetch_)
      prefetch_->release(batch);
  }
  /// Waits for host slot `slot` of replica `r` and returns micro-shard `m`'s (loss, correct).
  std::pair<float, float> collect(int r, int slot, int m = 0);
  /// After collect: the first `rows` predictions of micro-shard `m` of replica `r`'s shard in
  /// slot `slot`, as f32 into `out`.
  void readLogits(int r, int slot, int m, int64_t rows, float *out) const;

  /// The buffers each replica (device) reads and writes.
  struct ReplicaBuffers {
    int image = -1, label = -1; // the samples and targets inputs
    int trainLoss = -1, trainCorrect = -1, evalLoss = -1, evalCorrect = -1;
    int evalLogits = -1; // the predictions (plans of an older dpc have none)
  };
  /// Host memory and events of the two steps a replica may have in flight: while the device
  /// runs step n, the host enqueues step n + 1 and then reads the results of step n.
  /// Under gradient accumulation each slot has a place per micro-shard (index slot * M + m).
  struct Slots {
    DeviceMemory scalars;             // per place: loss, correct
    std::vector<DeviceMemory> staging; // per place: image rows then labels (devices not host-addressable)
    std::vector<DeviceMemory> logits; // per place: the eval step's predictions, when kept
    std::unique_ptr<Event> done[2];
  };

  Program &program_;
  std::string planName_;
  Callback *callback_ = nullptr;
  ProcessGroup *group_;
  int worker_; // a parameter-server worker's index, else -1
  std::function<int64_t(int64_t, int64_t)> unitSource_;
  // shardRows_: the rows of a device's input buffers (a micro-shard's under accumulation);
  // microShards_: M, the micro-shards of a device's rows of each global batch.
  int64_t batch_ = 0, shardRows_ = 0, microShards_ = 1, sampleElements_ = 0;
  // Floats of targets per sample (0: an i32 class label), and the bytes of either.
  int64_t targetWidth_ = 0, targetBytes_ = 4;
  // How the samples are fed, and the rows of the smallest embedding table token ids pick
  // (0: no embedding).
  SampleForm sampleForm_ = SampleForm::Scaled;
  int64_t tokenVocabulary_ = 0;
  std::vector<ReplicaBuffers> replicaBuffers_;
  std::vector<Slots> slots_;
  /// Eval steps also copy their predictions into the slots (during evaluate(data, preds)).
  bool keepLogits_ = false;
  /// The epoch's pass an evaluation at a boundary interrupts: its batcher and the batches
  /// [next, last) still to train (no batcher: none).
  struct PausedPass {
    const Batcher *batcher = nullptr;
    int64_t next = 0, last = 0;
  } pausedPass_;
  int64_t step_ = 0;
  PlateauState plateau_;
  uint64_t seed_ = 1;
  double timeout_ = 60;
  /// With prefetch: the loader and its slots' memory (host memory the devices copy from).
  std::vector<DeviceMemory> prefetchMemory_;
  std::unique_ptr<Prefetcher> prefetch_;
  /// Without: nanoseconds the replicas spent gathering their rows, summed.
  std::atomic<int64_t> gatherNanos_{0};
};

} // namespace dp::rt
