// Plan queries and the --inspect summary; see PlanInfo.h.
#include "runtime/train/PlanInfo.h"

#include "runtime/base/Error.h"

#include <cstdio>
#include <map>
#include <vector>

namespace dp::rt {
namespace {

const char *initName(InitKind kind) {
  static const char *names[] = {"zeros",      "ones",           "constant",         "uniform",
                                "normal",     "glorot_uniform", "glorot_normal",    "he_normal",
                                "he_uniform", "orthogonal",     "unit_forget_bias", "data"};
  const auto k = static_cast<size_t>(kind);
  return k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string initText(const InitDesc &init) {
  std::string text = initName(init.kind);
  switch (init.kind) {
  case InitKind::Constant:
    text += "(" + number(init.a) + ")";
    break;
  case InitKind::Uniform:
    text += "(" + number(init.a) + ", " + number(init.b) + ")";
    break;
  case InitKind::Normal:
    text += "(mean " + number(init.a) + ", stddev " + number(init.b) + ")";
    break;
  case InitKind::GlorotUniform:
  case InitKind::GlorotNormal:
    text += "(fan_in " + std::to_string(init.fanIn) + ", fan_out " +
            std::to_string(init.fanOut) + ")";
    break;
  case InitKind::HeNormal:
  case InitKind::HeUniform:
    text += "(fan_in " + std::to_string(init.fanIn) + ")";
    break;
  case InitKind::Data:
    text += "(" + std::to_string(init.values ? init.values->size() : 0) + " values)";
    break;
  default:
    break;
  }
  return text;
}

std::string idList(const std::vector<uint32_t> &ids) {
  std::string text;
  for (uint32_t id : ids)
    text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

void describeStep(const Plan &plan, const StepDesc &step, std::ostream &out) {
  // Counts per kind in order of first use, then the kernels one per line.
  std::vector<std::string> kinds;
  std::map<std::string, int> counts;
  for (const KernelDesc &k : step.kernels) {
    std::string name = kernelInfo(k.kind).name;
    if (counts[name]++ == 0)
      kinds.push_back(name);
  }
  out << "step " << step.name << ": " << step.kernels.size() << " kernels";
  for (size_t i = 0; i < kinds.size(); ++i)
    out << (i ? ", " : " (") << kinds[i] << " x" << counts[kinds[i]]
        << (i + 1 == kinds.size() ? ")" : "");
  out << "\n";
  int index = 0;
  for (const KernelDesc &k : step.kernels) {
    out << "  #" << index++ << " " << kernelInfo(k.kind).name << " (" << idList(k.inputs)
        << ") -> (" << idList(k.outputs) << ")";
    for (const std::string &word : attrWords(k.attrs))
      out << " " << word;
    if (k.final)
      out << " final";
    if (k.process >= 0)
      out << " process " << k.process;
    if (!k.loc.empty())
      out << "  [" << k.loc << "]";
    out << "\n";
  }
  for (const OutputDesc &o : step.outputs)
    out << "  output " << o.name << " (" << outputRoleName(o.role) << "): buffer " << o.buffer
        << " " << plan.buffers[o.buffer].text() << "\n";
}

} // namespace

int64_t countWeights(const Plan &plan) {
  int64_t total = 0;
  // Replicas hold copies: count device 0's.
  for (const ParamDesc &p : plan.params)
    if (p.kind == ParamKind::Weight && plan.buffers[p.buffer].device == 0)
      total += plan.buffers[p.buffer].numel;
  return total;
}

int64_t numClasses(const Plan &plan, int64_t fallback) {
  for (const StepDesc *step : {&plan.train, &plan.eval})
    for (const KernelDesc &k : step->kernels)
      if ((k.kind == KernelKind::SoftmaxXent || k.kind == KernelKind::CountCorrect) &&
          !k.inputs.empty()) {
        const std::vector<int64_t> &shape = plan.buffers[k.inputs[0]].shape;
        if (!shape.empty())
          return shape.back();
      }
  return fallback;
}

double learningRate(const Plan &plan) {
  for (const KernelDesc &k : plan.train.kernels)
    switch (k.kind) {
    case KernelKind::SgdUpdate:
      return k.attrsAs<SgdAttrs>().lr;
    case KernelKind::MomentumUpdate:
      return k.attrsAs<MomentumAttrs>().lr;
    case KernelKind::AdamUpdate:
      return k.attrsAs<AdamAttrs>().lr;
    default:
      break;
    }
  return 0;
}

int64_t tokenVocabulary(const Plan &plan) {
  int64_t vocabulary = 0;
  for (const StepDesc *step : {&plan.train, &plan.eval})
    for (const KernelDesc &k : step->kernels)
      if (k.kind == KernelKind::Gather && !k.inputs.empty() && k.inputs[0] < plan.buffers.size()) {
        const std::vector<int64_t> &shape = plan.buffers[k.inputs[0]].shape;
        if (!shape.empty() && (vocabulary == 0 || shape[0] < vocabulary))
          vocabulary = shape[0];
      }
  return vocabulary;
}

bool binaryTargets(const Plan &plan) {
  for (const KernelDesc &k : plan.train.kernels)
    if (k.kind == KernelKind::SigmoidXent)
      return true;
  return false;
}

std::string targetsText(const Plan &plan) {
  return std::to_string(targetWidth(plan)) +
         (binaryTargets(plan) ? " yes/no targets" : " regression targets");
}

int64_t targetWidth(const Plan &plan) {
  const InputDesc *targets = plan.input(InputRole::Targets, 0);
  if (!targets || targets->buffer >= plan.buffers.size())
    return 0;
  const BufferDesc &b = plan.buffers[targets->buffer];
  return b.dtype == DType::F32 && b.shape.size() == 2 ? b.shape[1] : 0;
}

namespace {

/// Whether `plan` was compiled with --precision bf16 (it has bf16 buffers).
bool mixedPrecision(const Plan &plan) {
  for (const BufferDesc &b : plan.buffers)
    if (b.dtype == DType::BF16)
      return true;
  return false;
}

} // namespace

void refuseUncheckablePlan(const Plan &plan, const std::string &path) {
  if (mixedPrecision(plan))
    throw Error(ErrorKind::Plan,
                  path + " computes in bf16 (dpc compile --precision bf16): its products round "
                         "the loss to about 3 significant digits, which finite differences "
                         "cannot resolve; its autodiff is the fp32 plan's, so compile the model "
                         "without --precision to check its gradients");
  if (!plan.parameterServer() && !plan.collectives.empty())
    throw Error(ErrorKind::Plan,
                path + " is a data-parallel plan (" + std::to_string(plan.devicesPerProcess) +
                    " device(s) per process x " + std::to_string(plan.processes) +
                    " process(es)), whose train step averages the gradients of every replica: "
                    "--check-gradients runs one replica's step; compile the model without "
                    "--devices-per-process and --processes to check its gradients");
  if (!plan.parameterServer())
    return;
  throw Error(ErrorKind::Plan,
              path + " is a parameter-server plan (" + std::to_string(plan.servers.size()) +
                  " server(s), " + std::to_string(plan.processes) +
                  " worker(s)), whose updates run on its servers: --check-gradients checks "
                  "the plan of one process; compile the model without --strategy to check its "
                  "gradients");
}

void describePlan(const Plan &plan, const std::string &path, std::ostream &out) {
  char checksum[16];
  std::snprintf(checksum, sizeof(checksum), "%08x", plan.checksum);
  out << "plan " << path << ": " << withCommas(static_cast<int64_t>(plan.fileBytes))
      << " bytes, format " << kFormatVersion << ", checksum " << checksum << "\n";
  out << "producer: " << (plan.producer.empty() ? "(unknown)" : plan.producer) << "\n";
  out << "model: " << (plan.model.empty() ? "(unnamed)" : plan.model) << "\n";
  out << "batch: " << plan.batch << "\n";
  out << "device: " << deviceKindName(plan.deviceKind) << "\n";
  if (mixedPrecision(plan)) {
    int64_t casts = 0;
    for (const StepDesc *step : {&plan.train, &plan.eval})
      for (const KernelDesc &k : step->kernels)
        casts += k.kind == KernelKind::Cast;
    out << "precision: bf16 products, f32 parameters and updates (mixed; " << casts
        << " cast kernels)\n";
  } else {
    out << "precision: fp32\n";
  }
  out << "learning-rate schedule: "
      << (plan.lrSchedule.isConstant() ? std::string("constant (the rates as compiled)")
                                        : lrScheduleText(plan.lrSchedule))
      << "\n";
  const int replicas = plan.devicesPerProcess, processes = plan.processes;
  if (plan.parameterServer())
    out << "parameter servers: " << plan.servers.size() << " server(s) + " << processes
        << " worker(s) ("
        << (plan.servers.size() == 1 ? std::string("rank 0 serves")
                                     : "ranks 0-" + std::to_string(plan.servers.size() - 1) +
                                           " serve")
        << "), "
        << plan.batch / processes << " samples per worker and step, "
        << (plan.sync               ? std::string("synchronous")
            : plan.staleness >= 0 ? "staleness " + std::to_string(plan.staleness)
                                  : std::string("asynchronous"))
        << "\n";
  else if (plan.server >= 0)
    out << "server " << plan.server << "'s plan\n";
  else if (replicas * processes > 1)
    out << "data parallel: " << replicas << " device(s) per process x " << processes
        << " process(es)"
        << (plan.nodes > 1 ? " on " + std::to_string(plan.nodes) + " nodes" : std::string())
        << ", " << plan.batch / (replicas * processes)
        << " samples per replica and step\n";
  if (plan.accumulation > 1)
    out << "gradient accumulation: " << plan.accumulation << " micro-shards of "
        << plan.batch / (int64_t(replicas) * processes * plan.accumulation)
        << " samples per device and step, one optimizer step (and allreduce) per batch of "
        << plan.batch << "\n";
  if (const int64_t width = targetWidth(plan))
    out << (binaryTargets(plan) ? "yes/no outputs (binary cross-entropy): " : "regression: ")
        << width << " float target(s) per sample\n";
  else
    out << "classes: " << numClasses(plan, 0) << "\n";
  if (plan.exportSource)
    out << "source: an imported " << plan.exportSource->format << " model ("
        << withCommas(static_cast<int64_t>(plan.exportSource->model.size()))
        << " bytes without its weights; " << plan.exportSource->params.size()
        << " parameters go back to it: dprun --export)\n";
  out << "arena" << (replicas > 1 ? " (each device)" : "") << ": "
      << withCommas(static_cast<int64_t>(plan.arenaBytes)) << " bytes ("
      << withCommas(static_cast<int64_t>(plan.persistentBytes)) << " persistent, "
      << withCommas(static_cast<int64_t>(plan.arenaBytes - plan.persistentBytes))
      << " per step)\n";
  if (!plan.collectives.empty()) {
    char hash[24];
    std::snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)plan.manifestHash);
    out << "collectives: " << plan.collectives.size() << " (manifest hash " << hash << ")\n";
    for (const CollectiveDesc &c : plan.collectives) {
      out << "  bucket " << c.bucket << "  " << collectiveKindName(c.kind) << " over "
          << groupName(c.group, c.groupId)
          << (c.root >= 0 ? " from replica " + std::to_string(c.root) : std::string()) << "  "
          << withCommas(c.elements) << " x f32" << (c.dtype == DType::BF16 ? " (sent as bf16)" : "")
          << "  ";
      // A reduce-scattered bucket: each owner's elements, in owner order.
      if (!c.segments.empty()) {
        out << "reduce-scattered to their owners (";
        for (size_t o = 0; o + 1 < c.segments.size(); ++o)
          out << (o ? ", " : "") << withCommas(c.segments[o + 1] - c.segments[o]);
        out << " x f32)  ";
      }
      for (size_t i = 0; i < c.tensors.size(); ++i)
        out << (i ? ", " : "") << c.tensors[i];
      if (!c.loc.empty())
        out << "  at " << c.loc;
      out << "\n";
    }
  }
  for (const InputDesc &in : plan.inputs)
    out << "input " << in.name << " (" << inputRoleName(in.role) << "): buffer " << in.buffer << " "
        << plan.buffers[in.buffer].text()
        << (replicas > 1 ? "  device " + std::to_string(plan.buffers[in.buffer].device)
                         : std::string())
        << "\n";
  out << "params: " << plan.params.size() << " (" << withCommas(countWeights(plan))
      << " weights, trainable or not"
      << (replicas > 1 ? ", each on every one of the " + std::to_string(replicas) + " replicas" +
                             (plan.shardsOptimizerState() && !plan.shardsAcrossProcesses()
                                  ? std::string("; each optimizer state on one (sharded)")
                                  : std::string())
                       : std::string())
      << (plan.shardsAcrossProcesses()
              ? "; each optimizer state on one device of one of the " +
                    std::to_string(plan.processes) + " processes (sharded over the job)"
              : std::string())
      << ")\n";
  for (const ParamDesc &p : plan.params) {
    bool weight = p.kind == ParamKind::Weight;
    out << "  " << p.name
        << (replicas > 1 ? "  replica " + std::to_string(plan.buffers[p.buffer].device)
                         : std::string())
        << "  " << (weight ? "weight" : "optimizer state") << "  " << plan.buffers[p.buffer].text()
        << "  buffer " << p.buffer;
    if (p.process >= 0)
      out << "  process " << p.process;
    if (p.grad >= 0)
      out << "  grad " << p.grad;
    out << "  init " << initText(p.init) << "\n";
  }
  out << "buffers: " << plan.buffers.size() << "\n";
  for (uint32_t id = 0; id < plan.buffers.size(); ++id) {
    const BufferDesc &b = plan.buffers[id];
    out << "  #" << id << " " << b.text() << " @" << b.offset
        << (b.offset < plan.persistentBytes ? " persistent" : "")
        << (replicas > 1 ? " device " + std::to_string(b.device) : std::string()) << "\n";
  }
  describeStep(plan, plan.train, out);
  if (plan.server < 0)
    describeStep(plan, plan.eval, out);
  for (const Plan &server : plan.servers) {
    out << "\n";
    describePlan(server, path + " (server " + std::to_string(server.server) + ")", out);
  }
}

} // namespace dp::rt
