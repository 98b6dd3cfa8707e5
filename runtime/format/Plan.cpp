// Decoding a verified plan file into the runtime's structs; see Plan.h.
#include "runtime/format/Plan.h"

#include "runtime/format/Flops.h"

#include "runtime/base/Error.h"
#include "runtime/format/PlanFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_set>

namespace dp::rt {
namespace {

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

std::vector<uint32_t> ids(const flatbuffers::Vector<uint32_t> *v) {
  return v ? std::vector<uint32_t>(v->begin(), v->end()) : std::vector<uint32_t>();
}

std::vector<OutputDesc> outputs(const flatbuffers::Vector<flatbuffers::Offset<fb::Output>> *v) {
  std::vector<OutputDesc> out;
  if (v)
    for (const fb::Output *o : *v)
      out.push_back({o->name()->str(), o->buffer(), OutputRole(o->role())});
  return out;
}

/// Decodes the attributes of one kernel into the set its kind takes, checking each value
/// against its contract.
class AttrDecoder {
public:
  AttrDecoder(const fb::Kernel &kernel, const std::string &where)
      : kernel_(kernel), where_(where) {}

  template <typename Set> KernelAttrSet decode() const {
    Set set;
    set.visitFields([&](const AttrSpec &spec, auto &field) { decodeField(spec, field); });
    return set;
  }

private:
  [[noreturn]] void fail(const std::string &message) const {
    throw Error(ErrorKind::Plan, where_ + ": " + message);
  }
  /// The attribute `spec` names; null when it is absent and optional.
  const fb::Attr *find(const AttrSpec &spec) const {
    if (kernel_.attrs())
      for (const fb::Attr *a : *kernel_.attrs())
        if (a->name()->string_view() == spec.name)
          return a;
    if (spec.required)
      fail(std::string("missing attribute '") + spec.name + "'");
    return nullptr;
  }
  void decodeField(const AttrSpec &spec, int64_t &field) const {
    if (const fb::Attr *a = find(spec))
      field = a->i();
  }
  void decodeField(const AttrSpec &spec, double &field) const {
    if (const fb::Attr *a = find(spec))
      field = a->f();
    if (!std::isfinite(field))
      fail(std::string("attribute '") + spec.name + "' is not finite");
  }
  void decodeField(const AttrSpec &spec, bool &field) const {
    const fb::Attr *a = find(spec);
    if (a && a->i() != 0 && a->i() != 1)
      fail(std::string(spec.name) + " must be 0 or 1, not " + std::to_string(a->i()));
    field = a && a->i() == 1;
  }
  void decodeField(const AttrSpec &spec, Activation &field) const {
    const fb::Attr *a = find(spec);
    const int64_t value = a ? a->i() : 0;
    if (value < 0 || value >= static_cast<int64_t>(kNumActivations))
      fail("unknown activation " + std::to_string(value));
    field = static_cast<Activation>(value);
  }

  const fb::Kernel &kernel_;
  const std::string &where_;
};

KernelAttrSet decodeAttrs(const fb::Kernel &kernel, const std::string &where) {
  const AttrDecoder decoder(kernel, where);
  switch (KernelKind(kernel.kind())) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                       \
  case KernelKind::Enum:                                                                         \
    return decoder.decode<Attrs>();
#include "runtime/format/Kernels.def"
  case KernelKind::NumKinds:
    break;
  }
  // The verifier refused unknown kinds already.
  throw Error(ErrorKind::Plan, where + ": unknown kernel kind");
}

StepDesc decodeStep(const fb::Step &step, const std::string &what) {
  StepDesc out;
  out.name = step.name()->str();
  int index = 0;
  for (const fb::Kernel *k : *step.kernels()) {
    KernelDesc kernel;
    kernel.kind = KernelKind(k->kind());
    kernel.inputs = ids(k->inputs());
    kernel.outputs = ids(k->outputs());
    kernel.loc = str(k->loc());
    kernel.device = k->device();
    kernel.final = k->final();
    kernel.process = k->process();
    kernel.where = out.name + " kernel #" + std::to_string(index++) + " (" +
                   kernelInfo(kernel.kind).name + ")";
    if (!kernel.loc.empty())
      kernel.where += " at " + kernel.loc;
    kernel.attrs = decodeAttrs(*k, what + ": " + kernel.where);
    out.kernels.push_back(std::move(kernel));
  }
  out.outputs = outputs(step.outputs());
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string valueText(int64_t v) { return std::to_string(v); }
std::string valueText(double v) { return number(v); }
std::string valueText(bool v) { return v ? "1" : "0"; }
std::string valueText(Activation v) { return activationName(v); }

} // namespace

std::vector<size_t> Plan::logicalParams() const {
  std::vector<size_t> out;
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < params.size(); ++i)
    if (seen.insert(params[i].name).second)
      out.push_back(i);
  return out;
}

bool Plan::shardsAcrossProcesses() const {
  for (const ParamDesc &p : params)
    if (p.process >= 0)
      return true;
  return false;
}

void Plan::keepProcess(int rank) {
  process = rank;
  auto &kernels = train.kernels;
  kernels.erase(
      std::remove_if(kernels.begin(), kernels.end(),
                     [&](const KernelDesc &k) { return k.process >= 0 && k.process != rank; }),
      kernels.end());
}

bool Plan::shardsOptimizerState() const {
  for (const CollectiveDesc &c : collectives)
    if (c.kind == CollectiveKind::Broadcast)
      return true;
  return false;
}

std::string BufferDesc::text() const {
  std::string out = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

const InputDesc *Plan::input(InputRole role, int device) const {
  for (const InputDesc &in : inputs)
    if (in.role == role && buffers[in.buffer].device == device)
      return &in;
  return nullptr;
}

const OutputDesc *Plan::output(StepKind kind, OutputRole role, int device) const {
  for (const OutputDesc &o : step(kind).outputs)
    if (o.role == role && buffers[o.buffer].device == device)
      return &o;
  return nullptr;
}

double Plan::stepFlops(StepKind kind) const {
  double flops = 0;
  std::vector<FlopShape> in, out;
  for (const KernelDesc &k : step(kind).kernels) {
    in.clear();
    out.clear();
    for (uint32_t b : k.inputs)
      in.push_back(buffers[b].shape);
    for (uint32_t b : k.outputs)
      out.push_back(buffers[b].shape);
    bool transposeA = false;
    if (k.kind == KernelKind::MatMul)
      transposeA = k.attrsAs<MatMulAttrs>().transpose_a;
    else if (k.kind == KernelKind::BatchMatMul)
      transposeA = k.attrsAs<BatchMatMulAttrs>().transpose_a;
    // Under gradient accumulation every kernel but the final ones runs once per micro-shard.
    flops += kernelFlops(k.kind, in, out, transposeA) * (k.final ? 1 : accumulation);
  }
  return flops;
}

bool Plan::computesInBf16() const {
  for (const KernelDesc &k : train.kernels)
    if (isProduct(k.kind) && !k.inputs.empty() && buffers[k.inputs[0]].dtype == DType::BF16)
      return true;
  return false;
}

namespace {

Plan decodeTable(const fb::Plan &p, const std::string &what) {
  Plan plan;
  plan.producer = str(p.producer());
  plan.model = str(p.model());
  plan.batch = p.batch();
  plan.arenaBytes = p.arena_bytes();
  plan.persistentBytes = p.persistent_bytes();
  for (const fb::Buffer *b : *p.buffers()) {
    BufferDesc buffer;
    buffer.dtype = DType(b->dtype());
    buffer.shape.assign(b->shape()->begin(), b->shape()->end());
    buffer.numel = numElements(*b);
    buffer.offset = b->offset();
    buffer.device = b->device();
    plan.buffers.push_back(std::move(buffer));
  }
  // Each data table once, shared by every parameter (and replica) that names it.
  std::vector<std::shared_ptr<const std::vector<float>>> data;
  if (p.init_data())
    for (const fb::InitData *d : *p.init_data())
      data.push_back(
          std::make_shared<const std::vector<float>>(d->values()->begin(), d->values()->end()));
  for (const fb::Param *pr : *p.params()) {
    ParamDesc param;
    param.name = pr->name()->str();
    param.buffer = pr->buffer();
    param.grad = pr->grad();
    const fb::Init &init = *pr->init();
    param.init = {InitKind(init.kind()),
                  init.a(),
                  init.b(),
                  init.fan_in(),
                  init.fan_out(),
                  init.data() >= 0 ? data.at(static_cast<size_t>(init.data())) : nullptr};
    param.kind = ParamKind(pr->kind());
    param.process = pr->process();
    plan.params.push_back(std::move(param));
  }
  for (const fb::Input *in : *p.inputs())
    plan.inputs.push_back({in->name()->str(), in->buffer(), InputRole(in->role())});
  plan.train = decodeStep(*p.train(), what);
  plan.eval = decodeStep(*p.eval(), what);
  plan.devicesPerProcess = p.devices_per_process();
  plan.processes = p.processes();
  plan.nodes = p.nodes();
  plan.accumulation = p.accumulation();
  for (const KernelDesc &k : plan.train.kernels)
    if (k.kind == KernelKind::Accumulate && k.attrsAs<AccumulateAttrs>().count != plan.accumulation)
      throw Error(ErrorKind::Plan, what + ": " + k.where + " sums " +
                                       std::to_string(k.attrsAs<AccumulateAttrs>().count) +
                                       " micro-shards, the plan's accumulation is " +
                                       std::to_string(plan.accumulation));
  if (p.collectives())
    for (const fb::Collective *c : *p.collectives()) {
      CollectiveDesc collective;
      collective.kind = CollectiveKind(c->kind());
      collective.bucket = c->bucket();
      collective.dtype = DType(c->dtype());
      collective.elements = c->elements();
      collective.group = GroupKind(c->group());
      collective.groupId = c->group_id();
      collective.root = c->root();
      if (c->segments())
        collective.segments.assign(c->segments()->begin(), c->segments()->end());
      if (c->tensors())
        for (const flatbuffers::String *t : *c->tensors())
          collective.tensors.push_back(t->str());
      collective.loc = str(c->loc());
      plan.collectives.push_back(std::move(collective));
    }
  plan.manifestHash = p.manifest_hash();
  plan.deviceKind = DeviceKind(p.device_kind());
  if (const fb::LrSchedule *l = p.lr_schedule()) {
    LrSchedule &s = plan.lrSchedule;
    s.kind = LrScheduleKind(l->kind());
    s.warmupEpochs = l->warmup_epochs();
    s.warmupStart = l->warmup_start();
    s.every = l->every();
    s.factor = l->factor();
    s.epochs = l->epochs();
    s.minScale = l->min_scale();
    s.patience = l->patience();
    s.threshold = l->threshold();
    if (std::string problem = checkLrSchedule(s); !problem.empty())
      throw Error(ErrorKind::Plan, what + ": the learning-rate schedule is invalid: " + problem);
  }
  if (p.servers())
    for (const fb::Plan *server : *p.servers())
      plan.servers.push_back(
          decodeTable(*server, what + " (server " + std::to_string(server->server()) + ")"));
  plan.staleness = p.staleness();
  plan.sync = p.sync();
  plan.server = p.server();
  if (const fb::ExportSource *e = p.export_source()) {
    auto source = std::make_shared<ExportSourceDesc>();
    source->format = e->format()->str();
    source->model.assign(reinterpret_cast<const char *>(e->model()->data()), e->model()->size());
    for (const fb::ExportParam *ep : *e->params()) {
      ExportParamDesc d;
      d.param = ep->param()->str();
      d.value = ep->value()->str();
      d.isInitializer = ep->is_initializer();
      if (ep->rewire())
        for (uint32_t k = 0; k + 1 < ep->rewire()->size(); k += 2)
          d.rewire.emplace_back(ep->rewire()->Get(k), ep->rewire()->Get(k + 1));
      d.layout = ep->layout();
      d.dims.assign(ep->dims()->begin(), ep->dims()->end());
      if (ep->flattened_chw())
        d.flattenedChw.assign(ep->flattened_chw()->begin(), ep->flattened_chw()->end());
      source->params.push_back(std::move(d));
    }
    plan.exportSource = std::move(source);
  }
  return plan;
}

} // namespace

Plan Plan::decode(const PlanFile &file, const std::string &what) {
  Plan plan = decodeTable(file.plan(), what);
  plan.fileHash = file.hash();
  plan.checksum = file.checksum();
  plan.fileBytes = file.sizeBytes();
  return plan;
}

Plan Plan::read(const std::string &path) { return decode(PlanFile::read(path), path); }

bool Plan::tryRead(const std::string &path, Plan &plan, std::string &error) noexcept {
  try {
    plan = read(path);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

Plan Plan::fromBytes(std::vector<uint8_t> bytes, const std::string &what) {
  return decode(PlanFile::fromBytes(std::move(bytes), what), what);
}

std::vector<std::string> attrWords(const KernelAttrSet &attrs) {
  std::vector<std::string> words;
  std::visit(
      [&](const auto &set) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(set)>, std::monostate>)
          set.visitFields([&](const AttrSpec &spec, const auto &field) {
            words.push_back(std::string(spec.name) + "=" + valueText(field));
          });
      },
      attrs);
  return words;
}

} // namespace dp::rt
