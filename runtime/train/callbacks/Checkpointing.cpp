// --checkpoint-dir DIR: checkpoints written by rank 0 at boundaries every rank agrees on, and
// --resume, which continues from the newest one; see Callbacks.h.
#include "runtime/base/Interrupt.h"
#include "runtime/base/TestEvents.h"
#include "runtime/base/Trace.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <algorithm>
#include <iostream>
#include <optional>

namespace dp::rt {
namespace {

/// The checkpoint a resumed run continues from: rank 0 takes the newest one in `dir` that
/// verifies and whose position is inside what `epochSamples` training samples an epoch allow
/// (warning about each newer one that is not) and refuses one of another model; every rank
/// gets it from rank 0 (shareCheckpoint), so that the directory need not be shared. Empty when
/// the directory has no checkpoint.
std::optional<Checkpoint> findCheckpoint(ProcessGroup &group, const Plan &plan,
                                         const std::string &dir, int64_t epochSamples,
                                         double timeout) {
  std::optional<Checkpoint> chosen;
  if (group.rank() == 0) {
    const auto found = listCheckpoints(dir);
    for (const auto &[step, file] : found) {
      std::optional<Checkpoint> checkpoint;
      try {
        checkpoint = Checkpoint::read(file, checkpointSizeLimit(plan));
        checkCheckpointPosition(checkpoint->meta, epochSamples, file);
      } catch (const Error &e) {
        std::cerr << std::string("dprun: warning: skipping a checkpoint that cannot be used: ") +
                         e.what() + "\n"
                  << std::flush;
        continue;
      }
      checkCheckpointFits(*checkpoint, plan, file);
      chosen = std::move(checkpoint);
      break;
    }
    if (!found.empty() && !chosen)
      throw Error(ErrorKind::Checkpoint,
                  "--resume: none of the " + std::to_string(found.size()) + " checkpoint" +
                      (found.size() == 1 ? "" : "s") + " in " + dir +
                      " verifies (see the warnings above); move them away to start afresh");
  }
  return shareCheckpoint(group, plan, std::move(chosen), timeout);
}

} // namespace

struct Checkpointing::Impl {
  explicit Impl(RunState &s) : s(s) {}

  /// Writes the checkpoint of `position` (rank 0; the others only note the step).
  void save(const TrainPosition &position);
  /// Loads the resumed checkpoint, sets where training starts and prints what differs.
  void resume();

  RunState &s;
  /// The process that writes the checkpoints keeps the directory to this run until it ends.
  std::optional<CheckpointDirLock> lock;
  std::optional<CheckpointPruner> pruner;
  std::optional<Checkpoint> resumed;
  int64_t lastSaved = -1;
  /// Whether the checkpoint of the place a signal stopped the run was written.
  bool stopSaved = false;
};

Checkpointing::Checkpointing(RunState &state) : impl_(std::make_unique<Impl>(state)) {
  if (state.printer) {
    impl_->lock.emplace(state.options.checkpointDir);
    if (!impl_->lock->warning().empty())
      std::cerr << "dprun: warning: " + impl_->lock->warning() + "\n" << std::flush;
  }
}

Checkpointing::~Checkpointing() = default;

bool Checkpointing::find() {
  RunState &s = impl_->s;
  if (!s.options.resume)
    return false;
  impl_->resumed = findCheckpoint(s.job.group(), s.job.program().plan(), s.options.checkpointDir,
                                  s.train->size(), s.timeout);
  // A resumed run takes the checkpoint's seed: with the step and epoch it is the whole random
  // state (the shuffle of each epoch and every dropout mask are drawn from counters).
  if (impl_->resumed)
    s.seed = impl_->resumed->meta.seed;
  return impl_->resumed.has_value();
}

void Checkpointing::onTrainBegin() {
  RunState &s = impl_->s;
  if (impl_->resumed)
    impl_->resume();
  else if (s.options.resume && !s.quiet)
    s.out << "no checkpoint in " << s.options.checkpointDir << ": starting from the beginning\n"
          << std::flush;
  if (s.printer)
    impl_->pruner.emplace(s.options.checkpointDir, s.options.checkpointKeep, s.job.program().plan(),
                          s.seed, s.train->size());
}

void Checkpointing::Impl::resume() {
  const CheckpointMeta &meta = resumed->meta;
  const TrainPosition &p = meta.position;
  const int64_t batch = s.job.program().plan().batch;
  TrainReport &report = s.report;
  loadCheckpoint(s.job.program(), *resumed);
  s.trainer.setStepsRun(p.step);
  s.trainer.plateau() = p.plateau;
  s.earlyStop = p.earlyStop;
  report.epochs = meta.epochs;
  report.validations = meta.validations;
  // --restore-best goes on with the best weights the checkpoint kept, when they were chosen by
  // the figure this run watches.
  const TrainOptions &o = s.options;
  std::string bestNote;
  if (o.restoreBest && meta.best >= 0 && meta.bestMonitor == o.monitor) {
    s.best.validation = meta.best;
    s.best.weights = checkpointBestWeights(*resumed, s.job.program().plan());
  } else if (o.restoreBest && meta.best >= 0) {
    bestNote = "its best weights were chosen by " + meta.bestMonitor + ", not " + o.monitor +
               ": the best is chosen afresh from the validations of this run";
  } else if (o.restoreBest) {
    bestNote = "it keeps no best weights (written without --restore-best, or by a dprun before "
               "checkpoint format 4): the best is chosen from the validations of this run";
  }
  s.resumed = true;
  s.firstEpoch = p.epochsDone + 1;
  s.firstBatch = p.samplesInEpoch / batch;
  if (p.stepsInEpoch > 0)
    s.resumeAt = &p;
  report.checkpoints.resumedFrom = resumed->source;
  report.checkpoints.resumedStep = p.step;
  lastSaved = p.step;
  if (!s.quiet) {
    std::ostream &out = s.out;
    out << "resuming from " << resumed->source << ": step " << p.step << ", " << p.epochsDone
        << " epoch" << (p.epochsDone == 1 ? "" : "s") << " finished";
    if (p.stepsInEpoch > 0)
      out << ", epoch " << s.firstEpoch << " at step " << p.stepsInEpoch;
    out << "\n";
    if (s.seed != o.seed && o.seedGiven)
      out << "note: the checkpoint was written with --seed " << s.seed << ", which the run "
          << "keeps (--seed " << o.seed << " is ignored)\n";
    if (meta.globalBatch != batch || meta.replicas != report.replicas ||
        meta.processes != report.processes)
      out << "note: the checkpoint was written by a plan of " << meta.processes << " process(es) x "
          << meta.replicas << " replica(s), global batch " << meta.globalBatch << "; this one is "
          << report.processes << " x " << report.replicas << ", global batch " << batch << "\n";
    if (meta.threads > 0 && report.threads > 0 && meta.threads != report.threads && !o.reproducible)
      out << "note: the checkpoint was written with " << meta.threads
          << " compute threads per process; this run has " << report.threads
          << ": the kernels' sums differ with the count, so the run goes on from the same "
             "parameters but not along the same path"
          << (o.threadsGiven ? "" : " (the newest checkpoint's count was taken)") << "\n";
    if (p.samplesInEpoch % batch != 0)
      out << "note: " << p.samplesInEpoch << " samples of epoch " << s.firstEpoch
          << " were done, not a whole number of batches of " << batch
          << ": the epoch goes on from batch " << s.firstBatch << ", and its samples "
          << s.firstBatch * batch << " to " << p.samplesInEpoch - 1 << " are seen again\n";
    if (!bestNote.empty())
      out << "note: --restore-best: " << bestNote << "\n";
    if (s.firstEpoch > o.epochs)
      out << "the checkpoint has finished all " << o.epochs << " epoch"
          << (o.epochs == 1 ? "" : "s") << ": nothing to train\n";
    out << std::flush;
  }
  // The values are on the devices now: the file's bytes (a model's worth) need not stay for
  // the whole run, only its records.
  resumed->tensors.clear();
  std::string().swap(resumed->bytes);
}

CheckpointMeta checkpointMeta(RunState &s, const TrainPosition &position) {
  const Plan &plan = s.job.program().plan();
  const TrainReport &report = s.report;
  CheckpointMeta meta;
  meta.model = plan.model;
  meta.seed = s.seed;
  meta.globalBatch = plan.batch;
  meta.planHash = plan.fileHash;
  meta.replicas = report.replicas;
  meta.processes = report.processes;
  meta.threads = report.threads;
  meta.position = position;
  meta.position.plateau = s.trainer.plateau();
  meta.position.earlyStop = s.earlyStop;
  meta.epochs = report.epochs;
  meta.validations = report.validations;
  if (s.best.validation >= 0) {
    meta.best = s.best.validation;
    meta.bestMonitor = s.options.monitor;
  }
  return meta;
}

/// The best weights a checkpoint of the run keeps (--restore-best), or null.
const std::vector<ParamsEntry> *bestWeights(const RunState &s) {
  return s.best.validation >= 0 ? &s.best.weights : nullptr;
}

void Checkpointing::Impl::save(const TrainPosition &position) {
  if (position.step == lastSaved)
    return;
  lastSaved = position.step;
  auto begin = Clock::now();
  // State sharded over the processes comes to the writer from each (every rank is here).
  const auto elsewhere = gatherHeldState(s.job.program(), s.job.group(), s.timeout);
  if (!s.printer)
    return;
  TrainReport &report = s.report;
  const CheckpointMeta meta = checkpointMeta(s, position);
  const std::string path = s.options.checkpointDir + "/" + checkpointFileName(position.step);
  trace::Span span(trace::Category::Host, "checkpoint write", position.step);
  const uint64_t bytes = writeCheckpoint(s.job.program(), meta, path, bestWeights(s), &elsewhere);
  testEvents::note("checkpoint " + std::to_string(position.step));
  for (const std::string &warning : pruner->prune(path))
    std::cerr << "dprun: warning: " + warning + "\n" << std::flush;
  CheckpointReport &c = report.checkpoints;
  c.lastSeconds = secondsSince(begin);
  c.lastBytes = bytes;
  c.last = path;
  ++c.written;
  report.phases.checkpoint += c.lastSeconds;
  if (!s.quiet && !s.interactive) {
    char line[64];
    std::snprintf(line, sizeof(line), " (%s, %.2f s)\n", sizeText(bytes).c_str(), c.lastSeconds);
    s.out << "checkpoint " << path << line << std::flush;
  }
}

bool Checkpointing::wantsBoundary(int64_t step) const {
  const int64_t every = impl_->s.options.checkpointEvery;
  return every > 0 && step % every == 0;
}

void Checkpointing::onBoundary(const TrainPosition &position, int signal) {
  // Its own boundaries and a signal's; another callback's (an evaluation) writes nothing.
  if (!signal && !wantsBoundary(position.step))
    return;
  impl_->save(position);
  if (signal)
    impl_->stopSaved = true;
}

void Checkpointing::onEpochEnd(EpochStats &epoch) {
  RunState &s = impl_->s;
  const TrainOptions &o = s.options;
  const int64_t step = s.trainer.stepsRun();
  // The run's last epoch: --epochs, or the one --max-steps ended (cut short, it counts as
  // finished: a resume goes on with the next).
  const bool last = epoch.epoch == o.epochs || (o.maxSteps > 0 && step >= o.maxSteps);
  if (s.signal || s.stopTraining || o.checkpointEachEpoch || last ||
      (o.checkpointEvery > 0 && step % o.checkpointEvery == 0)) {
    TrainPosition end;
    end.step = step;
    end.epochsDone = epoch.epoch;
    impl_->save(end);
    impl_->stopSaved = s.signal != 0;
  }
}

void Checkpointing::onStop(Stop &stop) {
  // With a checkpoint of the place it stopped, SIGTERM and SIGUSR1 (a scheduler's notice) end
  // with the "resubmit me" status.
  if (!impl_->stopSaved)
    return;
  RunState &s = impl_->s;
  stop.message += std::string("; ") +
                  (s.printer ? "checkpoint " + s.report.checkpoints.last : "the checkpoint") +
                  " holds step " + std::to_string(s.trainer.stepsRun()) +
                  ": continue with --resume";
  if (stop.kind == ErrorKind::Terminated || stop.kind == ErrorKind::UserSignal1)
    stop.kind = ErrorKind::Preempted;
}

namespace {

/// --save-state FILE: the run's whole state when training ends, as a checkpoint (written by
/// the printing process, atomically), before --restore-best puts other weights in place.
class SaveState final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onTrainEnd() override {
    const auto elsewhere = gatherHeldState(s_.job.program(), s_.job.group(), s_.timeout);
    if (!s_.printer)
      return;
    TrainPosition end;
    end.step = s_.trainer.stepsRun();
    end.epochsDone = s_.report.epochs.empty() ? s_.firstEpoch - 1 : s_.report.epochs.back().epoch;
    const std::string &path = s_.options.statePath;
    const uint64_t bytes = writeCheckpoint(s_.job.program(), checkpointMeta(s_, end), path,
                                           bestWeights(s_), &elsewhere);
    if (!s_.quiet)
      s_.out << "wrote " << path << ": the state at step " << end.step << " (" << sizeText(bytes)
             << "; --resume takes it from a --checkpoint-dir as " << checkpointFileName(end.step)
             << ")\n"
             << std::flush;
  }
};

} // namespace

std::unique_ptr<Callback> makeSaveState(RunState &state) {
  return std::make_unique<SaveState>(state);
}

} // namespace dp::rt
