// The communication model: see Model.h and docs/scaling.md.
#include "sim/Model.h"

#include "dialect/Common/Nesting.h"
#include "runtime/base/Files.h"
#include "runtime/base/Text.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dp::sim {
namespace json = llvm::json;

namespace {

/// Files the simulator reads are small; a larger one is not a profile or a topology.
constexpr uint64_t kMaxInputBytes = uint64_t(16) << 20;

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::string> readText(const std::string &path, const std::string &role) {
  std::string text, error;
  if (!rt::tryReadInputFile(path, kMaxInputBytes, role, text, error))
    return fail(error);
  return text;
}

/// A number for messages: "0.5", "1e-09", "1e+12" (std::to_string prints 1e-9 as 0.000000).
std::string shortNumber(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", x);
  return text;
}

llvm::Expected<json::Value> parseJson(llvm::StringRef text, const std::string &path) {
  // Before the parser, which recurses once per level and would overflow the stack.
  if (std::optional<TextPoint> at = jsonNestingBeyond(text, kMaxJsonNesting))
    return fail(path + ":" + llvm::Twine(at->line) + ":" + llvm::Twine(at->column) +
                ": JSON nested deeper than " + llvm::Twine(kMaxJsonNesting) +
                " levels here; a profile or a topology nests 3");
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return fail(path + ": not JSON: " + llvm::toString(value.takeError()));
  if (!value->getAsObject())
    return fail(path + ": expected a JSON object");
  return std::move(*value);
}

/// Reads the fields of one JSON object, keeping the first error (named after `where`): the
/// values of fields read after it are placeholders, and error() returns it.
class Fields {
public:
  Fields(const json::Object &object, std::string where)
      : object_(object), where_(std::move(where)) {}

  /// A number that must be there, finite and in [min, max].
  double number(llvm::StringRef key, double min, double max) {
    std::optional<double> value = object_.getNumber(key);
    if (!value)
      return miss("'" + key.str() + "' is missing or not a number");
    if (!std::isfinite(*value) || *value < min || *value > max)
      return miss("'" + key.str() + "' is " + shortNumber(*value) + ", expected a number from " +
                  shortNumber(min) + " to " + shortNumber(max));
    return *value;
  }
  /// An integer in [min, max]; `fallback` when absent, if given.
  int64_t integer(llvm::StringRef key, int64_t min, int64_t max,
                  std::optional<int64_t> fallback = std::nullopt) {
    if (!object_.get(key) && fallback)
      return *fallback;
    std::optional<int64_t> value = object_.getInteger(key);
    if (!value)
      return miss("'" + key.str() + "' is missing or not an integer");
    if (*value < min || *value > max)
      return miss("'" + key.str() + "' is " + std::to_string(*value) + ", outside " +
                  std::to_string(min) + ".." + std::to_string(max));
    return *value;
  }
  /// The first error, or success.
  llvm::Error error() { return first_.empty() ? llvm::Error::success() : fail(first_); }

private:
  int miss(const std::string &what) {
    if (first_.empty())
      first_ = where_ + ": " + what;
    return 0;
  }
  const json::Object &object_;
  std::string where_, first_;
};

std::string stringOr(const json::Object &object, llvm::StringRef key, std::string fallback) {
  if (std::optional<llvm::StringRef> s = object.getString(key))
    return s->str();
  return fallback;
}

llvm::Expected<Link> readLink(const json::Object &levels, llvm::StringRef name,
                              const std::string &where) {
  const json::Object *level = levels.getObject(name);
  if (!level)
    return fail(where + ": levels." + name + " is missing (latency_us, bandwidth_GBps)");
  Fields fields(*level, where + ": levels." + name.str());
  Link link;
  link.latencyUs = fields.number("latency_us", 0, kMaxLatencyUs);
  link.bandwidthGBps = fields.number("bandwidth_GBps", kMinBandwidthGBps, kMaxBandwidthGBps);
  if (llvm::Error e = fields.error())
    return std::move(e);
  return link;
}

int64_t ceilLog2(int64_t p) {
  int64_t rounds = 0;
  while ((int64_t(1) << rounds) < p)
    ++rounds;
  return rounds;
}

} // namespace

llvm::Expected<Topology> readTopology(const std::string &path) {
  llvm::Expected<std::string> text = readText(path, "topology");
  if (!text)
    return text.takeError();
  return parseTopology(*text, path);
}

llvm::Expected<Topology> parseTopology(llvm::StringRef text, const std::string &path) {
  llvm::Expected<json::Value> value = parseJson(text, path);
  if (!value)
    return value.takeError();
  const json::Object &object = *value->getAsObject();
  Topology topology;
  topology.name = stringOr(object, "name", path);
  topology.source = stringOr(object, "source", "");
  const json::Object *levels = object.getObject("levels");
  if (!levels)
    return fail(path + ": 'levels' is missing: an object with device, host and network");
  for (auto [name, link] : {std::pair<const char *, Link *>{"device", &topology.device},
                            {"host", &topology.host},
                            {"network", &topology.network}}) {
    llvm::Expected<Link> read = readLink(*levels, name, path);
    if (!read)
      return read.takeError();
    *link = *read;
  }
  Fields counts(object, path);
  topology.nodes = int(counts.integer("nodes", 1, 1 << 20, 0));
  topology.ranksPerNode = int(counts.integer("ranks_per_node", 1, 1 << 20, 0));
  topology.devicesPerRank = int(counts.integer("devices_per_rank", 1, 1 << 20, 0));
  topology.coresPerNode = int(counts.integer("cores_per_node", 1, 1 << 20, 0));
  if (llvm::Error e = counts.error())
    return std::move(e);
  // Each count is bounded; their product must be too (the counts not given count as 1).
  Topology given = topology;
  for (int *count : {&given.nodes, &given.ranksPerNode, &given.devicesPerRank})
    *count = std::max(*count, 1);
  if (llvm::Error e = checkCounts(given))
    return fail(path + ": " + llvm::toString(std::move(e)));
  return topology;
}

llvm::Error checkCounts(const Topology &t) {
  for (auto [name, count] : {std::pair<const char *, int>{"nodes", t.nodes},
                             {"ranks per node", t.ranksPerNode},
                             {"devices per rank", t.devicesPerRank}})
    if (count < 1 || count > kMaxDevices)
      return fail(llvm::Twine(count) + " " + name + " is outside 1.." +
                  rt::withCommas(kMaxDevices));
  // Each factor is at most 2^30, so the first product fits; the second is compared first.
  const int64_t ranks = int64_t(t.nodes) * t.ranksPerNode;
  if (ranks > kMaxDevices / t.devicesPerRank)
    return fail(rt::withCommas(t.nodes) + " node(s) x " + rt::withCommas(t.ranksPerNode) +
                " rank(s) x " + rt::withCommas(t.devicesPerRank) + " device(s) is more than the " +
                rt::withCommas(kMaxDevices) + " devices dpc simulate predicts for");
  return llvm::Error::success();
}

llvm::Error checkMachine(const Topology &t, int64_t rowsPerReplica) {
  if (llvm::Error e = checkCounts(t))
    return e;
  const int64_t devices = t.devices();
  if (rowsPerReplica < 0 || rowsPerReplica > kMaxGlobalBatch / devices)
    return fail("a global batch of " + rt::withCommas(rowsPerReplica) + " rows per replica x " +
                rt::withCommas(devices) + " devices is more than the " +
                rt::withCommas(kMaxGlobalBatch) + " rows dpc simulate predicts for");
  return llvm::Error::success();
}

double Profile::kernelUs() const {
  double sum = 0;
  for (const Kernel &k : kernels)
    sum += k.us * double(k.runs);
  return sum;
}

double Profile::waitUs() const {
  double sum = 0;
  for (const Bucket &b : buckets)
    sum += b.waitUs;
  return sum;
}

double Profile::hostUs() const { return std::max(0.0, stepUs - kernelUs() - waitUs()); }

llvm::Expected<Profile> readProfile(const std::string &path) {
  llvm::Expected<std::string> text = readText(path, "profile");
  if (!text)
    return text.takeError();
  return parseProfile(*text, path);
}

llvm::Expected<Profile> parseProfile(llvm::StringRef text, const std::string &path) {
  llvm::Expected<json::Value> value = parseJson(text, path);
  if (!value)
    return value.takeError();
  const json::Object &object = *value->getAsObject();
  Profile profile;
  profile.path = path;
  profile.model = stringOr(object, "model", "");
  profile.layout = stringOr(object, "allreduce_layout", "flat");
  Fields fields(object, path);
  profile.globalBatch = fields.integer("global_batch", 1, int64_t(1) << 40);
  profile.replicasPerProcess = fields.integer("replicas_per_process", 1, 64);
  profile.processes = fields.integer("processes", 1, rt::kMaxProcesses);
  profile.nodes = fields.integer("nodes", 1, rt::kMaxProcesses);
  profile.stepsMeasured = fields.integer("steps_measured", 0, int64_t(1) << 40);
  profile.computeThreads = fields.integer("compute_threads", 1, 1 << 16, 0);
  if (llvm::Error e = fields.error())
    return std::move(e);
  if (profile.stepsMeasured < 1)
    return fail(path + ": no train step was measured (the profile needs a run of at least 2 "
                       "steps; the first is left out)");
  if (profile.globalBatch % (profile.replicasPerProcess * profile.processes) != 0)
    return fail(path + ": global_batch " + llvm::Twine(profile.globalBatch) +
                " does not split over " +
                llvm::Twine(profile.replicasPerProcess * profile.processes) + " replicas");
  const json::Object *step = object.getObject("step_us");
  if (!step)
    return fail(path + ": 'step_us' is missing");
  Fields stepFields(*step, path + ": step_us");
  profile.stepUs = stepFields.number("mean", 0, kMaxProfileUs);
  if (llvm::Error e = stepFields.error())
    return std::move(e);

  const json::Array *kernels = object.getArray("kernels");
  if (!kernels || kernels->empty())
    return fail(path + ": 'kernels' is missing or empty");
  for (size_t i = 0; i < kernels->size(); ++i) {
    const json::Object *k = (*kernels)[i].getAsObject();
    const std::string at = path + ": kernels[" + std::to_string(i) + "]";
    if (!k)
      return fail(at + " is not an object");
    Profile::Kernel kernel;
    Fields fields(*k, at);
    kernel.index = fields.integer("index", 0, int64_t(1) << 31);
    kernel.us = fields.number("mean_us", 0, kMaxProfileUs);
    if (llvm::Error e = fields.error())
      return std::move(e);
    kernel.kind = stringOr(*k, "kind", "");
    if (!profile.kernels.empty() && kernel.index <= profile.kernels.back().index)
      return fail(at + ": kernel indices must increase");
    profile.kernels.push_back(std::move(kernel));
  }
  if (const json::Array *buckets = object.getArray("buckets"))
    for (size_t i = 0; i < buckets->size(); ++i) {
      const json::Object *b = (*buckets)[i].getAsObject();
      const std::string at = path + ": buckets[" + std::to_string(i) + "]";
      if (!b)
        return fail(at + " is not an object");
      Profile::Bucket bucket;
      Fields fields(*b, at);
      bucket.bucket = fields.integer("bucket", 0, int64_t(1) << 31);
      bucket.bytes = fields.integer("bytes", 1, int64_t(1) << 40);
      bucket.waitUs = fields.number("wait_mean_us", 0, kMaxProfileUs);
      if (llvm::Error e = fields.error())
        return std::move(e);
      profile.buckets.push_back(bucket);
    }
  return profile;
}

const char *layoutName(Layout layout) {
  return layout == Layout::Flat ? "flat" : layout == Layout::Tree ? "tree" : "hierarchical";
}

Layout autoLayout(int nodes, int ranksPerNode) {
  return nodes > 1 && ranksPerNode > 1 ? Layout::Hierarchical : Layout::Flat;
}

double ringAllreduce(int64_t p, double bytes, const Link &link) {
  if (p <= 1)
    return 0;
  return 2.0 * double(p - 1) * link.latency() +
         2.0 * double(p - 1) / double(p) * link.transfer(bytes);
}

double treeAllreduce(int64_t p, double bytes, const Link &link) {
  if (p <= 1)
    return 0;
  return 2.0 * double(ceilLog2(p)) * link.latency() + 2.0 * link.transfer(bytes);
}

double allreduce(int64_t p, double bytes, const Link &link) {
  return std::min(ringAllreduce(p, bytes, link), treeAllreduce(p, bytes, link));
}

double treeReduce(int64_t p, double bytes, const Link &link) {
  if (p <= 1)
    return 0;
  return double(ceilLog2(p)) * (link.latency() + link.transfer(bytes));
}

BucketCost bucketCost(double bytes, const Topology &t, Layout layout) {
  BucketCost cost;
  if (t.devicesPerRank > 1)
    cost.device = t.device.latency() + 2.0 * double(t.devicesPerRank - 1) * t.device.transfer(bytes);
  const int64_t ranks = t.ranks();
  if (ranks <= 1)
    return cost;
  if (layout == Layout::Tree) {
    cost.host = 2.0 * treeReduce(t.ranksPerNode, bytes, t.host);
    cost.network = 2.0 * treeReduce(t.nodes, bytes, t.network);
    return cost;
  }
  if (t.nodes <= 1) {
    cost.host = allreduce(ranks, bytes, t.host);
  } else if (layout == Layout::Flat || t.ranksPerNode <= 1) {
    // One ring over every rank, ordered by node: its slowest edges cross the network.
    cost.network = allreduce(ranks, bytes, t.network);
  } else {
    cost.host = 2.0 * treeReduce(t.ranksPerNode, bytes, t.host);
    cost.network = allreduce(t.nodes, bytes, t.network);
  }
  return cost;
}

double ringReduceScatter(int64_t p, double bytes, const Link &link) {
  if (p <= 1)
    return 0;
  return double(p - 1) * link.latency() + double(p - 1) / double(p) * link.transfer(bytes);
}

double halvingReduceScatter(int64_t p, double bytes, const Link &link) {
  if (p <= 1)
    return 0;
  return double(ceilLog2(p)) * link.latency() + double(p - 1) / double(p) * link.transfer(bytes);
}

double reduceScatter(int64_t p, double bytes, const Link &link) {
  return std::min(ringReduceScatter(p, bytes, link), halvingReduceScatter(p, bytes, link));
}

BucketCost scatterCost(double bytes, const Topology &t, Layout layout) {
  BucketCost cost = bucketCost(bytes, t, layout);
  if (t.ranks() <= 1)
    return cost;
  const double nodes = double(t.nodes), local = double(std::max<int64_t>(t.ranksPerNode, 1));
  if (layout == Layout::Tree) {
    // Up the tree as a sum, then back down it in the segments of each subtree: a rank sends
    // each child the part of the ranks below it, so the bucket's (P - 1) / P leaves rank 0 in
    // ceil(log2 P) messages, node-major: the nodes' parts over the network, then each node's
    // over the host's link.
    cost.host = treeReduce(t.ranksPerNode, bytes, t.host) +
                double(ceilLog2(t.ranksPerNode)) * t.host.latency() +
                t.host.transfer(bytes / nodes * (local - 1) / local);
    cost.network = treeReduce(t.nodes, bytes, t.network);
    if (t.nodes > 1)
      cost.network += double(ceilLog2(t.nodes)) * t.network.latency() +
                      t.network.transfer(bytes * (nodes - 1) / nodes);
    return cost;
  }
  if (layout == Layout::Hierarchical && t.nodes > 1 && t.ranksPerNode > 1) {
    // Reduced within the node to its leader, reduce-scattered over the leaders (each receiving
    // its node's segments), then scattered within the node (the leader sends (L - 1) / L of
    // its node's part).
    cost.host = treeReduce(t.ranksPerNode, bytes, t.host) + (local - 1) * t.host.latency() +
                t.host.transfer(bytes / nodes * (local - 1) / local);
    cost.network = reduceScatter(t.nodes, bytes, t.network);
    return cost;
  }
  // One ring over every rank, ordered by node: across nodes at the network's pace.
  (t.nodes > 1 ? cost.network : cost.host) =
      reduceScatter(t.ranks(), bytes, t.nodes > 1 ? t.network : t.host);
  return cost;
}

BucketCost broadcastCost(double bytes, const Topology &t, bool acrossRanks) {
  BucketCost cost;
  if (t.devicesPerRank > 1)
    cost.device = t.device.latency() + double(t.devicesPerRank - 1) * t.device.transfer(bytes);
  const int64_t ranks = t.ranks();
  if (!acrossRanks || ranks <= 1)
    return cost;
  // A scatter and a ring allgather move what a ring allreduce does.
  const Link &link = t.nodes > 1 ? t.network : t.host;
  const double seconds =
      std::min(treeReduce(ranks, bytes, link), ringAllreduce(ranks, bytes, link));
  (t.nodes > 1 ? cost.network : cost.host) = seconds;
  return cost;
}

llvm::Error matchProfile(const rt::Plan &plan, Profile &profile, bool otherRows) {
  if (!profile.model.empty() && profile.model != plan.model)
    return fail(profile.path + " profiles model '" + profile.model + "', the plan is '" +
                plan.model + "'");
  const int64_t rows = plan.batch / (int64_t(plan.devicesPerProcess) * plan.processes);
  if (profile.rowsPerReplica() != rows && !otherRows)
    return fail(profile.path + " measured " + llvm::Twine(profile.rowsPerReplica()) +
                " rows per replica, the plan has " + llvm::Twine(rows) +
                ": kernel times depend on them; profile a run with the plan's rows per replica "
                "(or give the step's time with --compute-ms)");
  size_t ordinal = 0;
  for (size_t i = 0; i < plan.train.kernels.size(); ++i) {
    const rt::KernelDesc &k = plan.train.kernels[i];
    if (k.device != 0)
      continue;
    const std::string kind = rt::kernelInfo(k.kind).name;
    if (ordinal >= profile.kernels.size())
      return fail(profile.path + " has " + llvm::Twine(profile.kernels.size()) +
                  " kernels per replica, the plan more (train kernel #" + llvm::Twine(i) +
                  ", " + kind + ")");
    if (profile.kernels[ordinal].kind != kind)
      return fail(profile.path + ": kernel " + llvm::Twine(ordinal) + " of device 0 is '" +
                  profile.kernels[ordinal].kind + "', the plan's is '" + kind +
                  "' (train kernel #" + llvm::Twine(i) + ")");
    profile.kernels[ordinal].runs = k.final ? 1 : std::max(plan.accumulation, 1);
    ++ordinal;
  }
  if (ordinal != profile.kernels.size())
    return fail(profile.path + " has " + llvm::Twine(profile.kernels.size()) +
                " kernels per replica, the plan " + llvm::Twine(ordinal));
  return llvm::Error::success();
}

double computeShareDuringAllreduce(const Topology &topology, int64_t computeThreads) {
  if (topology.coresPerNode <= 0 || computeThreads <= 0)
    return 1.0;
  const int64_t ranks = std::max(topology.ranksPerNode, 1);
  if (ranks * computeThreads < topology.coresPerNode)
    return 1.0;
  return double(computeThreads) / double(computeThreads + 1);
}

llvm::Expected<Prediction> predict(const rt::Plan &plan, const Profile &profile,
                                   const Topology &topology, Layout layout, double computeScale) {
  if (llvm::Error e = checkMachine(topology, profile.rowsPerReplica()))
    return std::move(e);
  if (!(computeScale >= kMinComputeScale && computeScale <= kMaxComputeScale))
    return fail("a compute scale of " + shortNumber(computeScale) + " is outside " +
                shortNumber(kMinComputeScale) + ".." + shortNumber(kMaxComputeScale));
  Prediction p;
  p.devices = topology.devices();
  p.globalBatch = profile.rowsPerReplica() * p.devices;
  std::vector<int64_t> bytesOf(0);
  std::vector<bool> overTheJob(0); // a broadcast over every rank (state sharded over them)
  std::vector<bool> scattered(0);  // a gradient bucket reduce-scattered to its owners
  for (const rt::CollectiveDesc &c : plan.collectives) {
    if (size_t(c.bucket) >= bytesOf.size()) {
      bytesOf.resize(c.bucket + 1, 0);
      overTheJob.resize(c.bucket + 1, false);
      scattered.resize(c.bucket + 1, false);
    }
    scattered[c.bucket] = !c.segments.empty();
    bytesOf[c.bucket] = c.elements * int64_t(rt::dtypeSize(c.dtype));
    overTheJob[c.bucket] =
        c.kind == rt::CollectiveKind::Broadcast && c.group == rt::GroupKind::World;
  }
  const bool communicates = p.devices > 1;
  double t = profile.hostUs() * computeScale; // host functions: counted before the kernels
  double networkFree = 0;                     // when the engine can start the next bucket
  // Compute of `us` from t on: slower while a bucket moves (the engine's thread shares the
  // cores), at full speed after.
  const double share = computeShareDuringAllreduce(topology, profile.computeThreads);
  auto compute = [&](double us) {
    if (t < networkFree && share < 1.0) {
      const double overlapped = std::min(us, (networkFree - t) * share);
      t += overlapped / share;
      p.sharedCoreUs += overlapped / share - overlapped;
      us -= overlapped;
    }
    t += us;
  };
  // Under gradient accumulation the step's first M - 1 micro-shards compute alone (their
  // kernels outside the final phase); the last one's backward pass overlaps the collectives,
  // which are all of the final phase.
  {
    size_t ordinal = 0;
    for (const rt::KernelDesc &k : plan.train.kernels)
      if (!rt::isCollective(k.kind) && k.device == 0 && ordinal < profile.kernels.size()) {
        const Profile::Kernel &timed = profile.kernels[ordinal++];
        compute(timed.us * double(timed.runs - 1) * computeScale);
      }
  }
  std::vector<int> timingOf(bytesOf.size(), -1);
  size_t ordinal = 0;
  for (const rt::KernelDesc &k : plan.train.kernels) {
    if (rt::isCollective(k.kind)) {
      const auto *attrs = std::get_if<rt::CollectiveAttrs>(&k.attrs);
      if (!attrs || !communicates || attrs->bucket < 0 || size_t(attrs->bucket) >= bytesOf.size())
        continue;
      const int b = int(attrs->bucket);
      if (rt::isCollectiveStart(k.kind)) {
        // The engine's one thread takes the buckets in order: an allreduce's, or a
        // parameter's broadcast from the device that updated it.
        BucketTiming timing;
        timing.bucket = b;
        timing.bytes = bytesOf[b];
        timing.broadcast = k.kind == rt::KernelKind::BroadcastStart;
        timing.cost = timing.broadcast ? broadcastCost(double(bytesOf[b]), topology, overTheJob[b])
                      : scattered[b]   ? scatterCost(double(bytesOf[b]), topology, layout)
                                       : bucketCost(double(bytesOf[b]), topology, layout);
        timing.readyUs = t;
        timing.startUs = std::max(t, networkFree);
        timing.endUs = timing.startUs + timing.cost.total() * 1e6;
        networkFree = timing.endUs;
        p.commUs += timing.cost.total() * 1e6;
        timingOf[b] = int(p.buckets.size());
        p.buckets.push_back(timing);
      } else if (timingOf[b] >= 0 && p.buckets[timingOf[b]].endUs > t) {
        p.exposedUs += p.buckets[timingOf[b]].endUs - t;
        t = p.buckets[timingOf[b]].endUs;
      }
      continue;
    }
    if (k.device != 0)
      continue;
    if (ordinal < profile.kernels.size())
      compute(profile.kernels[ordinal].us * computeScale);
    ++ordinal;
  }
  p.stepUs = t;
  p.computeUs = t - p.exposedUs - p.sharedCoreUs;
  // Every time is bounded, but a sum of many can still pass a double's range (or 0 x inf make
  // nan): what is printed must be a number.
  bool finite = std::isfinite(p.stepUs) && std::isfinite(p.computeUs) &&
                std::isfinite(p.commUs) && std::isfinite(p.exposedUs) &&
                std::isfinite(p.sharedCoreUs);
  for (const BucketTiming &b : p.buckets)
    finite = finite && std::isfinite(b.endUs) && std::isfinite(b.cost.total());
  if (!finite)
    return fail("the predicted step is not a finite number of microseconds (" +
                shortNumber(p.stepUs) + "): the profile's times or the topology's links are "
                "too extreme");
  if (p.samplesPerSecond() > kMaxSamplesPerSecond)
    return fail("the predicted step of " + shortNumber(p.stepUs) + " us for a global batch of " +
                rt::withCommas(p.globalBatch) + " is " + shortNumber(p.samplesPerSecond()) +
                " samples/s, more than the " + shortNumber(kMaxSamplesPerSecond) +
                " dpc simulate reports: the profile's times are too small");
  return p;
}

} // namespace dp::sim
