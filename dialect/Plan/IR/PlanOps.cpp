// Verifiers of the plan dialect's ops. Kernel kinds and arities come from the runtime's own
// kernel table, so the compiler cannot emit a kernel the runtime does not know.
#include "dialect/Plan/IR/PlanDialect.h"

#include "runtime/format/Enums.h"
#include "runtime/format/KernelAttrs.h"
#include "runtime/format/LrSchedule.h"

#include "llvm/ADT/StringSet.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <set>
#include <tuple>

using namespace mlir;
using namespace dp::plan;

// A role is written as a bare keyword: `plan.input "image" as samples`.
static ParseResult parseRole(OpAsmParser &parser, StringAttr &role) {
  std::string keyword;
  if (parser.parseKeywordOrString(&keyword))
    return failure();
  role = parser.getBuilder().getStringAttr(keyword);
  return success();
}

static void printRole(OpAsmPrinter &printer, Operation *, StringAttr role) {
  printer.printKeywordOrString(role.getValue());
}

#define GET_OP_CLASSES
#include "dialect/Plan/IR/PlanOps.cpp.inc"

LogicalResult InputOp::verify() {
  if (rt::InputRole role; !rt::inputRoleByName(getRole(), role))
    return emitOpError() << "has unknown role '" << getRole() << "' (expected "
                         << rt::roleNames(rt::inputRoleName, rt::kNumInputRoles) << ")";
  return success();
}

LogicalResult OutputOp::verify() {
  if (rt::OutputRole role; !rt::outputRoleByName(getRole(), role))
    return emitOpError() << "has unknown role '" << getRole() << "' (expected "
                         << rt::roleNames(rt::outputRoleName, rt::kNumOutputRoles) << ")";
  return success();
}

LogicalResult ProgramOp::verify() {
  if (getBatch() <= 0)
    return emitOpError() << "needs a positive batch, found " << getBatch();
  if (getDevicesPerProcess() < 1 || getProcesses() < 1)
    return emitOpError() << "needs at least one device and one process, found "
                         << getDevicesPerProcess() << " and " << getProcesses();
  if (rt::DeviceKind kind; !rt::deviceKindByName(getDevice(), kind))
    return emitOpError() << "has unknown device kind '" << getDevice() << "' (expected "
                         << rt::deviceKindNames() << ")";
  if (auto wire = getAllreducePrecisionAttr(); wire && wire.getValue() != "bf16")
    return emitOpError() << "has allreduce_precision '" << wire.getValue()
                         << "': bf16, or none for f32";
  if (auto nodes = getNodesAttr()) {
    const int64_t n = nodes.getInt();
    if (n < 1 || getProcesses() % n != 0)
      return emitOpError() << "spreads " << getProcesses() << " processes over " << n
                           << " nodes: nodes must be at least 1 and divide them evenly";
  }
  if (auto schedule = getLrScheduleAttr()) {
    dp::rt::LrSchedule parsed;
    std::string problem;
    if (!dp::rt::parseLrSchedule(schedule.getValue().str(), 0, parsed, problem))
      return emitOpError() << "has an invalid lr_schedule '" << schedule.getValue()
                           << "': " << problem;
  }
  if (auto servers = getServersAttr()) {
    if (servers.getInt() < 1 || getServerAttr())
      return emitOpError() << "a workers' program needs at least one server and no server "
                              "index, found servers = "
                           << servers.getInt();
    if (getDevicesPerProcess() != 1)
      return emitOpError("parameter-server workers run one device each");
    if (auto k = getStalenessAttr(); k && (k.getInt() < -1 || (getSync() && k.getInt() != 0)))
      return emitOpError() << "has staleness " << k.getInt()
                           << ": -1 (unbounded), or at least 0 (0 under sync)";
  } else if (getStalenessAttr() || getSync()) {
    return emitOpError("has staleness or sync but no servers");
  }
  if (auto server = getServerAttr()) {
    if (server.getInt() < 0 || getDevicesPerProcess() != 1 || getProcesses() != 1)
      return emitOpError() << "a server's program runs on one device of one process as a "
                              "server index >= 0, found server "
                           << server.getInt() << " on " << getDevicesPerProcess() << " x "
                           << getProcesses();
    for (auto step : getBody().front().getOps<StepOp>())
      if (step.getName() != "serve")
        return emitOpError() << "is a server's program, whose one step is 'serve', but has '"
                             << step.getName() << "'";
  }
  // The runtime finds inputs and outputs by role: one of each per device (and step).
  std::set<std::tuple<Operation *, StringRef, int64_t>> roles;
  for (Operation &op : getBody().front()) {
    auto check = [&](Operation *op, Operation *scope, StringRef role,
                     int64_t device) -> LogicalResult {
      if (roles.insert({scope, role, device}).second)
        return success();
      return op->emitOpError() << "is a second " << role << (scope ? " output" : " input")
                               << " of device " << device;
    };
    if (auto input = dyn_cast<InputOp>(op)) {
      if (failed(check(input, nullptr, input.getRole(), input.getDevice())))
        return failure();
    } else if (auto step = dyn_cast<StepOp>(op)) {
      for (auto output : step.getBody().front().getOps<OutputOp>())
        if (failed(check(output, step, output.getRole(), bufferDevice(output.getBuffer()))))
          return failure();
    }
  }
  if (failed(verifyAccumulation()))
    return failure();
  int64_t devices = getDevicesPerProcess();
  WalkResult result = getOperation()->walk([&](Operation *op) {
    auto device = op->getAttrOfType<IntegerAttr>("device");
    if (op != getOperation() && device && (device.getInt() < 0 || device.getInt() >= devices)) {
      op->emitOpError() << "is on device " << device.getInt() << " but the program has "
                        << devices << " device(s) per process";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult ProgramOp::verifyAccumulation() {
  const int64_t count = getAccumulation().value_or(1);
  if (getAccumulationAttr() && (count < 2 || getServersAttr() || getServerAttr()))
    return emitOpError() << "has accumulation " << count
                         << ": at least 2 micro-shards, and no parameter servers";
  for (auto step : getBody().front().getOps<StepOp>())
    for (auto kernel : step.getBody().front().getOps<KernelOp>()) {
      const rt::KernelKind kind = rt::kernelKindByName(kernel.getKind().str());
      if (kind == rt::KernelKind::NumKinds)
        continue; // the kernel's verifier names it
      const bool accumulate = kind == rt::KernelKind::Accumulate;
      if ((kernel.getFinal() || accumulate) && (count == 1 || step.getName() != "train"))
        return kernel.emitOpError()
               << (accumulate ? "accumulates a gradient" : "is marked final")
               << ", which only the train step of a program with accumulation does";
      // (A missing or mistyped count is the kernel's own verifier's to name.)
      auto sums = kernel->getAttrOfType<IntegerAttr>("count");
      if (accumulate && sums && sums.getInt() != count)
        return kernel.emitOpError()
               << "sums " << sums.getInt() << " micro-shards, the program " << count;
      // The runtime exchanges each bucket once per step: on its last micro-shard.
      if (count > 1 && rt::isCollective(kind) && !kernel.getFinal())
        return kernel.emitOpError()
               << "is a collective of a step with accumulation, so it must be final";
    }
  return success();
}

llvm::DenseSet<Value> dp::plan::bf16WireBuckets(ProgramOp program) {
  llvm::DenseSet<Value> wire;
  if (!program.getAllreducePrecisionAttr())
    return wire;
  llvm::StringSet<> params;
  for (ParamOp param : program.getOps<ParamOp>())
    params.insert(param.getName());
  llvm::DenseSet<Value> other; // buckets holding something that is no parameter's gradient
  for (GradOp grad : program.getOps<GradOp>())
    if (Value bucket = grad.getBucket())
      (params.contains(grad.getParam()) ? wire : other).insert(bucket);
  for (Value bucket : other)
    wire.erase(bucket);
  return wire;
}

Value dp::plan::bufferRoot(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  return buffer;
}

int64_t dp::plan::bufferDevice(Value buffer) {
  Operation *def = bufferRoot(buffer).getDefiningOp();
  auto device = def ? def->getAttrOfType<IntegerAttr>("device") : IntegerAttr();
  return device ? device.getInt() : 0;
}

/// A buffer laid in a bucket (`bucket`, from element `bucketOffset` on): a gradient in its
/// allreduce's, a parameter in its broadcast's.
static LogicalResult verifyInBucket(Operation *op, Value bucket,
                                    std::optional<uint64_t> bucketOffset, MemRefType type,
                                    int64_t device) {
  if (!bucket)
    return bucketOffset ? op->emitOpError("has a bucket_offset but no bucket") : success();
  if (!bucketOffset)
    return op->emitOpError("in a bucket needs a bucket_offset");
  auto bucketType = cast<MemRefType>(bucket.getType());
  // The offset counts elements of both: they must be of one type.
  if (type.getElementType() != bucketType.getElementType())
    return op->emitOpError() << "of " << type.getElementType() << " cannot lie in a bucket of "
                             << bucketType.getElementType();
  int64_t offset = static_cast<int64_t>(*bucketOffset), size = type.getNumElements();
  int64_t capacity = bucketType.getNumElements();
  if (offset < 0 || offset + size > capacity)
    return op->emitOpError() << "elements [" << offset << ", " << offset + size
                             << ") do not fit its bucket of " << capacity;
  if (bufferDevice(bucket) != device)
    return op->emitOpError() << "is on device " << device << ", its bucket on device "
                             << bufferDevice(bucket);
  return success();
}

LogicalResult GradOp::verify() {
  return verifyInBucket(*this, getBucket(), getBucketOffset(), getBuffer().getType(),
                        static_cast<int64_t>(getDevice()));
}

LogicalResult ParamOp::verify() {
  if (getBucket() && getProcess())
    return emitOpError("holds state one process alone holds: it cannot lie in a bucket, which "
                       "every process exchanges");
  if (getBucket() && getOptimizerState())
    return emitOpError("is optimizer state: only weights lie in a bucket (a broadcast's)");
  return verifyInBucket(*this, getBucket(), getBucketOffset(), getBuffer().getType(),
                        static_cast<int64_t>(getDevice()));
}

LogicalResult ViewOp::verify() {
  if (getSource().getType().getNumElements() != getBuffer().getType().getNumElements() ||
      getSource().getType().getElementType() != getBuffer().getType().getElementType())
    return emitOpError() << "cannot view " << getSource().getType() << " as "
                         << getBuffer().getType();
  return success();
}

std::optional<dp::rt::LiveTaps> dp::plan::convLiveTaps(KernelOp k) {
  // The image x, the weights w and the output y among the kernel's buffers.
  int xi, wi, yi;
  const int nIn = k.getInputs().size();
  auto buffer = [&](int i) { return i < nIn ? k.getInputs()[i] : k.getOutputs()[i - nIn]; };
  StringRef kind = k.getKind();
  if (kind == "conv2d") // ins (x, w[, b]) outs (y)
    xi = 0, wi = 1, yi = nIn;
  else if (kind == "conv2d_grad_input") // ins (dy, w) outs (dx)
    xi = nIn, wi = 1, yi = 0;
  else if (kind == "conv2d_grad_filter") // ins (x, dy) outs (dw)
    xi = 0, wi = nIn, yi = 1;
  else
    return std::nullopt;
  if (nIn < 2 || k.getOutputs().size() != 1)
    return std::nullopt;
  auto x = cast<MemRefType>(buffer(xi).getType()).getShape();
  auto w = cast<MemRefType>(buffer(wi).getType()).getShape();
  auto y = cast<MemRefType>(buffer(yi).getType()).getShape();
  if (x.size() != 4 || w.size() != 4 || y.size() != 4)
    return std::nullopt;
  auto attr = [&](StringRef name, int64_t absent) {
    auto a = k->getAttrOfType<IntegerAttr>(name);
    return a ? a.getInt() : absent;
  };
  dp::rt::ConvGeometry s;
  s.n = x[0], s.h = x[1], s.w = x[2], s.c = x[3];
  s.kh = w[0], s.kw = w[1], s.f = w[3], s.oh = y[1], s.ow = y[2];
  s.sh = attr("stride_h", 0), s.sw = attr("stride_w", 0);
  s.pt = attr("pad_top", -1), s.pl = attr("pad_left", -1);
  s.pb = attr("pad_bottom", -1), s.pr = attr("pad_right", -1);
  s.g = attr("groups", 1), s.dh = attr("dilation_h", 1), s.dw = attr("dilation_w", 1);
  if (s.sh < 1 || s.sw < 1 || s.dh < 1 || s.dw < 1 || s.g < 1 || s.pt < 0 || s.pl < 0 || s.pb < 0 ||
      s.pr < 0 || s.kh < 1 || s.kw < 1 || s.c % s.g != 0 || s.f % s.g != 0)
    return std::nullopt;
  return dp::rt::liveTaps(s);
}

/// The kernel's attributes against its contract (Kernels.def): each one the kind takes, with
/// the type the contract says, and every required one present.
LogicalResult KernelOp::verifyAttributes(dp::rt::KernelKind kind) {
  for (NamedAttribute attr : (*this)->getDiscardableAttrs()) {
    const dp::rt::AttrSpec *spec = dp::rt::findAttrSpec(kind, attr.getName().getValue());
    if (!spec)
      return emitOpError() << "kernel '" << getKind() << "' has no attribute '"
                           << attr.getName().getValue() << "'";
    Attribute v = attr.getValue();
    auto integer = dyn_cast<IntegerAttr>(v);
    bool ok = true;
    StringRef expected;
    switch (spec->type) {
    case dp::rt::AttrType::Int:
      ok = integer && integer.getType().isInteger(64), expected = "a 64-bit integer";
      break;
    case dp::rt::AttrType::Flag:
      ok = integer && integer.getType().isInteger(64) &&
           (integer.getInt() == 0 || integer.getInt() == 1),
      expected = "0 or 1";
      break;
    case dp::rt::AttrType::Float: {
      auto f = dyn_cast<FloatAttr>(v);
      ok = f && f.getType().isF64() && f.getValue().isFinite(), expected = "a finite f64";
      break;
    }
    case dp::rt::AttrType::Activation: {
      auto s = dyn_cast<StringAttr>(v);
      dp::rt::Activation act;
      ok = s && dp::rt::activationByName(s.getValue(), act),
      expected = "an activation name (none, relu, sigmoid, tanh, softmax)";
      break;
    }
    }
    if (!ok)
      return emitOpError() << "attribute '" << spec->name << "' of kernel '" << getKind()
                           << "' must be " << expected << ", found " << v;
  }
  for (const dp::rt::AttrSpec &spec : dp::rt::kernelAttrSpecs(kind))
    if (spec.required && !(*this)->hasAttr(spec.name))
      return emitOpError() << "kernel '" << getKind() << "' needs attribute '" << spec.name
                           << "'";
  return success();
}

LogicalResult KernelOp::verify() {
  dp::rt::KernelKind kind = dp::rt::kernelKindByName(getKind());
  if (kind == dp::rt::KernelKind::NumKinds)
    return emitOpError() << "unknown kernel '" << getKind() << "'";
  const dp::rt::KernelInfo &info = dp::rt::kernelInfo(kind);
  int nIn = getInputs().size(), nOut = getOutputs().size();
  if (nIn < info.minInputs || nIn > info.maxInputs)
    return emitOpError() << "kernel '" << getKind() << "' takes " << info.minInputs
                         << (info.maxInputs != info.minInputs
                                 ? " to " + std::to_string(info.maxInputs)
                                 : std::string())
                         << " inputs, found " << nIn;
  const int maxOut = dp::rt::maxOutputs(kind);
  if (nOut < info.numOutputs || nOut > maxOut)
    return emitOpError() << "kernel '" << getKind() << "' takes " << info.numOutputs
                         << (maxOut != info.numOutputs ? " to " + std::to_string(maxOut)
                                                       : std::string())
                         << " outputs, found " << nOut;
  if (failed(verifyAttributes(kind)))
    return failure();
  if (dp::rt::isCollective(kind)) {
    for (auto [i, v] : llvm::enumerate(getInputs()))
      if (bufferDevice(v) != static_cast<int64_t>(i))
        return emitOpError() << "collective input " << i << " must be device " << i
                             << "'s buffer, found device " << bufferDevice(v);
    return success();
  }
  std::optional<int64_t> device;
  for (Value v : getOperands()) {
    int64_t d = bufferDevice(v);
    if (device && d != *device)
      return emitOpError() << "mixes buffers of devices " << *device << " and " << d;
    device = d;
  }
  return success();
}
