// `dpc simulate`: see Simulate.h.
#include "sim/Simulate.h"

#include "dialect/Common/AtomicFile.h"
#include "runtime/base/Text.h"
#include "sim/Model.h"
#include "sim/Schedule.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>

namespace dp::sim {
namespace {

/// printf into a string.
__attribute__((format(printf, 1, 2))) std::string format(const char *pattern, ...) {
  char text[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(text, sizeof(text), pattern, args);
  va_end(args);
  return text;
}

using rt::withCommas;

std::string fixed(double x, int digits = 1) { return format("%.*f", digits, x); }

/// A number for messages: "0.5", "1e-06", "1e+308".
std::string shortNumber(double x) { return format("%g", x); }

/// "1,234.5": microseconds and the like, with thousands separators.
std::string number(double x, int digits = 1) {
  const std::string text = fixed(std::fabs(x), digits); // rounds 999.96 to "1000.0" first
  const size_t point = text.find('.');
  return (x < 0 && text.find_first_not_of("0.") != std::string::npos ? "-" : "") +
         rt::groupDigits(text.substr(0, point)) +
         (point == std::string::npos ? "" : text.substr(point));
}

void printLink(llvm::raw_ostream &out, const char *name, const Link &link) {
  out << format("  %-8s latency %9s us, bandwidth %10s GB/s\n", name,
                      number(link.latencyUs, 2).c_str(), fixed(link.bandwidthGBps, 4).c_str());
}

llvm::json::Object predictionJson(const Prediction &p, const Topology &t) {
  llvm::json::Array buckets;
  for (const BucketTiming &b : p.buckets)
    buckets.push_back(llvm::json::Object{{"bucket", b.bucket},
                                         {"kind", b.broadcast ? "broadcast" : "allreduce"},
                                         {"bytes", b.bytes},
                                         {"ready_us", b.readyUs},
                                         {"start_us", b.startUs},
                                         {"end_us", b.endUs},
                                         {"device_us", b.cost.device * 1e6},
                                         {"host_us", b.cost.host * 1e6},
                                         {"network_us", b.cost.network * 1e6}});
  return llvm::json::Object{{"devices", p.devices},
                            {"nodes", t.nodes},
                            {"ranks_per_node", t.ranksPerNode},
                            {"devices_per_rank", t.devicesPerRank},
                            {"global_batch", p.globalBatch},
                            {"step_us", p.stepUs},
                            {"compute_us", p.computeUs},
                            {"communication_us", p.commUs},
                            {"exposed_us", p.exposedUs},
                            {"shared_core_us", p.sharedCoreUs},
                            {"hidden", p.hidden()},
                            {"efficiency", p.efficiency()},
                            {"samples_per_second", p.samplesPerSecond()},
                            {"buckets", std::move(buckets)}};
}

class Simulation {
public:
  Simulation(const SimulateOptions &options, llvm::raw_ostream &out, llvm::raw_ostream &err)
      : o_(options), out_(out), err_(err) {}

  int run() {
    if (int code = usage())
      return code;
    if (!rt::Plan::tryRead(o_.plan, plan_, error_))
      return fail(error_);
    const int processes = plan_.processes;
    std::vector<const rt::Plan *> ranks(processes, &plan_);
    std::vector<std::string> names(processes, o_.plan);
    for (const auto &[rank, path] : o_.rankPlans) {
      if (rank < 0 || rank >= processes)
        return usageError("--rank-plan " + std::to_string(rank) + "=" + path +
                          ": the plan has ranks 0.." + std::to_string(processes - 1));
      auto other = std::make_unique<rt::Plan>();
      if (!rt::Plan::tryRead(path, *other, error_))
        return fail(error_);
      if (other->processes != processes || other->nodes != plan_.nodes)
        return fail(path + " is compiled for " + std::to_string(other->processes) +
                    " process(es) on " + std::to_string(other->nodes) + " node(s), " + o_.plan +
                    " for " + std::to_string(processes) + " on " +
                    std::to_string(plan_.nodes) + ": one job runs one layout");
      ranks[rank] = other.get();
      names[rank] = path;
      others_.push_back(std::move(other));
    }
    const int perNode = processes / plan_.nodes;
    const Layout planLayout = layoutOf(plan_.nodes, perNode);
    out_ << "plan " << o_.plan << ": " << plan_.model << ", " << withCommas(rowsPerReplica())
         << " rows per replica, " << plan_.devicesPerProcess << " device(s) x " << processes
         << " process(es) on " << plan_.nodes << " node(s), "
         << plan_.collectives.size() - broadcasts().first << " allreduce bucket(s)";
    if (auto [buckets, parameters] = broadcasts(); buckets > 0)
      out_ << ", " << buckets << " broadcast bucket(s) of " << parameters
           << " parameter(s) (sharded optimizer state)";
    out_ << "\n";
    ScheduleCheck check = checkSchedule(ranks, names, plan_.nodes, planLayout);
    out_ << "collective schedule (" << layoutName(planLayout) << "): " << check.summary << "\n";
    if (!check.ok) {
      for (const std::string &problem : check.problems)
        out_ << problem << "\n";
      out_.flush();
      err_ << "dpc: the collective schedule of " << o_.plan << " "
           << (check.problems[0].rfind("deadlock", 0) == 0 ? "deadlocks"
                                                           : "sums different tensors together")
           << " (see above)\n";
      return 4;
    }
    if (o_.profile.empty())
      return 0;
    return predictAll();
  }

  /// The broadcast buckets of a plan with sharded optimizer state, and the parameters they
  /// copy.
  std::pair<size_t, size_t> broadcasts() const {
    std::pair<size_t, size_t> n{0, 0};
    for (const rt::CollectiveDesc &c : plan_.collectives)
      if (c.kind == rt::CollectiveKind::Broadcast) {
        ++n.first;
        n.second += c.tensors.size();
      }
    return n;
  }

private:
  int usage() {
    if (o_.profile.empty() != o_.topology.empty())
      return usageError("a prediction needs both --profile and --topology");
    if (o_.profile.empty() && (!o_.scale.empty() || o_.computeMs > 0 || !o_.json.empty() ||
                               o_.nodes || o_.ranksPerNode || o_.devicesPerRank))
      return usageError("--scale, --compute-ms, --json and the counts need --profile and "
                        "--topology");
    if (o_.allreduce != "auto" && o_.allreduce != "flat" && o_.allreduce != "hierarchical" &&
        o_.allreduce != "tree")
      return usageError("--allreduce expects flat, hierarchical, tree or auto, not '" +
                        o_.allreduce + "'");
    // 0 leaves the step unscaled; else a number a step could take (not inf, nan or 1e308,
    // which would make every time printed inf or nan).
    if (o_.computeMs != 0 && !(o_.computeMs >= kMinComputeMs && o_.computeMs <= kMaxComputeMs))
      return usageError("--compute-ms must be a positive number of milliseconds, from " +
                        shortNumber(kMinComputeMs) + " to " + shortNumber(kMaxComputeMs) +
                        ", not " + shortNumber(o_.computeMs));
    for (auto [name, count] : {std::pair<const char *, int64_t>{"nodes", o_.nodes},
                               {"ranks-per-node", o_.ranksPerNode},
                               {"devices-per-rank", o_.devicesPerRank}})
      if (count < 0 || count > kMaxDevices)
        return usageError(std::string("--") + name + " takes a count from 1 to " +
                          withCommas(kMaxDevices) + ", not " + std::to_string(count));
    for (int64_t devices : o_.scale)
      if (devices < 1 || devices > kMaxDevices)
        return usageError("--scale takes device counts from 1 to " + withCommas(kMaxDevices) +
                          ", not " + std::to_string(devices));
    return 0;
  }

  Layout layoutOf(int nodes, int perNode) const {
    if (o_.allreduce == "flat")
      return Layout::Flat;
    if (o_.allreduce == "tree")
      return Layout::Tree;
    if (o_.allreduce == "hierarchical")
      return nodes > 1 && perNode > 1 ? Layout::Hierarchical : Layout::Flat;
    return autoLayout(nodes, perNode);
  }

  int64_t rowsPerReplica() const {
    return plan_.batch / (int64_t(plan_.devicesPerProcess) * plan_.processes);
  }

  int predictAll() {
    llvm::Expected<Profile> profile = readProfile(o_.profile);
    if (!profile)
      return fail(llvm::toString(profile.takeError()));
    // The profile is rank 0's device 0: under state sharded over the processes, rank 0 runs
    // its own updates only (the schedule was checked on the whole plan already).
    if (plan_.shardsAcrossProcesses())
      plan_.keepProcess(0);
    if (llvm::Error e = matchProfile(plan_, *profile, o_.computeMs > 0))
      return fail(llvm::toString(std::move(e)));
    llvm::Expected<Topology> topology = readTopology(o_.topology);
    if (!topology)
      return fail(llvm::toString(topology.takeError()));
    Topology t = *topology;
    // Each override is at most kMaxDevices (usage()), so it fits an int.
    if (o_.nodes)
      t.nodes = int(o_.nodes);
    if (o_.ranksPerNode)
      t.ranksPerNode = int(o_.ranksPerNode);
    if (o_.devicesPerRank)
      t.devicesPerRank = int(o_.devicesPerRank);
    if (!t.nodes)
      t.nodes = plan_.nodes;
    if (!t.ranksPerNode)
      t.ranksPerNode = plan_.processes / plan_.nodes;
    if (!t.devicesPerRank)
      t.devicesPerRank = plan_.devicesPerProcess;
    // The products (devices, the global batch) checked before any is computed: options within
    // their bounds can still multiply past them.
    const int64_t replicaRows = profile->rowsPerReplica();
    if (llvm::Error e = checkMachine(t, replicaRows)) {
      const std::string why = llvm::toString(std::move(e));
      if (o_.nodes || o_.ranksPerNode || o_.devicesPerRank)
        return usageError("--nodes, --ranks-per-node, --devices-per-rank: " + why);
      return fail("cannot predict " + o_.topology + " with " + o_.profile + ": " + why);
    }

    std::vector<Topology> scaledTopologies;
    const int64_t perNode = int64_t(t.ranksPerNode) * t.devicesPerRank;
    for (int64_t devices : o_.scale) {
      Topology scaled = t;
      if (devices < perNode && devices % t.devicesPerRank == 0) {
        scaled.nodes = 1;
        scaled.ranksPerNode = int(devices / t.devicesPerRank);
      } else if (devices % perNode == 0) {
        scaled.nodes = int(devices / perNode);
      } else {
        return usageError("--scale " + std::to_string(devices) + " is not a multiple of the " +
                          std::to_string(perNode) + " device(s) of a node (or, below that, of " +
                          std::to_string(t.devicesPerRank) + " per rank)");
      }
      if (llvm::Error e = checkMachine(scaled, replicaRows))
        return usageError("--scale " + std::to_string(devices) + ": " +
                          llvm::toString(std::move(e)));
      scaledTopologies.push_back(scaled);
    }

    const double measured = profile->kernelUs() + profile->hostUs();
    double scale = 1.0;
    if (o_.computeMs > 0) {
      if (!(measured > 0))
        return fail(o_.profile + " measured no time (kernels and host: 0 us): there is no step "
                                 "to scale to --compute-ms");
      scale = o_.computeMs * 1e3 / measured;
      if (!(scale >= kMinComputeScale && scale <= kMaxComputeScale))
        return usageError("--compute-ms " + shortNumber(o_.computeMs) + " is " +
                          shortNumber(scale) + " times the step of " + shortNumber(measured) +
                          " us measured in " + o_.profile + "; dpc simulate scales a profile by " +
                          shortNumber(kMinComputeScale) + " to " +
                          shortNumber(kMaxComputeScale));
    }
    // Every prediction before any is printed: one refused (not a finite number) leaves no
    // half-written table.
    const Layout layout = layoutOf(t.nodes, t.ranksPerNode);
    llvm::Expected<Prediction> atLayout = predict(plan_, *profile, t, layout, scale);
    if (!atLayout)
      return fail(llvm::toString(atLayout.takeError()));
    std::vector<Prediction> scaledPredictions;
    for (const Topology &scaled : scaledTopologies) {
      llvm::Expected<Prediction> s =
          predict(plan_, *profile, scaled, layoutOf(scaled.nodes, scaled.ranksPerNode), scale);
      if (!s)
        return fail("--scale " + withCommas(scaled.devices()) + ": " +
                    llvm::toString(s.takeError()));
      scaledPredictions.push_back(std::move(*s));
    }
    out_ << "profile " << o_.profile << ": " << profile->kernels.size()
         << " kernels of device 0 in " << number(profile->kernelUs()) << " us, "
         << number(profile->hostUs()) << " us on the host, per step (mean of "
         << profile->stepsMeasured << " steps of " << profile->replicasPerProcess << " x "
         << profile->processes << " replicas)";
    if (profile->rowsPerReplica() != rowsPerReplica())
      out_ << "; measured at " << withCommas(profile->rowsPerReplica())
           << " rows per replica, the plan's " << withCommas(rowsPerReplica())
           << ": the step keeps its shape, at the profile's rows";
    if (scale != 1.0)
      out_ << "; scaled by " << fixed(scale, 4) << " to a " << number(o_.computeMs, 3)
           << " ms step (--compute-ms)";
    out_ << "\n";
    if (plan_.accumulation > 1)
      out_ << "gradient accumulation: " << plan_.accumulation
           << " micro-shards a step on each device: the first " << plan_.accumulation - 1
           << " compute alone, the collectives overlap the last one's backward pass\n";
    out_ << "topology " << t.name;
    if (!t.source.empty())
      out_ << " (" << t.source << ")";
    out_ << "\n";
    printLink(out_, "device", t.device);
    printLink(out_, "host", t.host);
    printLink(out_, "network", t.network);

    llvm::json::Object json{{"plan", o_.plan},
                            {"model", plan_.model},
                            {"profile", o_.profile},
                            {"topology", t.name},
                            {"rows_per_replica", profile->rowsPerReplica()},
                            {"compute_scale", scale}};
    const Prediction &p = *atLayout;
    printPrediction(t, layout, p);
    json["layout"] = layoutName(layout);
    json["prediction"] = predictionJson(p, t);

    if (!o_.scale.empty()) {
      out_ << "\nweak scaling (" << withCommas(profile->rowsPerReplica()) << " rows per device, "
           << t.ranksPerNode << " rank(s) x " << t.devicesPerRank << " device(s) per node, "
           << "allreduce " << o_.allreduce << "):\n";
      out_ << format("%9s %7s %8s %12s %12s %8s %14s %11s\n", "devices", "nodes", "layout",
                           "step ms", "comm ms", "hidden", "samples/s", "efficiency");
      llvm::json::Array rows;
      for (size_t i = 0; i < scaledTopologies.size(); ++i) {
        const Topology &scaled = scaledTopologies[i];
        const int64_t devices = scaled.devices();
        const Layout l = layoutOf(scaled.nodes, scaled.ranksPerNode);
        const Prediction &s = scaledPredictions[i];
        out_ << format("%9s %7s %8s %12s %12s %7s%% %14s %10s%%\n", withCommas(devices).c_str(),
                       withCommas(scaled.nodes).c_str(),
                       l == Layout::Hierarchical ? "hier" : layoutName(l),
                       number(s.stepUs / 1e3, 2).c_str(), number(s.commUs / 1e3, 2).c_str(),
                       fixed(100 * s.hidden()).c_str(),
                       withCommas(int64_t(std::llround(s.samplesPerSecond()))).c_str(),
                       fixed(100 * s.efficiency()).c_str());
        llvm::json::Object row = predictionJson(s, scaled);
        row["layout"] = layoutName(l);
        rows.push_back(std::move(row));
      }
      json["scale"] = std::move(rows);
      // The broadcast buckets are those of the plan's owners: a plan compiled for more devices
      // has more of them (one an owner holding state, up to one a parameter).
      if (auto [buckets, parameters] = broadcasts(); buckets > 0)
        out_ << "(each row broadcasts the plan's " << buckets << " bucket(s) of " << parameters
             << " parameter(s), those of its owners; a plan compiled for more devices has a "
                "bucket an owner holding state, at most one a parameter: compile for the count "
                "to predict it)\n";
    }
    if (!o_.json.empty()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
      if (std::string error = writeFileAtomically(o_.json, os.str()); !error.empty())
        return fail("cannot write '" + o_.json + "': " + error);
      out_ << "wrote " << o_.json << "\n";
    }
    return 0;
  }

  void printPrediction(const Topology &t, Layout layout, const Prediction &p) {
    out_ << "predicted train step on " << t.nodes << " node(s) x " << t.ranksPerNode
         << " rank(s) x " << t.devicesPerRank << " device(s) = " << withCommas(p.devices)
         << " device(s), allreduce " << layoutName(layout) << ":\n";
    if (!p.buckets.empty()) {
      out_ << format("  %6s %13s %11s %11s %11s %11s %11s %11s\n", "bucket",
                           "bytes/replica", "ready us", "start us", "end us", "device us",
                           "host us", "network us");
      for (const BucketTiming &b : p.buckets)
        out_ << format("  %6s %13s %11s %11s %11s %11s %11s %11s\n",
                       (std::to_string(b.bucket) + (b.broadcast ? "b" : "")).c_str(),
                       withCommas(b.bytes).c_str(), number(b.readyUs).c_str(),
                       number(b.startUs).c_str(), number(b.endUs).c_str(),
                       number(b.cost.device * 1e6).c_str(), number(b.cost.host * 1e6).c_str(),
                       number(b.cost.network * 1e6).c_str());
    }
    if (llvm::any_of(p.buckets, [](const BucketTiming &b) { return b.broadcast; }))
      out_ << "  (b: a broadcast of parameters from the device that updated them to the "
           << (plan_.shardsAcrossProcesses() ? "job's others" : "rank's others")
           << ", sharded optimizer state)\n";
    out_ << "  step           " << format("%12s", number(p.stepUs).c_str()) << " us   "
         << withCommas(int64_t(std::llround(p.samplesPerSecond()))) << " samples/s (global batch "
         << withCommas(p.globalBatch) << ")\n";
    out_ << "  compute        " << format("%12s", number(p.computeUs).c_str())
         << " us   kernels and host, as on one device alone\n";
    out_ << "  communication  " << format("%12s", number(p.commUs).c_str()) << " us   "
         << fixed(100 * p.hidden()) << "% hidden behind compute, " << number(p.exposedUs)
         << " us waited for\n";
    if (p.sharedCoreUs > 0)
      out_ << "  shared cores   " << format("%12s", number(p.sharedCoreUs).c_str())
           << " us   compute slowed by the engine's thread while buckets move (the ranks' "
              "threads fill the node's cores)\n";
    out_ << "  efficiency     " << format("%11s%%", fixed(100 * p.efficiency()).c_str())
         << "      compute / step (weak scaling: the same rows per device)\n";
  }

  int fail(const std::string &message) {
    err_ << "dpc: " << message << "\n";
    return 1;
  }
  int usageError(const std::string &message) {
    err_ << "dpc: " << message << "\n";
    return 2;
  }

  const SimulateOptions &o_;
  llvm::raw_ostream &out_, &err_;
  rt::Plan plan_;
  std::vector<std::unique_ptr<rt::Plan>> others_;
  std::string error_;
};

} // namespace

int simulate(const SimulateOptions &options, llvm::raw_ostream &out, llvm::raw_ostream &err) {
  return Simulation(options, out, err).run();
}

} // namespace dp::sim
