// The training loop; see Trainer.h.
#include "runtime/train/Trainer.h"

#include "runtime/base/Bf16.h"
#include "runtime/base/Interrupt.h"

#include "runtime/base/Error.h"
#include "runtime/base/TestEvents.h"
#include "runtime/base/Trace.h"
#include "runtime/train/Callback.h"
#include "runtime/train/PlanCheck.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <ostream>

namespace dp::rt {

Trainer::Trainer(Program &program, const std::string &planName, ProcessGroup *group, int worker)
    : program_(program), planName_(planName), group_(group), worker_(worker),
      batch_(program.plan().batch) {
  // The same check --inspect and --check-gradients make (PlanCheck.h): past it, every
  // replica has its inputs and outputs with the shapes read below.
  checkTrainingInterface(program.plan(), planName_);
  const int replicas = program.devices(), processes = program.processes();
  microShards_ = program.plan().accumulation;
  shardRows_ = batch_ / (int64_t(replicas) * processes * microShards_);
  for (int d = 0; d < replicas; ++d) {
    ReplicaBuffers dev;
    dev.image = program.inputBuffer(InputRole::Samples, d);
    dev.label = program.inputBuffer(InputRole::Targets, d);
    sampleElements_ = program.buffer(dev.image).numel / shardRows_;
    // Pixels as scaled floats, or bytes as the token ids an embedding looks up (i32).
    sampleForm_ =
        program.buffer(dev.image).dtype == DType::I32 ? SampleForm::Integer : SampleForm::Scaled;
    tokenVocabulary_ = tokenVocabulary(program.plan());
    // A class label (i32) per row, or a regression's float targets.
    const BufferDesc &targets = program.buffer(dev.label);
    targetWidth_ = targets.dtype == DType::F32 ? targets.numel / shardRows_ : 0;
    targetBytes_ = static_cast<int64_t>(targets.bytes()) / shardRows_;
    dev.trainLoss = program.outputBuffer(StepKind::Train, OutputRole::Loss, d);
    dev.trainCorrect = program.outputBuffer(StepKind::Train, OutputRole::Correct, d);
    dev.evalLoss = program.outputBuffer(StepKind::Eval, OutputRole::Loss, d);
    dev.evalCorrect = program.outputBuffer(StepKind::Eval, OutputRole::Correct, d);
    dev.evalLogits = program.outputBuffer(StepKind::Eval, OutputRole::Logits, d);
    replicaBuffers_.push_back(dev);
  }
  const int ranks = group_ ? group_->size() : 1;
  if (worker_ >= 0 ? group_ || worker_ >= processes : ranks != processes)
    throw Error(ErrorKind::Launch,
                planName_ + " was compiled for " + std::to_string(processes) + " " +
                    (worker_ >= 0 ? "worker(s) but runs as worker " + std::to_string(worker_)
                                  : "process(es) but runs in " + std::to_string(ranks)));
  for (int d = 0; d < replicas; ++d) {
    Device &device = program.device(d);
    Slots slots;
    slots.scalars = device.allocateHost(size_t(4 * microShards_) * sizeof(float));
    slots.staging.resize(size_t(2 * microShards_));
    slots.logits.resize(size_t(2 * microShards_));
    if (!device.hostAccessible()) {
      const size_t imageBytes = program.buffer(replicaBuffers_[d].image).bytes();
      const size_t labelBytes = program.buffer(replicaBuffers_[d].label).bytes();
      for (DeviceMemory &staging : slots.staging)
        staging = device.allocateHost(imageBytes + labelBytes);
    }
    for (auto &event : slots.done)
      event = device.createEvent();
    slots_.push_back(std::move(slots));
  }
}

Trainer::~Trainer() {
  // Left by an error: replicas may wait for buckets of a step the others were never given.
  if (std::uncaught_exceptions() > 0)
    program_.abortCollectives("the training loop stopped on an error");
  // Nothing enqueued may outlive the batchers and slots it refers to.
  try {
    program_.synchronize();
  } catch (...) {
  }
}

int64_t Trainer::shardBegin(int r, int process) const {
  const int rank = process >= 0  ? process
                   : worker_ >= 0 ? worker_
                   : group_       ? group_->rank()
                                  : 0;
  return (int64_t(rank) * program_.devices() + r) * deviceRows();
}

int64_t Trainer::shardValidRows(const Batcher &batcher, int64_t batch, int r, int m) const {
  return std::clamp<int64_t>(batcher.validRows(batch) - shardBegin(r) - m * shardRows_, 0,
                             shardRows_);
}

void Trainer::setPrefetch(int ahead) {
  prefetch_.reset();
  prefetchMemory_.clear();
  if (ahead <= 0)
    return;
  // This process's rows of each global batch; its replicas' shards follow each other. The
  // ring holds the batches gathered ahead, and the two a replica may have in flight.
  const int64_t rows = deviceRows() * program_.devices();
  const size_t bytes = Prefetcher::slotBytes(rows, sampleElements_, targetBytes_);
  std::vector<void *> memory;
  for (int i = 0; i < ahead + 2; ++i) {
    prefetchMemory_.push_back(program_.device(0).allocateHost(bytes));
    memory.push_back(prefetchMemory_.back().data());
  }
  prefetch_ = std::make_unique<Prefetcher>(shardBegin(0), shardBegin(0) + rows, sampleElements_,
                                           std::move(memory), targetBytes_);
}

double Trainer::inputWaitSeconds() const {
  const double nanos = double(gatherNanos_.load(std::memory_order_relaxed));
  return ((prefetch_ ? prefetch_->waitSeconds() : 0.0) + nanos * 1e-9) / program_.devices();
}

Trainer::PassGuard Trainer::startPass(const Batcher &batcher, int64_t first, int64_t last) {
  if (!prefetch_)
    return PassGuard{nullptr};
  prefetch_->start(batcher, first, last);
  return PassGuard{prefetch_.get()};
}

void Trainer::enqueueStep(const Batcher &batcher, int64_t batch, int r, StepKind step,
                          const StepContext &ctx, int slot) {
  const ReplicaBuffers &dev = replicaBuffers_[r];
  Slots &slots = slots_[r];
  const int place = slot * int(microShards_) + int(ctx.microShard);
  Stream &stream = program_.stream(r);
  auto *image = static_cast<uint8_t *>(program_.bufferData(dev.image));
  auto *label = static_cast<uint8_t *>(program_.bufferData(dev.label));
  const int64_t begin = ctx.firstRow, end = begin + shardRows_;
  const size_t imageBytes = program_.buffer(dev.image).bytes();
  const size_t labelBytes = program_.buffer(dev.label).bytes();
  const bool hostAccessible = program_.device(r).hostAccessible();
  if (prefetch_) {
    // The replica's rows of the process's gathered batch (its micro-shard's).
    Prefetcher *prefetcher = prefetch_.get();
    const int64_t row = (int64_t(r) * microShards_ + ctx.microShard) * shardRows_,
                  elements = sampleElements_,
                  targetBytes = targetBytes_;
    if (hostAccessible) {
      // Taken on the device's stream: its compute waits only when the loader is behind.
      stream.host([=] {
        const Prefetcher::Batch in = prefetcher->acquire(batch);
        std::memcpy(image, in.images + row * elements, imageBytes);
        std::memcpy(label, in.targets + row * targetBytes, labelBytes);
      });
    } else {
      // Copied from the slot (host memory of the device's kind); the slot is released after
      // the step's results were read, so after the copy.
      const Prefetcher::Batch in = prefetcher->acquire(batch);
      stream.copy(image, in.images + row * elements, imageBytes);
      stream.copy(label, in.targets + row * targetBytes, labelBytes);
    }
  } else if (hostAccessible) {
    // Gathered on the device's own stream, in order after the step before.
    std::atomic<int64_t> *spent = &gatherNanos_;
    stream.host([&batcher, batch, begin, end, image, label, spent] {
      trace::Span span(trace::Category::Input, "gather batch", batch);
      const int64_t start = trace::now();
      batcher.fillBatch(batch, begin, end, image, label);
      spent->fetch_add(trace::now() - start, std::memory_order_relaxed);
    });
  } else {
    // Gathered here while the device runs the step before; the slot's previous copy finished
    // before the host read the slot's results.
    auto *staged = static_cast<uint8_t *>(slots.staging[place].data());
    const int64_t start = trace::now();
    batcher.fillBatch(batch, begin, end, staged, staged + imageBytes);
    gatherNanos_.fetch_add(trace::now() - start, std::memory_order_relaxed);
    stream.copy(image, staged, imageBytes);
    stream.copy(label, staged + imageBytes, labelBytes);
  }
  program_.enqueue(step, ctx);
  const bool train = step == StepKind::Train;
  auto *scalars = static_cast<float *>(slots.scalars.data()) + 2 * place;
  stream.copy(scalars, program_.bufferData(train ? dev.trainLoss : dev.evalLoss), sizeof(float));
  const int correct = train ? dev.trainCorrect : dev.evalCorrect;
  if (correct >= 0)
    stream.copy(scalars + 1, program_.bufferData(correct), sizeof(float));
  else
    scalars[1] = 0;
  if (!train && keepLogits_)
    stream.copy(slots.logits[place].data(), program_.bufferData(dev.evalLogits),
                program_.buffer(dev.evalLogits).bytes());
  stream.record(*slots.done[slot]);
}

void Trainer::readLogits(int r, int slot, int m, int64_t rows, float *out) const {
  const BufferDesc &b = program_.buffer(replicaBuffers_[r].evalLogits);
  const int64_t n = rows * (b.numel / shardRows_);
  const void *from = slots_[r].logits[size_t(slot * microShards_ + m)].data();
  if (b.dtype == DType::BF16) {
    const auto *in = static_cast<const uint16_t *>(from);
    for (int64_t i = 0; i < n; ++i)
      out[i] = fromBf16(in[i]);
  } else {
    std::memcpy(out, from, size_t(n) * sizeof(float));
  }
}

std::pair<float, float> Trainer::collect(int r, int slot, int m) {
  slots_[r].done[slot]->synchronize();
  const auto *scalars =
      static_cast<const float *>(slots_[r].scalars.data()) + 2 * (slot * microShards_ + m);
  return {scalars[0], scalars[1]};
}

void Trainer::checkFeeds(const Dataset &data, SampleForm form) const {
  // What the batches are gathered into is sized by the plan: a sample of another size, or
  // targets of another kind, would be written past it.
  if (data.pixels() != sampleElements_ || data.targetBytes() != targetBytes_ ||
      data.targetWidth() != targetWidth_ || form != sampleForm_)
    throw Error(ErrorKind::Runtime,
                "the data set " + data.imagesPath() + " (" + std::to_string(data.pixels()) +
                    " values and " + std::to_string(data.targetBytes()) +
                    " bytes of targets per sample) is not what " + planName_ + " feeds (" +
                    std::to_string(sampleElements_) + " values and " +
                    std::to_string(targetBytes_) + " bytes): check it with checkData first");
}

void Trainer::checkData(const Dataset &data) const {
  // Token ids must pick a row of every table an embedding looks them up in.
  if (sampleForm_ == SampleForm::Integer && tokenVocabulary_ > 0 && tokenVocabulary_ < 256) {
    const int64_t total = data.size() * data.pixels();
    const uint8_t *bytes = data.size() > 0 ? data.image(0) : nullptr;
    for (int64_t i = 0; i < total; ++i)
      if (bytes[i] >= tokenVocabulary_)
        throw Error(ErrorKind::Data, data.imagesPath() + ": value " + std::to_string(bytes[i]) +
                                         " of sample " + std::to_string(i / data.pixels()) +
                                         " is a token id past " + planName_ + "'s vocabulary of " +
                                         std::to_string(tokenVocabulary_) +
                                         " (its embedding's rows)");
  }
  if (data.targetWidth() != targetWidth_)
    throw Error(ErrorKind::Data,
                data.labelsPath() + ": " +
                    (data.targetWidth() > 0
                         ? std::to_string(data.targetWidth()) + " float targets per sample"
                         : std::string("class labels")) +
                    " but " + planName_ + " takes " +
                    (targetWidth_ > 0
                         ? std::to_string(targetWidth_) + " float targets per sample (a regression)"
                         : std::string("class labels")));
  if (data.pixels() != sampleElements_)
    throw Error(ErrorKind::Data, data.imagesPath() + ": samples have " +
                                     std::to_string(data.height()) + "x" +
                                     std::to_string(data.width()) + "x" +
                                     std::to_string(data.channels()) + " = " +
                                     std::to_string(data.pixels()) + " values but " + planName_ +
                                     " takes " + std::to_string(sampleElements_) + " per sample");
}

ImageSize Trainer::imageSize() const {
  const BufferDesc &image = program_.buffer(replicaBuffers_.front().image);
  // Token ids are never resized: interpolating them would make ids the data does not hold.
  if (image.shape.size() != 4 || sampleForm_ == SampleForm::Integer)
    return {};
  return {image.shape[1], image.shape[2]};
}

double Trainer::lrScaleAt(double epochsDone) const {
  return dp::rt::lrScaleAt(program_.plan().lrSchedule, epochsDone, plateau_.scale);
}

int Trainer::agreeOnStop(int64_t afterStep, float *stepLoss) {
  const int mine = pendingInterrupt();
  if (!group_ || group_->size() == 1)
    return mine;
  double values[4] = {mine == SIGTERM ? 1.0 : 0.0, mine == SIGUSR1 ? 1.0 : 0.0,
                      mine == SIGINT ? 1.0 : 0.0, stepLoss ? *stepLoss : 0.0};
  group_->sumDoubles(values, stepLoss ? 4 : 3, timeout_,
                     "the ranks' agreement on stopping after step " +
                         std::to_string(afterStep < 0 ? step_ : afterStep));
  if (stepLoss)
    *stepLoss = static_cast<float>(values[3] / group_->size());
  const int agreed =
      values[0] > 0 ? SIGTERM : values[1] > 0 ? SIGUSR1 : values[2] > 0 ? SIGINT : 0;
  if (agreed)
    raiseInterrupt(agreed);
  return agreed;
}

/// One epoch's run: its place, and its running figures on this process.
struct Trainer::Epoch {
  Batcher *batcher = nullptr;
  int64_t epoch = 0, steps = 0, first = 0;
  Clock::time_point start;
  double inputWaitBefore = 0, priorSeconds = 0;
  /// The figures of the steps read so far (on rank 0 with those before a resume).
  double lossSum = 0, correct = 0;
  std::vector<float> stepLosses;
  int64_t collected = 0; // steps [first, collected) have been read
  int64_t trained = 0;   // the steps the epoch's figures cover
  double lastScale = 1;  // the schedule's factor at the latest step
  int64_t stepsBefore = 0; // the run's steps before the epoch's first (step_ then)
  /// The epoch's length as the schedule sees it (steps: where it stops, maybe before).
  int64_t length = 0;
};

EpochStats Trainer::trainEpoch(Batcher &batcher, int64_t epoch, int64_t epochs, int64_t maxSteps,
                               const TrainPosition *resume, int64_t firstBatch, int64_t stopAfter) {
  trace::Span span(trace::Category::Host, "epoch", epoch);
  testEvents::note("epoch " + std::to_string(epoch));
  checkFeeds(batcher.data(), batcher.sampleForm());
  Epoch e;
  e.batcher = &batcher;
  e.epoch = epoch;
  e.start = Clock::now();
  batcher.setEpoch(epoch - 1);
  e.steps = batcher.numBatches();
  if (maxSteps > 0 && maxSteps < e.steps)
    e.steps = maxSteps;
  // The schedule follows the epoch's length; a run that ends in it stops before.
  e.length = e.steps;
  if (stopAfter > 0 && stopAfter < e.steps)
    e.steps = stopAfter;
  e.first = std::clamp<int64_t>(firstBatch, 0, e.steps);
  e.stepsBefore = step_;
  e.collected = e.first;
  e.trained = e.steps;
  e.inputWaitBefore = inputWaitSeconds();
  // The figures of the steps run before a resume count on rank 0, once.
  if (resume) {
    e.priorSeconds = resume->epochSeconds;
    if (!group_ || group_->rank() == 0) {
      e.lossSum = resume->epochLossSum * (group_ ? group_->size() : 1);
      e.correct = resume->epochCorrect;
      e.stepLosses = resume->epochStepLosses;
    }
  }
  e.lastScale =
      lrScaleAt(double(epoch - 1) + double(e.first) / double(std::max<int64_t>(e.length, 1)));
  const PassGuard pass = startPass(batcher, e.first, e.steps);
  if (callback_)
    callback_->onEpochBegin(epoch, e.steps);
  if (unitSource_)
    trainSharedUnits(e, batcher);
  else
    trainBatches(e, batcher);
  return finishEpoch(e);
}

void Trainer::collectTrain(Epoch &e, int64_t b) {
  // Every shard (and micro-shard) is full, so the mean of their means is the mean over this
  // process's samples.
  const int replicas = program_.devices();
  const double shards = double(replicas) * double(microShards_);
  double loss = 0, correct = 0;
  for (int r = 0; r < replicas; ++r)
    for (int m = 0; m < microShards_; ++m) {
      const auto [shardLoss, shardCorrect] = collect(r, b % 2, m);
      loss += shardLoss;
      correct += shardCorrect;
    }
  e.correct += correct;
  endStep(b);
  e.lossSum += loss / shards;
  e.stepLosses.push_back(static_cast<float>(loss / shards));
  if (callback_) {
    StepEnd end{e.epoch, b + 1, e.steps, loss / shards, e.lossSum / static_cast<double>(b + 1)};
    end.step = e.stepsBefore + (b - e.first) + 1;
    end.samples = deviceRows() * replicas;
    end.correct = replicaBuffers_.front().trainCorrect >= 0
                      ? correct
                      : std::numeric_limits<double>::quiet_NaN();
    // The collected step's factor (the step enqueued after it may have another).
    end.lrScale =
        lrScaleAt(double(e.epoch - 1) + double(b) / double(std::max<int64_t>(e.length, 1)));
    callback_->onStepEnd(end);
  }
}

void Trainer::enqueueTrain(Epoch &e, int64_t b, int slot, int process) {
  const int64_t stepNumber = ++step_;
  e.lastScale = lrScaleAt(double(e.epoch - 1) + double(b) / double(e.length));
  // Micro-shard by micro-shard (gradient accumulation), each on every replica: the last runs
  // the step's final kernels, its allreduces and updates.
  for (int m = 0; m < microShards_; ++m)
    for (int r = 0; r < program_.devices(); ++r)
      enqueueStep(*e.batcher, b, r, StepKind::Train,
                  StepContext{shardRows_, shardRows_, stepNumber, r, seed_,
                              shardBegin(r, process) + m * shardRows_, e.lastScale, m},
                  slot);
}

TrainPosition Trainer::position(Epoch &e, int64_t b) {
  // The figures so far, over every rank (a collective: every rank is at the same boundary).
  const int ranks = group_ ? group_->size() : 1;
  TrainPosition p;
  p.step = step_;
  p.epochsDone = e.epoch - 1;
  p.stepsInEpoch = b;
  p.samplesInEpoch = b * batch_;
  double totals[2] = {e.lossSum, e.correct};
  if (ranks > 1)
    group_->sumDoubles(totals, 2, timeout_);
  p.epochLossSum = totals[0] / ranks;
  p.epochCorrect = totals[1];
  p.epochSeconds = e.priorSeconds + secondsSince(e.start);
  p.epochStepLosses = e.stepLosses;
  return p;
}

void Trainer::trainBatches(Epoch &e, Batcher &batcher) {
  // Step b is enqueued on every replica before the results of step b - 1 are read, so each
  // device goes from one step to the next without waiting for the host. With several
  // processes the ranks vote after each step on whether any of them received a signal, while
  // the next step runs; every rank then stops at the same boundary. A single process looks at
  // its own signal before each step.
  const bool vote = group_ && group_->size() > 1;
  int stop = 0;
  for (int64_t b = e.first; b < e.steps; ++b) {
    testEvents::beforeStep(step_ + 1);
    if (!vote)
      stop = pendingInterrupt();
    const bool due = b > e.first && callback_ && callback_->wantsBoundary(step_);
    if (stop || due) {
      // The steps already enqueued finish (their collectives are under way on every rank).
      if (e.collected < b) {
        collectTrain(e, e.collected++);
        if (vote)
          stop = agreeOnStop(step_, &e.stepLosses.back());
      }
      program_.synchronize();
      // (The place is summed over the ranks, a collective: only for a callback that takes it.)
      if (callback_ && (due || callback_->keepsPlace())) {
        // An evaluation there (--eval-every) takes the loader for its pass, and hands it back
        // to go on from batch b.
        pausedPass_ = PausedPass{&batcher, b, e.steps};
        struct Clear {
          PausedPass &paused;
          ~Clear() { paused = PausedPass{}; }
        } clear{pausedPass_};
        callback_->onBoundary(position(e, b), stop);
      }
      if (stop)
        throw Error(signalErrorKind(stop),
                    "interrupted by " + signalName(stop) + " in epoch " + std::to_string(e.epoch) +
                        " after step " + std::to_string(b) + " of " + std::to_string(e.steps));
    }
    enqueueTrain(e, b, static_cast<int>(b % 2), -1);
    if (e.collected < b) {
      collectTrain(e, e.collected++);
      // The step's loss over every rank rides along.
      if (vote)
        stop = agreeOnStop(step_ - 1, &e.stepLosses.back());
    }
  }
  if (e.collected < e.steps)
    collectTrain(e, e.collected++);
}

void Trainer::trainSharedUnits(Epoch &e, Batcher &batcher) {
  // Shared batches: the shards come one at a time from the first server's counter, while they
  // last, so that a faster worker trains more of them. The step before is read after the next
  // one is enqueued, as in trainBatches.
  const int processes = program_.processes();
  const int64_t units = e.steps * processes;
  e.trained = 0;
  e.collected = 0;
  for (;;) {
    testEvents::beforeStep(step_ + 1);
    if (const int signal = pendingInterrupt()) {
      if (e.collected < e.trained)
        collectTrain(e, e.collected++);
      throw Error(signalErrorKind(signal), "interrupted by " + signalName(signal) + " in epoch " +
                                               std::to_string(e.epoch) + " after " +
                                               std::to_string(e.trained) + " step(s)");
    }
    const int64_t unit = unitSource_(e.epoch, units);
    if (unit < 0)
      break;
    enqueueTrain(e, unit / processes, static_cast<int>(e.trained % 2),
                 static_cast<int>(unit % processes));
    if (e.collected < e.trained)
      collectTrain(e, e.collected++);
    ++e.trained;
  }
  if (e.collected < e.trained)
    collectTrain(e, e.collected++);
}

EpochStats Trainer::finishEpoch(Epoch &e) {
  const int replicas = program_.devices();
  const int ranks = group_ ? group_->size() : 1;
  EpochStats stats;
  stats.epoch = e.epoch;
  stats.steps = e.steps;
  const double localSeconds = secondsSince(e.start);
  stats.seconds = e.priorSeconds + localSeconds;
  const double localSamples = double(e.trained - e.first) * deviceRows() * replicas;
  const double localRate = localSeconds > 0 ? localSamples / localSeconds : 0;
  stats.inputWaitSeconds = inputWaitSeconds() - e.inputWaitBefore;
  if (ranks > 1) {
    // With the last step's loss, which no vote carried.
    const bool last = e.collected > e.first;
    double totals[4] = {e.lossSum, e.correct, last ? e.stepLosses.back() : 0.0,
                        stats.inputWaitSeconds};
    group_->sumDoubles(totals, 4, timeout_);
    stats.inputWaitSeconds = totals[3] / ranks;
    e.lossSum = totals[0] / ranks;
    e.correct = totals[1];
    if (last)
      e.stepLosses.back() = static_cast<float>(totals[2] / ranks);
    stats.rankSamplesPerSec = group_->gatherDoubles(localRate, timeout_);
  } else {
    stats.rankSamplesPerSec = {localRate};
  }
  stats.samples = e.steps * batch_;
  stats.loss = e.trained ? e.lossSum / static_cast<double>(e.trained) : std::nan("");
  const bool hasCorrect = replicaBuffers_.front().trainCorrect >= 0;
  // A parameter-server worker counts its own shards.
  const int64_t counted = worker_ >= 0 ? e.trained * deviceRows() * replicas : stats.samples;
  stats.trainAccuracy = hasCorrect && counted ? e.correct / static_cast<double>(counted)
                                              : std::numeric_limits<double>::quiet_NaN();
  stats.regression = targetWidth_ > 0;
  stats.samplesPerSec = stats.seconds > 0 ? stats.samples / stats.seconds : 0;
  stats.stepLosses = std::move(e.stepLosses);
  stats.lrScale = e.lastScale;
  return stats;
}

EvalStats Trainer::evaluate(const Dataset &data, Predictions *predictions, bool stopForSignal) {
  trace::Span span(trace::Category::Host, "evaluate");
  const int replicas = program_.devices();
  // A parameter-server worker (worker 0: its shards start each batch) evaluates alone, in
  // batches of its own rows.
  if (worker_ > 0)
    throw Error(ErrorKind::Runtime, "parameter-server worker " + std::to_string(worker_) +
                                        " was asked to evaluate: worker 0 does");
  checkFeeds(data, sampleForm_);
  Batcher batcher(data, worker_ == 0 ? shardRows_ * replicas : batch_, BatchOrder::Sequential,
                  Remainder::Pad, 0, sampleForm_);
  int64_t classes = 0;
  if (predictions) {
    if (replicaBuffers_.front().evalLogits < 0)
      throw Error(ErrorKind::Plan, planName_ + " has no predictions output (compiled by an "
                                               "older dpc, or a model that scores samples "
                                               "it combined): recompile it to predict");
    classes = program_.buffer(replicaBuffers_.front().evalLogits).numel / shardRows_;
    // A bound on what every rank holds: the set's logits, as f32 and (to sum them over the
    // ranks) as f64.
    if (data.size() * classes > (int64_t(1) << 28))
      throw Error(ErrorKind::Data, data.imagesPath() + ": " + std::to_string(data.size()) +
                                       " samples x " + std::to_string(classes) +
                                       " values each are too many predictions to keep (2^28)");
    predictions->classes = classes;
    predictions->logits.assign(size_t(data.size() * classes), 0.0f);
    for (int r = 0; r < replicas; ++r)
      for (DeviceMemory &slot : slots_[r].logits)
        if (!slot.data())
          slot = program_.device(r).allocateHost(
              program_.buffer(replicaBuffers_[r].evalLogits).numel * sizeof(float));
  }
  keepLogits_ = predictions != nullptr;
  // Within an epoch (at a boundary), the loader goes back to the epoch's batches once this
  // pass has ended (declared before the pass: destroyed after it).
  struct GoOn {
    Trainer &t;
    ~GoOn() {
      if (t.prefetch_ && t.pausedPass_.batcher)
        t.prefetch_->start(*t.pausedPass_.batcher, t.pausedPass_.next, t.pausedPass_.last);
    }
  } goOn{*this};
  struct Reset {
    bool &flag;
    ~Reset() { flag = false; }
  } reset{keepLogits_};
  if (callback_)
    callback_->onEvalBegin(batcher.numBatches());
  double lossSum = 0, correct = 0, samples = 0;
  std::vector<float> rows(predictions ? size_t(shardRows_ * classes) : 0); // a shard's logits
  auto collectStep = [&](int64_t b) {
    for (int r = 0; r < replicas; ++r)
      for (int m = 0; m < microShards_; ++m) {
        const int64_t valid = shardValidRows(batcher, b, r, m);
        if (valid == 0)
          continue;
        // The loss is a mean over the valid rows: weight it by them to average over samples.
        const auto [shardLoss, shardCorrect] = collect(r, b % 2, m);
        lossSum += static_cast<double>(shardLoss) * double(valid);
        correct += shardCorrect;
        samples += double(valid);
        if (predictions) {
          // Sequential batches: row i of the micro-shard is sample order()[b * batch + its
          // first row + i].
          readLogits(r, b % 2, m, valid, rows.data());
          const int64_t first = b * batcher.batchSize() + shardBegin(r) + m * shardRows_;
          for (int64_t i = 0; i < valid; ++i)
            std::memcpy(&predictions->logits[size_t(batcher.order()[first + i] * classes)],
                        &rows[size_t(i * classes)], size_t(classes) * sizeof(float));
        }
      }
    endStep(b);
    if (callback_)
      callback_->onEvalStepEnd(b + 1, samples ? lossSum / samples : 0);
  };
  const int64_t batches = batcher.numBatches();
  const PassGuard pass = startPass(batcher, 0, batches);
  // A process alone stops for a signal here; the ranks of a job finish the evaluation (its
  // totals are a collective) and stop after it.
  const bool alone = !group_ || group_->size() == 1;
  for (int64_t b = 0; b < batches; ++b) {
    if (alone && stopForSignal)
      throwIfInterrupted("while evaluating");
    for (int m = 0; m < microShards_; ++m)
      for (int r = 0; r < replicas; ++r) {
        // A shard wholly past the data (the padded last batch) has nothing to evaluate; the
        // eval step has no collectives, so replicas need not run it together.
        const int64_t valid = shardValidRows(batcher, b, r, m);
        if (valid > 0)
          enqueueStep(batcher, b, r, StepKind::Eval,
                      StepContext{valid, shardRows_, step_ > 0 ? step_ : 1, r, seed_,
                                  shardBegin(r) + m * shardRows_, 1.0, m},
                      static_cast<int>(b % 2));
      }
    if (b > 0)
      collectStep(b - 1);
  }
  if (batches > 0)
    collectStep(batches - 1);
  if (group_ && group_->size() > 1) {
    double totals[3] = {lossSum, correct, samples};
    group_->sumDoubles(totals, 3, timeout_);
    lossSum = totals[0], correct = totals[1], samples = totals[2];
    if (predictions) {
      // Each sample's row is one rank's, the others' zeros: the sums are every rank's rows.
      // (In pieces: a bounded exchange each.)
      std::vector<float> &all = predictions->logits;
      std::vector<double> piece;
      for (size_t at = 0; at < all.size(); at += piece.size()) {
        piece.assign(all.begin() + at, all.begin() + std::min(all.size(), at + (size_t(1) << 20)));
        group_->sumDoubles(piece.data(), int(piece.size()), timeout_);
        std::copy(piece.begin(), piece.end(), all.begin() + at);
      }
    }
  }
  EvalStats stats;
  stats.samples = static_cast<int64_t>(samples);
  stats.loss = samples ? lossSum / samples : std::nan("");
  // A regression's plan counts no correct predictions: it has no accuracy.
  const bool hasCorrect = replicaBuffers_.front().evalCorrect >= 0;
  stats.accuracy = samples && hasCorrect ? correct / samples : std::nan("");
  return stats;
}

} // namespace dp::rt
