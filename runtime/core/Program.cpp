// The executor; see Program.h.
#include "runtime/core/Program.h"

#include "runtime/base/Error.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/base/Trace.h"
#include "runtime/core/Init.h"

#include <map>

namespace dp::rt {

/// What one device of the process holds.
struct Program::PerDevice {
  std::unique_ptr<Device> device;
  DeviceMemory arena;
  std::unique_ptr<Stream> compute, collectives;
  /// Events of the collective kernels, by kernel and use, made at the first capture that
  /// needs them and reused by later ones.
  std::map<std::pair<const KernelDesc *, int>, std::unique_ptr<Event>> events;
  /// Each step, captured; under gradient accumulation also the train step without its final
  /// kernels, which runs on every micro-shard but the last.
  std::unique_ptr<Graph> train, eval, accumulate;
  /// The kernels this device runs, by the plan kernel they implement.
  std::map<const KernelDesc *, Kernel *> kernels;
  /// The attached engine's collective kernels, by the allreduce_start or broadcast_start they
  /// implement (empty for an engine that has none).
  std::map<const KernelDesc *, std::unique_ptr<Kernel>> collectiveKernels;
  /// With the timeline on: when the step running on the compute stream began (its thread).
  int64_t stepBegin = 0;
};

namespace {

/// A kernel whose runs are spans of the timeline, named by its kind, with its index in the
/// step.
class TracedKernel final : public Kernel {
public:
  TracedKernel(std::unique_ptr<Kernel> inner, const char *name, int64_t index)
      : inner_(std::move(inner)), name_(name), index_(index) {}
  void run(const StepContext &ctx) override {
    trace::Span span(trace::Category::Kernel, name_, index_);
    inner_->run(ctx);
  }

private:
  std::unique_ptr<Kernel> inner_;
  const char *name_;
  int64_t index_;
};

} // namespace

Program::Program(Plan plan, Backend &backend) : plan_(std::move(plan)), backend_(backend) {}

Program::~Program() {
  // Streams run what they were given before they stop; waiting here first keeps the arenas
  // alive until then. Errors were reported to whoever ran the steps.
  for (auto &d : devices_) {
    try {
      d->compute->synchronize();
    } catch (...) {
    }
    try {
      d->collectives->synchronize();
    } catch (...) {
    }
  }
}

std::unique_ptr<Program> Program::load(Plan loaded, Backend *chosen) {
  Backend &backend = chosen ? *chosen : BackendRegistry::get(loaded.deviceKind);
  if (backend.kind() != loaded.deviceKind)
    throw Error(ErrorKind::Plan, std::string("the plan was compiled for ") +
                                     deviceKindName(loaded.deviceKind) + " devices, not " +
                                     deviceKindName(backend.kind()));
  checkPlan(loaded);
  std::unique_ptr<Program> program(new Program(std::move(loaded), backend));
  const Plan &plan = program->plan_;
  std::vector<std::unique_ptr<Device>> opened = backend.openDevices(program->devices());
  std::vector<uint8_t *> arenas;
  for (auto &device : opened) {
    auto d = std::make_unique<PerDevice>();
    d->device = std::move(device);
    d->arena = d->device->allocate(plan.arenaBytes);
    d->compute = d->device->createStream("compute");
    d->collectives = d->device->createStream("collectives");
    arenas.push_back(static_cast<uint8_t *>(d->arena.data()));
    // A failed replica would leave the others waiting for its buckets: release them.
    Program *self = program.get();
    const int index = static_cast<int>(program->devices_.size());
    d->device->setFailureHandler([self, index](const std::string &why) {
      if (self->collectives_)
        self->collectives_->abort("replica " + std::to_string(index) + " failed: " + why);
    });
    program->devices_.push_back(std::move(d));
  }
  // Kernels in the plan's order, train step first: kernels that share state (an LSTM and its
  // gradient) find it in the order they were compiled.
  for (const StepDesc *step : {&plan.train, &plan.eval})
    for (const KernelDesc &k : step->kernels) {
      if (isCollective(k.kind))
        continue;
      KernelSite site(plan, arenas.data(), k, &program->kernelState_);
      PerDevice &d = *program->devices_[k.device];
      std::unique_ptr<Kernel> kernel = backend.makeKernel(*d.device, site);
      // A kernel on the host runs on its stream's thread: a span of the timeline covers it.
      // (A device kernel's run() only enqueues it; the timeline has its steps, not kernels.)
      if (trace::enabled() && d.device->hostAccessible())
        kernel = std::make_unique<TracedKernel>(std::move(kernel), kernelInfo(k.kind).name,
                                                static_cast<int64_t>(&k - step->kernels.data()));
      program->kernels_.push_back(std::move(kernel));
      d.kernels[&k] = program->kernels_.back().get();
    }
  for (int d = 0; d < program->devices(); ++d) {
    program->captureStep(d, plan.train, program->devices_[d]->train);
    program->captureStep(d, plan.eval, program->devices_[d]->eval);
    if (plan.accumulation > 1)
      program->captureStep(d, plan.train, program->devices_[d]->accumulate, true);
  }
  return program;
}

void Program::checkPlan(const Plan &plan) {
  for (const ParamDesc &p : plan.params) {
    std::string where = "param '" + p.name + "'";
    const BufferDesc &b = plan.buffers[p.buffer];
    if (b.dtype != DType::F32)
      throw Error(ErrorKind::Plan, where + " (buffer " + std::to_string(p.buffer) + ") is " +
                                       dtypeName(b.dtype) + ", parameters must be f32");
    checkInit(p.init, b.numel, where);
  }
}

void Program::captureStep(int index, const StepDesc &step, std::unique_ptr<Graph> &graph,
                          bool skipFinal) {
  PerDevice &d = *devices_[index];
  Device &device = *d.device;
  Stream &compute = *d.compute, &collectives = *d.collectives;
  device.beginCapture({&compute, &collectives});
  try {
    const StepContext unused;
    // The event after each bucket's collective kernel (its average, its broadcast), by bucket.
    std::map<int, Event *> averaged;
    for (const KernelDesc &k : step.kernels) {
      if (skipFinal && k.final)
        continue;
      if (!isCollective(k.kind)) {
        if (k.device == index)
          compute.launch(*d.kernels.at(&k), unused);
        continue;
      }
      const int bucket = static_cast<int>(k.attrsAs<CollectiveAttrs>().bucket);
      if (!d.collectiveKernels.empty()) {
        // Device work: the collective kernel runs on the collectives stream once the compute
        // stream has written the bucket; the compute stream waits for it at the wait.
        if (isCollectiveStart(k.kind)) {
          Event &written = event(d, &k, 0), &done = event(d, &k, 1);
          compute.record(written);
          collectives.wait(written);
          collectives.launch(*d.collectiveKernels.at(&k), unused);
          collectives.record(done);
          averaged[bucket] = &done;
        } else {
          auto done = averaged.find(bucket);
          if (done == averaged.end())
            throw Error(ErrorKind::Plan, "the train step waits for bucket " +
                                             std::to_string(bucket) + " before starting it");
          compute.wait(*done->second);
        }
        continue;
      }
      Event &event = this->event(d, &k, 0);
      if (isCollectiveStart(k.kind)) {
        // The engine takes the bucket once the compute stream has written it: in stream order
        // on the compute stream, or on the collectives stream after an event.
        const CollectiveBuffers buffers = collectiveBuffers(k.inputs[index]);
        Stream &caller = placement_ == CollectiveEngine::Placement::Compute ? compute : collectives;
        if (&caller != &compute) {
          compute.record(event);
          caller.wait(event);
        }
        caller.host([this, bucket, index, buffers] {
          if (!collectives_)
            throw Error(ErrorKind::Runtime, "the plan has collectives but no collective "
                                            "engine was attached");
          trace::Span span(trace::Category::Collective, "allreduce start", bucket);
          collectives_->start(bucket, index, buffers);
        });
      } else {
        // The compute stream goes on once the engine has the mean.
        Stream &caller = placement_ == CollectiveEngine::Placement::Compute ? compute : collectives;
        caller.host([this, bucket, index] {
          if (!collectives_)
            throw Error(ErrorKind::Runtime, "the plan has collectives but no collective "
                                            "engine was attached");
          trace::Span span(trace::Category::Collective, "allreduce wait", bucket);
          collectives_->wait(bucket, index);
        });
        if (&caller != &compute) {
          caller.record(event);
          compute.wait(event);
        }
      }
    }
  } catch (...) {
    // The capture ends either way; the error that stopped it is the one reported.
    try {
      device.endCapture();
    } catch (...) {
    }
    throw;
  }
  graph = device.endCapture();
}

Event &Program::event(PerDevice &d, const KernelDesc *k, int use) {
  std::unique_ptr<Event> &slot = d.events[{k, use}];
  if (!slot)
    slot = d.device->createEvent();
  return *slot;
}

void Program::attachCollectives(CollectiveEngine *engine) {
  collectives_ = engine;
  if (!hasCollectives())
    return;
  synchronize();
  // The engine's collective kernels, one per collective start of each device, made before the
  // capture that launches them; then the train step captured again for this engine.
  for (int d = 0; d < devices(); ++d) {
    PerDevice &device = *devices_[d];
    device.collectiveKernels.clear();
    for (const KernelDesc &k : plan_.train.kernels) {
      if (!engine || !isCollectiveStart(k.kind))
        continue;
      const int bucket = static_cast<int>(k.attrsAs<CollectiveAttrs>().bucket);
      std::unique_ptr<Kernel> kernel =
          engine->collectiveKernel(bucket, d, collectiveBuffers(k.inputs[d]));
      if (!kernel)
        break;
      device.collectiveKernels[&k] = std::move(kernel);
    }
  }
  placement_ = engine ? engine->placement() : CollectiveEngine::Placement::Compute;
  for (int d = 0; d < devices(); ++d)
    captureStep(d, plan_.train, devices_[d]->train);
}

Device &Program::device(int d) const { return *devices_.at(d)->device; }
Stream &Program::stream(int d) const { return *devices_.at(d)->compute; }

void Program::initParams(uint64_t seed) {
  std::vector<float> values;
  for (const ParamDesc &p : plan_.params) {
    // Another process's share of the state overlays this one's: it is not ours to draw.
    if (!plan_.holds(p))
      continue;
    values.resize(static_cast<size_t>(buffer(p.buffer).numel));
    drawInit(values.data(), buffer(p.buffer).numel, p.init, seed, p.name);
    write(p.buffer, values.data());
  }
}

void *Program::bufferData(uint32_t id) {
  if (id >= plan_.buffers.size())
    throw Error(ErrorKind::Runtime, "buffer " + std::to_string(id) +
                                        " does not exist (the plan has " +
                                        std::to_string(plan_.buffers.size()) + " buffers)");
  const BufferDesc &b = buffer(id);
  return static_cast<uint8_t *>(devices_[b.device]->arena.data()) + b.offset;
}

void Program::read(uint32_t id, void *host) {
  void *data = bufferData(id);
  Stream &s = stream(buffer(id).device);
  s.copy(host, data, buffer(id).bytes());
  s.synchronize();
}

void Program::write(uint32_t id, const void *host) { write(id, host, 0, buffer(id).bytes()); }

void Program::write(uint32_t id, const void *host, size_t offset, size_t bytes) {
  auto *data = static_cast<uint8_t *>(bufferData(id));
  if (offset > buffer(id).bytes() || bytes > buffer(id).bytes() - offset)
    throw Error(ErrorKind::Runtime, "write of " + std::to_string(bytes) + " bytes at " +
                                        std::to_string(offset) + " past buffer " +
                                        std::to_string(id) + " of " +
                                        std::to_string(buffer(id).bytes()) + " bytes");
  Stream &s = stream(buffer(id).device);
  s.copy(data + offset, host, bytes);
  s.synchronize();
}

void Program::enqueue(StepKind step, const StepContext &ctx) {
  // Cheap checks of the caller's context: a zero valid-row count would silently make every
  // loss zero, and Adam's bias correction divides by 1 - beta1^step.
  if (ctx.validRows < 1 || ctx.validRows > plan_.batch)
    throw Error(ErrorKind::Runtime,
                std::string(stepName(step)) + " step: " + std::to_string(ctx.validRows) +
                    " valid rows is outside [1, batch " + std::to_string(plan_.batch) + "]");
  if (ctx.step < 1)
    throw Error(ErrorKind::Runtime, std::string(stepName(step)) + " step: step number " +
                                        std::to_string(ctx.step) + " is not 1-based");
  if (ctx.replica < 0 || ctx.replica >= devices())
    throw Error(ErrorKind::Runtime, std::string(stepName(step)) + " step: replica " +
                                        std::to_string(ctx.replica) + " of " +
                                        std::to_string(devices()));
  if (ctx.microShard < 0 || ctx.microShard >= plan_.accumulation)
    throw Error(ErrorKind::Runtime, std::string(stepName(step)) + " step: micro-shard " +
                                        std::to_string(ctx.microShard) + " of " +
                                        std::to_string(plan_.accumulation));
  PerDevice &d = *devices_[ctx.replica];
  // Every micro-shard of a train step but the last runs it without its final kernels.
  const bool partial = step == StepKind::Train && ctx.microShard + 1 < plan_.accumulation;
  // On the host, the step's span on the timeline runs from its first kernel to its last: a
  // train step's from its first micro-shard's first to its last one's last (the others' inputs
  // gathered in between).
  const bool traced = trace::enabled() && d.device->hostAccessible();
  auto *stepBegin = &d.stepBegin;
  if (traced && (step == StepKind::Eval || ctx.microShard == 0))
    d.compute->host([stepBegin] { *stepBegin = trace::now(); });
  d.device->launch(partial ? *d.accumulate : step == StepKind::Train ? *d.train : *d.eval, ctx);
  heartbeat::beat();
  if (traced && !partial)
    // A train step is numbered by the run's step counter; eval steps are not.
    d.compute->host([stepBegin, step, number = step == StepKind::Train ? ctx.step : -1] {
      trace::record(trace::Category::Step, step == StepKind::Train ? "train step" : "eval step",
                    number, *stepBegin, trace::now());
    });
  if (step == StepKind::Train && !partial && collectives_)
    collectives_->stepEnqueued(ctx.replica, *d.compute, ctx);
}

void Program::synchronize(int index) {
  PerDevice &d = *devices_.at(index);
  d.compute->synchronize();
  d.collectives->synchronize();
}

void Program::synchronize() {
  for (int d = 0; d < devices(); ++d)
    synchronize(d);
}

void Program::run(StepKind step, const StepContext &ctx) {
  enqueue(step, ctx);
  synchronize(ctx.replica);
}

void Program::runKernels(size_t first, size_t last, const StepContext &ctx) {
  PerDevice &d = *devices_.at(0);
  if (!d.device->hostAccessible())
    throw Error(ErrorKind::Runtime, "runKernels runs host kernels only");
  const std::vector<KernelDesc> &kernels = plan_.train.kernels;
  if (first > last || last > kernels.size())
    throw Error(ErrorKind::Runtime, "runKernels: kernels [" + std::to_string(first) + ", " +
                                        std::to_string(last) + ") of a step of " +
                                        std::to_string(kernels.size()));
  for (size_t k = first; k < last; ++k)
    if (!isCollective(kernels[k].kind))
      d.kernels.at(&kernels[k])->run(ctx);
}

} // namespace dp::rt
