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

void Program::buildStep(const StepDesc &step, std::vector<std::vector<Kernel *>> &perDevice) {
  perDevice.assign(devices(), {});
  for (const KernelDesc &k : step.kernels) {
    KernelSite site(plan_, arenaData_.data(), k, &kernelState_);
    if (isCollective(site.kind()))
      kernels_.push_back(std::make_unique<CollectiveKernel>(*this, site));
    else
      kernels_.push_back(cpu::makeCpuKernel(site));
    for (int d = 0; d < devices(); ++d)
      if (k.device < 0 || k.device == d)
        perDevice[d].push_back(kernels_.back().get());
  }
}

Program::Program(Plan plan) : plan_(std::move(plan)) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::load(Plan plan_) {
  std::unique_ptr<Program> program(new Program(std::move(plan_)));
  const Plan &plan = program->plan();
  // TODO(cuda-backend): a registry of device backends picks the one the plan asks for; the CPU
  // backend is the only one this build has.
  if (plan.deviceKind != DeviceKind::Cpu)
    throw Error(ErrorKind::Plan,
                std::string("the plan was compiled for ") + deviceKindName(plan.deviceKind) +
                    " devices (dpc compile --device); this dprun runs plans on the CPU only: "
                    "recompile with --device cpu");
  for (const ParamDesc &p : plan.params) {
    std::string where = "param '" + p.name + "'";
    const BufferDesc &b = plan.buffers[p.buffer];
    if (b.dtype != DType::F32)
      throw Error(ErrorKind::Plan, where + " (buffer " + std::to_string(p.buffer) + ") is " +
                                       dtypeName(b.dtype) + ", parameters must be f32");
    checkInit(p.init, where);
  }
  for (int d = 0; d < program->devices(); ++d) {
    program->arenas_.push_back(std::make_unique<Arena>(plan.arenaBytes));
    program->arenaData_.push_back(program->arenas_.back()->data);
  }
  program->buildStep(plan.train, program->train_);
  program->buildStep(plan.eval, program->eval_);
  return program;
}

void Program::initParams(uint64_t seed) {
  for (const ParamDesc &p : plan_.params)
    drawInit(static_cast<float *>(bufferData(p.buffer)), buffer(p.buffer).numel, p.init, seed,
             p.name);
}

void *Program::bufferData(uint32_t id) {
  if (id >= plan_.buffers.size())
    throw Error(ErrorKind::Runtime, "buffer " + std::to_string(id) +
                                        " does not exist (the plan has " +
                                        std::to_string(plan_.buffers.size()) + " buffers)");
  return arenaData_[buffer(id).device] + buffer(id).offset;
}

int Program::inputBuffer(const std::string &name, int device) const {
  return plan_.input(name, device);
}

int Program::outputBuffer(StepKind step, const std::string &name, int device) const {
  return plan_.output(step, name, device);
}

bool Program::hasCollectives() const { return !plan_.collectives.empty(); }

void Program::run(StepKind step, const StepContext &ctx) {
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
  for (Kernel *k : (step == StepKind::Train ? train_ : eval_)[ctx.replica])
    k->run(ctx);
}

} // namespace dp::rt
