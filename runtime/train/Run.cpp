// The run behind `dprun PLAN --data DIR`; see Run.h.
#include "runtime/train/Run.h"

#include "runtime/base/EventFile.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/Json.h"
#include "runtime/base/TestEvents.h"
#include "runtime/base/Trace.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Job.h"
#include "runtime/train/Peak.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

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

namespace {

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
    if (i % (uint64_t(1) << 20) == 0)
      heartbeat::beat(); // work the other ranks' timeouts see
  }
  for (; i < total; ++i)
    mix(bytes[i]);
  if (data.targetWidth() > 0) {
    for (int64_t s = 0; s < data.size(); ++s)
      for (int64_t k = 0; k < data.targetWidth(); ++k) {
        uint32_t word;
        std::memcpy(&word, data.target(s) + k, 4);
        mix(word);
      }
  } else {
    for (int64_t s = 0; s < data.size(); ++s)
      mix(data.label(s));
  }
  return h;
}

/// Before the first step: every rank must read the same data. A rank with another training
/// set takes other steps per epoch (the others then wait for it in a collective until the
/// timeout); one with other samples trains other parameters. Throws Error(Launch) on every
/// rank, naming the ranks and what each reads.
void agreeOnData(ProcessGroup &group, const Dataset &train, const Dataset &test,
                 const Dataset *validation, double timeout) {
  if (group.size() <= 1)
    return;
  char digest[40];
  std::snprintf(digest, sizeof(digest), "%016llx",
                static_cast<unsigned long long>(fingerprint(train) ^ (fingerprint(test) * 3) ^
                                                (validation ? fingerprint(*validation) * 5 : 0)));
  const std::string mine =
      withCommas(train.size()) + " training" +
      (validation ? ", " + withCommas(validation->size()) + " validation," : std::string()) +
      " and " + withCommas(test.size()) + " test samples of " + std::to_string(train.height()) +
      "x" + std::to_string(train.width()) + "x" + std::to_string(train.channels()) +
      ", fingerprint " + digest + " (" + train.imagesPath() + ")";
  // A rank may still be reading its data: the first exchange waits longer (a timeout of 0,
  // none, stays none).
  const double wait = timeout > 0 ? std::max(timeout, 600.0) : 0.0;
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
  std::string early;
  auto add = [&](const std::string &option) { early += (early.empty() ? "" : " ") + option; };
  if (o.earlyStop > 0)
    add("--early-stop " + std::to_string(o.earlyStop));
  if (!o.tracePath.empty())
    add(o.tracePerRank ? "--trace --trace-per-rank" : "--trace");
  if (o.allreduce != "auto")
    add("--allreduce " + o.allreduce);
  if (o.reproducible)
    add("--reproducible");
  // A validation set adds evaluations, collectives of every rank.
  if (o.hasValidation())
    add(std::string("--validation-") + (o.validationSplit > 0 ? "split" : "data"));
  if (o.evalEvery > 0)
    add("--eval-every " + std::to_string(o.evalEvery));
  // What the ranks decide alike (the watched figure, the weights training ends with) and the
  // final evaluation's extra exchanges (the predictions gathered).
  if (o.hasValidation())
    add("--monitor " + o.monitor);
  if (o.restoreBest)
    add("--restore-best");
  // The state written when training ends is gathered from every rank (state sharded over the
  // processes).
  if (!o.statePath.empty())
    add("--save-state");
  if (o.topK > 0 || o.confusionMatrix || !o.predictionsPath.empty())
    add("--predictions");
  // The log's figures are summed over the ranks every N steps.
  if (!o.logPath.empty() || !o.tensorboardDir.empty())
    add("--log-every " + std::to_string(o.logEvery));
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

/// Batches a loader thread gathers ahead (--prefetch, or the policy when it is -1), and in
/// `cores` the cores this process may keep busy.
int choosePrefetch(Job &job, const TrainOptions &options, int &cores) {
  // A loader thread pays where a core is free for it; on cores the compute threads keep busy
  // it only takes turns with them (measured in docs/timeline.md).
  Program &program = job.program();
  int computeCores = 0;
  for (int d = 0; d < program.devices(); ++d)
    computeCores += program.device(d).hostCores();
  // Cores other processes keep busy are theirs: a loader thread would only take turns there.
  const ThreadChoice &threads = job.threads();
  cores = threads.leftCoresOut() ? threads.threads : allowedCores();
  // Shared batches: a worker learns its next rows one step ahead, so it gathers them itself.
  if (job.pushPull() && job.sharesBatches())
    return 0;
  return options.prefetch >= 0 ? options.prefetch : computeCores < cores ? 2 : 0;
}

/// The data of a run: both splits of --data, and the validation set (held out of the
/// training set, or the test split of --validation-data) when asked for.
struct RunData {
  Dataset train, test;
  std::optional<Dataset> validation;
};

/// The run's data, checked against the plan and compared across the ranks.
RunData loadData(Job &job, Trainer &trainer, const TrainOptions &options, double timeout) {
  const std::string &dir = options.dataDir;
  // 1 to 256, as Job::launch checked (checkRunnable).
  const int classes = static_cast<int>(numClasses(job.program().plan()));
  // A regression reads float targets instead of the labels.
  const int64_t targetWidth = trainer.targetWidth();
  // CIFAR-10 images are resized once, at load, to an NHWC model's input size (as seed 002
  // trains ResNets at 128x128); IDX images are taken as they are.
  ImageSize resize;
  if (detectDataFormat(dir) == DataFormat::Cifar10)
    resize = trainer.imageSize();
  RunData data{Dataset::loadSplit(dir, "train", classes, resize, targetWidth),
               Dataset::loadSplit(dir, "t10k", classes, resize, targetWidth), std::nullopt};
  if (options.validationSplit > 0) {
    // The last samples of the file, before any shuffle: the same rows on every rank, under
    // every seed and after a resume (as Keras's validation_split takes them).
    const int64_t n = data.train.size();
    const int64_t held = std::llround(options.validationSplit * double(n));
    const int64_t batch = job.program().plan().batch;
    if (held < 1 || n - held < batch)
      throw Error(ErrorKind::Usage,
                  "--validation-split " + withCommas(held) + " of " + data.train.imagesPath() +
                      "'s " + withCommas(n) + " samples leaves " +
                      (held < 1 ? "no validation sample"
                                : withCommas(n - held) + " to train on, fewer than a batch of " +
                                      std::to_string(batch)));
    char name[64];
    std::snprintf(name, sizeof(name), " (its last %lld samples)", static_cast<long long>(held));
    data.validation = data.train.takeLast(held, data.train.imagesPath() + name);
  } else if (!options.validationDir.empty()) {
    ImageSize size;
    if (detectDataFormat(options.validationDir) == DataFormat::Cifar10)
      size = trainer.imageSize();
    data.validation = Dataset::loadSplit(options.validationDir, "t10k", classes, size, targetWidth);
  }
  trainer.checkData(data.train);
  trainer.checkData(data.test);
  if (data.validation)
    trainer.checkData(*data.validation);
  agreeOnData(job.group(), data.train, data.test, data.validation ? &*data.validation : nullptr,
              timeout);
  return data;
}

/// The products' FLOPs, TFLOP/s and MFU of the `steps` train steps of this run.
void measureCompute(Job &job, const TrainOptions &options, int64_t steps, TrainReport &report) {
  const Plan &plan = job.program().plan();
  TrainReport::Compute &c = report.compute;
  c.stepFlops = plan.stepFlops(StepKind::Train);
  c.steps = steps;
  c.bf16 = plan.computesInBf16();
  if (report.phases.train > 0)
    c.tflops = c.stepFlops * double(steps) / report.phases.train / 1e12;
  if (options.peakTflops > 0) {
    c.peakTflops = options.peakTflops;
    c.peakSource = "--peak-tflops";
    return;
  }
  // The peak is one device's: a GPU plan's process drives R of them (the CPU's replicas share
  // the threads the peak was measured with).
  const bool gpu = plan.deviceKind != DeviceKind::Cpu;
  const std::string path = peakFilePath();
  if (auto peak = readPeak(path, peakKey(job.program().backend(), job.threads().effective(),
                                         gpu ? job.program().device(0).describe() : ""))) {
    c.peakTflops = peak->best(c.bf16) * (gpu ? plan.devicesPerProcess : 1);
    c.peakSource = path;
  }
}

/// The callbacks of the run, in their order (callbacks/Callbacks.h).
void addCallbacks(CallbackList &callbacks, RunState &state, Checkpointing *&checkpointing,
                  int64_t traceZero) {
  const TrainOptions &o = state.options;
  if (state.interactive && !state.quiet)
    callbacks.add(makeProgressBar(state.out, o.epochs));
  callbacks.add(makeConsole(state));
  if (!o.logPath.empty() || !o.tensorboardDir.empty())
    callbacks.add(makeTrainingLog(state));
  if (state.job.pushPull())
    callbacks.add(makeServerFigures(state));
  // A plateau schedule and early stopping watch the validation set after every epoch, or the
  // test set without one.
  const bool plateau = state.job.program().plan().lrSchedule.needsEvaluation();
  if (o.hasValidation() || plateau || o.earlyStop > 0)
    callbacks.add(makeEvaluations(state, callbacks));
  if (plateau)
    callbacks.add(makePlateau(state));
  if (o.earlyStop > 0)
    callbacks.add(makeEarlyStop(state));
  callbacks.add(makeSignals(state));
  if (!o.checkpointDir.empty())
    checkpointing = &callbacks.add(std::make_unique<Checkpointing>(state));
  if (!o.statePath.empty())
    callbacks.add(makeSaveState(state));
  if (o.restoreBest)
    callbacks.add(makeRestoreBest(state));
  // The timeline's merge is a collective: before the files rank 0 alone writes, so that a
  // failed write there leaves no rank waiting in it.
  if (!o.tracePath.empty())
    callbacks.add(std::make_unique<Timeline>(state, traceZero));
  if (!o.metricsPath.empty())
    callbacks.add(makeMetrics(state));
  if (!o.paramsPath.empty())
    callbacks.add(makeSaveParams(state));
  if (o.topK > 0 || o.confusionMatrix)
    callbacks.add(makeClassMetrics(state));
  if (!o.predictionsPath.empty())
    callbacks.add(makePredictionsFile(state));
  if (!o.exportPath.empty())
    callbacks.add(makeExportModel(state));
  if (!o.profilePath.empty())
    callbacks.add(makeProfile(state));
}

/// Parameter servers: the job ends as failed, with the workers the servers left out named
/// (and any of them still hung taken down with it), once the results are out.
void throwIfWorkersLost(const TrainReport &report, double timeout) {
  if (report.lostWorkers.empty())
    return;
  std::string names;
  for (const auto &l : report.lostWorkers)
    names += (names.empty() ? "" : ", ") + std::string("worker ") + std::to_string(l.worker) +
             " (rank " + std::to_string(l.rank) + ") after " + std::to_string(l.afterSteps) +
             " step(s)";
  throw Error(ErrorKind::Launch,
              "the servers left out " + names + ", silent past the " +
                  std::to_string(int64_t(timeout)) +
                  " s timeout; the other workers trained "
                  "on, and the results above are of the parameters they reached");
}

/// Trains and evaluates the plan of a launched job: the loop, with the callbacks around it.
TrainReport trainWith(Job &job, const TrainOptions &options, std::ostream &out,
                      Clock::time_point start) {
  TrainReport report;
  Program &program = job.program();
  ProcessGroup &group = job.group();
  report.replicas = program.devices();
  report.processes = program.processes();
  if (group.size() > 1 && !job.pushPull())
    report.allreduceLayout = group.allreduceLayout();
  report.threads = job.threads().effective();
  report.params = countWeights(program.plan());
  if (!options.exportPath.empty() && (!program.plan().exportSource || !options.exportModel))
    throw Error(ErrorKind::Usage, job.planPath() +
                                      " was not compiled from an imported model (dpc compile "
                                      "model.onnx): --export writes the model a plan came from");
  if (options.maxSteps > 0 && job.pushPull())
    throw Error(ErrorKind::Usage, "--max-steps: a parameter-server job's workers train "
                                  "different numbers of steps; limit its epochs with "
                                  "--steps-per-epoch N");
  const bool validation = options.hasValidation();
  if (validation && job.pushPull())
    throw Error(ErrorKind::Usage, "a parameter-server job takes no validation set yet "
                                  "(--validation-split, --validation-data): its workers do not "
                                  "meet to evaluate");
  const double timeout = options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9;
  const int64_t traceZero = options.tracePath.empty() ? 0 : Timeline::start(group, timeout);
  // A parameter-server worker trains its shards without meeting the other workers.
  PushPull *exchanges = job.pushPull();
  Trainer trainer(program, job.planPath(), exchanges ? nullptr : &group,
                  exchanges ? group.rank() : -1);
  trainer.setTimeout(timeout);
  std::ostringstream discard;
  const bool printer = job.printer();
  RunState state(options, job, trainer, report, printer ? out : discard);
  state.printer = printer;
  state.quiet = options.quiet || !printer;
  state.interactive = options.interactive && group.size() == 1 && !launchedByMpiLauncher();
  state.timeout = timeout;
  state.prefetch = choosePrefetch(job, options, state.cores);
  if (exchanges && job.sharesBatches())
    trainer.setUnitSource(
        [exchanges](int64_t epoch, int64_t units) { return exchanges->nextUnit(epoch, units); });
  trainer.setPrefetch(state.prefetch);
  CallbackList callbacks;
  Checkpointing *checkpointing = nullptr;
  addCallbacks(callbacks, state, checkpointing, traceZero);
  const Plan &plan = job.program().plan();
  if ((options.topK > 0 || options.confusionMatrix) && trainer.targetWidth() > 0)
    throw Error(ErrorKind::Usage, std::string(options.topK > 0 ? "--top-k" : "--confusion-matrix") +
                                      ": " + job.planPath() + " takes " + targetsText(plan) +
                                      ", which have no classes");
  if (validation && options.monitor == "val_accuracy" && trainer.targetWidth() > 0 &&
      !binaryTargets(plan))
    throw Error(ErrorKind::Usage, "--monitor val_accuracy: " + job.planPath() +
                                      " is a regression, which has no accuracy (watch val_loss)");
  RunData data = loadData(job, trainer, options, timeout);
  const Dataset &train = data.train, &test = data.test;
  state.train = &train;
  state.test = &test;
  state.validation = data.validation ? &*data.validation : nullptr;
  report.monitor = state.validation ? options.monitor
                   : (options.earlyStop > 0 || program.plan().lrSchedule.needsEvaluation())
                       ? "test_loss"
                       : "";
  state.seed = options.seed;
  if (checkpointing)
    checkpointing->find();
  trainer.setSeed(state.seed);
  trainer.setCallback(&callbacks);
  Batcher batcher(train, program.plan().batch, BatchOrder::Shuffled, Remainder::Drop, state.seed,
                  trainer.sampleForm());
  state.batcher = &batcher;
  if (batcher.numBatches() == 0)
    throw Error(ErrorKind::Data, train.imagesPath() + ": holds " + std::to_string(train.size()) +
                                     " samples, fewer than one batch of " +
                                     std::to_string(program.plan().batch));
  report.phases.load = secondsSince(start);

  start = Clock::now();
  callbacks.onTrainBegin();
  if (!state.resumed) {
    program.initParams(state.seed);
    if (!options.initParamsPath.empty())
      loadParams(program, options.initParamsPath);
  }
  report.phases.init = secondsSince(start);
  const int64_t stepsBefore = trainer.stepsRun();
  start = Clock::now();
  try {
    for (int64_t epoch = state.firstEpoch; epoch <= options.epochs; ++epoch) {
      const bool first = epoch == state.firstEpoch;
      const int64_t firstBatch = first ? state.firstBatch : 0;
      // --steps-per-epoch caps each epoch; --max-steps the run, whose last epoch may be cut
      // (the schedule still sees the epoch's length).
      int64_t stopAfter = 0;
      if (options.maxSteps > 0) {
        const int64_t left = options.maxSteps - trainer.stepsRun();
        if (left <= 0)
          break;
        stopAfter = firstBatch + left;
      }
      report.epochs.push_back(
          trainer.trainEpoch(batcher, epoch, options.epochs, options.stepsPerEpoch,
                             first ? state.resumeAt : nullptr, firstBatch, stopAfter));
      callbacks.onEpochEnd(report.epochs.back());
      if (state.signal)
        throw Error(signalErrorKind(state.signal), "interrupted by " + signalName(state.signal) +
                                                       " at the end of epoch " +
                                                       std::to_string(epoch));
      if (state.stopTraining)
        break;
    }
    for (const EpochStats &e : report.epochs)
      report.phases.inputWait += e.inputWaitSeconds;
    callbacks.onTrainEnd();
    // A parameter-server job's training ends with its last worker's; worker 0 evaluates.
    if (exchanges && !printer)
      return report;
    report.phases.train = secondsSince(start) - report.phases.checkpoint - state.epochEvalSeconds;
    start = Clock::now();
    report.test = trainer.evaluate(test, options.predictionsPath.empty() && options.topK == 0 &&
                                                 !options.confusionMatrix
                                             ? nullptr
                                             : &state.predictions);
    report.phases.evaluate = secondsSince(start) + state.epochEvalSeconds;
    Evaluation final;
    final.stats = report.test;
    final.step = trainer.stepsRun();
    final.final = true;
    callbacks.onEvalEnd(final);
  } catch (const Error &e) {
    if (!isSignalStop(e.kind()))
      throw;
    // A signal: what the finished epochs measured is kept, and the callbacks say what holds
    // the place it stopped at.
    Stop stop{e.kind(), e.what()};
    callbacks.onStop(stop);
    throw Error(stop.kind, stop.message);
  }
  if (Collectives *engine = job.collectives()) {
    report.allreduceSeconds = engine->reduceSeconds();
    report.allreduceWaitSeconds = engine->waitSeconds();
  }
  measureCompute(job, options, trainer.stepsRun() - stepsBefore, report);
  callbacks.onRunEnd();
  throwIfWorkersLost(report, timeout);
  return report;
}

} // namespace

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
  if (!options.logPath.empty())
    checkWritable(options.logPath);
  if (!options.tensorboardDir.empty())
    makeLogDirectory(options.tensorboardDir);
  if (!options.paramsPath.empty())
    checkWritable(options.paramsPath);
  if (!options.statePath.empty())
    checkWritable(options.statePath);
  if (!options.predictionsPath.empty())
    checkWritable(options.predictionsPath);
  if (!options.exportPath.empty())
    checkWritable(options.exportPath);
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
  jobOptions.epochs = options.predict ? 0 : options.epochs;
  jobOptions.stepsPerEpoch = options.stepsPerEpoch;
  jobOptions.maxSteps = options.maxSteps;
  jobOptions.sharedOptions = sharedOptions(options);
  jobOptions.checkpoints = !options.checkpointDir.empty() || !options.statePath.empty();
  jobOptions.earlyStop = options.earlyStop > 0;
  jobOptions.allreduce = options.allreduce;
  jobOptions.reproducible = options.reproducible;
  jobOptions.threads = options.threads;
  // A resume computes with the thread count of the run it continues (the kernels' sums depend
  // on it, unless --reproducible), unless --threads or DPRUN_THREADS says otherwise.
  TrainOptions resumed = options;
  if (options.resume && !options.threadsGiven && !options.reproducible) {
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
  if (run.predict)
    run.epochs = 0; // the final evaluation only
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
