// The compile report (see CompileReport.h).
#include "reports/CompileReport.h"

#include "reports/MemoryReport.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace dp::plan;

namespace dp::reports {

void printCompileReport(ProgramOp program, double lrFactor, double ms, llvm::raw_ostream &os) {
  unsigned kernels[2] = {0, 0};
  for (auto step : program.getOps<StepOp>())
    kernels[step.getName() == "eval"] = llvm::range_size(step.getOps<KernelOp>());
  os << "compiled '" << program.getModel() << "' (global batch " << program.getBatch()
     << "): train step " << kernels[0] << " kernels, eval step " << kernels[1] << " kernels, in "
     << llvm::format("%.0f", ms) << " ms\n";
  int64_t devices = program.getDevicesPerProcess(), processes = program.getProcesses();
  int64_t replicas = devices * processes;
  if (replicas > 1) {
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
  printBucketPlan(program, os);
  printMemoryReport(computeMemoryReport(program), os);
}

} // namespace dp::reports
