// The static memory report: what a planned program needs per device, by category.
#include "reports/MemoryReport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dp::plan;

namespace dp::reports {

MemoryReport computeMemoryReport(ProgramOp program) {
  MemoryReport r;
  r.devices = program.getDevicesPerProcess();
  r.processes = program.getProcesses();
  if (program.getServerAttr())
    r.bucketKind = "received", r.server = true;
  else if (program.getServersAttr())
    r.bucketKind = "push";
  for (ParamOp p : program.getOps<ParamOp>())
    r.acrossProcesses |= p.getProcess().has_value();
  const int64_t devices = std::max<int64_t>(r.devices, 1);
  const int64_t processes = r.acrossProcesses ? std::max<int64_t>(r.processes, 1) : 1;
  r.stateByDevice.assign(devices * processes, 0);
  llvm::StringSet<> stateNames;
  // A bucket that holds parameters (a broadcast's, --shard-optimizer) is their bytes: counted as
  // parameters, not as gradients.
  llvm::DenseSet<Value> parameterBuckets;
  for (ParamOp p : program.getOps<ParamOp>())
    if (p.getBucket())
      parameterBuckets.insert(p.getBucket());
  for (Operation &op : program.getBody().front()) {
    // Optimizer state, by device: sharded over them, each holds its share; a share one
    // process holds counts on that process's device, the rest on every process's.
    if (auto p = dyn_cast<ParamOp>(op); p && p.getOptimizerState()) {
      const int64_t device = bufferDevice(p.getResult());
      for (int64_t q = 0; q < processes; ++q)
        if (device >= 0 && device < devices && (!p.getProcess() || int64_t(*p.getProcess()) == q))
          r.stateByDevice[q * devices + device] += bufferBytes(p.getType());
      if (stateNames.insert(p.getName()).second)
        r.unshardedState += bufferBytes(p.getType());
      continue;
    }
    // Every device holds the same other buffers: count device 0's.
    if (op.getNumResults() == 1 && isa<MemRefType>(op.getResult(0).getType()) &&
        bufferDevice(op.getResult(0)) != 0)
      continue;
    // A weight in a broadcast bucket counts with its bucket (the slots' padding included).
    if (auto p = dyn_cast<ParamOp>(op); p && !p.getBucket())
      r.weights += bufferBytes(p.getType());
    else if (auto bucket = dyn_cast<BucketOp>(op); bucket && parameterBuckets.count(bucket))
      r.weights += bufferBytes(bucket.getType()), ++r.broadcastBuckets;
    else if (isa<ParamOp>(op))
      continue;
    else if (auto bucket = dyn_cast<BucketOp>(op)) {
      r.gradients += bufferBytes(bucket.getType()), ++r.buckets;
      r.transientGradients |= bucket.getTransient();
    } else if (auto gr = dyn_cast<GradOp>(op); gr && !gr.getBucket())
      r.gradients += bufferBytes(gr.getType());
    else if (auto in = dyn_cast<InputOp>(op))
      r.inputs += bufferBytes(in.getType());
    else if (auto step = dyn_cast<StepOp>(op)) {
      auto peak = step->getAttrOfType<IntegerAttr>("peak_bytes");
      int64_t bytes = peak ? peak.getInt() : 0;
      (step.getName() == "eval" ? r.evalActivations : r.trainActivations) = bytes;
    }
  }
  if (auto arena = program->getAttrOfType<IntegerAttr>("arena_bytes"))
    r.arena = arena.getInt();
  r.optimizerState = *llvm::max_element(r.stateByDevice);
  r.sharded = r.optimizerState < r.unshardedState;
  return r;
}

std::string humanBytes(int64_t bytes) {
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
                       humanBytes(bytes).c_str());
  };
  os << "memory per device (bytes)";
  if (r.sharded)
    os << ", the largest of " << r.devices << " device(s) x " << r.processes << " process(es)";
  else if (r.devices * r.processes > 1)
    os << ", the same on each of " << r.devices << " device(s) x " << r.processes
       << (r.bucketKind == "push" ? " worker(s)" : " process(es)");
  os << ":\n";
  auto in = [](StringRef what, int64_t buckets, StringRef kind) {
    return buckets ? (what + " (in " + Twine(buckets) + " " + kind +
                      (buckets == 1 ? " bucket)" : " buckets)"))
                         .str()
                   : what.str();
  };
  row(in("parameters", r.broadcastBuckets, "broadcast"), r.weights);
  row(r.sharded ? "optimizer state (largest share)" : "optimizer state", r.optimizerState);
  row(in("gradients", r.buckets, r.transientGradients ? "step" : r.bucketKind), r.gradients);
  if (r.server) {
    row("serve step scratch (peak)", r.trainActivations);
  } else {
    row("input batch", r.inputs);
    row(r.transientGradients ? "train step peak, gradients within"
                             : "train step activations (peak)",
        r.trainActivations);
    row("eval step activations (peak)", r.evalActivations);
  }
  row("arena total", r.arena);
  if (r.sharded) {
    const int64_t saved = r.unshardedState - r.optimizerState;
    const char *stage = r.transientGradients ? "2" : "1";
    if (r.acrossProcesses)
      os << "optimizer state sharded over the " << r.devices * r.processes
         << " devices of the job (--shard-optimizer " << stage << "): ";
    else
      os << "optimizer state sharded over the " << r.devices
         << " devices of each process (--shard-optimizer " << stage << "): ";
    os << humanBytes(r.optimizerState) << " on the largest share, " << humanBytes(r.unshardedState)
       << " unsharded: " << humanBytes(saved) << " ("
       << llvm::format("%.0f%%", r.unshardedState ? 100.0 * saved / r.unshardedState : 0.0)
       << ") less per device; by device" << (r.acrossProcesses ? " (process by process):" : ":");
    // Every device's up to 16 of them; beyond, the range.
    if (r.stateByDevice.size() <= 16) {
      for (int64_t bytes : r.stateByDevice)
        os << " " << humanBytes(bytes);
    } else {
      os << " from " << humanBytes(*llvm::min_element(r.stateByDevice)) << " to "
         << humanBytes(*llvm::max_element(r.stateByDevice)) << " over " << r.stateByDevice.size();
    }
    os << "\n";
  }
  if (r.transientGradients)
    os << "gradients in the train step's memory (--shard-optimizer 2): their "
       << humanBytes(r.gradients) << " of buckets are not kept between steps; each lives from "
       << "its first gradient to the end of its reduce-scatter (waited for as the next bucket "
          "starts), where each owner copies its means out for its update, in bytes the "
          "activations use before and after\n";
}

void printBucketPlan(ProgramOp program, llvm::raw_ostream &os) {
  StepOp train;
  for (StepOp step : program.getOps<StepOp>())
    if (step.getName() == "train")
      train = step;
  if (!train)
    return;
  // Device 0's gradients of each bucket, by their place in it.
  llvm::DenseMap<Value, SmallVector<std::pair<int64_t, StringRef>>> contents;
  for (GradOp grad : program.getOps<GradOp>())
    if (grad.getBucket())
      contents[grad.getBucket()].push_back({*grad.getBucketOffset(), grad.getParam()});
  int kernels = 0, index = 0;
  const llvm::DenseSet<Value> bf16Wire = bf16WireBuckets(program);
  int64_t wireBytes = 0; // f32 bytes of the buckets that cross as bf16
  std::string table;
  llvm::raw_string_ostream rows(table);
  const bool ps = program.getServersAttr() != nullptr;
  for (KernelOp k : train.getOps<KernelOp>()) {
    ++kernels;
    if (k.getKind() != (ps ? "push_start" : "allreduce_start"))
      continue;
    Value bucket = k.getInputs().front();
    auto members = contents.lookup(bucket);
    llvm::sort(members);
    if (bf16Wire.contains(bucket))
      wireBytes += bufferBytes(cast<MemRefType>(bucket.getType()));
    std::string names;
    for (auto [i, m] : llvm::enumerate(members))
      names += (i ? ", " : "") + m.second.str();
    rows << llvm::format("  %6d  %7zu  %14lld  %9d  ", ++index - 1, members.size(),
                         (long long)bufferBytes(cast<MemRefType>(bucket.getType())),
                         kernels - 2); // the train kernel it starts after
    if (auto server = bucket.getDefiningOp<BucketOp>().getServerAttr())
      rows << llvm::format("%6lld  ", (long long)server.getInt());
    rows << names << "\n";
  }
  if (!index)
    return;
  if (ps)
    os << "push buckets, in the order the backward pass pushes them (train kernel #, "
       << "gradients in the order they become ready; pulled at the end of the step):\n"
       << "  bucket  tensors  bytes/worker   after #    server  gradients\n"
       << table;
  else
    os << "allreduce buckets, in the order the backward pass issues them (train kernel #, "
       << "gradients in the order they become ready):\n"
       << "  bucket  tensors  bytes/replica  after #    gradients\n"
       << table;
  if (program.getAllreducePrecisionAttr())
    os << "gradients cross the processes as bf16: " << wireBytes / 2 << " of their "
       << wireBytes << " bytes per step and process"
       << (program.getProcesses() > 1 ? "" : " (one process: nothing crosses)")
       << "; the replicas of a process are summed in f32 first, the mean is f32\n";
  if (int64_t nodes = program.getNodes().value_or(1); nodes > 1) {
    const int64_t perNode = program.getProcesses() / nodes;
    os << "across " << nodes << " nodes of " << perNode << " process(es): "
       << (perNode > 1 ? "each bucket is summed within its node, then across one leader per "
                         "node, then sent back"
                       : "each bucket is one allreduce across the nodes")
       << " (dprun --allreduce auto)\n";
  }
}

} // namespace dp::reports
