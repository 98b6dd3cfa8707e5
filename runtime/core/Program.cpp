// Program: owns the arena and the kernels of a loaded plan. Everything that can fail or allocate
// happens in load(); run() only walks a vector of ready kernels.
#include "runtime/core/Program.h"

#include "runtime/base/Error.h"
#include "runtime/core/Init.h"
#include "runtime/core/Tensor.h"
#include "runtime/kernels/cpu/CpuKernels.h"

#include <cstdlib>
#include <cstring>

namespace dp::rt {

/// The arena: one zero-initialised, 64-byte aligned block that never moves.
struct Program::Arena {
  uint8_t *data = nullptr;
  size_t bytes = 0;
  explicit Arena(size_t size) : bytes(size) {
    // aligned_alloc wants a multiple of the alignment, and a non-empty block keeps pointers valid.
    size_t rounded = (size + 63) / 64 * 64;
    if (rounded == 0)
      rounded = 64;
    data = static_cast<uint8_t *>(std::aligned_alloc(64, rounded));
    if (!data)
      throw Error(ErrorKind::Runtime,
                  "cannot allocate the arena of " + std::to_string(size) + " bytes");
    std::memset(data, 0, rounded);
  }
  ~Arena() { std::free(data); }
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;
};

namespace {

const char *stepLabel(StepKind step) { return step == StepKind::Train ? "train" : "eval"; }

} // namespace

/// allreduce_start / allreduce_wait: hands the replica's copy of a bucket to the engine, or
/// waits for its mean.
class CollectiveKernel : public Kernel {
public:
  CollectiveKernel(Program &program, const KernelSite &site)
      : program_(program), start_(site.kind() == KernelKind::AllReduceStart),
        bucket_(static_cast<int>(site.attrs<CollectiveAttrs>().bucket)) {
    for (int d = 0; d < site.numInputs(); ++d)
      buffers_.push_back(site.input(d).f32());
  }
  void run(const StepContext &ctx) override {
    CollectiveEngine *engine = program_.collectives_;
    if (!engine)
      throw Error(ErrorKind::Runtime, "the plan has collectives but no collective engine "
                                      "was attached");
    if (start_)
      engine->start(bucket_, ctx.replica, buffers_[ctx.replica]);
    else
      engine->wait(bucket_, ctx.replica);
  }

private:
  Program &program_;
  bool start_;
  int bucket_;
  std::vector<float *> buffers_;
};

void Program::buildStep(const fb::Step &step, std::vector<std::vector<Kernel *>> &perDevice) {
  const fb::Plan &plan = this->plan();
  perDevice.assign(devices(), {});
  int index = 0;
  for (const fb::Kernel *k : *step.kernels()) {
    std::string where = step.name()->str() + " kernel #" + std::to_string(index++) + " (" +
                        kernelInfo(KernelKind(k->kind())).name + ")";
    if (k->loc() && k->loc()->size())
      where += " at " + k->loc()->str();
    KernelSite site(plan, arenaData_.data(), *k, where, &kernelState_);
    if (isCollective(site.kind()))
      kernels_.push_back(std::make_unique<CollectiveKernel>(*this, site));
    else
      kernels_.push_back(cpu::makeCpuKernel(site));
    for (int d = 0; d < devices(); ++d)
      if (k->device() < 0 || k->device() == d)
        perDevice[d].push_back(kernels_.back().get());
  }
}

Program::Program(PlanFile file) : file_(std::move(file)) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::load(PlanFile file) {
  std::unique_ptr<Program> program(new Program(std::move(file)));
  const fb::Plan &plan = program->plan();
  // TODO(cuda-backend): a registry of device backends picks the one the plan asks for; the CPU
  // backend is the only one this build has.
  if (DeviceKind(plan.device_kind()) != DeviceKind::Cpu)
    throw Error(ErrorKind::Plan,
                std::string("the plan was compiled for ") +
                    deviceKindName(DeviceKind(plan.device_kind())) +
                    " devices (dpc compile --device); this dprun runs plans on the CPU only: "
                    "recompile with --device cpu");
  for (const fb::Param *p : *plan.params()) {
    std::string where = "param '" + p->name()->str() + "'";
    const fb::Buffer &b = *plan.buffers()->Get(p->buffer());
    if (static_cast<DType>(b.dtype()) != DType::F32)
      throw Error(ErrorKind::Plan, where + " (buffer " + std::to_string(p->buffer()) + ") is " +
                                       dtypeName(DType(b.dtype())) + ", parameters must be f32");
    checkInit(*p->init(), where);
  }
  for (int d = 0; d < program->devices(); ++d) {
    program->arenas_.push_back(std::make_unique<Arena>(plan.arena_bytes()));
    program->arenaData_.push_back(program->arenas_.back()->data);
  }
  program->buildStep(*plan.train(), program->train_);
  program->buildStep(*plan.eval(), program->eval_);
  return program;
}

void Program::initParams(uint64_t seed) {
  for (const fb::Param *p : *plan().params()) {
    const fb::Buffer &b = buffer(p->buffer());
    drawInit(static_cast<float *>(bufferData(p->buffer())), numElements(b), *p->init(), seed,
             p->name()->string_view());
  }
}

void *Program::bufferData(uint32_t id) {
  if (id >= plan().buffers()->size())
    throw Error(ErrorKind::Runtime, "buffer " + std::to_string(id) +
                                        " does not exist (the plan has " +
                                        std::to_string(plan().buffers()->size()) + " buffers)");
  return arenaData_[buffer(id).device()] + buffer(id).offset();
}

int Program::inputBuffer(const std::string &name, int device) const {
  for (const fb::Input *in : *plan().inputs())
    if (in->name()->str() == name && buffer(in->buffer()).device() == device)
      return static_cast<int>(in->buffer());
  return -1;
}

int Program::outputBuffer(StepKind step, const std::string &name, int device) const {
  const fb::Step *s = step == StepKind::Train ? plan().train() : plan().eval();
  if (s->outputs())
    for (const fb::Output *o : *s->outputs())
      if (o->name()->str() == name && buffer(o->buffer()).device() == device)
        return static_cast<int>(o->buffer());
  return -1;
}

bool Program::hasCollectives() const {
  return plan().collectives() && plan().collectives()->size() > 0;
}

void Program::run(StepKind step, const StepContext &ctx) {
  // Cheap checks of the caller's context: a zero valid-row count would silently make every
  // loss zero, and Adam's bias correction divides by 1 - beta1^step.
  if (ctx.validRows < 1 || ctx.validRows > plan().batch())
    throw Error(ErrorKind::Runtime,
                std::string(stepLabel(step)) + " step: " + std::to_string(ctx.validRows) +
                    " valid rows is outside [1, batch " + std::to_string(plan().batch()) + "]");
  if (ctx.step < 1)
    throw Error(ErrorKind::Runtime, std::string(stepLabel(step)) + " step: step number " +
                                        std::to_string(ctx.step) + " is not 1-based");
  if (ctx.replica < 0 || ctx.replica >= devices())
    throw Error(ErrorKind::Runtime, std::string(stepLabel(step)) + " step: replica " +
                                        std::to_string(ctx.replica) + " of " +
                                        std::to_string(devices()));
  for (Kernel *k : (step == StepKind::Train ? train_ : eval_)[ctx.replica])
    k->run(ctx);
}

} // namespace dp::rt
