// The static memory report: what a planned program needs per device, by category.
#include "passes/Plan/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dp::plan {

MemoryReport computeMemoryReport(ProgramOp program) {
  MemoryReport r;
  for (Operation &op : program.getBody().front()) {
    if (auto p = dyn_cast<ParamOp>(op))
      (p.getOptimizerState() ? r.optimizerState : r.weights) += bufferBytes(p.getType());
    else if (auto gr = dyn_cast<GradOp>(op))
      r.gradients += bufferBytes(gr.getType());
    else if (auto in = dyn_cast<InputOp>(op))
      r.inputs += bufferBytes(in.getType());
    else if (auto step = dyn_cast<StepOp>(op)) {
      auto peak = step->getAttrOfType<IntegerAttr>("peak_bytes");
      int64_t bytes = peak ? peak.getInt() : 0;
      (step.getName() == "train" ? r.trainActivations : r.evalActivations) = bytes;
    }
  }
  if (auto arena = program->getAttrOfType<IntegerAttr>("arena_bytes"))
    r.arena = arena.getInt();
  return r;
}

static std::string human(int64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= (1 << 20))
    os << llvm::format("%.2f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return s;
}

void printMemoryReport(const MemoryReport &r, llvm::raw_ostream &os) {
  auto row = [&](StringRef what, int64_t bytes) {
    os << llvm::format("  %-34s %14lld  %12s\n", what.str().c_str(), (long long)bytes,
                       human(bytes).c_str());
  };
  os << "memory per device (bytes):\n";
  row("parameters", r.weights);
  row("optimizer state", r.optimizerState);
  row("gradients", r.gradients);
  row("input batch", r.inputs);
  row("train step activations (peak)", r.trainActivations);
  row("eval step activations (peak)", r.evalActivations);
  row("arena total", r.arena);
}

} // namespace dp::plan
