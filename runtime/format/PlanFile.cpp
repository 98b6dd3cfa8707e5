// Plan file reading and writing; see PlanFile.h for the layout.
#include "runtime/format/PlanFile.h"
#include "runtime/format/KernelAttrs.h"
#include "runtime/format/Plan.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace dp::rt {
namespace {

void putLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t getLE(const uint8_t *p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

uint32_t crc32Of(const uint8_t *data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes 32-bit lengths; feed large payloads in chunks.
  while (size > 0) {
    uInt chunk = size > (1u << 30) ? (1u << 30) : static_cast<uInt>(size);
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

[[noreturn]] void fail(const std::string &what, const std::string &message) {
  throw Error(ErrorKind::Plan, what + ": " + message);
}

} // namespace

std::string wrapPlanPayload(const uint8_t *payload, size_t size) {
  std::string out(kPlanMagic, sizeof(kPlanMagic));
  putLE(out, kFormatVersion, 4);
  putLE(out, kPlanHeaderBytes, 4);
  putLE(out, size, 8);
  putLE(out, crc32Of(payload, size), 4);
  putLE(out, 0, 4);
  out.append(reinterpret_cast<const char *>(payload), size);
  return out;
}

int64_t numElements(const fb::Buffer &buffer) {
  int64_t n = 1;
  for (int64_t d : *buffer.shape())
    n *= d;
  return n;
}

PlanFile PlanFile::read(const std::string &path) {
  // A plan holds no weights: even ResNet152's is a few MiB.
  constexpr uint64_t kMaxPlanBytes = uint64_t(256) << 20;
  const std::string content = readInputFile(path, kMaxPlanBytes, "plan", ErrorKind::Plan);
  return fromBytes(std::vector<uint8_t>(content.begin(), content.end()), path);
}

std::string PlanFile::verifyImage(const void *data, size_t size) noexcept {
  try {
    const auto *begin = static_cast<const uint8_t *>(data);
    // Decoding checks every kernel attribute's value as well as the file's structure.
    (void)Plan::fromBytes(std::vector<uint8_t>(begin, begin + size), "the plan");
    return {};
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "the plan: unknown error while verifying";
  }
}

PlanFile PlanFile::fromBytes(std::vector<uint8_t> bytes, const std::string &what) {
  if (bytes.size() < kPlanHeaderBytes)
    fail(what, "not a dp plan: " + std::to_string(bytes.size()) +
                   " bytes is shorter than the 32-byte plan header");
  if (std::memcmp(bytes.data(), kPlanMagic, sizeof(kPlanMagic)) != 0)
    fail(what, "not a dp plan: bad magic (expected 'DPXPLAN')");
  const uint8_t *h = bytes.data() + sizeof(kPlanMagic);
  uint32_t version = static_cast<uint32_t>(getLE(h, 4));
  uint32_t headerBytes = static_cast<uint32_t>(getLE(h + 4, 4));
  uint64_t payloadBytes = getLE(h + 8, 8);
  uint32_t crc = static_cast<uint32_t>(getLE(h + 16, 4));
  uint32_t reserved = static_cast<uint32_t>(getLE(h + 20, 4));
  if (version != kFormatVersion)
    fail(what, "plan format version " + std::to_string(version) + " is not supported (this dprun reads version " +
                   std::to_string(kFormatVersion) + "); recompile the model with a matching dpc");
  if (headerBytes != kPlanHeaderBytes)
    fail(what, "corrupt header: header size " + std::to_string(headerBytes) + ", expected 32");
  if (reserved != 0)
    fail(what, "corrupt header: its reserved bytes 28-31 are not zero");
  uint64_t actual = bytes.size() - kPlanHeaderBytes;
  if (payloadBytes != actual)
    fail(what, "truncated or padded: header says " + std::to_string(payloadBytes) + " payload bytes, file has " +
                   std::to_string(actual));
  const uint8_t *payload = bytes.data() + kPlanHeaderBytes;
  uint32_t actualCrc = crc32Of(payload, actual);
  if (actualCrc != crc) {
    std::ostringstream os;
    os << "checksum mismatch (header 0x" << std::hex << crc << ", payload 0x" << actualCrc
       << "): the file is corrupt";
    fail(what, os.str());
  }
  flatbuffers::Verifier verifier(payload, actual);
  if (!fb::VerifyPlanBuffer(verifier))
    fail(what, "corrupt plan: the payload fails FlatBuffer verification");

  PlanFile file;
  file.bytes_ = std::move(bytes);
  file.plan_ = fb::GetPlan(file.bytes_.data() + kPlanHeaderBytes);
  file.checksum_ = crc;
  file.hash_ = fnv1a64(file.bytes_.data(), file.bytes_.size());
  verifyPlanSemantics(*file.plan_, what);
  return file;
}

uint64_t fnv1a64(const void *data, size_t size, uint64_t h) {
  const auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < size; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string manifestLine(CollectiveKind kind, int bucket, int dtype, int64_t elements,
                         GroupKind group, int groupId, const std::vector<std::string> &tensors,
                         const std::string &loc, int root, const std::vector<int64_t> &segments) {
  std::string line = std::string(collectiveKindName(kind)) + "|" + std::to_string(bucket) + "|" +
                     std::to_string(dtype) + "|" + std::to_string(elements) + "|" +
                     groupName(group, groupId) + "|";
  for (size_t i = 0; i < tensors.size(); ++i)
    line += (i ? "," : "") + tensors[i];
  line += "|" + loc;
  if (root >= 0)
    line += "|root=" + std::to_string(root);
  for (size_t i = 0; i < segments.size(); ++i)
    line += (i ? "," : "|segments=") + std::to_string(segments[i]);
  return line + "\n";
}

uint64_t manifestHash(const fb::Plan &plan) {
  // A plan without collectives has hash 0.
  if (!plan.collectives() || plan.collectives()->size() == 0)
    return 0;
  uint64_t h = fnv1a64(nullptr, 0);
  for (const fb::Collective *c : *plan.collectives()) {
    std::vector<std::string> tensors;
    if (c->tensors())
      for (const flatbuffers::String *t : *c->tensors())
        tensors.push_back(t->str());
    std::vector<int64_t> segments;
    if (c->segments())
      segments.assign(c->segments()->begin(), c->segments()->end());
    std::string line = manifestLine(CollectiveKind(c->kind()), c->bucket(), c->dtype(),
                                    c->elements(), GroupKind(c->group()), c->group_id(), tensors,
                                    c->loc() ? c->loc()->str() : "", c->root(), segments);
    h = fnv1a64(line.data(), line.size(), h);
  }
  return h;
}

/// Checks the distribution records: devices of buffers and kernels, the collectives'
/// buffers against the manifest, and the manifest against its hash.
/// An imported model's source (format 7, optional): a known format, and each parameter it
/// maps back a weight of the plan, once, whose size its shape in the model has.
static void verifyExportSource(const fb::Plan &plan, const std::string &what) {
  const fb::ExportSource *source = plan.export_source();
  if (!source)
    return;
  if (source->format()->string_view() != "onnx")
    fail(what, "the export source has unknown format '" + source->format()->str() + "'");
  std::map<std::string, uint64_t> weights;
  for (const fb::Param *p : *plan.params())
    if (p->kind() == static_cast<uint8_t>(ParamKind::Weight))
      weights[p->name()->str()] = numElements(*plan.buffers()->Get(p->buffer()));
  std::set<std::string> seen;
  for (const fb::ExportParam *e : *source->params()) {
    const std::string where = "the export source's parameter '" + e->param()->str() + "'";
    auto found = weights.find(e->param()->str());
    if (found == weights.end())
      fail(what, where + " is not a weight of the plan");
    if (!seen.insert(found->first).second)
      fail(what, where + " appears twice");
    if (e->layout() > 2)
      fail(what, where + " has unknown layout " + std::to_string(e->layout()));
    uint64_t count = 1;
    for (int64_t d : *e->dims()) {
      if (d < 1 || d > (int64_t(1) << 40))
        fail(what, where + " has a dimension " + std::to_string(d));
      count *= uint64_t(d);
      if (count > (uint64_t(1) << 40))
        fail(what, where + " has too many elements");
    }
    if (count != found->second)
      fail(what, where + " has " + std::to_string(count) + " values in the model, " +
                     std::to_string(found->second) + " in the plan");
    if (e->rewire() &&
        (e->rewire()->size() % 2 != 0 ||
         std::any_of(e->rewire()->begin(), e->rewire()->end(), [](int32_t v) { return v < 0; })))
      fail(what, where + " has a malformed rewiring list");
  }
}

static void verifyDistribution(const fb::Plan &plan, const std::string &what) {
  const int replicas = plan.devices_per_process();
  if (replicas < 1 || replicas > 64)
    fail(what, "devices_per_process " + std::to_string(replicas) + " is outside 1..64");
  if (plan.processes() < 1 || plan.processes() > kMaxProcesses)
    fail(what, "processes " + std::to_string(plan.processes()) + " is outside 1.." +
                   std::to_string(kMaxProcesses));
  if (plan.nodes() < 1 || plan.processes() % plan.nodes() != 0)
    fail(what, "nodes " + std::to_string(plan.nodes()) + " does not divide the " +
                   std::to_string(plan.processes()) + " processes evenly");
  const int accumulation = plan.accumulation();
  const int64_t microShards = int64_t(replicas) * plan.processes() * std::max(accumulation, 1);
  // (Without accumulation, a batch the replicas do not divide is checkTrainingInterface's.)
  if (accumulation < 1 || accumulation > (1 << 20) ||
      (accumulation > 1 && plan.batch() % microShards != 0))
    fail(what, "accumulation " + std::to_string(accumulation) + " does not cut the batch of " +
                   std::to_string(plan.batch()) + " rows into equal micro-shards over " +
                   std::to_string(replicas * plan.processes()) + " device(s)");
  if (accumulation > 1 && (plan.server() >= 0 || (plan.servers() && plan.servers()->size())))
    fail(what, "accumulation " + std::to_string(accumulation) +
                   " is not built for the parameter-server strategy");
  const auto &buffers = *plan.buffers();
  for (uint32_t id = 0; id < buffers.size(); ++id)
    if (buffers.Get(id)->device() >= replicas)
      fail(what, "buffer " + std::to_string(id) + " is on device " +
                     std::to_string(buffers.Get(id)->device()) + " of a plan with " +
                     std::to_string(replicas) + " device(s) per process");
  // The copies of a parameter, one a device, agree (kind, type, shape); a weight is on every
  // device, and only optimizer state may be on fewer (sharded, format 9). Checkpoints and the
  // broadcasts below find a parameter by its name and device.
  std::map<std::pair<std::string, int>, uint32_t> paramBuffer; // (name, device) -> buffer
  // Optimizer state that one process alone holds (sharded over the processes, format 10):
  // its buffer overlays the other processes' shares, so only that process's kernels touch it.
  std::map<uint32_t, int> processOf; // buffer -> process
  std::set<std::string> weights;     // the weights' names
  {
    std::map<std::string, const fb::Param *> first;
    std::map<std::string, int> count;
    for (const fb::Param *p : *plan.params()) {
      const std::string name = p->name()->str();
      const fb::Buffer *b = buffers.Get(p->buffer());
      const std::string where = "param '" + name + "' on device " + std::to_string(b->device());
      auto [it, added] = first.emplace(name, p);
      if (!added) {
        const fb::Buffer *f = buffers.Get(it->second->buffer());
        const bool sameShape =
            b->shape()->size() == f->shape()->size() &&
            std::equal(b->shape()->begin(), b->shape()->end(), f->shape()->begin());
        if (p->kind() != it->second->kind() || b->dtype() != f->dtype() || !sameShape)
          fail(what, where + " is not of the kind, type and shape of its copy on device " +
                         std::to_string(f->device()));
      }
      if (!paramBuffer.emplace(std::make_pair(name, int(b->device())), p->buffer()).second)
        fail(what, where + " has a second copy on that device");
      if (ParamKind(p->kind()) == ParamKind::Weight)
        weights.insert(name);
      if (p->process() != -1) {
        if (p->process() < 0 || p->process() >= plan.processes() ||
            ParamKind(p->kind()) != ParamKind::OptimizerState)
          fail(what, where + " is held by process " + std::to_string(p->process()) +
                         ": only optimizer state is held by one process, one of the plan's " +
                         std::to_string(plan.processes()));
        processOf[p->buffer()] = p->process();
      }
      ++count[name];
    }
    for (const auto &[name, p] : first)
      if (ParamKind(p->kind()) == ParamKind::Weight && count[name] != replicas)
        fail(what, "weight '" + name + "' has copies on " + std::to_string(count[name]) +
                       " of the plan's " + std::to_string(replicas) +
                       " device(s); every device holds one");
  }
  std::vector<const fb::Collective *> manifest;
  std::set<std::string> broadcastNames;
  if (plan.collectives())
    for (const fb::Collective *c : *plan.collectives()) {
      const std::string entry = "manifest entry for bucket " + std::to_string(c->bucket());
      if (c->bucket() < 0 || c->elements() <= 0)
        fail(what, entry + " is invalid");
      if (c->kind() >= kNumCollectiveKinds || c->group() >= kNumGroupKinds)
        fail(what, entry + " has collective kind " + std::to_string(c->kind()) + " over group " +
                       std::to_string(c->group()) + ", past the kinds this dprun knows " +
                       "(a newer dpc's plan?)");
      // What this dprun runs: allreduces over the world, a worker's push and pull with a
      // server, a server's receive and reply with its workers.
      const auto kind = CollectiveKind(c->kind());
      const auto group = GroupKind(c->group());
      const bool runs = plan.server() >= 0 ? kind == CollectiveKind::ReceiveReply &&
                                                 group == GroupKind::Workers && c->group_id() == -1
                        : plan.servers() && plan.servers()->size() > 0
                            ? kind == CollectiveKind::PushPull && group == GroupKind::Server &&
                                  c->group_id() >= 0 &&
                                  c->group_id() < int64_t(plan.servers()->size())
                            : (kind == CollectiveKind::AllReduceMean && group == GroupKind::World &&
                               c->group_id() == -1) ||
                                  (kind == CollectiveKind::Broadcast &&
                                   (group == GroupKind::Replicas || group == GroupKind::World) &&
                                   c->group_id() == -1);
      if (!runs)
        fail(what, entry + " is " + collectiveKindName(kind) + " over " +
                       groupName(group, c->group_id()) + ", which this plan's strategy " +
                       "does not run (" +
                       (plan.server() >= 0 ? "a server: receive_reply over workers"
                        : plan.servers() && plan.servers()->size() > 0
                            ? "a worker: push_pull over server s, for one of its servers"
                            : "allreduce_mean over world, broadcast over replicas or world") +
                       ")");
      // A broadcast copies parameters that no other broadcast copies, once a step.
      if (kind == CollectiveKind::Broadcast) {
        if (!c->tensors() || c->tensors()->size() == 0)
          fail(what, entry + " (broadcast) names no parameter");
        for (const flatbuffers::String *name : *c->tensors())
          if (!broadcastNames.insert(name->str()).second)
            fail(what, entry + " (broadcast) names '" + name->str() +
                           "', which another broadcast (or this one) names too");
      }
      // A broadcast's root is one of its group's members (the process's replicas, or the
      // job's: replica r of process p is p * R + r); no other kind has one.
      const int members = group == GroupKind::World ? replicas * plan.processes() : replicas;
      if (kind == CollectiveKind::Broadcast ? c->root() < 0 || c->root() >= members
                                            : c->root() != -1)
        fail(what, entry + " (" + collectiveKindName(kind) + ") has root " +
                       std::to_string(c->root()) +
                       (kind == CollectiveKind::Broadcast
                            ? ", not one of its group's " + std::to_string(members) + " device(s)"
                            : ": only a broadcast has one"));
      // A reduce-scattered allreduce's segments: one an owner of the job, from 0 to the end of
      // the bucket, in order.
      if (c->segments() && c->segments()->size() > 0) {
        const auto &s = *c->segments();
        const int64_t owners =
            plan.processes() > 1 ? int64_t(replicas) * plan.processes() : int64_t(replicas);
        if (kind != CollectiveKind::AllReduceMean || group != GroupKind::World)
          fail(what, entry + " (" + collectiveKindName(kind) +
                         ") has segments: only an allreduce over the job is reduce-scattered");
        if (int64_t(s.size()) != owners + 1)
          fail(what, entry + " has " + std::to_string(s.size()) + " segment offsets; its " +
                         std::to_string(owners) + " owner(s) need " + std::to_string(owners + 1));
        for (size_t i = 0; i < s.size(); ++i)
          if ((i == 0 && s[i] != 0) || (i + 1 == s.size() && s[i] != c->elements()) ||
              (i > 0 && s[i] < s[i - 1]))
            fail(what, entry + "'s segments do not run in order from 0 to its " +
                           std::to_string(c->elements()) + " elements (offset " +
                           std::to_string(i) + " is " + std::to_string(s[i]) + ")");
      }
      // The buckets are f32; an allreduce may send them as bf16 (allreduce_mean only).
      if (DType(c->dtype()) != DType::F32 &&
          !(DType(c->dtype()) == DType::BF16 && kind == CollectiveKind::AllReduceMean))
        fail(what, entry + " (" + collectiveKindName(kind) + ") has dtype " +
                       std::to_string(c->dtype()) + ": f32, or bf16 for allreduce_mean");
      manifest.push_back(c);
    }
  if (manifestHash(plan) != plan.manifest_hash())
    fail(what, "the collective manifest does not match its hash: the file is corrupt");
  auto entry = [&](int bucket) -> const fb::Collective * {
    for (const fb::Collective *c : manifest)
      if (c->bucket() == bucket)
        return c;
    return nullptr;
  };
  const bool isServer = plan.server() >= 0;
  const bool isWorker = plan.servers() && plan.servers()->size() > 0;
  for (const fb::Step *step : {plan.train(), plan.eval()}) {
    int index = 0;
    // The collectives' protocol (runtime/comm/Collectives.cpp): the communication thread posts
    // the buckets in manifest order, each once every replica started it. So a step starts the
    // manifest's buckets in its order, each once, and waits for each after its start: otherwise
    // a replica would wait for a bucket that can never be posted.
    std::map<int, int> state; // bucket -> 1 started, 2 waited
    size_t starts = 0;
    // The gradients of a reduce-scattered bucket, once it starts: their owner (p * R + r).
    std::map<uint32_t, int64_t> ownerOf;
    const bool train = step == plan.train();
    for (const fb::Kernel *k : *step->kernels()) {
      KernelKind kind = KernelKind(k->kind());
      std::string where = step->name()->str() + " kernel #" + std::to_string(index++) + " (" +
                          kernelInfo(kind).name + ")";
      std::vector<uint32_t> ids;
      if (k->inputs())
        ids.insert(ids.end(), k->inputs()->begin(), k->inputs()->end());
      if (k->outputs())
        ids.insert(ids.end(), k->outputs()->begin(), k->outputs()->end());
      // Phases: the runtime runs a step's final kernels on its last micro-shard only, and
      // exchanges each bucket once per step.
      if ((k->final() || kind == KernelKind::Accumulate) && (accumulation == 1 || !train))
        fail(what, where + (k->final() ? " is marked final" : " accumulates a gradient") +
                       ", which only the train step of a plan with accumulation does");
      if (accumulation > 1 && isCollective(kind) && !k->final())
        fail(what, where + " is a collective of a plan with accumulation but is not final");
      // A sum must outlive the step's runs: it is a persistent buffer.
      if (kind == KernelKind::Accumulate && k->outputs() && k->outputs()->size() == 1) {
        const fb::Buffer *sum = buffers.Get(k->outputs()->Get(0));
        if (sum->offset() + uint64_t(numElements(*sum)) * dtypeSize(DType(sum->dtype())) >
            plan.persistent_bytes())
          fail(what, where + " sums into buffer " + std::to_string(k->outputs()->Get(0)) +
                         ", which is not persistent: the micro-shards' runs would reuse it");
      }
      // Only an update runs on one process alone: the eval step is every process's.
      if (!train && k->process() != -1)
        fail(what, where + " runs on process " + std::to_string(k->process()) +
                       " alone, which only a train step's kernel may");
      if (!isCollective(kind)) {
        // A reduce-scattered mean is its owner's alone: another replica's copy is no mean.
        if (k->inputs())
          for (uint32_t id : *k->inputs())
            if (auto owner = ownerOf.find(id); owner != ownerOf.end()) {
              const int64_t reader = plan.processes() == 1 ? k->device()
                                     : k->process() < 0    ? -1 // every process reads it
                                                           : k->process() * replicas + k->device();
              if (reader != owner->second)
                fail(what, where + " reads buffer " + std::to_string(id) +
                               ", a gradient whose bucket is reduce-scattered to replica " +
                               std::to_string(owner->second) + " of the job alone");
            }
        if (k->device() < 0 || k->device() >= replicas)
          fail(what, where + " runs on device " + std::to_string(k->device()) + " of " +
                         std::to_string(replicas));
        if (k->process() < -1 || k->process() >= plan.processes())
          fail(what, where + " runs on process " + std::to_string(k->process()) + " of " +
                         std::to_string(plan.processes()));
        for (uint32_t id : ids) {
          if (buffers.Get(id)->device() != k->device())
            fail(what, where + " on device " + std::to_string(k->device()) + " uses buffer " +
                           std::to_string(id) + " of device " +
                           std::to_string(buffers.Get(id)->device()));
          auto held = processOf.find(id);
          if (held != processOf.end() && held->second != k->process())
            fail(what, where +
                           (k->process() < 0 ? std::string(" runs on every process")
                                             : " runs on process " + std::to_string(k->process())) +
                           " but uses buffer " + std::to_string(id) +
                           ", optimizer state that process " + std::to_string(held->second) +
                           " alone holds");
        }
        continue;
      }
      if (k->process() != -1)
        fail(what, where + " is a collective on process " + std::to_string(k->process()) +
                       " alone: every process runs the collectives");
      // Each strategy has its own pair of exchange kernels.
      const bool allowed =
          isServer   ? (kind == KernelKind::ReceivePush || kind == KernelKind::ReplyPull)
          : isWorker ? (kind == KernelKind::PushStart || kind == KernelKind::PullWait) && train
                     : (kind == KernelKind::AllReduceStart || kind == KernelKind::AllReduceWait ||
                        kind == KernelKind::BroadcastStart || kind == KernelKind::BroadcastWait) &&
                           train;
      if (!allowed)
        fail(what, where + " does not belong in " +
                       (isServer   ? std::string("a server's plan")
                        : isWorker ? std::string("the ") + (train ? "train" : "eval") +
                                         " step of a parameter-server workers' plan"
                                   : std::string("the ") + (train ? "train" : "eval") +
                                         " step of an allreduce plan"));
      const fb::Attr *bucketAttr = nullptr;
      if (k->attrs())
        for (const fb::Attr *a : *k->attrs())
          if (a->name()->str() == "bucket")
            bucketAttr = a;
      const fb::Collective *c = bucketAttr ? entry(static_cast<int>(bucketAttr->i())) : nullptr;
      if (!c)
        fail(what, where + " names no bucket of the collective manifest");
      // A broadcast's kernels exchange a broadcast's bucket, from the manifest's root; an
      // allreduce's kernels an allreduce's.
      const bool broadcastKernel =
          kind == KernelKind::BroadcastStart || kind == KernelKind::BroadcastWait;
      if (!isServer && !isWorker) {
        int64_t root = -1, rootProcess = -1;
        if (k->attrs())
          for (const fb::Attr *a : *k->attrs()) {
            if (a->name()->str() == "root")
              root = a->i();
            if (a->name()->str() == "root_process")
              rootProcess = a->i();
          }
        // Over the job, the manifest's root counts the job's replicas.
        if (GroupKind(c->group()) == GroupKind::World && broadcastKernel &&
            CollectiveKind(c->kind()) == CollectiveKind::Broadcast) {
          if (rootProcess < 0 || rootProcess >= plan.processes() || root < 0 || root >= replicas)
            fail(what, where + " broadcasts over the job from replica " + std::to_string(root) +
                           " of process " + std::to_string(rootProcess) + ", not one of the " +
                           std::to_string(replicas) + " x " + std::to_string(plan.processes()) +
                           " of the plan");
          root += rootProcess * replicas;
        } else if (rootProcess != -1) {
          fail(what, where + " names root process " + std::to_string(rootProcess) +
                         ", which only a broadcast over the job has");
        }
        if (broadcastKernel != (CollectiveKind(c->kind()) == CollectiveKind::Broadcast))
          fail(what, where + " exchanges bucket " + std::to_string(c->bucket()) + ", which is " +
                         collectiveKindName(CollectiveKind(c->kind())) + " in the manifest");
        if (root != c->root())
          fail(what, where + " has root " + std::to_string(root) + " but the manifest's " +
                         collectiveKindName(CollectiveKind(c->kind())) + " of bucket " +
                         std::to_string(c->bucket()) + " has " + std::to_string(c->root()));
      }
      if (k->device() != -1 || static_cast<int>(ids.size()) != replicas)
        fail(what, where + " must run on every device with one buffer per device");
      for (int d = 0; d < replicas; ++d) {
        const fb::Buffer *b = buffers.Get(ids[d]);
        if (b->device() != d || DType(b->dtype()) != DType::F32 ||
            numElements(*b) != c->elements())
          fail(what, where + " input " + std::to_string(d) + " must be device " +
                         std::to_string(d) + "'s f32 bucket of " +
                         std::to_string(c->elements()) + " elements");
      }
      // No collective exchanges state one process alone holds (the others' bytes there are
      // their own shares).
      for (uint32_t id : ids)
        if (processOf.count(id))
          fail(what, where + " exchanges buffer " + std::to_string(id) +
                         ", optimizer state that process " + std::to_string(processOf[id]) +
                         " alone holds");
      // A broadcast's bucket on device d holds that device's copies of its parameters, all
      // weights (the bucket is their copy: format 11), each at the same place in every
      // device's bucket (the root's bytes land there), apart from each other; the bucket is
      // persistent and overlays no other parameter, which the broadcast would overwrite.
      if (CollectiveKind(c->kind()) == CollectiveKind::Broadcast) {
        std::vector<std::vector<uint32_t>> named(replicas); // the copies, by device
        std::set<std::string> names;
        std::map<std::string, uint64_t> placeInBucket; // device 0's
        for (const flatbuffers::String *tensor : *c->tensors()) {
          const std::string name = tensor->str();
          names.insert(name);
          if (!weights.count(name))
            fail(what, where + " broadcasts '" + name + "', which is no weight of the plan");
          for (int d = 0; d < replicas; ++d) {
            auto it = paramBuffer.find({name, d});
            const fb::Buffer *bucket = buffers.Get(ids[d]);
            const fb::Buffer *copy = it == paramBuffer.end() ? nullptr : buffers.Get(it->second);
            // Both lie in the arena (verifyPlanTable checked it first): no end wraps.
            const uint64_t bucketEnd = bucket->offset() + uint64_t(numElements(*bucket)) * 4;
            if (!copy || DType(copy->dtype()) != DType::F32 || copy->offset() < bucket->offset() ||
                copy->offset() + uint64_t(numElements(*copy)) * 4 > bucketEnd)
              fail(what, where + " input " + std::to_string(d) + " must hold device " +
                             std::to_string(d) + "'s copy of parameter '" + name + "'");
            const uint64_t place = copy->offset() - bucket->offset();
            if (d == 0)
              placeInBucket[name] = place;
            else if (place != placeInBucket[name])
              fail(what, where + " input " + std::to_string(d) + " holds parameter '" + name +
                             "' at byte " + std::to_string(place) +
                             " of its bucket, device 0's at " +
                             std::to_string(placeInBucket[name]) +
                             ": the root's copy would land elsewhere");
            named[d].push_back(it->second);
          }
        }
        for (int d = 0; d < replicas; ++d) {
          const fb::Buffer *bucket = buffers.Get(ids[d]);
          const uint64_t begin = bucket->offset(), end = begin + uint64_t(numElements(*bucket)) * 4;
          if (end > plan.persistent_bytes())
            fail(what, where + " input " + std::to_string(d) +
                           " lies outside the persistent region: the step's other buffers would "
                           "reuse the parameters' bytes");
          auto overlaps = [&](uint32_t id) {
            const fb::Buffer *b = buffers.Get(id);
            const uint64_t bBegin = b->offset(),
                           bEnd = bBegin + uint64_t(numElements(*b)) * dtypeSize(DType(b->dtype()));
            return b->device() == d && bBegin < end && begin < bEnd;
          };
          // The named copies, by place: each ends before the next begins.
          std::vector<std::pair<uint64_t, uint32_t>> held;
          for (uint32_t id : named[d])
            held.push_back({buffers.Get(id)->offset(), id});
          std::sort(held.begin(), held.end());
          for (size_t i = 1; i < held.size(); ++i)
            if (held[i - 1].first + uint64_t(numElements(*buffers.Get(held[i - 1].second))) * 4 >
                held[i].first)
              fail(what, where + " input " + std::to_string(d) +
                             " holds two of its parameters in the same bytes");
          for (const fb::Param *p : *plan.params()) {
            // (paramBuffer has one record a name and device: this is that record.)
            const bool mine = names.count(p->name()->str()) &&
                              paramBuffer.at({p->name()->str(), d}) == p->buffer();
            if (!mine && overlaps(p->buffer()))
              fail(what, where + " input " + std::to_string(d) + " overlaps parameter '" +
                             p->name()->str() + "', which it does not broadcast");
            if (p->grad() >= 0 && overlaps(uint32_t(p->grad())))
              fail(what, where + " input " + std::to_string(d) + " overlaps the gradient of '" +
                             p->name()->str() + "'");
          }
        }
      }
      // A reduce-scattered bucket: each gradient in it lies within one owner's segment.
      if (kind == KernelKind::AllReduceStart && c->segments() && c->segments()->size() > 0) {
        const auto &s = *c->segments();
        // The bucket's gradients by name: under --shard-optimizer 2 buckets live in the step's
        // memory, and another bucket may use these bytes before or after this one.
        std::set<std::string_view> carried;
        if (c->tensors())
          for (const flatbuffers::String *t : *c->tensors())
            carried.insert(t->string_view());
        for (int d = 0; d < replicas; ++d) {
          const fb::Buffer *bucket = buffers.Get(ids[d]);
          const uint64_t begin = bucket->offset(), end = begin + uint64_t(c->elements()) * 4;
          for (const fb::Param *p : *plan.params()) {
            if (p->grad() < 0 || !carried.count(p->name()->string_view()))
              continue;
            const fb::Buffer *g = buffers.Get(uint32_t(p->grad()));
            if (g->device() != d || g->offset() < begin || g->offset() >= end)
              continue;
            const int64_t first = int64_t(g->offset() - begin) / 4, last = first + numElements(*g);
            // The last segment that begins at or before it (the offsets are in order; empty
            // segments before it share its beginning), which must hold its end too.
            const auto after = std::upper_bound(s.begin(), s.end(), first);
            const int64_t o = int64_t(after - s.begin()) - 1;
            const int64_t owner = o >= 0 && size_t(o + 1) < s.size() && last <= s[o + 1] ? o : -1;
            if (owner < 0)
              fail(what, where + " scatters the gradient of '" + p->name()->str() + "' on device " +
                             std::to_string(d) + ", which straddles its owners' segments");
            ownerOf[uint32_t(p->grad())] = owner;
          }
        }
      }
      const int bucket = c->bucket();
      const std::string named = "bucket " + std::to_string(bucket);
      if (isCollectiveStart(kind)) {
        if (state[bucket] != 0)
          fail(what, where + " starts " + named + " a second time in the step");
        if (train && (starts >= manifest.size() || manifest[starts]->bucket() != bucket))
          fail(what, where + " starts " + named + " out of the manifest's order (start #" +
                         std::to_string(starts + 1) + " of the step must be bucket " +
                         (starts < manifest.size() ? std::to_string(manifest[starts]->bucket())
                                                   : std::string("none")) +
                         "): the communication thread posts the buckets in that order");
        state[bucket] = 1;
        ++starts;
      } else {
        if (state[bucket] != 1)
          fail(what, where + " waits for " + named +
                         (state[bucket] == 2 ? " a second time in the step"
                                             : " before the step starts it: it could never "
                                               "complete"));
        state[bucket] = 2;
      }
    }
    for (const auto &[bucket, s] : state)
      if (s == 1)
        fail(what, step->name()->str() + " step starts bucket " + std::to_string(bucket) +
                       " and never waits for it");
    if (train && starts != manifest.size())
      fail(what, "the train step starts " + std::to_string(starts) + " of the manifest's " +
                     std::to_string(manifest.size()) + " buckets");
  }
}

namespace {

/// FlatBuffers' verifier (2.0) checks a vector's length word to 4 bytes only, so a vector of
/// 8-byte elements can be misaligned and reading it would be undefined behaviour. dp's
/// FlatBufferBuilder always aligns them; a plan that does not was made by hand.
void verifyWideVectorsAligned(const fb::Plan &plan, const std::string &what) {
  // An empty vector has nothing to read (and FlatBuffers does not align it).
  auto aligned = [](const auto *v) {
    return v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % 8 == 0;
  };
  const auto &buffers = *plan.buffers();
  for (uint32_t id = 0; id < buffers.size(); ++id)
    if (!aligned(buffers.Get(id)->shape()))
      fail(what, "corrupt plan: buffer " + std::to_string(id) +
                     "'s shape is not 8-byte aligned in the FlatBuffer");
  for (const fb::Step *step : {plan.train(), plan.eval()})
    for (uint32_t k = 0; k < step->kernels()->size(); ++k) {
      const auto *attrs = step->kernels()->Get(k)->attrs();
      if (!attrs)
        continue;
      for (const fb::Attr *attr : *attrs)
        if (attr->ints() && !aligned(attr->ints()))
          fail(what, "corrupt plan: attribute " + attr->name()->str() + " of " +
                         step->name()->str() + " kernel " + std::to_string(k) +
                         " is not 8-byte aligned in the FlatBuffer");
    }
}

} // namespace

static void verifyPlanTable(const fb::Plan &plan, const std::string &what);

/// The parameter-server records of a workers' plan and of each server's (already verified
/// as plans): roles, counts, and every bucket the same on both sides.
static void verifyParameterServer(const fb::Plan &plan, const std::string &what) {
  const auto *servers = plan.servers();
  if (plan.server() != -1)
    fail(what, "a plan with server index " + std::to_string(plan.server()) +
                   " is not a server's plan inside a workers' plan");
  if (plan.staleness() < -1)
    fail(what, "staleness " + std::to_string(plan.staleness()) + " is below -1 (unbounded)");
  if (!servers || servers->size() == 0) {
    if (plan.staleness() != -1 || plan.sync())
      fail(what, "staleness or sync is set, but the plan has no servers");
    return;
  }
  if (plan.sync() && plan.staleness() != 0)
    fail(what, "a synchronous parameter-server plan has staleness 0, not " +
                   std::to_string(plan.staleness()));
  if (plan.devices_per_process() != 1 || plan.nodes() != 1)
    fail(what, "parameter-server workers run one device each on one node layout");
  if (servers->size() + plan.processes() > static_cast<uint32_t>(kMaxProcesses))
    fail(what, std::to_string(servers->size()) + " servers and " +
                   std::to_string(plan.processes()) + " workers are more than " +
                   std::to_string(kMaxProcesses) + " processes");
  auto elementsOf = [](const fb::Plan &p, const std::string &name) -> int64_t {
    for (const fb::Param *param : *p.params())
      if (param->name()->str() == name)
        return numElements(*p.buffers()->Get(param->buffer()));
    return -1;
  };
  std::map<int, const fb::Collective *> pushed; // the workers' buckets
  if (plan.collectives())
    for (const fb::Collective *c : *plan.collectives())
      pushed[c->bucket()] = c;
  size_t received = 0;
  for (uint32_t s = 0; s < servers->size(); ++s) {
    const fb::Plan &server = *servers->Get(s);
    const std::string named = "server " + std::to_string(s) + "'s plan";
    if (server.server() != static_cast<int>(s))
      fail(what, named + " says it is server " + std::to_string(server.server()));
    if (server.servers() && server.servers()->size() > 0)
      fail(what, named + " has servers of its own");
    if (server.devices_per_process() != 1 || server.processes() != 1 ||
        server.inputs()->size() != 0 || server.eval()->kernels()->size() != 0 ||
        server.train()->name()->str() != "serve")
      fail(what, named + " must run one 'serve' step on one device of one process, with no "
                         "inputs and an empty eval step");
    if (server.device_kind() != static_cast<uint8_t>(DeviceKind::Cpu))
      fail(what, named + " is not for the CPU: servers run on the host");
    if (server.staleness() != -1 || server.sync())
      fail(what, named + " sets the strategy, which only the workers' plan holds");
    if (!server.collectives() || server.collectives()->size() == 0)
      fail(what, named + " receives no bucket");
    for (const fb::Collective *c : *server.collectives()) {
      auto it = pushed.find(c->bucket());
      const std::string bucket = named + "'s bucket " + std::to_string(c->bucket());
      if (it == pushed.end())
        fail(what, bucket + " is pushed by no worker");
      const fb::Collective *w = it->second;
      if (GroupKind(w->group()) != GroupKind::Server || w->group_id() != int(s) ||
          c->elements() != w->elements() || !w->tensors() || !c->tensors() ||
          w->tensors()->size() != c->tensors()->size())
        fail(what, bucket + " differs from the bucket the workers push (" +
                       groupName(GroupKind(w->group()), w->group_id()) + ", " +
                       std::to_string(w->elements()) + " elements)");
      for (uint32_t t = 0; t < c->tensors()->size(); ++t) {
        const std::string name = c->tensors()->Get(t)->str();
        if (w->tensors()->Get(t)->str() != name)
          fail(what, bucket + " carries '" + name + "' where the workers push '" +
                         w->tensors()->Get(t)->str() + "'");
        const int64_t mine = elementsOf(server, name), theirs = elementsOf(plan, name);
        if (mine < 0 || mine != theirs)
          fail(what, bucket + ": parameter '" + name + "' has " + std::to_string(mine) +
                         " elements on the server and " + std::to_string(theirs) +
                         " on the workers");
      }
      ++received;
    }
  }
  if (received != pushed.size())
    fail(what, "the workers push " + std::to_string(pushed.size()) + " buckets, the servers "
               "receive " + std::to_string(received));
}

void verifyPlanSemantics(const fb::Plan &plan, const std::string &what) {
  verifyPlanTable(plan, what);
  if (plan.servers())
    for (uint32_t s = 0; s < plan.servers()->size(); ++s)
      verifyPlanTable(*plan.servers()->Get(s), what + " (server " + std::to_string(s) + ")");
  verifyParameterServer(plan, what);
}

static void verifyPlanTable(const fb::Plan &plan, const std::string &what) {
  verifyWideVectorsAligned(plan, what);
  if (plan.device_kind() >= kNumDeviceKinds)
    fail(what, "unknown device kind " + std::to_string(plan.device_kind()));
  const auto &buffers = *plan.buffers();
  const uint32_t numBuffers = buffers.size();
  auto bufferName = [](uint32_t id) { return "buffer " + std::to_string(id); };

  uint64_t end = 0; // where the last buffer ends
  for (uint32_t id = 0; id < numBuffers; ++id) {
    const fb::Buffer *b = buffers.Get(id);
    if (b->dtype() >= kNumDTypes)
      fail(what, bufferName(id) + " has unknown dtype " + std::to_string(b->dtype()));
    int64_t elements = 1;
    for (int64_t d : *b->shape()) {
      if (d <= 0 || d > (int64_t(1) << 40))
        fail(what, bufferName(id) + " has invalid dimension " + std::to_string(d));
      if (elements > (int64_t(1) << 40) / d) // before the product could overflow
        fail(what, bufferName(id) + " is implausibly large");
      elements *= d;
    }
    // Compared without forming offset + size, which a hostile offset could wrap around.
    uint64_t size = static_cast<uint64_t>(elements) * dtypeSize(DType(b->dtype()));
    if (b->offset() > plan.arena_bytes() || size > plan.arena_bytes() - b->offset()) {
      std::string end = b->offset() <= UINT64_MAX - size
                            ? " ends at byte " + std::to_string(b->offset() + size) + ","
                            : " ends";
      fail(what, bufferName(id) + end + " past the arena of " +
                     std::to_string(plan.arena_bytes()) + " bytes");
    }
    if (b->offset() % 64 != 0)
      fail(what, bufferName(id) + " offset " + std::to_string(b->offset()) + " is not 64-byte aligned");
    end = std::max(end, b->offset() + size); // inside the arena: cannot wrap
  }
  // The arena is what its buffers need, rounded to the alignment: a plan of a few KiB cannot
  // ask for gigabytes that nothing uses.
  const uint64_t needed = std::max<uint64_t>((end + 63) / 64 * 64, 64);
  if (plan.arena_bytes() > needed)
    fail(what, "the arena of " + std::to_string(plan.arena_bytes()) +
                   " bytes is larger than its buffers need (" + std::to_string(needed) +
                   " bytes)");
  if (plan.persistent_bytes() > plan.arena_bytes())
    fail(what, "persistent region is larger than the arena");
  if (plan.batch() <= 0)
    fail(what, "batch size " + std::to_string(plan.batch()) + " is not positive");

  auto checkId = [&](uint32_t id, const std::string &where) {
    if (id >= numBuffers)
      fail(what, where + " refers to buffer " + std::to_string(id) + " but the plan has " +
                     std::to_string(numBuffers) + " buffers");
  };
  for (const fb::Param *p : *plan.params()) {
    std::string where = "param '" + p->name()->str() + "'";
    checkId(p->buffer(), where);
    if (p->grad() >= 0)
      checkId(static_cast<uint32_t>(p->grad()), where + " gradient");
    if (p->init()->kind() >= static_cast<uint8_t>(InitKind::NumKinds))
      fail(what, where + " has unknown initialiser kind " + std::to_string(p->init()->kind()));
    // Buffers were checked to lie within the arena above, so offset + size cannot wrap.
    const fb::Buffer *pb = buffers.Get(p->buffer());
    // Values from data: a table of the plan's, of the parameter's size.
    const int data = p->init()->data();
    const bool fromData = p->init()->kind() == static_cast<uint8_t>(InitKind::Data);
    if (fromData != (data >= 0))
      fail(what, where + (fromData ? " is initialised from data but names no data table"
                                   : " names data table " + std::to_string(data) +
                                         " but is not initialised from data"));
    if (fromData) {
      const uint32_t tables = plan.init_data() ? plan.init_data()->size() : 0;
      if (static_cast<uint32_t>(data) >= tables)
        fail(what, where + " names data table " + std::to_string(data) + " but the plan has " +
                       std::to_string(tables));
      const uint64_t values = plan.init_data()->Get(static_cast<uint32_t>(data))->values()->size();
      if (values != static_cast<uint64_t>(numElements(*pb)))
        fail(what, where + " has " + std::to_string(numElements(*pb)) +
                       " elements but its data table " + std::to_string(data) + " holds " +
                       std::to_string(values) + " values");
    }
    if (pb->offset() + numElements(*pb) * dtypeSize(DType(pb->dtype())) > plan.persistent_bytes())
      fail(what, where + " lies outside the persistent region");
  }
  // Each device has at most one buffer of each role: the runtime finds them by role.
  std::set<std::pair<unsigned, int>> roles;
  auto checkRole = [&](unsigned role, unsigned count, const std::string &roleName, uint32_t id,
                       const std::string &where) {
    if (role >= count)
      fail(what, where + " has unknown role " + std::to_string(role));
    if (!roles.insert({role, buffers.Get(id)->device()}).second)
      fail(what, where + " is a second " + roleName + " of device " +
                     std::to_string(buffers.Get(id)->device()));
  };
  for (const fb::Input *in : *plan.inputs()) {
    std::string where = "input '" + in->name()->str() + "'";
    checkId(in->buffer(), where);
    checkRole(in->role(), kNumInputRoles,
              inputRoleName(InputRole(in->role())) + std::string(" input"), in->buffer(), where);
  }

  for (const fb::Step *step : {plan.train(), plan.eval()}) {
    std::string stepName = step->name()->str();
    int index = 0;
    for (const fb::Kernel *k : *step->kernels()) {
      std::string where = stepName + " kernel #" + std::to_string(index++);
      if (k->kind() >= static_cast<uint16_t>(KernelKind::NumKinds))
        fail(what, where + " has unknown kernel kind " + std::to_string(k->kind()));
      const KernelInfo &info = kernelInfo(KernelKind(k->kind()));
      where += " (" + std::string(info.name) + ")";
      int nIn = k->inputs() ? k->inputs()->size() : 0;
      int nOut = k->outputs() ? k->outputs()->size() : 0;
      if (nIn < info.minInputs || nIn > info.maxInputs)
        fail(what, where + " has " + std::to_string(nIn) + " inputs, expected " +
                       std::to_string(info.minInputs) +
                       (info.maxInputs != info.minInputs ? " to " + std::to_string(info.maxInputs) : ""));
      const int maxOut = maxOutputs(KernelKind(k->kind()));
      if (nOut < info.numOutputs || nOut > maxOut)
        fail(what, where + " has " + std::to_string(nOut) + " outputs, expected " +
                       std::to_string(info.numOutputs) +
                       (maxOut != info.numOutputs ? " to " + std::to_string(maxOut) : ""));
      if (k->inputs())
        for (uint32_t id : *k->inputs())
          checkId(id, where);
      if (k->outputs())
        for (uint32_t id : *k->outputs())
          checkId(id, where);
      // Attributes are the kind's, by the contract table; their values are checked where
      // they are decoded (KernelSite::attrs).
      if (k->attrs())
        for (const fb::Attr *a : *k->attrs())
          if (!findAttrSpec(KernelKind(k->kind()), a->name()->string_view()))
            fail(what, where + " has unknown attribute '" + a->name()->str() + "'");
    }
    roles.clear();
    if (step->outputs())
      for (const fb::Output *o : *step->outputs()) {
        std::string where = stepName + " output '" + o->name()->str() + "'";
        checkId(o->buffer(), where);
        checkRole(o->role(), kNumOutputRoles,
                  outputRoleName(OutputRole(o->role())) + std::string(" output"), o->buffer(),
                  where);
      }
  }
  verifyExportSource(plan, what);
  verifyDistribution(plan, what);
}

} // namespace dp::rt
