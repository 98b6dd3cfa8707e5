// A small fluent builder of plan files for unit tests: declare buffers, params, inputs and
// kernels, then get the wrapped .dpx bytes, a verified PlanFile or a loaded Program. Offsets are
// laid out automatically (persistent buffers first) and can be overridden to build broken plans.
#pragma once

#include "runtime/backends/Backends.h"
#include "runtime/core/Program.h"
#include "runtime/format/PlanFile.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dp::rt::testing {

/// How a param is initialised (mirrors fb::Init).
struct InitSpec {
  InitKind kind = InitKind::Zeros;
  double a = 0, b = 0;
  int64_t fanIn = 0, fanOut = 0;
  int32_t data = -1; // InitKind::Data: a table of initData()
};

/// One kernel being built; attribute setters chain.
struct KernelSpec {
  uint16_t kind = 0;
  std::vector<uint32_t> inputs, outputs;
  struct Attr {
    std::string name;
    int64_t i = 0;
    double f = 0;
  };
  std::vector<Attr> attrs;
  std::string loc;
  /// The device that runs it; -1 for a collective.
  int16_t device = 0;
  /// Of the train step's final phase (gradient accumulation).
  bool final = false;
  /// The one process that runs it (-1: every process).
  int16_t process = -1;

  /// Sets an integer attribute (again: the last value counts).
  KernelSpec &attrI(const std::string &name, int64_t value) {
    for (auto &a : attrs)
      if (a.name == name) {
        a.i = value;
        return *this;
      }
    attrs.push_back({name, value, 0.0});
    return *this;
  }
  KernelSpec &attrF(const std::string &name, double value) {
    attrs.push_back({name, 0, value});
    return *this;
  }
  KernelSpec &activation(Activation act) { return attrI("activation", static_cast<int64_t>(act)); }
  KernelSpec &at(const std::string &location) {
    loc = location;
    return *this;
  }
  KernelSpec &markFinal() {
    final = true;
    return *this;
  }
  KernelSpec &onProcess(int16_t p) {
    process = p;
    return *this;
  }
};

class PlanBuilder {
public:
  explicit PlanBuilder(int64_t batch = 4) : batch_(batch) {}

  /// The plan's device kind record (DeviceKind; any byte, for negative tests).
  void deviceKind(uint8_t kind) { deviceKind_ = kind; }
  /// Devices per process (R); buffers and kernels declared next belong to device `onDevice`.
  PlanBuilder &devices(int count) {
    devices_ = count;
    return *this;
  }
  PlanBuilder &onDevice(int device) {
    currentDevice_ = device;
    return *this;
  }
  /// An allreduce of bucket `bucket` over `perDevice` (one f32 buffer of `elements` per
  /// device): its start kernel, its wait kernel (both in `step`'s current position when
  /// called) come from collectiveStart/collectiveWait; this adds the manifest entry.
  PlanBuilder &manifestEntry(int bucket, int64_t elements, const std::string &tensor,
                             CollectiveKind kind = CollectiveKind::AllReduceMean,
                             GroupKind group = GroupKind::World, int groupId = -1,
                             DType wire = DType::F32, int root = -1) {
    return manifestEntry(bucket, elements, std::vector<std::string>{tensor}, kind, group, groupId,
                         wire, root);
  }
  /// An entry naming several tensors (a bucket of them).
  PlanBuilder &manifestEntry(int bucket, int64_t elements, std::vector<std::string> tensors,
                             CollectiveKind kind, GroupKind group = GroupKind::World,
                             int groupId = -1, DType wire = DType::F32, int root = -1) {
    collectives_.push_back(
        {bucket, elements, std::move(tensors), kind, group, groupId, wire, root, {}});
    return *this;
  }
  /// Makes the latest manifest entry a reduce-scatter over these owners' segments.
  PlanBuilder &segments(std::vector<int64_t> offsets) {
    collectives_.back().segments = std::move(offsets);
    return *this;
  }
  KernelSpec &collective(StepKind step, KernelKind kind, int bucket,
                         std::vector<uint32_t> perDevice) {
    KernelSpec &k = kernel(step, kind, std::move(perDevice), {});
    k.device = -1;
    return k.attrI("bucket", bucket);
  }

  /// A transient buffer, laid out after the persistent region.
  uint32_t buffer(std::vector<int64_t> shape, DType dtype = DType::F32) {
    return addBuffer(std::move(shape), static_cast<uint8_t>(dtype), /*persistent=*/false, -1);
  }
  /// A buffer in the persistent region that is not a param (e.g. one read by a test).
  uint32_t persistentBuffer(std::vector<int64_t> shape, DType dtype = DType::F32) {
    return addBuffer(std::move(shape), static_cast<uint8_t>(dtype), /*persistent=*/true, -1);
  }
  /// A buffer that shares the bytes of `base` (a reshape, or memory reuse).
  uint32_t alias(uint32_t base, std::vector<int64_t> shape, DType dtype = DType::F32) {
    return addBuffer(std::move(shape), static_cast<uint8_t>(dtype), false, int64_t(base));
  }
  /// A param with its own persistent f32 buffer; returns the buffer id.
  uint32_t param(const std::string &name, std::vector<int64_t> shape, InitSpec init = {},
                 int32_t grad = -1, ParamKind kind = ParamKind::Weight) {
    uint32_t id = persistentBuffer(std::move(shape));
    paramOn(name, id, init, grad, kind);
    return id;
  }
  /// A param record on any buffer id (which need not exist: for negative tests).
  PlanBuilder &paramOn(const std::string &name, uint32_t buffer, InitSpec init = {},
                       int32_t grad = -1, ParamKind kind = ParamKind::Weight) {
    params_.push_back({name, buffer, grad, init, kind});
    return *this;
  }
  /// The last param declared is held by process `process` alone (sharded optimizer state).
  PlanBuilder &heldBy(int16_t process) {
    params_.back().process = process;
    return *this;
  }
  PlanBuilder &input(const std::string &name, uint32_t buffer, InputRole role) {
    inputs_.push_back({name, buffer, static_cast<uint8_t>(role)});
    return *this;
  }
  KernelSpec &kernel(StepKind step, KernelKind kind, std::vector<uint32_t> ins,
                     std::vector<uint32_t> outs) {
    return rawKernel(step, static_cast<uint16_t>(kind), std::move(ins), std::move(outs));
  }
  /// A kernel with any kind number (for unknown-kind tests).
  KernelSpec &rawKernel(StepKind step, uint16_t kind, std::vector<uint32_t> ins,
                        std::vector<uint32_t> outs) {
    KernelSpec &k = steps_[index(step)].kernels.emplace_back();
    k.kind = kind;
    k.device = static_cast<int16_t>(currentDevice_);
    k.inputs = std::move(ins);
    k.outputs = std::move(outs);
    return k;
  }
  PlanBuilder &output(StepKind step, const std::string &name, uint32_t buffer, OutputRole role) {
    steps_[index(step)].outputs.push_back({name, buffer, static_cast<uint8_t>(role)});
    return *this;
  }

  // Overrides of the automatic layout and header fields, for broken plans.
  PlanBuilder &setOffset(uint32_t id, uint64_t offset) {
    buffers_.at(id).offset = offset;
    return *this;
  }
  PlanBuilder &setRawDType(uint32_t id, uint8_t dtype) {
    buffers_.at(id).dtype = dtype;
    return *this;
  }
  PlanBuilder &setArenaBytes(uint64_t bytes) {
    arenaBytes_ = bytes;
    return *this;
  }
  PlanBuilder &setPersistentBytes(uint64_t bytes) {
    persistentBytes_ = bytes;
    return *this;
  }
  PlanBuilder &setBatch(int64_t batch) {
    batch_ = batch;
    return *this;
  }
  PlanBuilder &setLrSchedule(const LrSchedule &schedule) {
    schedule_ = schedule;
    return *this;
  }
  PlanBuilder &setProcesses(int processes) {
    processes_ = processes;
    return *this;
  }
  /// A table of initial values for InitKind::Data params; returns its index.
  int32_t initData(std::vector<float> values) {
    initData_.push_back(std::move(values));
    return static_cast<int32_t>(initData_.size() - 1);
  }
  /// The imported model's source the plan records (format "onnx" unless a test says).
  PlanBuilder &setExportSource(ExportSourceDesc source) {
    exportSource_ = std::move(source);
    return *this;
  }
  /// The parameter-server strategy: the servers' plans (in order) inside this workers' plan.
  PlanBuilder &addServer(PlanBuilder server) {
    servers_.push_back(std::move(server));
    return *this;
  }
  /// Gradient accumulation: micro-shards per device and step.
  PlanBuilder &accumulation(int count) {
    accumulation_ = count;
    return *this;
  }
  PlanBuilder &setStrategy(int64_t staleness, bool sync) {
    staleness_ = staleness;
    sync_ = sync;
    return *this;
  }
  /// Makes this a server's plan: its index, and its train step named "serve".
  PlanBuilder &setServer(int server) {
    server_ = server;
    trainName_ = "serve";
    return *this;
  }

  /// The FlatBuffer payload (no file header).
  std::vector<uint8_t> payload() const {
    flatbuffers::FlatBufferBuilder fbb;
    fb::FinishPlanBuffer(fbb, build(fbb));
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }

  /// This plan as a table of `fbb` (its servers' plans inside it).
  flatbuffers::Offset<fb::Plan> build(flatbuffers::FlatBufferBuilder &fbb) const {
    std::vector<flatbuffers::Offset<fb::Plan>> servers;
    for (const PlanBuilder &server : servers_)
      servers.push_back(server.build(fbb));
    std::vector<uint64_t> offsets = layout();
    uint64_t persistentEnd = 0, end = 0, placedEnd = 0;
    for (size_t i = 0; i < buffers_.size(); ++i) {
      const uint64_t bufferEnd = offsets[i] + bytesOf(buffers_[i]);
      end = std::max(end, bufferEnd);
      if (buffers_[i].persistent)
        persistentEnd = std::max(persistentEnd, bufferEnd);
      // Where the buffers really end, overridden offsets included (a wrapping one aside).
      const uint64_t offset = buffers_[i].offset.value_or(offsets[i]);
      if (offset <= (uint64_t(1) << 62))
        placedEnd = std::max(placedEnd, offset + bytesOf(buffers_[i]));
    }
    // The arena is the automatic layout's, so that an offset moved past it falls outside; an
    // offset moved inside it shrinks it to what the buffers use (the loader refuses more).
    end = std::min(end, std::max<uint64_t>(placedEnd, 1));
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
    for (size_t i = 0; i < buffers_.size(); ++i)
      buffers.push_back(fb::CreateBufferDirect(fbb, buffers_[i].dtype, &buffers_[i].shape,
                                               buffers_[i].offset.value_or(offsets[i]),
                                               static_cast<uint16_t>(buffers_[i].device)));
    std::vector<flatbuffers::Offset<fb::Param>> params;
    for (const ParamSpec &p : params_) {
      auto init = fb::CreateInit(fbb, static_cast<uint8_t>(p.init.kind), p.init.a, p.init.b,
                                 p.init.fanIn, p.init.fanOut, p.init.data);
      params.push_back(fb::CreateParamDirect(fbb, p.name.c_str(), p.buffer, p.grad, init,
                                             static_cast<uint8_t>(p.kind), p.process));
    }
    std::vector<flatbuffers::Offset<fb::Input>> inputs;
    for (const Named &in : inputs_)
      inputs.push_back(fb::CreateInputDirect(fbb, in.name.c_str(), in.buffer, in.role));
    auto train = buildStep(fbb, trainName_.c_str(), steps_[0]);
    auto eval = buildStep(fbb, "eval", steps_[1]);
    std::vector<flatbuffers::Offset<fb::Collective>> collectives;
    uint64_t manifest = 0;
    if (!collectives_.empty()) {
      manifest = fnv1a64(nullptr, 0);
      for (const CollectiveSpec &c : collectives_) {
        std::vector<flatbuffers::Offset<flatbuffers::String>> tensors;
        for (const std::string &t : c.tensors)
          tensors.push_back(fbb.CreateString(t));
        collectives.push_back(
            fb::CreateCollectiveDirect(fbb, uint8_t(c.kind), c.bucket, static_cast<uint8_t>(c.wire),
                                       c.elements, uint8_t(c.group), c.groupId, &tensors, "",
                                       c.root, c.segments.empty() ? nullptr : &c.segments));
        const std::string line =
            manifestLine(c.kind, c.bucket, static_cast<int>(c.wire), c.elements, c.group, c.groupId,
                         c.tensors, "", c.root, c.segments);
        manifest = fnv1a64(line.data(), line.size(), manifest);
      }
    }
    flatbuffers::Offset<fb::LrSchedule> schedule;
    if (schedule_)
      schedule = fb::CreateLrSchedule(fbb, static_cast<uint8_t>(schedule_->kind),
                                      schedule_->warmupEpochs, schedule_->warmupStart,
                                      schedule_->every, schedule_->factor, schedule_->epochs,
                                      schedule_->minScale, schedule_->patience,
                                      schedule_->threshold);
    std::vector<flatbuffers::Offset<fb::InitData>> initData;
    for (const std::vector<float> &values : initData_)
      initData.push_back(fb::CreateInitDataDirect(fbb, &values));
    auto plan = fb::CreatePlanDirect(
        fbb, "PlanBuilder", "test", batch_, arenaBytes_.value_or(roundUp(end)),
        persistentBytes_.value_or(roundUp(persistentEnd)), &buffers, &params, &inputs, train, eval,
        devices_, processes_, collectives.empty() ? nullptr : &collectives, manifest, deviceKind_,
        schedule, /*nodes=*/1, servers.empty() ? nullptr : &servers, staleness_, sync_, server_,
        initData.empty() ? nullptr : &initData, exportSource(fbb), accumulation_);
    return plan;
  }
  /// The complete .dpx file image.
  std::vector<uint8_t> fileBytes() const {
    std::vector<uint8_t> p = payload();
    std::string file = wrapPlanPayload(p.data(), p.size());
    return std::vector<uint8_t>(file.begin(), file.end());
  }
  PlanFile planFile() const { return PlanFile::fromBytes(fileBytes(), "test.dpx"); }
  /// The verified plan, decoded.
  Plan plan() const { return Plan::fromBytes(fileBytes(), "test.dpx"); }
  std::unique_ptr<Program> load() const {
    registerBuiltinBackends();
    return Program::load(plan());
  }

private:
  struct BufferSpec {
    std::vector<int64_t> shape;
    uint8_t dtype;
    bool persistent;
    int64_t aliasOf;
    std::optional<uint64_t> offset;
    int device = 0;
  };
  struct CollectiveSpec {
    int bucket;
    int64_t elements;
    std::vector<std::string> tensors;
    CollectiveKind kind;
    GroupKind group;
    int groupId;
    DType wire;
    int root;
    std::vector<int64_t> segments;
  };
  struct ParamSpec {
    std::string name;
    uint32_t buffer;
    int32_t grad;
    InitSpec init;
    ParamKind kind;
    int16_t process = -1;
  };
  struct Named {
    std::string name;
    uint32_t buffer;
    uint8_t role; // InputRole or OutputRole
  };
  struct StepSpec {
    std::deque<KernelSpec> kernels; // a deque keeps returned references valid
    std::vector<Named> outputs;
  };

  static int index(StepKind step) { return step == StepKind::Train ? 0 : 1; }
  static uint64_t roundUp(uint64_t bytes) { return (bytes + 63) / 64 * 64; }
  static uint64_t bytesOf(const BufferSpec &b) {
    uint64_t n = dtypeSize(static_cast<DType>(b.dtype));
    for (int64_t d : b.shape)
      n *= static_cast<uint64_t>(d);
    return n;
  }

  uint32_t addBuffer(std::vector<int64_t> shape, uint8_t dtype, bool persistent, int64_t aliasOf) {
    buffers_.push_back(
        {std::move(shape), dtype, persistent, aliasOf, std::nullopt, currentDevice_});
    return static_cast<uint32_t>(buffers_.size() - 1);
  }

  // Per device: persistent buffers first, then transient ones (after every device's
  // persistent region), each 64-byte aligned; aliases share their base's offset. Overrides are
  // not applied here.
  std::vector<uint64_t> layout() const {
    std::vector<uint64_t> offsets(buffers_.size(), 0);
    std::vector<uint64_t> next(devices_, 0);
    for (bool persistentPass : {true, false}) {
      for (size_t i = 0; i < buffers_.size(); ++i)
        if (buffers_[i].aliasOf < 0 && buffers_[i].persistent == persistentPass) {
          uint64_t &at = next.at(buffers_[i].device);
          offsets[i] = at;
          at = roundUp(at + bytesOf(buffers_[i]));
        }
      const uint64_t persistentEnd = *std::max_element(next.begin(), next.end());
      std::fill(next.begin(), next.end(), persistentEnd);
    }
    for (size_t i = 0; i < buffers_.size(); ++i)
      if (buffers_[i].aliasOf >= 0)
        offsets[i] = offsets[buffers_[i].aliasOf];
    return offsets;
  }

  static flatbuffers::Offset<fb::Step> buildStep(flatbuffers::FlatBufferBuilder &fbb,
                                                 const char *name, const StepSpec &step) {
    std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
    for (const KernelSpec &k : step.kernels) {
      std::vector<flatbuffers::Offset<fb::Attr>> attrs;
      for (const KernelSpec::Attr &a : k.attrs)
        attrs.push_back(fb::CreateAttrDirect(fbb, a.name.c_str(), a.i, a.f));
      kernels.push_back(fb::CreateKernelDirect(fbb, k.kind, &k.inputs, &k.outputs, &attrs,
                                               k.loc.empty() ? nullptr : k.loc.c_str(), k.device,
                                               k.final, k.process));
    }
    std::vector<flatbuffers::Offset<fb::Output>> outputs;
    for (const Named &o : step.outputs)
      outputs.push_back(fb::CreateOutputDirect(fbb, o.name.c_str(), o.buffer, o.role));
    return fb::CreateStepDirect(fbb, name, &kernels, &outputs);
  }

  int64_t batch_;
  std::optional<LrSchedule> schedule_;
  uint8_t deviceKind_ = 0;
  int processes_ = 1;
  std::vector<PlanBuilder> servers_;
  std::vector<std::vector<float>> initData_;
  std::optional<ExportSourceDesc> exportSource_;

  flatbuffers::Offset<fb::ExportSource> exportSource(flatbuffers::FlatBufferBuilder &fbb) const {
    if (!exportSource_)
      return 0;
    std::vector<flatbuffers::Offset<fb::ExportParam>> params;
    for (const ExportParamDesc &p : exportSource_->params) {
      std::vector<int32_t> rewire;
      for (auto [node, input] : p.rewire)
        rewire.insert(rewire.end(), {node, input});
      params.push_back(fb::CreateExportParamDirect(fbb, p.param.c_str(), p.value.c_str(),
                                                   p.isInitializer, &rewire, p.layout, &p.dims,
                                                   &p.flattenedChw));
    }
    std::vector<uint8_t> model(exportSource_->model.begin(), exportSource_->model.end());
    return fb::CreateExportSourceDirect(fbb, exportSource_->format.c_str(), &model, &params);
  }
  int64_t staleness_ = -1;
  int accumulation_ = 1;
  bool sync_ = false;
  int server_ = -1;
  std::string trainName_ = "train";
  int devices_ = 1, currentDevice_ = 0;
  std::vector<CollectiveSpec> collectives_;
  std::vector<BufferSpec> buffers_;
  std::vector<ParamSpec> params_;
  std::vector<Named> inputs_;
  StepSpec steps_[2];
  std::optional<uint64_t> arenaBytes_, persistentBytes_;
};

/// Typed access to a loaded program's buffers.
inline float *f32(Program &program, uint32_t id) {
  return static_cast<float *>(program.bufferData(id));
}
inline int32_t *i32(Program &program, uint32_t id) {
  return static_cast<int32_t *>(program.bufferData(id));
}

} // namespace dp::rt::testing
