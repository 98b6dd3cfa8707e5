// The communication model of `dpc simulate`: a machine of nodes, ranks and devices with a link
// per level (latency, bandwidth), the measured kernel times of a profiling run (dprun
// --profile), the cost of one bucket's allreduce under dp's two layouts, and the train step of
// a plan replayed against them: kernels in the compiler's order, each bucket's allreduce
// started where the plan starts it and serialised on the network, and waited for where the plan
// waits. See docs/scaling.md for the formulas and how well they predict this machine.
#pragma once

#include "runtime/format/Plan.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dp::sim {

// What the simulator takes: far past any machine, profile or device built, and small enough
// that no count, product or time it computes can overflow (an int64 product, a double past
// its range printed as inf or nan). Beyond these a file or an option is refused.
/// Devices of a machine, and so each of its counts (nodes, ranks per node, devices per rank).
inline constexpr int64_t kMaxDevices = int64_t(1) << 30;
/// Rows of one step over every device: a double (samples per second, a reader of the JSON)
/// still counts each one.
inline constexpr int64_t kMaxGlobalBatch = int64_t(1) << 53;
/// A link's latency in microseconds (1000 s) and bandwidth in GB/s (1 byte/s to 1 EB/s).
inline constexpr double kMaxLatencyUs = 1e9;
inline constexpr double kMinBandwidthGBps = 1e-9, kMaxBandwidthGBps = 1e9;
/// A measured time of a profile in microseconds (11.6 days).
inline constexpr double kMaxProfileUs = 1e12;
/// --compute-ms: from a nanosecond to 11.6 days; and the factor it scales the profile by.
inline constexpr double kMinComputeMs = 1e-6, kMaxComputeMs = 1e9;
inline constexpr double kMinComputeScale = 1e-6, kMaxComputeScale = 1e6;
/// Samples per second a prediction reports (printed as a whole number).
inline constexpr double kMaxSamplesPerSecond = 1e18;
/// How deep a profile or topology may nest (they nest 3 deep): LLVM's JSON parser recurses
/// once per level, so a file nested 100,000 deep would overflow the stack.
inline constexpr unsigned kMaxJsonNesting = 64;

/// One level of the machine as one participant sees it: the time to start a message and the
/// bytes per second it moves in each direction.
struct Link {
  double latencyUs = 0;
  double bandwidthGBps = 0; // 1e9 bytes per second
  /// Seconds for `bytes` at this bandwidth (no latency).
  double transfer(double bytes) const { return bytes / (bandwidthGBps * 1e9); }
  double latency() const { return latencyUs * 1e-6; }
};

/// The machine: `nodes` hosts of `ranksPerNode` processes of `devicesPerRank` devices.
struct Topology {
  std::string name, source;
  /// Between the devices of one rank: dp sums its replicas' buckets on one thread (CPU).
  Link device;
  /// Between the ranks of one node: shared memory, NVLink.
  Link host;
  /// Between nodes: the node's whole network bandwidth (every NIC of it).
  Link network;
  /// 0 until set: then the plan's layout.
  int nodes = 0, ranksPerNode = 0, devicesPerRank = 0;
  /// The cores of a node, when the file says (0: as many as the ranks' threads need). Where
  /// the ranks' compute threads fill them, the engine's thread that moves a bucket takes its
  /// turn on a core they compute on.
  int coresPerNode = 0;
  /// The products; the counts must have passed checkCounts (each at most kMaxDevices).
  int64_t devices() const { return int64_t(nodes) * ranksPerNode * devicesPerRank; }
  int64_t ranks() const { return int64_t(nodes) * ranksPerNode; }
};

/// Checks that each of the topology's counts is from 1 to kMaxDevices and that they multiply
/// to at most kMaxDevices devices; the error says which count or product is out of range.
llvm::Error checkCounts(const Topology &topology);
/// checkCounts, and that `rowsPerReplica` x the devices is at most kMaxGlobalBatch.
llvm::Error checkMachine(const Topology &topology, int64_t rowsPerReplica);

/// Reads a topology JSON file (see docs/scaling.md): name, source, levels.{device,host,network}
/// .{latency_us,bandwidth_GBps}, optional nodes, ranks_per_node, devices_per_rank. Refuses
/// text nested deeper than kMaxJsonNesting (naming the line and column), a latency or
/// bandwidth outside the bounds above, and counts whose product passes kMaxDevices.
llvm::Expected<Topology> readTopology(const std::string &path);
/// The same from the file's text; `name` names it in messages.
llvm::Expected<Topology> parseTopology(llvm::StringRef text, const std::string &name);

/// A dprun --profile file: device 0's measured train step.
struct Profile {
  struct Kernel {
    int64_t index = 0;
    std::string kind;
    double us = 0; // mean, per run
    /// Runs a step: under gradient accumulation a kernel outside the step's final phase runs
    /// on each of the M micro-shards (matchProfile counts them from the plan).
    int64_t runs = 1;
  };
  struct Bucket {
    int64_t bucket = 0, bytes = 0;
    double waitUs = 0;
  };
  std::string path, model, layout;
  int64_t globalBatch = 0, replicasPerProcess = 0, processes = 0, nodes = 1, stepsMeasured = 0;
  /// The compute threads of each rank in the profiled run (0: not recorded).
  int64_t computeThreads = 0;
  double stepUs = 0; // mean
  std::vector<Kernel> kernels; // by index
  std::vector<Bucket> buckets;

  int64_t rowsPerReplica() const { return globalBatch / (replicasPerProcess * processes); }
  double kernelUs() const;
  double waitUs() const;
  /// The step's time outside kernels and allreduce waits (host functions, input): >= 0.
  double hostUs() const;
};

/// Reads and checks a profile file: nested at most kMaxJsonNesting deep, its times from 0 to
/// kMaxProfileUs.
llvm::Expected<Profile> readProfile(const std::string &path);
/// The same from the file's text; `name` names it in messages.
llvm::Expected<Profile> parseProfile(llvm::StringRef text, const std::string &name);

/// dprun --allreduce: flat, hierarchical, or tree (dp's own reduce up the binary tree over the
/// ranks and broadcast back down it, which --reproducible takes).
enum class Layout { Flat, Hierarchical, Tree };
const char *layoutName(Layout layout);
/// dprun's --allreduce auto: hierarchical when the ranks span several nodes and a node has
/// several.
Layout autoLayout(int nodes, int ranksPerNode);

/// Seconds of an allreduce of `bytes` over `p` participants on `link`.
/// Ring: 2(p-1) latencies, each participant sends and receives 2(p-1)/p of the data.
double ringAllreduce(int64_t p, double bytes, const Link &link);
/// Pipelined binary trees: 2 ceil(log2 p) latencies, twice the data through each link.
double treeAllreduce(int64_t p, double bytes, const Link &link);
/// The faster of the two (what a library picks for the size).
double allreduce(int64_t p, double bytes, const Link &link);
/// A binomial-tree reduce (or broadcast) over `p`: ceil(log2 p) rounds of the whole message.
double treeReduce(int64_t p, double bytes, const Link &link);

/// One bucket's allreduce, by level.
struct BucketCost {
  double device = 0, host = 0, network = 0; // seconds
  double total() const { return device + host + network; }
};
/// The cost of averaging `bytes` per replica over the topology's devices: the rank's replicas
/// summed in memory ((R - 1) passes over the bytes, and the copy back), then flat (one
/// allreduce over every rank; across nodes the ring runs at the network's pace) or
/// hierarchical (reduce within the node, allreduce over one leader per node, broadcast back), or
/// tree (up the binary tree over the ranks, node-major, and back down it: the whole bucket
/// crosses every level twice, ceil(log2 L) levels within a node and ceil(log2 N) across).
BucketCost bucketCost(double bytes, const Topology &topology, Layout layout);
/// A ring reduce-scatter of `bytes` over `p` ranks: (p - 1) latencies and (p - 1) / p of the
/// data, half a ring allreduce.
double ringReduceScatter(int64_t p, double bytes, const Link &link);
/// Recursive halving: ceil(log2 p) latencies and the same (p - 1) / p of the data (MPI
/// libraries take it for many ranks; the ring's p - 1 latencies dominate there).
double halvingReduceScatter(int64_t p, double bytes, const Link &link);
/// The faster of the two, as an MPI library picks.
double reduceScatter(int64_t p, double bytes, const Link &link);
/// The cost of a reduce-scattered gradient bucket (sharded optimizer state), the rank's
/// replicas summed in memory as for an allreduce: under flat sums the ranks reduce-scatter it
/// (MPI_Ireduce_scatter, each rank receiving its owners' segment); under tree sums it goes up
/// the tree as a sum and back down it in the segments of each subtree (ceil(log2 P) messages
/// from rank 0, (P - 1) / P of the bytes); hierarchical sums reduce within the node, reduce-
/// scatter over the leaders and scatter within the node.
BucketCost scatterCost(double bytes, const Topology &topology, Layout layout);
/// The cost of a broadcast bucket (an owner's parameters) from its owner device (sharded optimizer
/// state, dpc compile --shard-optimizer): the engine's thread copies it to the rank's other
/// devices, (R - 1) passes over the bytes at the device level. Sharded within each rank, nothing
/// crosses the ranks; sharded over the job (`acrossRanks`), the owner's rank first sends it to
/// every other rank (MPI_Ibcast: a binomial tree of whole messages or a scatter and ring
/// allgather, whichever is faster, on the network's link when the ranks span nodes).
BucketCost broadcastCost(double bytes, const Topology &topology, bool acrossRanks = false);

/// A bucket in the predicted step (microseconds from the step's start).
struct BucketTiming {
  int bucket = 0;
  int64_t bytes = 0;
  double readyUs = 0, startUs = 0, endUs = 0;
  BucketCost cost;
  /// A parameter's broadcast (sharded optimizer state) rather than a gradient allreduce.
  bool broadcast = false;
};

/// The share of a rank's compute speed left while a bucket's allreduce is in flight: 1 unless
/// the node's cores are known and the ranks' compute threads fill them, when the engine's
/// thread (which polls the network while a bucket moves) takes its turn beside them:
/// threads / (threads + 1).
double computeShareDuringAllreduce(const Topology &topology, int64_t computeThreads);

/// The predicted train step of one replica.
struct Prediction {
  int64_t devices = 1, globalBatch = 0;
  /// Kernels and host time: the step of one device without communication.
  double computeUs = 0;
  /// All buckets' allreduce (and broadcast) time, and the part of it the replica waited for.
  double commUs = 0, exposedUs = 0;
  /// The time compute lost to the engine's thread on shared cores (computeShareDuringAllreduce).
  double sharedCoreUs = 0;
  double stepUs = 0;
  std::vector<BucketTiming> buckets;

  /// The share of communication that ran behind compute.
  double hidden() const { return commUs > 0 ? std::max(0.0, 1.0 - exposedUs / commUs) : 1.0; }
  /// Weak-scaling efficiency: one device's step over this one's (same rows per device).
  double efficiency() const { return stepUs > 0 ? computeUs / stepUs : 0.0; }
  double samplesPerSecond() const { return stepUs > 0 ? double(globalBatch) * 1e6 / stepUs : 0; }
};

/// Checks that `profile` measured this plan's per-replica step (same model, kernels and rows
/// per replica); the error says what differs. With `otherRows`, a profile of another number of
/// rows per replica is taken (the caller rescales its times: --compute-ms). Sets each kernel's
/// runs a step from the plan (its micro-shards under gradient accumulation).
llvm::Error matchProfile(const rt::Plan &plan, Profile &profile, bool otherRows = false);

/// Replays the plan's train step on the topology: kernel times from the profile multiplied by
/// `computeScale`. The topology's counts must be set; the profile's rows per replica are kept
/// (weak scaling: the global batch grows with the devices). Refuses a machine checkMachine
/// refuses, a scale outside kMinComputeScale..kMaxComputeScale, and a prediction whose times
/// are not finite or whose samples per second pass kMaxSamplesPerSecond: no number printed
/// from it is inf, nan or wrapped around.
llvm::Expected<Prediction> predict(const rt::Plan &plan, const Profile &profile,
                                   const Topology &topology, Layout layout,
                                   double computeScale = 1.0);

} // namespace dp::sim
