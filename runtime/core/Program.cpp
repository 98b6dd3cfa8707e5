// Program: owns the arena and the kernels of a loaded plan. Everything that can fail or allocate
// happens in load(); run() only walks a vector of ready kernels.
#include "runtime/core/Program.h"

#include "runtime/core/Error.h"
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

std::vector<std::unique_ptr<Kernel>> buildStep(const fb::Plan &plan, const fb::Step &step,
                                               uint8_t *arena) {
  std::vector<std::unique_ptr<Kernel>> kernels;
  kernels.reserve(step.kernels()->size());
  int index = 0;
  for (const fb::Kernel *k : *step.kernels()) {
    std::string where = step.name()->str() + " kernel #" + std::to_string(index++) + " (" +
                        kernelInfo(KernelKind(k->kind())).name + ")";
    if (k->loc() && k->loc()->size())
      where += " at " + k->loc()->str();
    kernels.push_back(cpu::makeCpuKernel(KernelSite(plan, arena, *k, where)));
  }
  return kernels;
}

} // namespace

Program::Program(PlanFile file) : file_(std::move(file)) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::load(PlanFile file) {
  std::unique_ptr<Program> program(new Program(std::move(file)));
  const fb::Plan &plan = program->plan();
  for (const fb::Param *p : *plan.params()) {
    std::string where = "param '" + p->name()->str() + "'";
    const fb::Buffer &b = *plan.buffers()->Get(p->buffer());
    if (static_cast<DType>(b.dtype()) != DType::F32)
      throw Error(ErrorKind::Plan, where + " (buffer " + std::to_string(p->buffer()) + ") is " +
                                       dtypeName(DType(b.dtype())) + ", parameters must be f32");
    checkInit(*p->init(), where);
  }
  program->arena_ = std::make_unique<Arena>(plan.arena_bytes());
  program->train_ = buildStep(plan, *plan.train(), program->arena_->data);
  program->eval_ = buildStep(plan, *plan.eval(), program->arena_->data);
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
  return arena_->data + buffer(id).offset();
}

int Program::inputBuffer(const std::string &name) const {
  for (const fb::Input *in : *plan().inputs())
    if (in->name()->str() == name)
      return static_cast<int>(in->buffer());
  return -1;
}

int Program::outputBuffer(StepKind step, const std::string &name) const {
  const fb::Step *s = step == StepKind::Train ? plan().train() : plan().eval();
  if (s->outputs())
    for (const fb::Output *o : *s->outputs())
      if (o->name()->str() == name)
        return static_cast<int>(o->buffer());
  return -1;
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
  for (const std::unique_ptr<Kernel> &k : step == StepKind::Train ? train_ : eval_)
    k->run(ctx);
}

} // namespace dp::rt
