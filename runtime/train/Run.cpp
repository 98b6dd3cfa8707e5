// The run behind `dprun PLAN --data DIR`; see Run.h.
#include "runtime/train/Run.h"

#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/Trace.h"
#include "runtime/base/Json.h"
#include "runtime/base/TestEvents.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Job.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"

#include <algorithm>
#include <map>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace dp::rt {

void dumpParams(Program &program, const std::string &path) {
  std::string image;
  for (const ParamDesc &p : program.plan().params) {
    const BufferDesc &b = program.buffer(p.buffer);
    if (b.device != 0)
      continue;
    image += p.name;
    image.push_back('\0');
    uint64_t count = static_cast<uint64_t>(b.numel);
    for (int i = 0; i < 8; ++i)
      image.push_back(static_cast<char>((count >> (8 * i)) & 0xff));
    const size_t at = image.size();
    image.resize(at + b.bytes());
    program.read(p.buffer, &image[at]);
  }
  writeFileAtomically(path, image);
}

namespace {

std::string sizeText(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 20))
    std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / double(1 << 20));
  else
    std::snprintf(text, sizeof(text), "%.1f KiB", double(bytes) / 1024.0);
  return text;
}

/// The checkpoint a resumed run continues from: rank 0 takes the newest one in `dir` that
/// verifies and whose position is inside what `epochSamples` training samples an epoch allow
/// (warning about each newer one that is not) and refuses one of another model; every rank
/// gets its bytes from rank 0, so that the directory need not be shared. Empty when the
/// directory has no checkpoint.
std::optional<Checkpoint> findCheckpoint(ProcessGroup &group, const Plan &plan,
                                         const std::string &dir, int64_t epochSamples,
                                         double timeout) {
  std::string bytes, path;
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
      bytes = std::move(checkpoint->bytes);
      path = file;
      break;
    }
    if (!found.empty() && path.empty())
      throw Error(ErrorKind::Checkpoint,
                  "--resume: none of the " + std::to_string(found.size()) + " checkpoint" +
                      (found.size() == 1 ? "" : "s") + " in " + dir +
                      " verifies (see the warnings above); move them away to start afresh");
  }
  if (group.size() > 1) {
    // Rank 0 may be reading a large file meanwhile: the first exchange waits longer.
    uint64_t sizes[2] = {bytes.size(), path.size()};
    group.broadcast(sizes, sizeof(sizes), 0, std::max(timeout, 600.0));
    bytes.resize(sizes[0]);
    path.resize(sizes[1]);
    group.broadcast(path.data(), path.size(), 0, timeout);
    constexpr size_t kChunk = size_t(64) << 20;
    for (size_t at = 0; at < bytes.size(); at += kChunk)
      group.broadcast(&bytes[at], std::min(kChunk, bytes.size() - at), 0, timeout);
  }
  if (path.empty())
    return std::nullopt;
  return Checkpoint::fromBytes(std::move(bytes), path);
}

/// A fingerprint of a data set's samples and labels (not cryptographic: it tells different
/// data apart, it does not defend against forged files).
uint64_t fingerprint(const Dataset &data) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ uint64_t(data.size());
  auto mix = [&h](uint64_t word) {
    h ^= word + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
  };
  const uint8_t *bytes = data.size() > 0 ? data.image(0) : nullptr;
  const uint64_t total = uint64_t(data.size()) * uint64_t(data.pixels());
  uint64_t i = 0;
  for (; i + 8 <= total; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    mix(word);
  }
  for (; i < total; ++i)
    mix(bytes[i]);
  for (int64_t s = 0; s < data.size(); ++s)
    mix(data.label(s));
  return h;
}

/// Before the first step: every rank must read the same data. A rank with another training
/// set takes other steps per epoch (the others then wait for it in a collective until the
/// timeout); one with other samples trains other parameters. Throws Error(Launch) on every
/// rank, naming the ranks and what each reads.
void agreeOnData(ProcessGroup &group, const Dataset &train, const Dataset &test,
                 double timeout) {
  if (group.size() <= 1)
    return;
  char digest[40];
  std::snprintf(digest, sizeof(digest), "%016llx",
                static_cast<unsigned long long>(fingerprint(train) ^ (fingerprint(test) * 3)));
  const std::string mine = withCommas(train.size()) + " training and " +
                           withCommas(test.size()) + " test samples of " +
                           std::to_string(train.height()) + "x" + std::to_string(train.width()) +
                           "x" + std::to_string(train.channels()) + ", fingerprint " + digest +
                           " (" + train.imagesPath() + ")";
  // A rank may still be reading its data: the first exchange waits longer.
  const double wait = std::max(timeout, 600.0);
  const std::vector<std::string> all = group.gatherBytes(mine, 0, wait);
  std::string verdict;
  if (group.rank() == 0) {
    for (size_t r = 1; r < all.size(); ++r)
      if (all[r] != all[0])
        verdict += std::string("rank ") + std::to_string(r) + " reads " + all[r] + "; ";
    if (!verdict.empty())
      verdict = "ranks disagree on the data: " + verdict + "rank 0 reads " + all[0] +
                "; every rank must read the same --data";
  }
  uint64_t bytes = verdict.size();
  group.broadcast(&bytes, sizeof(bytes), 0, wait);
  verdict.resize(bytes);
  group.broadcast(verdict.data(), verdict.size(), 0, wait);
  if (!verdict.empty())
    throw Error(ErrorKind::Launch, verdict);
}

/// "--checkpoint-every 200 --resume --trace": the options that add steps the ranks take
/// together, which every rank must share.
std::string sharedOptions(const TrainOptions &o) {
  std::string early = o.earlyStop > 0 ? "--early-stop " + std::to_string(o.earlyStop) : "";
  if (!o.tracePath.empty())
    early += std::string(early.empty() ? "" : " ") +
             (o.tracePerRank ? "--trace --trace-per-rank" : "--trace");
  if (o.allreduce != "auto")
    early += std::string(early.empty() ? "" : " ") + "--allreduce " + o.allreduce;
  if (o.checkpointDir.empty())
    return early;
  std::string text = early + (early.empty() ? "" : " ") + "--checkpoint-dir";
  if (o.checkpointEvery > 0)
    text += " --checkpoint-every " + std::to_string(o.checkpointEvery);
  if (o.checkpointEachEpoch)
    text += " --checkpoint-every epoch";
  if (o.resume)
    text += " --resume";
  return text;
}

/// Writes the timeline of the run so far: rank 0 merges every rank's (a collective), or each
/// rank writes its own. `zero` is the time every rank took as the trace's start.
void writeTrace(ProcessGroup &group, const TrainOptions &options, int64_t zero, int replicas,
                double timeout, std::ostream &out, bool quiet) {
  const std::string process = "rank " + std::to_string(group.rank()) + " (" +
                              (group.launch().host.empty() ? "host" : group.launch().host) + ")";
  const std::string events = trace::eventsJson(group.rank(), process, zero);
  double counts[2] = {double(trace::recordedSpans()), double(trace::droppedSpans())};
  if (trace::droppedSpans() > 0)
    std::cerr << "dprun: warning: " + process + ": the timeline kept the first " +
                     withCommas(int64_t(kMaxTraceSpans)) + " spans and dropped " +
                     withCommas(int64_t(trace::droppedSpans())) +
                     " (--max-steps makes a shorter run)\n"
              << std::flush;
  auto metadata = [&](int ranks) {
    return "{\"tool\":\"dprun\",\"ranks\":" + std::to_string(ranks) +
           ",\"replicas_per_process\":" + std::to_string(replicas) +
           ",\"spans\":" + std::to_string(int64_t(counts[0])) +
           ",\"dropped_spans\":" + std::to_string(int64_t(counts[1])) + "}";
  };
  std::string path = options.tracePath;
  uint64_t bytes = 0;
  if (options.tracePerRank || group.size() == 1) {
    if (group.size() > 1)
      path = tracePathOfRank(path, group.rank());
    bytes = trace::writeTraceFile(path, {&events}, metadata(1));
  } else {
    group.sumDoubles(counts, 2, timeout, "the count of the timeline's spans");
    const std::vector<std::string> parts = group.gatherBytes(events, 0, timeout);
    if (group.rank() != 0)
      return;
    std::vector<const std::string *> all;
    for (const std::string &part : parts)
      all.push_back(&part);
    bytes = trace::writeTraceFile(path, all, metadata(group.size()));
  }
  if (!quiet && (group.rank() == 0 || options.tracePerRank))
    out << "timeline " << path << " (" << withCommas(int64_t(counts[0])) << " spans, "
        << sizeText(bytes) << ")\n"
        << std::flush;
}

/// Worker 0 of a parameter-server job after an epoch: each server's figures between its
/// answers `last` (then replaced) and `now` into `epoch`, and a line per server on `out`
/// (unless null).
void serverEpoch(std::vector<ServerReport> now, std::vector<ServerReport> &last,
                 EpochStats &epoch, std::ostream *out) {
  for (size_t s = 0; s < now.size(); ++s) {
    const ServerReport &a = now[s];
    const ServerReport b = s < last.size() ? last[s] : ServerReport();
    ServerEpochStats e;
    e.updates = a.updates - b.updates;
    const double seconds = a.seconds - b.seconds;
    e.updatesPerSec = seconds > 0 ? double(e.updates) / seconds : 0;
    e.staleness = a.staleness;
    for (size_t k = 0; k < b.staleness.size() && k < e.staleness.size(); ++k)
      e.staleness[k] -= b.staleness[k];
    while (!e.staleness.empty() && e.staleness.back() == 0)
      e.staleness.pop_back();
    e.pullsHeld = a.pullsHeld - b.pullsHeld;
    e.heldSeconds = a.heldSeconds - b.heldSeconds;
    if (out)
      *out << serverEpochLine(static_cast<int>(s), e) << "\n";
    epoch.servers.push_back(std::move(e));
  }
  if (out)
    *out << std::flush;
  last = std::move(now);
}

/// Trains and evaluates the plan of a launched job.
TrainReport trainWith(Job &job, const TrainOptions &options, std::ostream &out,
                      Clock::time_point start) {
  TrainReport report;
  const std::string &planPath = job.planPath();
  Program *program = &job.program();
  ProcessGroup &group = job.group();
  Collectives *engine = job.collectives();
  const Plan &plan = program->plan();
  report.replicas = program->devices();
  report.processes = program->processes();
  if (group.size() > 1 && !job.pushPull())
    report.allreduceLayout = group.allreduceLayout();
  const double timeout = options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9;
  const bool printer = job.printer();
  const bool quiet = options.quiet || !printer;
  // The process that writes the checkpoints keeps the directory to this run until it ends.
  std::optional<CheckpointDirLock> checkpointLock;
  if (printer && !options.checkpointDir.empty()) {
    checkpointLock.emplace(options.checkpointDir);
    if (!checkpointLock->warning().empty())
      std::cerr << "dprun: warning: " + checkpointLock->warning() + "\n" << std::flush;
  }
  std::ostringstream discard;
  std::ostream &log = printer ? out : discard;
  const bool interactive = options.interactive && group.size() == 1 && !launchedByMpiLauncher();
  // The timeline starts here on every rank at once (after a sum over the ranks: within its
  // latency), so that the ranks' spans line up even where their clocks differ.
  const bool tracing = !options.tracePath.empty();
  int64_t traceZero = 0;
  if (tracing) {
    double ready = 0;
    group.sumDoubles(&ready, 1, timeout, "the start of the timeline");
    traceZero = trace::now();
  }
  // A parameter-server worker trains its shards without meeting the other workers.
  PushPull *exchanges = job.pushPull();
  Trainer trainer(*program, planPath, log, interactive, quiet, exchanges ? nullptr : &group,
                  exchanges ? group.rank() : -1);
  trainer.setTimeout(timeout);
  // A loader thread pays where a core is free for it; on cores the compute threads keep busy
  // it only takes turns with them (measured in docs/timeline.md).
  int prefetch = options.prefetch;
  int computeCores = 0;
  for (int d = 0; d < program->devices(); ++d)
    computeCores += program->device(d).hostCores();
  // Cores other processes keep busy are theirs: a loader thread would only take turns there.
  const ThreadChoice &threads = job.threads();
  const int cores = threads.leftCoresOut() ? threads.threads : allowedCores();
  // The kernels' sums depend on the thread count: the checkpoints record it, the run reports it.
  const int computeThreads = threads.effective();
  report.threads = computeThreads;
  if (prefetch < 0)
    prefetch = computeCores < cores ? 2 : 0;
  // Shared batches: a worker learns its next rows one step ahead, so it gathers them itself.
  if (exchanges && job.sharesBatches()) {
    trainer.setUnitSource(
        [exchanges](int64_t epoch, int64_t units) { return exchanges->nextUnit(epoch, units); });
    prefetch = 0;
  }
  trainer.setPrefetch(prefetch);
  // 1 to 256, as Job::launch checked (checkRunnable).
  const int64_t classes = numClasses(plan);
  // CIFAR-10 images are resized once, at load, to an NHWC model's input size (as seed 002
  // trains ResNets at 128x128); IDX images are taken as they are.
  ImageSize resize;
  if (detectDataFormat(options.dataDir) == DataFormat::Cifar10)
    resize = trainer.imageSize();
  Dataset train = Dataset::loadSplit(options.dataDir, "train", static_cast<int>(classes), resize);
  Dataset test = Dataset::loadSplit(options.dataDir, "t10k", static_cast<int>(classes), resize);
  trainer.checkData(train);
  trainer.checkData(test);
  agreeOnData(group, train, test, timeout);
  const int64_t batch = plan.batch;

  // A resumed run takes the checkpoint's seed: with the step and epoch it is the whole random
  // state (the shuffle of each epoch and every dropout mask are drawn from counters).
  const bool checkpointing = !options.checkpointDir.empty();
  std::optional<Checkpoint> resumed;
  if (options.resume)
    resumed = findCheckpoint(group, plan, options.checkpointDir, train.size(), timeout);
  uint64_t seed = options.seed;
  if (resumed)
    seed = resumed->meta.seed;
  trainer.setSeed(seed);
  Batcher batcher(train, batch, BatchOrder::Shuffled, Remainder::Drop, seed);
  if (batcher.numBatches() == 0)
    throw Error(ErrorKind::Data, train.imagesPath() + ": holds " + std::to_string(train.size()) +
                                     " samples, fewer than one batch of " + std::to_string(batch));
  report.params = countWeights(plan);
  report.phases.load = secondsSince(start);

  if (!quiet) {
    int64_t steps = batcher.numBatches();
    if (options.maxSteps > 0 && options.maxSteps < steps)
      steps = options.maxSteps;
    out << "model " << (plan.model.empty() ? "(unnamed)" : plan.model) << ": "
        << withCommas(report.params) << " parameters, batch " << batch << ", " << classes
        << " classes\n";
    if (job.pushPull())
      out << "parameter servers: " << job.jobSize() - report.processes << " + "
          << report.processes << " workers ("
          << (plan.sync ? std::string("synchronous")
              : plan.staleness >= 0 ? "staleness " + std::to_string(plan.staleness)
                                    : std::string("asynchronous"))
          << "), " << batch / report.processes << " samples per worker and step; worker "
          << group.rank() << " is rank " << job.jobRank() << " of " << job.jobSize() << "\n";
    else if (report.replicas * report.processes > 1)
      out << "data parallel: " << report.processes << " process(es) x " << report.replicas
          << " replica(s), " << batch / (report.replicas * report.processes)
          << " samples each per step; " << group.launch().describe() << "\n";
    if (group.size() > 1 && !job.pushPull())
      out << "gradient sums: " << report.allreduceLayout
          << (report.allreduceLayout == "flat"
                  ? " (one allreduce over all " + std::to_string(group.size()) + " ranks)"
                  : ": within each host, then across one leader per host, then back")
          << "\n";
    out << "train " << withCommas(train.size()) << " samples: " << steps << " steps per epoch";
    if (int64_t dropped = train.size() - batcher.samplesPerEpoch())
      out << " (the last " << dropped
          << " samples of each shuffled epoch do not fill a batch and are skipped)";
    out << "\ntest " << withCommas(test.size()) << " samples\n";
    if (threads.leftCoresOut())
      out << "threads: " << threads.threads << " of this process's " << threads.allowed
          << " cores: " << threads.why() << " (--threads " << threads.allowed
          << " uses them all)\n";
    if (computeThreads > 0)
      out << "compute threads: " << computeThreads << " per process ("
          << (options.threadsFromCheckpoint ? std::string("the checkpoint's run's")
              : threads.how == "auto"      ? std::string("auto")
                                           : threads.how)
          << "; results depend on the count)\n";
    if (prefetch > 0)
      out << "input: a loader thread gathers " << prefetch << " batch" << (prefetch == 1 ? "" : "es")
          << " ahead of the steps\n";
    else if (exchanges && job.sharesBatches())
      out << "input: gathered by the compute threads before each step (shared batches: a "
             "worker learns its next rows a step ahead)\n";
    else
      out << "input: gathered by the compute threads before each step"
          << (options.prefetch < 0
                  ? " (they keep this process's " + std::to_string(cores) + " core" +
                        (cores == 1 ? "" : "s") + " busy; --prefetch N adds a loader thread)"
                  : std::string())
          << "\n";
    out << std::flush;
  }

  // Where training starts: the beginning, or the checkpoint's place.
  int64_t firstEpoch = 1, firstBatch = 0;
  PlateauState earlyStop;
  const LrSchedule &schedule = plan.lrSchedule;
  const bool evaluateEachEpoch = schedule.needsEvaluation() || options.earlyStop > 0;
  const TrainPosition *resumeAt = nullptr;
  start = Clock::now();
  if (resumed) {
    const CheckpointMeta &meta = resumed->meta;
    const TrainPosition &p = meta.position;
    loadCheckpoint(*program, *resumed);
    trainer.setStepsRun(p.step);
    trainer.plateau() = p.plateau;
    earlyStop = p.earlyStop;
    report.epochs = meta.epochs;
    firstEpoch = p.epochsDone + 1;
    firstBatch = p.samplesInEpoch / batch;
    if (p.stepsInEpoch > 0)
      resumeAt = &p;
    report.checkpoints.resumedFrom = resumed->source;
    report.checkpoints.resumedStep = p.step;
    if (!quiet) {
      out << "resuming from " << resumed->source << ": step " << p.step << ", " << p.epochsDone << " epoch"
          << (p.epochsDone == 1 ? "" : "s") << " finished";
      if (p.stepsInEpoch > 0)
        out << ", epoch " << firstEpoch << " at step " << p.stepsInEpoch;
      out << "\n";
      if (seed != options.seed && options.seedGiven)
        out << "note: the checkpoint was written with --seed " << seed << ", which the run "
            << "keeps (--seed " << options.seed << " is ignored)\n";
      if (meta.globalBatch != batch || meta.replicas != report.replicas ||
          meta.processes != report.processes)
        out << "note: the checkpoint was written by a plan of " << meta.processes
            << " process(es) x " << meta.replicas << " replica(s), global batch "
            << meta.globalBatch << "; this one is " << report.processes << " x "
            << report.replicas << ", global batch " << batch << "\n";
      if (meta.threads > 0 && report.threads > 0 && meta.threads != report.threads)
        out << "note: the checkpoint was written with " << meta.threads
            << " compute threads per process; this run has " << report.threads
            << ": the kernels' sums differ with the count, so the run goes on from the same "
               "parameters but not along the same path"
            << (options.threadsGiven ? "" : " (the newest checkpoint's count was taken)") << "\n";
      if (p.samplesInEpoch % batch != 0)
        out << "note: " << p.samplesInEpoch << " samples of epoch " << firstEpoch
            << " were done, not a whole number of batches of " << batch
            << ": the epoch goes on from batch " << firstBatch << ", and its samples "
            << firstBatch * batch << " to " << p.samplesInEpoch - 1 << " are seen again\n";
      if (firstEpoch > options.epochs)
        out << "the checkpoint has finished all " << options.epochs << " epoch"
            << (options.epochs == 1 ? "" : "s") << ": nothing to train\n";
      out << std::flush;
    }
    // The values are on the devices now: the file's bytes (a model's worth) need not stay for
    // the whole run, only its records.
    resumed->tensors.clear();
    std::string().swap(resumed->bytes);
  } else {
    if (options.resume && !quiet)
      out << "no checkpoint in " << options.checkpointDir << ": starting from the beginning\n"
          << std::flush;
    program->initParams(seed);
  }
  report.phases.init = secondsSince(start);

  // Checkpoints are written by rank 0 (the parameters are replicated) at boundaries every rank
  // agrees on; the others go on to the next step, whose collectives wait for rank 0.
  int64_t lastSaved = resumed ? resumed->meta.position.step : -1;
  bool stopSaved = false;
  std::optional<CheckpointPruner> pruner;
  if (checkpointing && printer)
    pruner.emplace(options.checkpointDir, options.checkpointKeep, plan, seed, train.size());
  auto save = [&](const TrainPosition &position) {
    if (position.step == lastSaved)
      return;
    lastSaved = position.step;
    if (!printer)
      return;
    CheckpointMeta meta;
    meta.model = plan.model;
    meta.seed = seed;
    meta.globalBatch = batch;
    meta.planHash = plan.fileHash;
    meta.replicas = report.replicas;
    meta.processes = report.processes;
    meta.threads = report.threads;
    meta.position = position;
    meta.position.plateau = trainer.plateau();
    meta.position.earlyStop = earlyStop;
    meta.epochs = report.epochs;
    const std::string path = options.checkpointDir + "/" + checkpointFileName(position.step);
    trace::Span span(trace::Category::Host, "checkpoint write", position.step);
    auto begin = Clock::now();
    const uint64_t bytes = writeCheckpoint(*program, meta, path);
    testEvents::note("checkpoint " + std::to_string(position.step));
    for (const std::string &warning : pruner->prune(path))
      std::cerr << "dprun: warning: " + warning + "\n" << std::flush;
    CheckpointReport &c = report.checkpoints;
    c.lastSeconds = secondsSince(begin);
    c.lastBytes = bytes;
    c.last = path;
    ++c.written;
    report.phases.checkpoint += c.lastSeconds;
    if (!quiet && !interactive) {
      char line[64];
      std::snprintf(line, sizeof(line), " (%s, %.2f s)\n", sizeText(bytes).c_str(),
                    c.lastSeconds);
      out << "checkpoint " << path << line << std::flush;
    }
  };
  if (checkpointing)
    trainer.setBoundaryHook(options.checkpointEvery,
                            [&](const TrainPosition &position, int signal) {
                              save(position);
                              if (signal)
                                stopSaved = true;
                            });

  start = Clock::now();
  double epochEvalSeconds = 0; // the evaluations after each epoch (a plateau, early stopping)
  // Parameter servers: worker 0 asks the servers for their figures at each epoch's end.
  // The first epoch counts from nothing (a worker may have started first), on the servers'
  // clocks from here.
  std::vector<ServerReport> serverFigures;
  if (exchanges && printer)
    for (const ServerReport &r : exchanges->ask(false)) {
      serverFigures.emplace_back();
      serverFigures.back().seconds = r.seconds;
    }
  try {
    for (int64_t epoch = firstEpoch; epoch <= options.epochs; ++epoch) {
      const bool first = epoch == firstEpoch;
      report.epochs.push_back(trainer.trainEpoch(batcher, epoch, options.epochs,
                                                 options.maxSteps, first ? resumeAt : nullptr,
                                                 first ? firstBatch : 0));
      // (The last epoch's, with the other workers' last steps, once they have finished.)
      if (exchanges && printer && epoch < options.epochs)
        serverEpoch(exchanges->ask(false), serverFigures, report.epochs.back(),
                    quiet ? nullptr : &out);
      // A plateau schedule and early stopping watch the test loss after every epoch.
      bool stopEarly = false;
      if (evaluateEachEpoch) {
        const auto evalStart = Clock::now();
        const EvalStats result = trainer.evaluate(test);
        epochEvalSeconds += secondsSince(evalStart);
        EpochStats &e = report.epochs.back();
        e.testLoss = result.loss;
        e.testAccuracy = result.accuracy;
        char line[160];
        std::snprintf(line, sizeof(line),
                      "epoch %lld/%lld  test loss %.4f  accuracy %.4f  learning rate x %.4g\n",
                      static_cast<long long>(epoch), static_cast<long long>(options.epochs),
                      result.loss, result.accuracy, e.lrScale);
        if (!quiet)
          out << line;
        if (schedule.needsEvaluation() &&
            plateauStep(schedule, trainer.plateau(), result.loss) &&
            !quiet)
          out << "the test loss has not improved for " << schedule.patience << " epoch"
              << (schedule.patience == 1 ? "" : "s") << ": learning rate x "
              << trainer.plateau().scale << " from now on\n";
        if (options.earlyStop > 0 && !earlyStop.record(result.loss, 0) &&
            earlyStop.badEpochs >= options.earlyStop && epoch < options.epochs) {
          stopEarly = true;
          report.earlyStoppedAfter = epoch;
          if (!quiet)
            out << "early stop: the test loss has not improved on " << earlyStop.best
                << " for " << earlyStop.badEpochs << " epochs\n";
        }
        out << std::flush;
      }
      const int stop = trainer.agreeOnStop();
      if (checkpointing) {
        const int64_t step = trainer.stepsRun();
        if (stop || stopEarly || options.checkpointEachEpoch || epoch == options.epochs ||
            (options.checkpointEvery > 0 && step % options.checkpointEvery == 0)) {
          TrainPosition end;
          end.step = step;
          end.epochsDone = epoch;
          save(end);
          stopSaved = stop != 0;
        }
      }
      if (stop)
        throw Error(signalErrorKind(stop), "interrupted by " + signalName(stop) +
                                               " at the end of epoch " + std::to_string(epoch));
      if (stopEarly)
        break;
    }
    for (const EpochStats &e : report.epochs)
      report.phases.inputWait += e.inputWaitSeconds;
    if (exchanges) {
      // This worker's last gradient is in: the servers may stop waiting for it. Worker 0 then
      // waits for the others and evaluates the servers' final parameters; the others are done.
      exchanges->finish(timeout);
      if (!printer)
        return report;
      if (!quiet && report.processes > 1)
        out << "waiting for the other workers to finish\n" << std::flush;
      const std::vector<ServerReport> finals = exchanges->ask(true);
      if (!report.epochs.empty())
        serverEpoch(finals, serverFigures, report.epochs.back(), quiet ? nullptr : &out);
      // A worker any server left out, after the most steps any of them saw.
      std::vector<int64_t> lostAfter(report.processes, -1);
      for (const ServerReport &r : finals)
        for (size_t w = 0; w < r.lostAfter.size() && w < lostAfter.size(); ++w)
          lostAfter[w] = std::max(lostAfter[w], r.lostAfter[w]);
      for (int w = 0; w < report.processes; ++w)
        if (lostAfter[w] >= 0)
          report.lostWorkers.push_back(
              {w, job.jobSize() - report.processes + w, lostAfter[w]});
    }
    // (A parameter-server job's training ends with its last worker's.)
    report.phases.train = secondsSince(start) - report.phases.checkpoint - epochEvalSeconds;
    start = Clock::now();
    report.test = trainer.evaluate(test);
    report.phases.evaluate = secondsSince(start) + epochEvalSeconds;
  } catch (const Error &e) {
    if (!isSignalStop(e.kind()))
      throw;
    // A signal: what the finished epochs measured is kept; with a checkpoint of the place it
    // stopped, SIGTERM and SIGUSR1 (a scheduler's notice) end with the "resubmit me" status.
    ErrorKind kind = e.kind();
    std::string message = e.what();
    if (stopSaved) {
      message += std::string("; ") +
                 (printer ? "checkpoint " + report.checkpoints.last : "the checkpoint") +
                 " holds step " + std::to_string(trainer.stepsRun()) +
                 ": continue with --resume";
      if (kind == ErrorKind::Terminated || kind == ErrorKind::UserSignal1)
        kind = ErrorKind::Preempted;
    }
    if (tracing) {
      // The ranks stopped at the same boundary: the merge can still run.
      try {
        writeTrace(group, options, traceZero, report.replicas, timeout, out, quiet);
      } catch (const Error &traceError) {
        std::cerr << std::string("dprun: warning: no timeline: ") + traceError.what() + "\n";
      }
    }
    if (printer && !options.metricsPath.empty()) {
      report.interrupted = signalName(pendingInterrupt());
      writeFileAtomically(options.metricsPath, metricsJson(report));
      message += "; the metrics of " + std::to_string(report.epochs.size()) + " finished epoch" +
                 (report.epochs.size() == 1 ? "" : "s") + " are in " + options.metricsPath;
    }
    throw Error(kind, message);
  }
  if (engine) {
    report.allreduceSeconds = engine->reduceSeconds();
    report.allreduceWaitSeconds = engine->waitSeconds();
  }

  if (printer) {
    char line[120];
    std::snprintf(line, sizeof(line), "test  loss %.4f  accuracy %.4f  (%s samples)\n",
                  report.test.loss, report.test.accuracy, withCommas(report.test.samples).c_str());
    out << line;
    if (!options.quiet)
      printPhaseTable(report.phases, out);
    if (!options.quiet && engine)
      out << "allreduce: " << std::fixed << std::setprecision(3) << report.allreduceSeconds
          << " s averaging buckets, " << report.allreduceWaitSeconds
          << " s of replica time waiting for them (the rest overlapped compute)\n"
          << std::defaultfloat;
    out << std::flush;
    if (!options.metricsPath.empty())
      writeFileAtomically(options.metricsPath, metricsJson(report));
    if (!options.paramsPath.empty())
      dumpParams(*program, options.paramsPath);
  }
  if (!report.lostWorkers.empty()) {
    // The run's results are out; the job ends as failed, with the workers it lost named
    // (and any of them still hung taken down with it).
    std::string names;
    for (const auto &l : report.lostWorkers)
      names += (names.empty() ? "" : ", ") + std::string("worker ") + std::to_string(l.worker) +
               " (rank " + std::to_string(l.rank) + ") after " + std::to_string(l.afterSteps) +
               " step(s)";
    throw Error(ErrorKind::Launch,
                "the servers left out " + names + ", silent past the " +
                    std::to_string(int64_t(timeout)) + " s timeout; the other workers trained "
                    "on, and the results above are of the parameters they reached");
  }
  if (tracing)
    writeTrace(group, options, traceZero, report.replicas, timeout, out, quiet);
  if (printer && !options.profilePath.empty()) {
    writeFileAtomically(options.profilePath,
                        profileJson(plan, group.size(),
                                    group.size() > 1 ? group.allreduceLayout() : "flat",
                                    report.threads));
    if (!quiet)
      out << "profile " << options.profilePath << " (device 0 of rank 0)\n" << std::flush;
  }
  return report;
}

} // namespace

std::string profileJson(const Plan &plan, int ranks, const std::string &layout,
                        int computeThreads) {
  std::vector<trace::SpanView> spans = trace::spansOf("device 0 compute");
  // Spans of one thread nest: by begin (an enclosing span first), each kernel and wait
  // follows the step that holds it.
  std::sort(spans.begin(), spans.end(), [](const auto &a, const auto &b) {
    return a.beginNs != b.beginNs ? a.beginNs < b.beginNs : a.endNs > b.endNs;
  });
  struct Stat {
    std::string kind;
    std::vector<double> us;
  };
  std::map<int64_t, Stat> kernels, waits;
  std::vector<double> stepUs;
  const trace::SpanView *step = nullptr;
  bool counted = false; // whether the current step is measured (not the first train step)
  int64_t trainSteps = 0;
  for (const auto &s : spans) {
    if (s.async)
      continue;
    if (s.category == trace::Category::Step) {
      const bool train = std::string(s.name) == "train step";
      step = train ? &s : nullptr;
      counted = train && trainSteps++ > 0;
      if (counted)
        stepUs.push_back(double(s.endNs - s.beginNs) / 1e3);
      continue;
    }
    if (!step || !counted || s.beginNs < step->beginNs || s.endNs > step->endNs)
      continue;
    if (s.category == trace::Category::Kernel) {
      Stat &k = kernels[s.arg];
      k.kind = s.name;
      k.us.push_back(double(s.endNs - s.beginNs) / 1e3);
    } else if (std::string(s.name) == "allreduce wait") {
      waits[s.arg].us.push_back(double(s.endNs - s.beginNs) / 1e3);
    }
  }
  auto mean = [](const std::vector<double> &v) {
    double sum = 0;
    for (double x : v)
      sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
  };
  auto median = [](std::vector<double> v) {
    if (v.empty())
      return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  auto number = [](double x) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", x);
    return std::string(text);
  };
  std::string json = "{\n  \"model\": " + jsonString(plan.model) +
                     ",\n  \"global_batch\": " + std::to_string(plan.batch) +
                     ",\n  \"replicas_per_process\": " + std::to_string(plan.devicesPerProcess) +
                     ",\n  \"processes\": " + std::to_string(ranks) +
                     ",\n  \"nodes\": " + std::to_string(plan.nodes) +
                     ",\n  \"allreduce_layout\": " + jsonString(layout) +
                     (computeThreads > 0
                          ? ",\n  \"compute_threads\": " + std::to_string(computeThreads)
                          : std::string()) +
                     ",\n  \"steps_measured\": " + std::to_string(stepUs.size()) +
                     ",\n  \"step_us\": {\"mean\": " + number(mean(stepUs)) +
                     ", \"median\": " + number(median(stepUs)) + "},\n  \"kernels\": [";
  bool first = true;
  for (const auto &[index, k] : kernels) {
    json += std::string(first ? "\n" : ",\n") + "    {\"index\": " + std::to_string(index) +
            ", \"kind\": " + jsonString(k.kind) + ", \"mean_us\": " + number(mean(k.us)) +
            ", \"median_us\": " + number(median(k.us)) + "}";
    first = false;
  }
  json += "\n  ],\n  \"buckets\": [";
  first = true;
  for (const CollectiveDesc &c : plan.collectives) {
    auto wait = waits.find(c.bucket);
    const double waited = wait == waits.end() ? 0.0 : mean(wait->second.us);
    json += std::string(first ? "\n" : ",\n") + "    {\"bucket\": " + std::to_string(c.bucket) +
            ", \"bytes\": " + std::to_string(c.elements * int64_t(dtypeSize(c.dtype))) +
            ", \"wait_mean_us\": " + number(waited) + "}";
    first = false;
  }
  return json + "\n  ]\n}\n";
}

std::string tracePathOfRank(const std::string &path, int rank) {
  const std::string suffix = ".json";
  const bool json = path.size() > suffix.size() &&
                    path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (json ? path.substr(0, path.size() - suffix.size()) : path) + ".rank" +
         std::to_string(rank) + suffix;
}

/// A parameter server's run: each bucket's updates as its gradients arrive, until every
/// worker has finished; then one line of what it did.
void serveWith(Job &job, const TrainOptions &options, std::ostream &out) {
  Program &program = job.program();
  ParameterServer &server = *job.server();
  const Plan &plan = program.plan();
  // The kernels of each bucket: between its receive_push and its reply_pull.
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const CollectiveDesc &c : plan.collectives) {
    size_t first = 0, last = 0;
    for (size_t k = 0; k < plan.train.kernels.size(); ++k) {
      const KernelDesc &kernel = plan.train.kernels[k];
      if (!isCollective(kernel.kind) || kernel.attrsAs<CollectiveAttrs>().bucket != c.bucket)
        continue;
      if (kernel.kind == KernelKind::ReceivePush)
        first = k + 1;
      else
        last = k;
    }
    ranges.push_back({first, last});
  }
  // The same draw as every worker's: value = f(seed, name), so the first answers change
  // nothing but what the first gradients did.
  program.initParams(options.seed);
  int64_t updates = 0;
  for (int position; (testEvents::beforeStep(updates + 1), position = server.next(updates)) >= 0;) {
    const auto begin = Clock::now();
    StepContext ctx;
    ctx.step = updates + 1; // Adam's bias correction counts this bucket's updates
    program.runKernels(ranges[position].first, ranges[position].second, ctx);
    server.updated(position, secondsSince(begin));
  }
  if (options.quiet)
    return;
  const ServerReport r = server.report();
  char line[320];
  std::snprintf(line, sizeof(line),
                "server %d: %lld updates of %zu bucket(s) from %lld gradients in %.2f s "
                "(%.0f updates/s, %.2f s applying them)",
                job.serverIndex(), static_cast<long long>(r.updates), ranges.size(),
                static_cast<long long>(r.gradients), r.seconds,
                r.seconds > 0 ? r.updates / r.seconds : 0.0, r.updateSeconds);
  std::string text = line;
  text += "; staleness of the applied gradients (updates behind: count):";
  for (size_t k = 0; k < r.staleness.size(); ++k)
    if (r.staleness[k])
      text += " " + std::to_string(k) + ": " + std::to_string(r.staleness[k]);
  if (r.pullsHeld) {
    std::snprintf(line, sizeof(line), "; %lld pull(s) held by the staleness bound for %.2f s",
                  static_cast<long long>(r.pullsHeld), r.heldSeconds);
    text += line;
  }
  out << text + "\n" << std::flush;
}

TrainReport runTraining(const std::string &planPath, const TrainOptions &options,
                        std::ostream &out) {
  if (options.epochs < 0)
    throw Error(ErrorKind::Usage, "--epochs must not be negative");
  if (!options.metricsPath.empty())
    checkWritable(options.metricsPath);
  if (!options.paramsPath.empty())
    checkWritable(options.paramsPath);
  if (!options.checkpointDir.empty())
    prepareCheckpointDir(options.checkpointDir);
  if (!options.tracePath.empty())
    checkWritable(options.tracePath);
  if (!options.profilePath.empty())
    checkWritable(options.profilePath);
  if (!options.tracePath.empty() || !options.profilePath.empty()) {
    trace::enable(kMaxTraceSpans);
    trace::nameThread("main");
  }

  auto start = Clock::now();
  installInterruptHandlers();
  JobOptions jobOptions;
  jobOptions.seed = options.seed;
  jobOptions.collectiveTimeout = options.collectiveTimeout;
  jobOptions.epochs = options.epochs;
  jobOptions.maxSteps = options.maxSteps;
  jobOptions.checkpointing = sharedOptions(options);
  jobOptions.allreduce = options.allreduce;
  jobOptions.threads = options.threads;
  // A resume computes with the thread count of the run it continues (the kernels' sums depend
  // on it), unless --threads or DPRUN_THREADS says otherwise.
  TrainOptions resumed = options;
  if (options.resume && !options.threadsGiven) {
    if (const int32_t recorded = peekCheckpointThreads(options.checkpointDir); recorded > 0) {
      jobOptions.threads = recorded;
      resumed.threadsFromCheckpoint = true;
    }
  }
  jobOptions.onWorkerLoss = options.onWorkerLoss;
  std::unique_ptr<Job> job = Job::launch(planPath, jobOptions);
  testEvents::init(job->jobRank());
  if (job->server()) {
    job->run([&] { serveWith(*job, options, out); });
    return TrainReport();
  }
  // Parameter-server workers do not meet after training: each writes its own timeline.
  TrainOptions run = resumed;
  if (job->pushPull())
    run.tracePerRank = true;
  try {
    return job->run([&] { return trainWith(*job, run, out, start); });
  } catch (Error &e) {
    if (!isSignalStop(e.kind()))
      throw;
    // Said before the job is taken down: a launcher that ends the job itself (mpirun passing
    // on a Ctrl-C) may not leave the time to finish that.
    out.flush();
    const std::string rank =
        job->jobSize() > 1 ? "[rank " + std::to_string(job->jobRank()) + "] " : "";
    // One write: the lines of other ranks must not cut into it.
    std::cerr << "dprun: " + rank + e.what() + "\n" << std::flush;
    throw Error(e.kind(), e.what()).setReported();
  }
}

} // namespace dp::rt
