// The run behind `dprun PLAN --data DIR`; see Run.h.
#include "runtime/train/Run.h"

#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"
#include "runtime/train/Job.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"

#include <chrono>
#include <cstdio>
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
  const double timeout = options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9;
  const bool printer = job.printer();
  const bool quiet = options.quiet || !printer;
  std::ostringstream discard;
  std::ostream &log = printer ? out : discard;
  const bool interactive = options.interactive && group.size() == 1 && !launchedByMpiLauncher();
  Trainer trainer(*program, planPath, log, interactive, quiet, &group);
  trainer.setTimeout(timeout);
  trainer.setSeed(options.seed);
  const int64_t classes = numClasses(plan);
  if (classes < 1 || classes > 256)
    throw Error(ErrorKind::Plan, planPath + ": the model predicts " + std::to_string(classes) +
                                     " classes; byte labels allow 1 to 256");
  // CIFAR-10 images are resized once, at load, to an NHWC model's input size (as seed 002
  // trains ResNets at 128x128); IDX images are taken as they are.
  ImageSize resize;
  if (detectDataFormat(options.dataDir) == DataFormat::Cifar10)
    resize = trainer.imageSize();
  Dataset train = Dataset::loadSplit(options.dataDir, "train", static_cast<int>(classes), resize);
  Dataset test = Dataset::loadSplit(options.dataDir, "t10k", static_cast<int>(classes), resize);
  trainer.checkData(train);
  trainer.checkData(test);
  const int64_t batch = plan.batch;
  Batcher batcher(train, batch, BatchOrder::Shuffled, Remainder::Drop, options.seed);
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
    if (report.replicas * report.processes > 1)
      out << "data parallel: " << report.processes << " process(es) x " << report.replicas
          << " replica(s), " << batch / (report.replicas * report.processes)
          << " samples each per step; " << group.launch().describe() << "\n";
    out << "train " << withCommas(train.size()) << " samples: " << steps << " steps per epoch";
    if (int64_t dropped = train.size() - batcher.samplesPerEpoch())
      out << " (the last " << dropped
          << " samples of each shuffled epoch do not fill a batch and are skipped)";
    out << "\ntest " << withCommas(test.size()) << " samples\n" << std::flush;
  }

  start = Clock::now();
  program->initParams(options.seed);
  report.phases.init = secondsSince(start);

  start = Clock::now();
  try {
    for (int64_t epoch = 1; epoch <= options.epochs; ++epoch)
      report.epochs.push_back(
          trainer.trainEpoch(batcher, epoch, options.epochs, options.maxSteps));
    report.phases.train = secondsSince(start);
    start = Clock::now();
    report.test = trainer.evaluate(test);
    report.phases.evaluate = secondsSince(start);
  } catch (const Error &e) {
    if (e.kind() != ErrorKind::Interrupted && e.kind() != ErrorKind::Terminated)
      throw;
    // SIGINT or SIGTERM: what the finished epochs measured is kept, then dprun exits 130/143.
    std::string kept;
    if (printer && !options.metricsPath.empty()) {
      report.interrupted = signalName(pendingInterrupt());
      writeFileAtomically(options.metricsPath, metricsJson(report));
      kept = "; the metrics of " + std::to_string(report.epochs.size()) + " finished epoch" +
             (report.epochs.size() == 1 ? "" : "s") + " are in " + options.metricsPath;
    }
    throw Error(e.kind(), std::string(e.what()) + kept);
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
  return report;
}

} // namespace

TrainReport runTraining(const std::string &planPath, const TrainOptions &options,
                        std::ostream &out) {
  if (options.epochs < 0)
    throw Error(ErrorKind::Usage, "--epochs must not be negative");
  if (!options.metricsPath.empty())
    checkWritable(options.metricsPath);
  if (!options.paramsPath.empty())
    checkWritable(options.paramsPath);

  auto start = Clock::now();
  installInterruptHandlers();
  JobOptions jobOptions;
  jobOptions.seed = options.seed;
  jobOptions.collectiveTimeout = options.collectiveTimeout;
  jobOptions.epochs = options.epochs;
  jobOptions.maxSteps = options.maxSteps;
  std::unique_ptr<Job> job = Job::launch(planPath, jobOptions);
  return job->run([&] { return trainWith(*job, options, out, start); });
}

} // namespace dp::rt
