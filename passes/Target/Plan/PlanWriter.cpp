// The plan writer: one FlatBuffer record per plan op (see runtime/format/plan.fbs).
#include "passes/Target/Plan/PlanWriter.h"

#include "dialect/Graph/IR/Model.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "runtime/format/KernelAttrs.h"
#include "runtime/format/LrSchedule.h"
#include "runtime/format/PlanFile.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

using namespace mlir;
namespace fb = dp::rt::fb;

namespace dp::plan {
namespace {

std::string locationString(Location loc) {
  std::string s;
  loc->walk([&](Location l) {
    if (auto file = dyn_cast<FileLineColLoc>(l)) {
      s = (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
           Twine(file.getColumn()))
              .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return s;
}

/// Writes one program as a Plan table into a builder that may hold others (the servers' plans
/// go inside the workers').
class Writer {
public:
  Writer(ProgramOp program, flatbuffers::FlatBufferBuilder &fbb)
      : program_(program), fbb_(fbb) {}

  FailureOr<flatbuffers::Offset<fb::Plan>> run(StringRef producer,
                                               ArrayRef<flatbuffers::Offset<fb::Plan>> servers,
                                               const rt::ExportSourceDesc *source = nullptr) {
    auto arena = program_->getAttrOfType<IntegerAttr>("arena_bytes");
    auto persistent = program_->getAttrOfType<IntegerAttr>("persistent_bytes");
    if (!arena || !persistent)
      return program_.emitError("the plan has no memory layout (run plan-memory first)");

    // Every buffer value gets an id; views share their source's bytes.
    if (failed(collectBuffers()))
      return failure();

    std::vector<flatbuffers::Offset<fb::Param>> params;
    std::vector<flatbuffers::Offset<fb::Input>> inputs;
    // A parameter's gradient is the one on its own device.
    llvm::DenseMap<std::pair<StringRef, int64_t>, int> gradIds;
    for (GradOp grad : program_.getOps<GradOp>())
      gradIds[{grad.getParam(), grad.getDevice()}] = ids_.lookup(grad.getBuffer());
    // Initial values given as data: each distinct one once (replicas share their tables).
    std::vector<flatbuffers::Offset<fb::InitData>> initData;
    llvm::DenseMap<Attribute, int32_t> dataIndex;
    for (ParamOp param : program_.getOps<ParamOp>()) {
      InitAttr init = param.getInit();
      int32_t data = -1;
      if (ElementsAttr values = init.getData()) {
        auto [it, inserted] = dataIndex.try_emplace(values, int32_t(initData.size()));
        if (inserted) {
          FailureOr<std::vector<float>> floats = graph::initialValues(param, values);
          if (failed(floats))
            return failure();
          initData.push_back(fb::CreateInitData(fbb_, fbb_.CreateVector(*floats)));
        }
        data = it->second;
      }
      auto initRec =
          fb::CreateInit(fbb_, initKind(init.getKind()), init.getA().convertToDouble(),
                         init.getB().convertToDouble(), init.getFanIn(), init.getFanOut(), data);
      auto key = std::make_pair(param.getName(), int64_t(param.getDevice()));
      int grad = gradIds.count(key) ? gradIds.lookup(key) : -1;
      auto kind = param.getOptimizerState() ? rt::ParamKind::OptimizerState : rt::ParamKind::Weight;
      if (param.getProcess() && *param.getProcess() > uint64_t(INT16_MAX))
        return param.emitOpError() << "is held by process " << *param.getProcess()
                                   << ": the plan records at most " << INT16_MAX;
      params.push_back(fb::CreateParam(
          fbb_, fbb_.CreateString(param.getName().str()), ids_.lookup(param.getBuffer()), grad,
          initRec, static_cast<uint8_t>(kind),
          param.getProcess() ? static_cast<int16_t>(*param.getProcess()) : int16_t(-1)));
    }
    for (InputOp input : program_.getOps<InputOp>()) {
      rt::InputRole role{}; // the op's verifier has checked the name
      rt::inputRoleByName(input.getRole(), role);
      inputs.push_back(fb::CreateInput(fbb_, fbb_.CreateString(input.getName().str()),
                                       ids_.lookup(input.getBuffer()), static_cast<uint8_t>(role)));
    }

    flatbuffers::Offset<fb::Step> train, eval;
    const bool server = program_.getServerAttr() != nullptr;
    for (StepOp step : program_.getOps<StepOp>()) {
      FailureOr<flatbuffers::Offset<fb::Step>> rec = writeStep(step);
      if (failed(rec))
        return failure();
      if (step.getName() == (server ? "serve" : "train"))
        train = *rec;
      else if (step.getName() == "eval")
        eval = *rec;
    }
    // A server's plan has no evaluation: an empty eval step keeps the table's shape.
    if (server && eval.IsNull())
      eval = fb::CreateStep(fbb_, fbb_.CreateString("eval"),
                            fbb_.CreateVector(std::vector<flatbuffers::Offset<fb::Kernel>>()));
    if (train.IsNull() || eval.IsNull())
      return program_.emitError(server ? "a server's plan needs a 'serve' step"
                                       : "the plan needs a 'train' and an 'eval' step");

    uint64_t manifestHash = 0;
    auto collectives = writeManifest(manifestHash);
    // The schedule as the program's verifier accepted it; none for the constant rate.
    flatbuffers::Offset<fb::LrSchedule> schedule;
    if (auto text = program_.getLrScheduleAttr()) {
      rt::LrSchedule s;
      std::string problem;
      if (!rt::parseLrSchedule(text.getValue().str(), 0, s, problem))
        return program_.emitError("invalid lr_schedule: ") << problem;
      if (!s.isConstant())
        schedule = fb::CreateLrSchedule(fbb_, static_cast<uint8_t>(s.kind), s.warmupEpochs,
                                        s.warmupStart, s.every, s.factor, s.epochs, s.minScale,
                                        s.patience, s.threshold);
    }
    auto plan = fb::CreatePlan(
        fbb_, fbb_.CreateString(producer.str()), fbb_.CreateString(program_.getModel().str()),
        program_.getBatch(), arena.getInt(), persistent.getInt(), fbb_.CreateVector(buffers_),
        fbb_.CreateVector(params), fbb_.CreateVector(inputs), train, eval,
        program_.getDevicesPerProcess(), program_.getProcesses(), collectives, manifestHash,
        static_cast<uint8_t>(deviceKind()), schedule,
        static_cast<int32_t>(program_.getNodes().value_or(1)),
        servers.empty() ? 0 : fbb_.CreateVector(servers.data(), servers.size()),
        program_.getStaleness().value_or(-1), program_.getSync(),
        server ? static_cast<int32_t>(program_.getServerAttr().getInt()) : -1,
        initData.empty() ? 0 : fbb_.CreateVector(initData), writeExportSource(source),
        static_cast<int32_t>(program_.getAccumulation().value_or(1)));
    return plan;
  }

  /// The program's device kind (the plan dialect's verifier checked its name).
  rt::DeviceKind deviceKind() {
    rt::DeviceKind kind = rt::DeviceKind::Cpu;
    rt::deviceKindByName(program_.getDevice(), kind);
    return kind;
  }

private:
  static uint8_t initKind(StringRef kind) {
    rt::InitKind k = llvm::StringSwitch<rt::InitKind>(kind)
                         .Case("zeros", rt::InitKind::Zeros)
                         .Case("ones", rt::InitKind::Ones)
                         .Case("constant", rt::InitKind::Constant)
                         .Case("uniform", rt::InitKind::Uniform)
                         .Case("normal", rt::InitKind::Normal)
                         .Case("glorot_uniform", rt::InitKind::GlorotUniform)
                         .Case("glorot_normal", rt::InitKind::GlorotNormal)
                         .Case("he_normal", rt::InitKind::HeNormal)
                         .Case("he_uniform", rt::InitKind::HeUniform)
                         .Case("orthogonal", rt::InitKind::Orthogonal)
                         .Case("unit_forget_bias", rt::InitKind::UnitForgetBias)
                         .Case("data", rt::InitKind::Data);
    return static_cast<uint8_t>(k);
  }

  /// The manifest: one entry per allreduce_start of the train step, in issue order, with
  /// the gradients of device 0's bucket in bucket order.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Collective>>>
  writeManifest(uint64_t &hash) {
    llvm::DenseMap<Value, SmallVector<std::pair<int64_t, std::string>>> contents;
    for (GradOp grad : program_.getOps<GradOp>())
      if (grad.getBucket())
        contents[grad.getBucket()].push_back({*grad.getBucketOffset(), grad.getParam().str()});
    for (ParamOp param : program_.getOps<ParamOp>())
      if (param.getBucket())
        contents[param.getBucket()].push_back({*param.getBucketOffset(), param.getName().str()});
    const llvm::DenseSet<Value> bf16Wire = bf16WireBuckets(program_);
    std::vector<flatbuffers::Offset<fb::Collective>> entries;
    hash = rt::fnv1a64(nullptr, 0);
    // What a bucket's exchange is, and with whom: every replica (allreduce), the server
    // holding its parameters (a worker's push and pull), the workers (a server).
    const bool server = program_.getServerAttr() != nullptr;
    const StringRef start = server ? "receive_push"
                            : program_.getServersAttr() ? "push_start"
                                                        : "allreduce_start";
    const rt::CollectiveKind kind = server                      ? rt::CollectiveKind::ReceiveReply
                                    : program_.getServersAttr() ? rt::CollectiveKind::PushPull
                                                                : rt::CollectiveKind::AllReduceMean;
    for (StepOp step : program_.getOps<StepOp>()) {
      if (step.getName() != (server ? "serve" : "train"))
        continue;
      for (KernelOp k : step.getOps<KernelOp>()) {
        // Parameters' broadcast from the replica that updated them (sharded optimizer state):
        // its bucket holds them.
        if (k.getKind() == "broadcast_start") {
          const rt::CollectiveAttrs attrs = collectiveAttrs(k);
          Value bucket = k.getInputs().front();
          auto members = contents.lookup(bucket);
          llvm::sort(members);
          std::vector<std::string> tensors;
          for (auto &[offset, name] : members)
            tensors.push_back(name);
          const int64_t elements = cast<MemRefType>(bucket.getType()).getNumElements();
          std::string loc = locationString(k.getLoc());
          // Within each process from replica `root`, or over the job from replica `root` of
          // process `root_process`: the job's replica root_process * R + root.
          const bool world = attrs.root_process >= 0;
          const rt::GroupKind group = world ? rt::GroupKind::World : rt::GroupKind::Replicas;
          const int root =
              int(world ? attrs.root_process * program_.getDevicesPerProcess() + attrs.root
                        : attrs.root);
          std::string line =
              rt::manifestLine(rt::CollectiveKind::Broadcast, int(attrs.bucket),
                               int(rt::DType::F32), elements, group, -1, tensors, loc, root);
          hash = rt::fnv1a64(line.data(), line.size(), hash);
          entries.push_back(fb::CreateCollective(
              fbb_, uint8_t(rt::CollectiveKind::Broadcast), int(attrs.bucket),
              uint8_t(rt::DType::F32), elements, uint8_t(group), -1,
              fbb_.CreateVectorOfStrings(tensors), fbb_.CreateString(loc), root));
          continue;
        }
        if (k.getKind() != start)
          continue;
        Value bucket = k.getInputs().front();
        auto members = contents.lookup(bucket);
        llvm::sort(members);
        std::vector<std::string> tensors;
        for (auto &m : members)
          tensors.push_back(m.second);
        int index = static_cast<int>(k->getAttrOfType<IntegerAttr>("bucket").getInt());
        int64_t elements = cast<MemRefType>(bucket.getType()).getNumElements();
        std::string loc = locationString(k.getLoc());
        rt::GroupKind group = server ? rt::GroupKind::Workers : rt::GroupKind::World;
        int groupId = -1;
        std::vector<int64_t> segments; // a reduce-scattered bucket's owners'
        if (auto def = bucket.getDefiningOp<BucketOp>()) {
          if (def.getServerAttr()) {
            group = rt::GroupKind::Server;
            groupId = static_cast<int>(def.getServerAttr().getInt());
          }
          if (def.getSegmentsAttr())
            segments.assign(def.getSegmentsAttr().asArrayRef().begin(),
                            def.getSegmentsAttr().asArrayRef().end());
        }
        const rt::DType wire =
            kind == rt::CollectiveKind::AllReduceMean && bf16Wire.contains(bucket) ? rt::DType::BF16
                                                                                   : rt::DType::F32;
        std::string line = rt::manifestLine(kind, index, int(wire), elements, group, groupId,
                                            tensors, loc, -1, segments);
        hash = rt::fnv1a64(line.data(), line.size(), hash);
        std::vector<flatbuffers::Offset<flatbuffers::String>> names;
        for (auto &t : tensors)
          names.push_back(fbb_.CreateString(t));
        entries.push_back(fb::CreateCollective(fbb_, uint8_t(kind), index, uint8_t(wire), elements,
                                               uint8_t(group), groupId, fbb_.CreateVector(names),
                                               fbb_.CreateString(loc), -1,
                                               segments.empty() ? 0 : fbb_.CreateVector(segments)));
      }
    }
    if (entries.empty())
      hash = 0;
    return fbb_.CreateVector(entries);
  }

  /// A collective kernel's bucket, root and root process.
  static rt::CollectiveAttrs collectiveAttrs(KernelOp k) {
    rt::CollectiveAttrs attrs;
    attrs.bucket = k->getAttrOfType<IntegerAttr>("bucket").getInt();
    if (auto root = k->getAttrOfType<IntegerAttr>("root"))
      attrs.root = root.getInt();
    if (auto process = k->getAttrOfType<IntegerAttr>("root_process"))
      attrs.root_process = process.getInt();
    return attrs;
  }

  LogicalResult addBuffer(Value value, int64_t offset) {
    auto type = cast<MemRefType>(value.getType());
    auto dtype = type.getElementType().isInteger(32) ? rt::DType::I32
                 : type.getElementType().isBF16()    ? rt::DType::BF16
                                                     : rt::DType::F32;
    ids_[value] = buffers_.size();
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    buffers_.push_back(fb::CreateBuffer(fbb_, static_cast<uint8_t>(dtype),
                                        fbb_.CreateVector(shape), offset,
                                        static_cast<uint16_t>(bufferDevice(value))));
    offsets_[value] = offset;
    return success();
  }

  LogicalResult collectBuffers() {
    WalkResult walk = program_.walk([&](Operation *op) {
      if (op->getNumResults() != 1 || !isa<MemRefType>(op->getResult(0).getType()))
        return WalkResult::advance();
      Value result = op->getResult(0);
      if (auto view = dyn_cast<ViewOp>(op)) {
        (void)addBuffer(result, offsets_.lookup(view.getSource()));
        return WalkResult::advance();
      }
      auto offset = op->getAttrOfType<IntegerAttr>("offset");
      if (!offset) {
        op->emitOpError("has no offset (run plan-memory first)");
        return WalkResult::interrupt();
      }
      (void)addBuffer(result, offset.getInt());
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// The kernel's attributes in the order of its contract (Kernels.def); the plan.kernel
  /// verifier has checked their names and types against the same contract.
  std::vector<flatbuffers::Offset<fb::Attr>> writeAttrs(KernelOp k, rt::KernelKind kind) {
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    for (const rt::AttrSpec &spec : rt::kernelAttrSpecs(kind)) {
      Attribute v = k->getAttr(spec.name);
      if (!v)
        continue;
      int64_t i = 0;
      double f = 0;
      if (spec.type == rt::AttrType::Float) {
        f = cast<FloatAttr>(v).getValueAsDouble();
      } else if (spec.type == rt::AttrType::Activation) {
        rt::Activation act = rt::Activation::None;
        rt::activationByName(cast<StringAttr>(v).getValue(), act);
        i = static_cast<int64_t>(act);
      } else {
        i = cast<IntegerAttr>(v).getInt();
      }
      attrs.push_back(fb::CreateAttr(fbb_, fbb_.CreateString(spec.name), i, f));
    }
    return attrs;
  }

  FailureOr<flatbuffers::Offset<fb::Step>> writeStep(StepOp step) {
    std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
    std::vector<flatbuffers::Offset<fb::Output>> outputs;
    for (Operation &op : step.getBody().front()) {
      if (auto out = dyn_cast<OutputOp>(op)) {
        rt::OutputRole role{}; // the op's verifier has checked the name
        rt::outputRoleByName(out.getRole(), role);
        outputs.push_back(fb::CreateOutput(fbb_, fbb_.CreateString(out.getName().str()),
                                           ids_.lookup(out.getBuffer()),
                                           static_cast<uint8_t>(role)));
        continue;
      }
      auto k = dyn_cast<KernelOp>(op);
      if (!k)
        continue;
      rt::KernelKind kind = rt::kernelKindByName(k.getKind());
      if (kind == rt::KernelKind::NumKinds)
        return k.emitOpError() << "unknown kernel '" << k.getKind() << "'";
      std::vector<uint32_t> ins, outs;
      for (Value v : k.getInputs())
        ins.push_back(ids_.lookup(v));
      for (Value v : k.getOutputs())
        outs.push_back(ids_.lookup(v));
      std::vector<flatbuffers::Offset<fb::Attr>> attrs = writeAttrs(k, kind);
      auto insV = fbb_.CreateVector(ins);
      auto outsV = fbb_.CreateVector(outs);
      auto attrsV = fbb_.CreateVector(attrs);
      auto loc = fbb_.CreateString(locationString(k.getLoc()));
      if (k.getProcess() && *k.getProcess() > uint64_t(INT16_MAX))
        return k.emitOpError() << "runs on process " << *k.getProcess()
                               << ": the plan records at most " << INT16_MAX;
      int16_t device = rt::isCollective(kind) ? -1 : 0;
      if (!rt::isCollective(kind) && !k->getOperands().empty())
        device = static_cast<int16_t>(bufferDevice(k->getOperand(0)));
      kernels.push_back(fb::CreateKernel(
          fbb_, static_cast<uint16_t>(kind), insV, outsV, attrsV, loc, device, k.getFinal(),
          k.getProcess() ? static_cast<int16_t>(*k.getProcess()) : int16_t(-1)));
    }
    auto name = fbb_.CreateString(step.getName().str());
    auto kernelsV = fbb_.CreateVector(kernels);
    auto outputsV = fbb_.CreateVector(outputs);
    return fb::CreateStep(fbb_, name, kernelsV, outputsV);
  }

  flatbuffers::Offset<fb::ExportSource> writeExportSource(const rt::ExportSourceDesc *source) {
    if (!source)
      return 0;
    std::vector<flatbuffers::Offset<fb::ExportParam>> params;
    for (const rt::ExportParamDesc &p : source->params) {
      std::vector<int32_t> rewire;
      for (auto [node, input] : p.rewire)
        rewire.insert(rewire.end(), {node, input});
      params.push_back(fb::CreateExportParam(
          fbb_, fbb_.CreateString(p.param), fbb_.CreateString(p.value), p.isInitializer,
          rewire.empty() ? 0 : fbb_.CreateVector(rewire), p.layout, fbb_.CreateVector(p.dims),
          p.flattenedChw.empty() ? 0 : fbb_.CreateVector(p.flattenedChw)));
    }
    return fb::CreateExportSource(
        fbb_, fbb_.CreateString(source->format),
        fbb_.CreateVector(reinterpret_cast<const uint8_t *>(source->model.data()),
                          source->model.size()),
        fbb_.CreateVector(params));
  }

  ProgramOp program_;
  flatbuffers::FlatBufferBuilder &fbb_;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers_;
  llvm::DenseMap<Value, uint32_t> ids_;
  llvm::DenseMap<Value, int64_t> offsets_;
};

} // namespace

LogicalResult writePlan(ModuleOp module, StringRef producer, std::string &out,
                        const rt::ExportSourceDesc *source) {
  // The workers' program (the only one without a server index) and the servers' in order.
  ProgramOp root;
  SmallVector<ProgramOp> servers;
  for (ProgramOp program : module.getOps<ProgramOp>()) {
    if (program.getServerAttr()) {
      servers.push_back(program);
    } else if (root) {
      return module.emitError("expected one plan.program to write (and its servers'), found "
                              "two without a server index");
    } else {
      root = program;
    }
  }
  if (!root)
    return module.emitError("expected one plan.program to write, found none");
  llvm::stable_sort(servers, [](ProgramOp a, ProgramOp b) {
    return a.getServerAttr().getInt() < b.getServerAttr().getInt();
  });
  const int64_t expected = root.getServers().value_or(0);
  if (static_cast<int64_t>(servers.size()) != expected)
    return root.emitError() << "the program names " << expected << " server(s) but the module "
                            << "has " << servers.size() << " server program(s)";
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Plan>> serverPlans;
  for (auto [s, server] : llvm::enumerate(servers)) {
    if (server.getServerAttr().getInt() != static_cast<int64_t>(s))
      return server.emitError() << "is server " << server.getServerAttr().getInt()
                                << "; the server programs must be 0 to " << expected - 1;
    FailureOr<flatbuffers::Offset<fb::Plan>> plan = Writer(server, fbb).run(producer, {});
    if (failed(plan))
      return failure();
    serverPlans.push_back(*plan);
  }
  FailureOr<flatbuffers::Offset<fb::Plan>> plan =
      Writer(root, fbb).run(producer, serverPlans, source);
  if (failed(plan))
    return failure();
  fb::FinishPlanBuffer(fbb, *plan);
  out = rt::wrapPlanPayload(fbb.GetBufferPointer(), fbb.GetSize());
  // dpc never writes a plan that dprun would refuse.
  if (std::string error = rt::PlanFile::verifyImage(out.data(), out.size()); !error.empty())
    return root.emitError()
           << "the runtime's verifier refuses the plan built from this program: " << error;
  return success();
}

} // namespace dp::plan
