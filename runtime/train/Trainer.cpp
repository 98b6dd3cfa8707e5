// The training loop and the run behind `dprun PLAN --data DIR`; see Trainer.h.
#include "runtime/train/Trainer.h"

#include "runtime/base/Error.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"
#include "runtime/train/Report.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace dp::rt {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

namespace {

/// The collective kernels' view of the collectives engine.
class EngineAdapter : public CollectiveEngine {
public:
  explicit EngineAdapter(Collectives &engine) : engine_(engine) {}
  void start(int bucket, int replica, float *data) override {
    engine_.start(bucket, replica, data);
  }
  void wait(int bucket, int replica) override { engine_.wait(bucket, replica); }

private:
  Collectives &engine_;
};

} // namespace

Trainer::Trainer(Program &program, const std::string &planName, std::ostream &out, bool interactive,
                 bool quiet, ProcessGroup *group, Collectives *engine)
    : program_(program), planName_(planName), out_(out), interactive_(interactive), quiet_(quiet),
      group_(group), batch_(program.plan().batch) {
  auto fail = [&](const std::string &problem) {
    throw Error(ErrorKind::Plan, planName_ + ": " + problem);
  };
  const int replicas = program.devices(), processes = program.processes();
  if (batch_ % (int64_t(replicas) * processes) != 0)
    fail("global batch " + std::to_string(batch_) + " is not a multiple of " +
         std::to_string(replicas) + " x " + std::to_string(processes) + " replicas");
  shardRows_ = batch_ / (int64_t(replicas) * processes);
  auto scalarOutput = [&](StepKind step, const char *name, bool required, int d) {
    int id = program.outputBuffer(step, name, d);
    const char *stepName = step == StepKind::Train ? "train" : "eval";
    if (id < 0) {
      if (required)
        fail(std::string("the ") + stepName + " step has no '" + name + "' output" +
             (replicas > 1 ? " on device " + std::to_string(d) : std::string()));
      return id;
    }
    const BufferDesc &b = program.buffer(id);
    if (b.dtype != DType::F32 || b.numel != 1)
      fail(std::string("the ") + stepName + " step's '" + name + "' output is " + b.text() +
           ", expected an f32 scalar");
    return id;
  };
  for (int d = 0; d < replicas; ++d) {
    Device dev;
    dev.image = program.inputBuffer("image", d);
    dev.label = program.inputBuffer("label", d);
    if (dev.image < 0 || dev.label < 0)
      fail(std::string("the plan has no '") + (dev.image < 0 ? "image" : "label") + "' input" +
           (replicas > 1 ? " on device " + std::to_string(d) : std::string()) +
           "; dprun feeds 'image' and 'label'");
    const BufferDesc &image = program.buffer(dev.image);
    const BufferDesc &label = program.buffer(dev.label);
    const int64_t imageElements = image.numel;
    if (image.dtype != DType::F32 || image.shape.size() < 2 || image.shape[0] != shardRows_ ||
        imageElements % shardRows_ != 0)
      fail("input 'image' is " + image.text() + ", expected f32[" + std::to_string(shardRows_) +
           ", ...] (batch " + std::to_string(batch_) +
           (shardRows_ != batch_ ? " split into " + std::to_string(replicas * processes) + " shards"
                                 : std::string()) +
           ")");
    if (label.dtype != DType::I32 || label.numel != shardRows_)
      fail("input 'label' is " + label.text() + ", expected i32[" +
           std::to_string(shardRows_) + "]");
    sampleElements_ = imageElements / shardRows_;
    dev.trainLoss = scalarOutput(StepKind::Train, "loss", true, d);
    dev.trainCorrect = scalarOutput(StepKind::Train, "correct", false, d);
    dev.evalLoss = scalarOutput(StepKind::Eval, "loss", true, d);
    dev.evalCorrect = scalarOutput(StepKind::Eval, "correct", true, d);
    devices_.push_back(dev);
  }
  const int ranks = group_ ? group_->size() : 1;
  if (ranks != processes)
    throw Error(ErrorKind::Launch, planName_ + " was compiled for " + std::to_string(processes) +
                                       " process(es) but runs in " + std::to_string(ranks));
  if (program.hasCollectives()) {
    if (!engine)
      throw Error(ErrorKind::Runtime, planName_ + ": the plan has collectives but no engine");
    adapter_ = std::make_unique<EngineAdapter>(*engine);
    program.attachCollectives(adapter_.get());
  }
  pool_ = std::make_unique<ReplicaPool>(replicas, [engine](const std::string &why) {
    if (engine)
      engine->abort(why);
  });
}

Trainer::~Trainer() { program_.attachCollectives(nullptr); }

int64_t Trainer::shardBegin(int r) const {
  const int rank = group_ ? group_->rank() : 0;
  return (int64_t(rank) * program_.devices() + r) * shardRows_;
}

int64_t Trainer::fillShard(const Batcher &batcher, int64_t batch, int r) {
  const Device &dev = devices_[r];
  return batcher.fillBatch(batch, shardBegin(r), shardBegin(r) + shardRows_,
                           static_cast<float *>(program_.bufferData(dev.image)),
                           static_cast<int32_t *>(program_.bufferData(dev.label)));
}

void Trainer::checkData(const Dataset &data) const {
  if (data.pixels() != sampleElements_)
    throw Error(ErrorKind::Data, data.imagesPath() + ": samples have " +
                                     std::to_string(data.height()) + "x" +
                                     std::to_string(data.width()) + "x" +
                                     std::to_string(data.channels()) + " = " +
                                     std::to_string(data.pixels()) + " values but " + planName_ +
                                     " takes " + std::to_string(sampleElements_) + " per sample");
}

ImageSize Trainer::imageSize() const {
  const BufferDesc &image = program_.buffer(devices_.front().image);
  if (image.shape.size() != 4)
    return {};
  return {image.shape[1], image.shape[2]};
}

float Trainer::readScalar(int buffer) {
  return *static_cast<const float *>(program_.bufferData(static_cast<uint32_t>(buffer)));
}

EpochStats Trainer::trainEpoch(Batcher &batcher, int64_t epoch, int64_t epochs, int64_t maxSteps) {
  auto start = Clock::now();
  batcher.setEpoch(epoch - 1);
  int64_t steps = batcher.numBatches();
  if (maxSteps > 0 && maxSteps < steps)
    steps = maxSteps;
  const int replicas = program_.devices();

  ProgressBar bar(out_, interactive_ && !quiet_,
                  "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs), steps);
  double lossSum = 0, correct = 0;
  for (int64_t b = 0; b < steps; ++b) {
    const int64_t stepNumber = ++step_;
    // Each replica gathers its own shard of the global batch, then runs its step.
    pool_->run([&](int r) {
      fillShard(batcher, b, r);
      StepContext ctx{shardRows_, shardRows_, stepNumber, r, seed_, shardBegin(r)};
      program_.run(StepKind::Train, ctx);
    });
    // Every shard is full, so the mean of the shard means is the mean over this process's
    // samples.
    double loss = 0;
    for (const Device &dev : devices_) {
      loss += readScalar(dev.trainLoss);
      if (dev.trainCorrect >= 0)
        correct += readScalar(dev.trainCorrect);
    }
    lossSum += loss / replicas;
    bar.update(b + 1, lossSum / static_cast<double>(b + 1));
  }
  bar.finish();

  EpochStats stats;
  stats.epoch = epoch;
  stats.steps = steps;
  stats.seconds = secondsSince(start);
  const double localSamples = double(steps) * shardRows_ * replicas;
  const double localRate = stats.seconds > 0 ? localSamples / stats.seconds : 0;
  if (group_ && group_->size() > 1) {
    double totals[2] = {lossSum, correct};
    group_->sumDoubles(totals, 2, timeout_);
    lossSum = totals[0] / group_->size();
    correct = totals[1];
    stats.rankSamplesPerSec = group_->gatherDoubles(localRate, timeout_);
  } else {
    stats.rankSamplesPerSec = {localRate};
  }
  stats.samples = steps * batch_;
  stats.loss = steps ? lossSum / static_cast<double>(steps) : std::nan("");
  const bool hasCorrect = devices_.front().trainCorrect >= 0;
  stats.trainAccuracy = hasCorrect && stats.samples ? correct / static_cast<double>(stats.samples)
                                                    : std::numeric_limits<double>::quiet_NaN();
  stats.samplesPerSec = stats.seconds > 0 ? stats.samples / stats.seconds : 0;
  if (!quiet_)
    out_ << epochLine(stats, epochs) << std::endl;
  return stats;
}

EvalStats Trainer::evaluate(const Dataset &data) {
  Batcher batcher(data, batch_, BatchOrder::Sequential, Remainder::Pad);
  const int replicas = program_.devices();
  ProgressBar bar(out_, interactive_ && !quiet_, "evaluate", batcher.numBatches());
  double lossSum = 0, correct = 0, samples = 0;
  std::vector<int64_t> valid(replicas, 0);
  for (int64_t b = 0; b < batcher.numBatches(); ++b) {
    pool_->run([&](int r) {
      valid[r] = fillShard(batcher, b, r);
      // A shard wholly past the data (the padded last batch) has nothing to evaluate; the
      // eval step has no collectives, so replicas need not run it together.
      if (valid[r] > 0)
        program_.run(StepKind::Eval,
                     StepContext{valid[r], shardRows_, step_ > 0 ? step_ : 1, r, seed_,
                                 shardBegin(r)});
    });
    for (int r = 0; r < replicas; ++r) {
      if (valid[r] == 0)
        continue;
      // The loss is a mean over the valid rows: weight it by them to average over samples.
      lossSum += static_cast<double>(readScalar(devices_[r].evalLoss)) * double(valid[r]);
      correct += readScalar(devices_[r].evalCorrect);
      samples += double(valid[r]);
    }
    bar.update(b + 1, samples ? lossSum / samples : 0);
  }
  bar.finish();
  if (group_ && group_->size() > 1) {
    double totals[3] = {lossSum, correct, samples};
    group_->sumDoubles(totals, 3, timeout_);
    lossSum = totals[0], correct = totals[1], samples = totals[2];
  }
  EvalStats stats;
  stats.samples = static_cast<int64_t>(samples);
  stats.loss = samples ? lossSum / samples : std::nan("");
  stats.accuracy = samples ? correct / samples : std::nan("");
  return stats;
}

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
    const char *data = static_cast<const char *>(program.bufferData(p.buffer));
    image.append(data, b.bytes());
  }
  writeFileAtomically(path, image);
}

namespace {

/// The job behind runTraining once the process group exists.
TrainReport trainWith(const std::string &planPath, const TrainOptions &options, std::ostream &out,
                      std::unique_ptr<Program> program, ProcessGroup &group,
                      Clock::time_point start) {
  TrainReport report;
  const Plan &plan = program->plan();
  report.replicas = program->devices();
  report.processes = program->processes();
  const double timeout = options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9;

  std::unique_ptr<Collectives> engine;
  if (program->hasCollectives()) {
    std::vector<BucketInfo> buckets;
    for (const CollectiveDesc &c : plan.collectives) {
      BucketInfo b;
      b.index = c.bucket;
      b.elements = c.elements;
      for (const std::string &t : c.tensors)
        b.tensors += (b.tensors.empty() ? "" : ", ") + t;
      b.loc = c.loc;
      buckets.push_back(b);
    }
    engine = std::make_unique<Collectives>(group, program->devices(), buckets,
                                           options.collectiveTimeout);
  }
  const bool printer = group.rank() == 0;
  const bool quiet = options.quiet || !printer;
  std::ostringstream discard;
  std::ostream &log = printer ? out : discard;
  const bool interactive = options.interactive && group.size() == 1 && !launchedByMpiLauncher();
  Trainer trainer(*program, planPath, log, interactive, quiet, &group,
                  engine.get());
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
  for (int64_t epoch = 1; epoch <= options.epochs; ++epoch)
    report.epochs.push_back(trainer.trainEpoch(batcher, epoch, options.epochs, options.maxSteps));
  report.phases.train = secondsSince(start);

  start = Clock::now();
  report.test = trainer.evaluate(test);
  report.phases.evaluate = secondsSince(start);
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
  std::unique_ptr<Program> program = Program::load(Plan::read(planPath));
  // MPI only when launched by an MPI launcher or needed; a one-process plan started directly
  // never touches it.
  const bool useMpi = program->processes() > 1 || launchedByMpiLauncher();
  std::unique_ptr<ProcessGroup> group = ProcessGroup::create(useMpi);
  // Every rank must run the same plan with the same seed before anything else is exchanged.
  // A difference is seen by every rank, so each reports it and exits on its own (no abort
  // that could kill the others before they print).
  Handshake mine;
  mine.planHash = program->plan().fileHash;
  mine.manifestHash = program->plan().manifestHash;
  mine.replicas = program->devices();
  mine.processes = program->processes();
  mine.seed = options.seed;
  mine.planPath = planPath;
  group->handshake(mine, options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9);
  if (group->size() == 1)
    return trainWith(planPath, options, out, std::move(program), *group, start);
  try {
    return trainWith(planPath, options, out, std::move(program), *group, start);
  } catch (const Error &e) {
    // One rank's failure ends the job: the others would wait for it in a collective.
    group->abortJob(e.what(), e.exitCode());
  } catch (const std::exception &e) {
    group->abortJob(e.what(), static_cast<int>(ErrorKind::Runtime));
  }
  std::abort(); // abortJob does not return
}

} // namespace dp::rt
