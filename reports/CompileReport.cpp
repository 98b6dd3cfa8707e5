// The compile report (see CompileReport.h).
#include "reports/CompileReport.h"

#include "reports/MemoryReport.h"

#include "llvm/Support/Format.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace dp::plan;

namespace dp::reports {

/// The global norm the train step clips its gradients to (its clip_factor's), 0 without one.
static double clipNorm(ProgramOp program) {
  for (auto step : program.getOps<StepOp>())
    for (KernelOp k : step.getOps<KernelOp>())
      if (k.getKind() == "clip_factor")
        if (auto maxNorm = k->getAttrOfType<FloatAttr>("max_norm"))
          return maxNorm.getValueAsDouble();
  return 0;
}

void printCompileReport(ProgramOp program, double lrFactor, double ms, llvm::raw_ostream &os) {
  unsigned kernels[2] = {0, 0};
  for (auto step : program.getOps<StepOp>())
    kernels[step.getName() == "eval"] = llvm::range_size(step.getOps<KernelOp>());
  os << "compiled '" << program.getModel() << "' (global batch " << program.getBatch()
     << "): train step " << kernels[0] << " kernels, eval step " << kernels[1] << " kernels, in "
     << llvm::format("%.0f", ms) << " ms\n";
  int64_t devices = program.getDevicesPerProcess(), processes = program.getProcesses();
  int64_t replicas = devices * processes;
  if (auto servers = program.getServersAttr()) {
    os << "parameter servers: " << servers.getInt() << " server(s) + " << processes
       << " worker(s) = " << servers.getInt() + processes << " processes ("
       << (servers.getInt() == 1 ? std::string("rank 0 serves")
                                 : "ranks 0-" + std::to_string(servers.getInt() - 1) + " serve")
       << "), " << program.getBatch() / processes
       << " samples per worker step, ";
    if (program.getSync())
      os << "synchronous (each update averages every worker's gradient)";
    else if (int64_t k = program.getStaleness().value_or(-1); k >= 0)
      os << "stale-synchronous (a worker runs at most " << k << " step(s) ahead of the slowest)";
    else
      os << "asynchronous (each worker's gradient is applied as it arrives)";
    if (lrFactor != 1.0)
      os << ", learning rate x " << llvm::format("%g", lrFactor);
    os << "\n";
    printParameterPlacement(program, os);
  } else if (replicas > 1) {
    os << "data parallel: " << devices << " " << program.getDevice()
       << " device(s) per process x " << processes << " process(es) = " << replicas
       << " replicas of " << program.getBatch() / replicas << " samples each";
    if (int64_t nodes = program.getNodes().value_or(1); nodes > 1)
      os << ", on " << nodes << " nodes x " << processes / nodes << " process(es)";
    if (lrFactor != 1.0)
      os << ", learning rate x " << llvm::format("%g", lrFactor);
    os << "\n";
  }
  if (auto schedule = program.getLrScheduleAttr())
    os << "learning-rate schedule: " << schedule.getValue() << " (dprun applies it per step)\n";
  if (double maxNorm = clipNorm(program); maxNorm > 0)
    os << "gradients clipped to global norm " << llvm::format("%g", maxNorm)
       << (replicas > 1 ? ", computed on the allreduced means (every replica scales by the same "
                          "factor)"
                        : "")
       << "\n";
  printBucketPlan(program, os);
  printMemoryReport(computeMemoryReport(program), os);
  for (ProgramOp server : serverPrograms(program)) {
    os << "server " << server.getServerAttr().getInt() << " ";
    printMemoryReport(computeMemoryReport(server), os);
  }
}

SmallVector<ProgramOp> serverPrograms(ProgramOp workers) {
  SmallVector<ProgramOp> servers;
  if (auto module = workers->getParentOfType<ModuleOp>())
    for (ProgramOp p : module.getOps<ProgramOp>())
      if (p.getServerAttr())
        servers.push_back(p);
  llvm::stable_sort(servers, [](ProgramOp a, ProgramOp b) {
    return a.getServerAttr().getInt() < b.getServerAttr().getInt();
  });
  return servers;
}

void printParameterPlacement(ProgramOp workers, llvm::raw_ostream &os) {
  os << "parameter placement (fixed at compile time, balanced by bytes):\n"
     << "  server  parameters        bytes  optimizer state bytes  tensors\n";
  for (ProgramOp server : serverPrograms(workers)) {
    int64_t weights = 0, state = 0, count = 0;
    std::string names;
    for (ParamOp param : server.getOps<ParamOp>()) {
      int64_t bytes = bufferBytes(param.getBuffer().getType());
      if (param.getOptimizerState()) {
        state += bytes;
        continue;
      }
      weights += bytes;
      names += (count++ ? ", " : "") + param.getName().str();
    }
    os << llvm::format("  %6lld  %10lld  %11lld  %21lld  ",
                       (long long)server.getServerAttr().getInt(), (long long)count,
                       (long long)weights, (long long)state)
       << names << "\n";
  }
}

} // namespace dp::reports
