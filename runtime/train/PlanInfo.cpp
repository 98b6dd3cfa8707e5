// Plan queries and the --inspect summary; see PlanInfo.h.
#include "runtime/train/PlanInfo.h"

#include <cstdio>
#include <map>
#include <vector>

namespace dp::rt {
namespace {

const char *initName(uint8_t kind) {
  static const char *names[] = {"zeros",         "ones",      "constant",
                                "uniform",       "normal",    "glorot_uniform",
                                "glorot_normal", "he_normal", "he_uniform",
                                "orthogonal",    "unit_forget_bias"};
  return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string initText(const fb::Init &init) {
  std::string text = initName(init.kind());
  switch (static_cast<InitKind>(init.kind())) {
  case InitKind::Constant:
    text += "(" + number(init.a()) + ")";
    break;
  case InitKind::Uniform:
    text += "(" + number(init.a()) + ", " + number(init.b()) + ")";
    break;
  case InitKind::Normal:
    text += "(mean " + number(init.a()) + ", stddev " + number(init.b()) + ")";
    break;
  case InitKind::GlorotUniform:
  case InitKind::GlorotNormal:
    text += "(fan_in " + std::to_string(init.fan_in()) + ", fan_out " +
            std::to_string(init.fan_out()) + ")";
    break;
  case InitKind::HeNormal:
  case InitKind::HeUniform:
    text += "(fan_in " + std::to_string(init.fan_in()) + ")";
    break;
  default:
    break;
  }
  return text;
}

std::string attrText(const fb::Attr &attr) {
  std::string text = attr.name()->str() + "=";
  if (attr.ints() && attr.ints()->size()) {
    text += "[";
    bool first = true;
    for (int64_t v : *attr.ints()) {
      text += (first ? "" : ",") + std::to_string(v);
      first = false;
    }
    return text + "]";
  }
  // Attributes carry either an integer or a float; the non-default one is the meaningful one.
  return text + (attr.f() != 0.0 ? number(attr.f()) : std::to_string(attr.i()));
}

std::string idList(const flatbuffers::Vector<uint32_t> *ids) {
  std::string text;
  if (ids)
    for (uint32_t id : *ids)
      text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

void describeStep(const fb::Plan &plan, const fb::Step &step, std::ostream &out) {
  const auto &kernels = *step.kernels();
  // Counts per kind in order of first use, then the kernels one per line.
  std::vector<std::string> kinds;
  std::map<std::string, int> counts;
  for (const fb::Kernel *k : kernels) {
    std::string name = kernelInfo(KernelKind(k->kind())).name;
    if (counts[name]++ == 0)
      kinds.push_back(name);
  }
  out << "step " << step.name()->str() << ": " << kernels.size() << " kernels";
  for (size_t i = 0; i < kinds.size(); ++i)
    out << (i ? ", " : " (") << kinds[i] << " x" << counts[kinds[i]]
        << (i + 1 == kinds.size() ? ")" : "");
  out << "\n";
  int index = 0;
  for (const fb::Kernel *k : kernels) {
    out << "  #" << index++ << " " << kernelInfo(KernelKind(k->kind())).name << " ("
        << idList(k->inputs()) << ") -> (" << idList(k->outputs()) << ")";
    if (k->attrs())
      for (const fb::Attr *a : *k->attrs())
        out << " " << attrText(*a);
    if (k->loc() && k->loc()->size())
      out << "  [" << k->loc()->str() << "]";
    out << "\n";
  }
  if (step.outputs())
    for (const fb::Output *o : *step.outputs())
      out << "  output " << o->name()->str() << ": buffer " << o->buffer() << " "
          << shapeText(*plan.buffers()->Get(o->buffer())) << "\n";
}

} // namespace

std::string shapeText(const fb::Buffer &buffer) {
  std::string text = std::string(dtypeName(DType(buffer.dtype()))) + "[";
  bool first = true;
  for (int64_t d : *buffer.shape()) {
    text += (first ? "" : ",") + std::to_string(d);
    first = false;
  }
  return text + "]";
}

std::string withCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

int64_t countWeights(const fb::Plan &plan) {
  int64_t total = 0;
  // Replicas hold copies: count device 0's.
  for (const fb::Param *p : *plan.params())
    if (static_cast<ParamKind>(p->kind()) == ParamKind::Weight &&
        plan.buffers()->Get(p->buffer())->device() == 0)
      total += numElements(*plan.buffers()->Get(p->buffer()));
  return total;
}

int64_t numClasses(const fb::Plan &plan, int64_t fallback) {
  for (const fb::Step *step : {plan.train(), plan.eval()})
    for (const fb::Kernel *k : *step->kernels()) {
      auto kind = static_cast<KernelKind>(k->kind());
      if ((kind == KernelKind::SoftmaxXent || kind == KernelKind::CountCorrect) && k->inputs() &&
          k->inputs()->size() > 0) {
        const auto &shape = *plan.buffers()->Get(k->inputs()->Get(0))->shape();
        if (shape.size() > 0)
          return shape[shape.size() - 1];
      }
    }
  return fallback;
}

void describePlan(const PlanFile &file, const std::string &path, std::ostream &out) {
  const fb::Plan &plan = file.plan();
  char checksum[16];
  std::snprintf(checksum, sizeof(checksum), "%08x", file.checksum());
  out << "plan " << path << ": " << withCommas(static_cast<int64_t>(file.sizeBytes()))
      << " bytes, format " << kFormatVersion << ", checksum " << checksum << "\n";
  out << "producer: " << (plan.producer() ? plan.producer()->str() : "(unknown)") << "\n";
  out << "model: " << (plan.model() ? plan.model()->str() : "(unnamed)") << "\n";
  out << "batch: " << plan.batch() << "\n";
  out << "device: " << deviceKindName(DeviceKind(plan.device_kind())) << "\n";
  const int replicas = plan.devices_per_process(), processes = plan.processes();
  if (replicas * processes > 1)
    out << "data parallel: " << replicas << " device(s) per process x " << processes
        << " process(es), " << plan.batch() / (replicas * processes)
        << " samples per replica and step\n";
  out << "classes: " << numClasses(plan, 0) << "\n";
  out << "arena" << (replicas > 1 ? " (each device)" : "") << ": "
      << withCommas(static_cast<int64_t>(plan.arena_bytes())) << " bytes ("
      << withCommas(static_cast<int64_t>(plan.persistent_bytes())) << " persistent, "
      << withCommas(static_cast<int64_t>(plan.arena_bytes() - plan.persistent_bytes()))
      << " per step)\n";

  if (plan.collectives() && plan.collectives()->size()) {
    char hash[24];
    std::snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)plan.manifest_hash());
    out << "collectives: " << plan.collectives()->size() << " (manifest hash " << hash << ")\n";
    for (const fb::Collective *c : *plan.collectives()) {
      out << "  bucket " << c->bucket() << "  " << c->kind()->str() << " over "
          << c->group()->str() << "  " << withCommas(c->elements()) << " x f32  ";
      if (c->tensors())
        for (uint32_t i = 0; i < c->tensors()->size(); ++i)
          out << (i ? ", " : "") << c->tensors()->Get(i)->str();
      if (c->loc() && c->loc()->size())
        out << "  at " << c->loc()->str();
      out << "\n";
    }
  }

  for (const fb::Input *in : *plan.inputs())
    out << "input " << in->name()->str() << ": buffer " << in->buffer() << " "
        << shapeText(*plan.buffers()->Get(in->buffer()))
        << (replicas > 1 ? "  device " + std::to_string(plan.buffers()->Get(in->buffer())->device())
                         : std::string())
        << "\n";

  const auto &params = *plan.params();
  out << "params: " << params.size() << " (" << withCommas(countWeights(plan))
      << " weights, trainable or not)\n";
  for (const fb::Param *p : params) {
    bool weight = static_cast<ParamKind>(p->kind()) == ParamKind::Weight;
    out << "  " << p->name()->str() << "  " << (weight ? "weight" : "optimizer state") << "  "
        << shapeText(*plan.buffers()->Get(p->buffer())) << "  buffer " << p->buffer();
    if (p->grad() >= 0)
      out << "  grad " << p->grad();
    out << "  init " << initText(*p->init()) << "\n";
  }

  const auto &buffers = *plan.buffers();
  out << "buffers: " << buffers.size() << "\n";
  for (uint32_t id = 0; id < buffers.size(); ++id) {
    const fb::Buffer &b = *buffers.Get(id);
    out << "  #" << id << " " << shapeText(b) << " @" << b.offset()
        << (b.offset() < plan.persistent_bytes() ? " persistent" : "")
        << (replicas > 1 ? " device " + std::to_string(b.device()) : std::string()) << "\n";
  }
  describeStep(plan, *plan.train(), out);
  describeStep(plan, *plan.eval(), out);
}

} // namespace dp::rt
