// The run behind `dprun PLAN --data DIR`: launch the job, load both data splits, draw the
// parameters, train, evaluate, print the results and the phase table, write the metrics and the
// parameters when asked.
#pragma once

#include "runtime/base/ParamsFile.h"
#include "runtime/train/Trainer.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace dp::rt {

struct TrainOptions {
  /// Directory holding train-{images,labels} and t10k-{images,labels} IDX files.
  std::string dataDir;
  int64_t epochs = 1;
  /// Seeds parameter initialisation and the shuffle (through separate streams).
  uint64_t seed = 1;
  /// Caps the train steps of each epoch (--steps-per-epoch; 0: no cap), and of the whole run
  /// (--max-steps: training ends after that many steps, in whichever epoch; 0: no cap);
  /// evaluation still sees every sample.
  int64_t stepsPerEpoch = 0, maxSteps = 0;
  /// Where to write the metrics JSON; empty for none.
  std::string metricsPath;
  /// The run's log as it goes (--log: JSON lines) and TensorBoard's event files
  /// (--tensorboard DIR), one record every `logEvery` train steps, per evaluation and per
  /// epoch; empty for none.
  std::string logPath, tensorboardDir;
  int64_t logEvery = 10;
  /// Print only the final test result line.
  bool quiet = false;
  /// Draw a live progress bar with carriage returns (the output is a terminal).
  bool interactive = false;
  /// Seconds a collective may wait for the other replicas before the job is stopped with a
  /// report of who is missing (0: wait forever).
  double collectiveTimeout = 20;
  /// Where to write the weights after training (safetensors, see dumpParams); empty for none.
  std::string paramsPath;
  /// Where to write the whole state when training ends (--save-state: a checkpoint file, with
  /// the optimizer state, the step and the epochs); empty for none.
  std::string statePath;
  /// The weights to start from instead of the plan's initial values (--params: a file of
  /// --save-params, see loadParams); empty for none.
  std::string initParamsPath;
  /// Evaluate the test set only, no training (--predict).
  bool predict = false;
  /// Where the printer writes the final evaluation's predictions as CSV (predictionsCsv);
  /// empty for none.
  std::string predictionsPath;
  /// Where the printer writes the plan's source model with the trained weights (--export);
  /// empty for none. `exportModel` writes it (dprun gives the ONNX exporter; the runtime
  /// knows no model format): returns "" or the problem.
  std::string exportPath;
  std::function<std::string(const ExportSourceDesc &source,
                            const std::map<std::string, std::vector<float>> &weights,
                            const std::string &path)>
      exportModel;
  /// Whether `seed` was given (--seed): a resumed run takes the checkpoint's seed and says so
  /// when it differs.
  bool seedGiven = false;
  /// The directory the run keeps its checkpoints in (--checkpoint-dir); empty for none. One is
  /// written at the end of training and when a signal stops it, and more as asked below.
  std::string checkpointDir;
  /// Also every this many train steps of the run (0: not by steps), and after every epoch.
  int64_t checkpointEvery = 0;
  bool checkpointEachEpoch = false;
  /// The newest checkpoints kept in the directory (the older ones are removed).
  int checkpointKeep = 3;
  /// Continue from the newest checkpoint in checkpointDir that verifies (start afresh when
  /// there is none).
  bool resume = false;
  /// Stop training when the monitored figure has not improved for this many epochs (0:
  /// never).
  int64_t earlyStop = 0;
  /// The validation set: the last fraction of the training set held out (--validation-split,
  /// 0: none), or the test split of another directory (--validation-data). It is evaluated
  /// after every epoch, and every `evalEvery` train steps when positive. Without one, a
  /// plateau schedule and early stopping watch the test set after every epoch.
  double validationSplit = 0;
  std::string validationDir;
  /// Whether a validation set is given (--validation-split or --validation-data).
  bool hasValidation() const { return validationSplit > 0 || !validationDir.empty(); }
  int64_t evalEvery = 0;
  /// What a plateau schedule, early stopping and --restore-best watch: "val_loss" or
  /// "val_accuracy" (the test set's, without a validation set).
  std::string monitor = "val_loss";
  /// End training with the weights of the best validation evaluation (--restore-best).
  bool restoreBest = false;
  /// The peak TFLOP/s of a process that MFU divides by (--peak-tflops; 0: the peak file's
  /// figure for this machine and thread count, dprun --measure-peak).
  double peakTflops = 0;
  /// The final test evaluation's top-K accuracy (--top-k K; 0: not asked), and each class's
  /// accuracy with the confusion matrix (--confusion-matrix), printed and in the metrics.
  int64_t topK = 0;
  bool confusionMatrix = false;
  /// Batches a loader thread gathers ahead of the steps (0: each replica gathers its rows
  /// before its step, on its own compute thread; -1: 2 when the process has a core its
  /// compute threads leave free, else 0).
  int prefetch = -1;
  /// dprun --threads: compute threads per process on a CPU plan (0: auto, see CoreShare.h).
  int threads = 0;
  /// Whether --threads or DPRUN_THREADS set `threads` (a resume otherwise runs with the
  /// checkpoint's thread count).
  bool threadsGiven = false;
  /// Set by the run: the threads are the resumed checkpoint's.
  bool threadsFromCheckpoint = false;
  /// Where to write the run's timeline (Chrome trace-event JSON); empty for none. Rank 0
  /// merges every rank's into it, or with tracePerRank each rank writes its own
  /// (tracePathOfRank).
  std::string tracePath;
  bool tracePerRank = false;
  /// Where rank 0 writes the run's profile (profileJson); empty for none.
  std::string profilePath;
  /// How gradient sums cross the ranks: "flat", "hierarchical", "tree" or "auto"
  /// (Handshake::allreduce).
  std::string allreduce = "auto";
  /// dprun --reproducible: the same bits on any layout and thread count (JobOptions).
  bool reproducible = false;
  /// Parameter servers: what to do with a worker silent past the timeout (JobOptions).
  std::string onWorkerLoss;
};

/// The timeline file of rank `rank` with --trace-per-rank: "t.json" -> "t.rank1.json"; a
/// name not ending in ".json" gets ".rank1.json" appended.
std::string tracePathOfRank(const std::string &path, int rank);

/// The profile of a run, from the timeline's spans of device 0's compute thread: every train
/// step after the first (the first pays for warm-up), the time of each of its kernels (by
/// index in the plan's train step, with its kind) and of each bucket's allreduce wait, and the
/// bytes of each bucket, as JSON; what a communication model reads. Needs the timeline on.
std::string profileJson(const Plan &plan, int ranks, const std::string &layout,
                        int computeThreads = 0);

/// Spans one process keeps in its timeline; later ones are counted and dropped.
constexpr size_t kMaxTraceSpans = 500'000;

/// What the run did with checkpoints.
struct CheckpointReport {
  /// The checkpoint the run resumed from, and its step; empty when it started afresh.
  std::string resumedFrom;
  int64_t resumedStep = 0;
  /// Checkpoints written, the newest one, and the seconds and bytes of the last write.
  int64_t written = 0;
  std::string last;
  double lastSeconds = 0;
  uint64_t lastBytes = 0;
};

/// Wall-clock seconds of each phase of a run.
struct PhaseTimes {
  double load = 0;     // reading the plan and data, creating the kernels
  double init = 0;     // drawing the initial parameters
  double train = 0;    // all train steps, with their batch gathering
  double evaluate = 0; // the eval step over the test set
  double checkpoint = 0; // writing checkpoints (rank 0), not counted in train
  /// Of train: the replicas' compute waiting for input (EpochStats::inputWaitSeconds, summed).
  double inputWait = 0;
};

/// The final test evaluation per class (--top-k, --confusion-matrix).
struct ClassReport {
  int64_t topK = 0;
  double topKAccuracy = 0;
  /// [label][predicted class]: samples.
  std::vector<std::vector<int64_t>> confusion;
};

/// Everything a run measured; what --metrics writes.
struct TrainReport {
  std::vector<EpochStats> epochs;
  EvalStats test;
  int64_t params = 0; // trainable weight elements
  PhaseTimes phases;
  int replicas = 1, processes = 1;
  /// The compute threads of each process (0: not a CPU plan).
  int threads = 0;
  /// ProcessGroup::allreduceLayout() of a job of several processes; empty otherwise.
  std::string allreduceLayout;
  /// Seconds the collectives spent averaging buckets, and replicas spent waiting for them.
  double allreduceSeconds = 0, allreduceWaitSeconds = 0;
  /// What the products of the train steps of this run achieved (runtime/format/Flops.h): the
  /// FLOPs of one process's step, the steps run, their TFLOP/s over the train phase, and the
  /// model FLOP utilization against the peak (0: none known) and where the peak came from.
  struct Compute {
    double stepFlops = 0;
    int64_t steps = 0;
    double tflops = 0;
    double peakTflops = 0;
    std::string peakSource;
    bool bf16 = false;
    double mfu() const { return peakTflops > 0 ? tflops / peakTflops : 0; }
  } compute;
  /// The signal that stopped training ("SIGINT", "SIGTERM", "SIGUSR1"), or empty.
  std::string interrupted;
  /// The epoch after which early stopping ended training (0: it did not).
  int64_t earlyStoppedAfter = 0;
  /// What the watchers watched ("val_loss", "val_accuracy", or "test_loss" without a
  /// validation set), and every validation evaluation, in order.
  std::string monitor;
  std::vector<Evaluation> validations;
  /// --restore-best: the evaluation whose weights the run ended with.
  struct Best {
    bool restored = false;
    int64_t step = 0, epoch = 0;
    double value = 0;
  } best;
  CheckpointReport checkpoints;
  /// Parameter servers: the workers the servers left out (silent past the timeout while the
  /// job kept going), each with its job rank and the steps after which it was.
  struct LostWorker {
    int worker = 0, rank = 0;
    int64_t afterSteps = 0;
  };
  std::vector<LostWorker> lostWorkers;
  /// The test set per class, when asked for (empty confusion: not asked).
  ClassReport classes;
};

/// Device 0's parameters, in plan order: every one, or only the weights (batch-norm
/// statistics included; no optimizer state).
std::vector<ParamsEntry> readParams(Program &program, bool weightsOnly);

/// Writes the weights (batch-norm statistics included; no optimizer state) of device 0, in
/// plan order, with their shapes, to `path` as safetensors (runtime/base/ParamsFile.h),
/// atomically.
void dumpParams(Program &program, const std::string &path);

/// Sets every weight of the plan on every device from `entries` (as loadParams does from a
/// file; `path` names where they came from in messages).
void setWeights(Program &program, const std::vector<ParamsEntry> &entries, const std::string &path);

/// Sets every weight of the plan (trained or not: batch norms' statistics too) on every
/// device from the parameters file `path` (safetensors, or dp's older raw format); optimizer
/// state keeps its initial values. Throws Error(Data) naming every parameter the file lacks,
/// holds in another shape or size, or holds and the plan has not, before any is set.
void loadParams(Program &program, const std::string &path);

/// The whole job behind `dprun PLAN --data DIR`: loads the plan and both data splits, draws
/// the parameters, trains, evaluates, prints the results and the phase table to `out`, and
/// writes the metrics file when asked. Throws Error on any failure.
TrainReport runTraining(const std::string &planPath, const TrainOptions &options,
                        std::ostream &out);

} // namespace dp::rt
