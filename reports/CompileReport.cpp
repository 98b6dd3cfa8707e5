// The compile report (see CompileReport.h).
#include "reports/CompileReport.h"

#include "reports/MemoryReport.h"
#include "runtime/format/Flops.h"

#include "llvm/Support/Format.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdio>

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

/// "12.3 GFLOP".
static std::string flopText(double flops) {
  const char *units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int u = 0;
  while (flops >= 999.5 && u < 5)
    flops /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof(text),
                flops < 9.995 && u   ? "%.2f %s"
                : flops < 99.95 && u ? "%.1f %s"
                                     : "%.0f %s",
                flops, units[u]);
  return text;
}

void printFlops(ProgramOp program, llvm::raw_ostream &os) {
  double train = 0, eval = 0;
  // Per kind, in the order the train step first runs each.
  SmallVector<std::pair<std::string, double>> byKind;
  std::vector<rt::FlopShape> in, out;
  auto shapeOf = [](Value v) {
    ArrayRef<int64_t> dims = cast<MemRefType>(v.getType()).getShape();
    return rt::FlopShape(dims.begin(), dims.end());
  };
  for (auto step : program.getOps<StepOp>()) {
    const bool isTrain = step.getName() == "train";
    for (KernelOp k : step.getOps<KernelOp>()) {
      const rt::KernelKind kind = rt::kernelKindByName(k.getKind());
      if (kind == rt::KernelKind::NumKinds || !rt::isProduct(kind))
        continue;
      in.clear(), out.clear();
      for (Value v : k.getInputs())
        in.push_back(shapeOf(v));
      for (Value v : k.getOutputs())
        out.push_back(shapeOf(v));
      auto transposeA = k->getAttrOfType<IntegerAttr>("transpose_a");
      const double flops =
          rt::kernelFlops(kind, in, out, transposeA && transposeA.getValue().getSExtValue() != 0);
      (isTrain ? train : eval) += flops;
      if (!isTrain)
        continue;
      auto *it = llvm::find_if(byKind, [&](auto &e) { return e.first == k.getKind(); });
      if (it == byKind.end())
        byKind.push_back({k.getKind().str(), flops});
      else
        it->second += flops;
    }
  }
  if (train == 0 && eval == 0)
    return;
  // Under gradient accumulation a step runs its products once per micro-shard (they are never
  // final), and the eval step once per micro-shard of a global batch.
  const int64_t pieces = program.getAccumulation().value_or(1);
  train *= double(pieces), eval *= double(pieces);
  for (auto &entry : byKind)
    entry.second *= double(pieces);
  // A process's step: its replicas' shares of the global batch.
  const int64_t samples = program.getBatch() / std::max<int64_t>(1, program.getProcesses());
  os << "FLOPs of the products (what dprun's MFU counts): train step " << flopText(train)
     << " per process (" << flopText(samples > 0 ? train / double(samples) : 0)
     << " a sample), eval step " << flopText(eval) << "\n ";
  for (const auto &[kind, flops] : byKind)
    os << " " << kind << " " << llvm::format("%.1f%%", train > 0 ? 100 * flops / train : 0.0);
  os << "\n";
}

void printWeightLayouts(ProgramOp program, llvm::raw_ostream &os) {
  // cuDNN picks its own layouts: the attribute is the CPU backend's.
  if (program.getDevice() == "cuda")
    return;
  struct Count {
    int plain = 0, blocked = 0;
    int64_t reordered = 0;
  } counts[2]; // train, eval
  for (auto step : program.getOps<StepOp>())
    for (KernelOp k : step.getOps<KernelOp>()) {
      std::optional<rt::LiveTaps> taps = convLiveTaps(k);
      if (!taps)
        continue;
      Count &c = counts[step.getName() == "eval"];
      if (auto plain = k->getAttrOfType<IntegerAttr>("plain_weights"); plain && plain.getInt()) {
        ++c.plain;
        continue;
      }
      // The blocked copy holds the live window: the weights in the type the kernel reads
      // them in, or the f32 filter gradient it writes.
      const rt::ConvGeometry &g = taps->shape;
      Value weights = k.getKind() == "conv2d_grad_filter" ? k.getOutputs()[0] : k.getInputs()[1];
      const int64_t elementBytes = cast<MemRefType>(weights.getType()).getElementTypeBitWidth() / 8;
      ++c.blocked;
      c.reordered += g.kh * g.kw * (g.c / g.g) * g.f * elementBytes;
    }
  if (counts[0].plain + counts[0].blocked + counts[1].plain + counts[1].blocked == 0)
    return;
  os << "convolution weights (plan-assign-layouts): kernels reading them as stored / through a "
        "blocked copy\n  train step "
     << counts[0].plain << " / " << counts[0].blocked << " (" << humanBytes(counts[0].reordered)
     << " of blocked copies, reordered on every call), eval step " << counts[1].plain << " / "
     << counts[1].blocked << " (" << humanBytes(counts[1].reordered) << ")\n";
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
  if (int64_t pieces = program.getAccumulation().value_or(1); pieces > 1)
    os << "gradient accumulation: " << pieces << " micro-shards of "
       << program.getBatch() / (replicas * pieces)
       << " samples per device and step, one optimizer step and one allreduce per bucket per "
          "global batch of "
       << program.getBatch() << "\n";
  if (auto schedule = program.getLrScheduleAttr())
    os << "learning-rate schedule: " << schedule.getValue() << " (dprun applies it per step)\n";
  if (double maxNorm = clipNorm(program); maxNorm > 0)
    os << "gradients clipped to global norm " << llvm::format("%g", maxNorm)
       << (replicas > 1 ? ", computed on the allreduced means (every replica scales by the same "
                          "factor)"
                        : "")
       << "\n";
  printBucketPlan(program, os);
  printFlops(program, os);
  printWeightLayouts(program, os);
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
