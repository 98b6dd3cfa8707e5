// Collective change reports for the IR dumps (see Collectives.h).
#include "reports/Collectives.h"

#include "dialect/Common/TensorBytes.h"
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Plan/IR/PlanDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace dp;
using namespace dp::dist;
using namespace dp::plan;

namespace dp::reports {

static std::vector<std::string> names(std::optional<ArrayAttr> tensors) {
  std::vector<std::string> out;
  if (tensors)
    for (Attribute a : *tensors)
      out.push_back(cast<StringAttr>(a).str());
  return out;
}

std::vector<CollectiveRecord> collectCollectives(ModuleOp module) {
  std::vector<CollectiveRecord> out;
  module.walk([&](Operation *op) {
    auto position = [&](Operation *o) {
      return static_cast<int64_t>(std::distance(o->getBlock()->begin(), o->getIterator()));
    };
    if (auto a = dyn_cast<AllReduceOp>(op))
      out.push_back({"allreduce", a.getBucket() ? int64_t(*a.getBucket()) : -1,
                     names(a.getTensors()), position(op)});
    else if (auto s = dyn_cast<AllReduceStartOp>(op)) {
      CollectiveRecord r{"allreduce_start", int64_t(s.getBucket()), names(s.getTensors()),
                         position(op)};
      for (Operation *user : s->getUsers())
        r.waitPosition = position(user);
      out.push_back(r);
    } else if (auto b = dyn_cast<BroadcastStartOp>(op)) {
      CollectiveRecord r{"broadcast", int64_t(b.getBucket()), names(b.getTensors()), position(op)};
      r.server = int64_t(b.getRoot());
      if (b.getProcess())
        r.process = int64_t(*b.getProcess());
      for (Operation *user : b->getUsers())
        r.waitPosition = position(user);
      out.push_back(r);
    } else if (auto push = dyn_cast<PushOp>(op)) {
      CollectiveRecord r{"push", int64_t(push.getBucket()), names(push.getTensors()),
                         position(op)};
      r.server = push.getServer();
      r.bytes = push.bytes();
      for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
        if (auto pull = dyn_cast<PullOp>(next); pull && pull.getBucket() == push.getBucket())
          r.waitPosition = position(next);
      out.push_back(r);
    } else if (auto receive = dyn_cast<ReceiveOp>(op)) {
      CollectiveRecord r{"receive", int64_t(receive.getBucket()), names(receive.getTensors()),
                         position(op)};
      r.server = getServer(op->getParentOfType<func::FuncOp>());
      out.push_back(r);
    } else if (auto param = dyn_cast<graph::ParamOp>(op); param && getServer(op) >= 0) {
      // Each parameter once, where it first appears.
      for (const CollectiveRecord &r : out)
        if (r.kind == "placed" && r.tensors.front() == param.getName())
          return;
      CollectiveRecord r{"placed", -1, {param.getName().str()}, position(op)};
      r.server = getServer(op);
      r.bytes = tensorBytes(param.getType());
      out.push_back(r);
    } else if (auto k = dyn_cast<plan::KernelOp>(op);
               k && (k.getKind() == "allreduce_start" || k.getKind() == "push_start")) {
      auto bucket = k->getAttrOfType<IntegerAttr>("bucket");
      out.push_back({"kernel", bucket ? bucket.getInt() : -1, {}, position(op)});
    } else if (auto k = dyn_cast<plan::KernelOp>(op); k && k.getKind() == "broadcast_start") {
      auto bucket = k->getAttrOfType<IntegerAttr>("bucket");
      out.push_back({"broadcast_kernel", bucket ? bucket.getInt() : -1, {}, position(op)});
    }
  });
  return out;
}

std::vector<std::string> describeCollectiveChanges(const std::vector<CollectiveRecord> &before,
                                                   const std::vector<CollectiveRecord> &after) {
  std::vector<std::string> lines;
  auto count = [](const std::vector<CollectiveRecord> &v, StringRef kind) {
    return llvm::count_if(v, [&](const CollectiveRecord &r) { return r.kind == kind; });
  };
  // Placed: parameters given to servers.
  if (count(before, "placed") == 0 && count(after, "placed") > 0) {
    std::map<int64_t, std::pair<std::vector<std::string>, int64_t>> servers;
    for (const CollectiveRecord &r : after)
      if (r.kind == "placed") {
        servers[r.server].first.push_back(r.tensors.front());
        servers[r.server].second += r.bytes;
      }
    lines.push_back("placed " + std::to_string(count(after, "placed")) + " parameter(s) on " +
                    std::to_string(servers.size()) + " server(s), largest first onto the "
                    "server with the fewest bytes");
    for (auto &[server, held] : servers)
      lines.push_back("server " + std::to_string(server) + " holds " +
                      std::to_string(held.second) + " bytes: " + llvm::join(held.first, ", "));
  }
  // Split: the updates moved to the servers, buckets pushed and pulled by the workers.
  if (count(before, "push") == 0 && count(after, "push") > 0) {
    for (const CollectiveRecord &r : after)
      if (r.kind == "push")
        lines.push_back("bucket " + std::to_string(r.bucket) + " (" + std::to_string(r.bytes) +
                        " bytes): pushed to server " + std::to_string(r.server) +
                        " at op #" + std::to_string(r.position) +
                        " (right after its last gradient), pulled at op #" +
                        std::to_string(r.waitPosition) + ": " + llvm::join(r.tensors, ", "));
    for (const CollectiveRecord &r : after)
      if (r.kind == "receive")
        lines.push_back("server " + std::to_string(r.server) + " receives bucket " +
                        std::to_string(r.bucket) + ", updates " + llvm::join(r.tensors, ", ") +
                        " and replies");
  }
  // Sharded: each parameter updated on one replica, which broadcasts it (in buckets).
  if (count(before, "broadcast") == 0 && count(after, "broadcast") > 0) {
    // By (process, replica): the process is -1 when each process holds the same shares.
    std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> owners;
    size_t parameters = 0;
    bool acrossProcesses = false;
    for (const CollectiveRecord &r : after)
      if (r.kind == "broadcast") {
        llvm::append_range(owners[{r.process, r.server}], r.tensors);
        parameters += r.tensors.size();
        acrossProcesses |= r.process >= 0;
      }
    lines.push_back(
        "sharded the optimizer state of " + std::to_string(parameters) + " parameter(s) over " +
        (acrossProcesses ? "every replica of the job" : "the replicas of each process") +
        ", largest state first onto the replica with the fewest bytes: each is updated there "
        "and broadcast to the others, each owner's in buckets (" +
        std::to_string(count(after, "broadcast")) + " bucket(s), " +
        std::to_string(
            llvm::find_if(after, [](const CollectiveRecord &r) { return r.kind == "broadcast"; })
                ->bucket) +
        " on)");
    for (auto &[root, held] : owners)
      lines.push_back((root.first >= 0 ? "process " + std::to_string(root.first) + "'s " : "") +
                      "replica " + std::to_string(root.second) + " updates " +
                      llvm::join(held, ", "));
  }
  // Added: allreduces of gradients no collective carried before.
  llvm::StringSet<> known;
  for (const CollectiveRecord &r : before)
    for (const std::string &t : r.tensors)
      known.insert(t);
  std::vector<std::string> added;
  for (const CollectiveRecord &r : after)
    if (r.kind == "allreduce" || r.kind == "allreduce_start")
      for (const std::string &t : r.tensors)
        if (!known.contains(t))
          added.push_back(t);
  if (!added.empty())
    lines.push_back("added " + std::to_string(added.size()) +
                    " allreduce(s), the mean over all replicas of each gradient: " +
                    llvm::join(added, ", "));
  // Fused: buckets formed from allreduces that were separate.
  if (count(before, "allreduce") > 0 && llvm::all_of(before, [](const CollectiveRecord &r) {
        return r.bucket < 0;
      })) {
    int fusedBuckets = 0;
    for (const CollectiveRecord &r : after)
      if (r.kind == "allreduce" && r.bucket >= 0) {
        ++fusedBuckets;
        lines.push_back("bucket " + std::to_string(r.bucket) + ": fused " +
                        std::to_string(r.tensors.size()) +
                        " allreduce(s): " + llvm::join(r.tensors, ", "));
      }
    if (fusedBuckets)
      lines.insert(lines.end() - fusedBuckets,
                   "fused " + std::to_string(count(before, "allreduce")) + " allreduce(s) into " +
                       std::to_string(fusedBuckets) + " bucket(s)");
  }
  // Moved: allreduces split into a start after the gradients and a wait before the updates.
  if (count(before, "allreduce") > 0)
    for (const CollectiveRecord &r : after)
      if (r.kind == "allreduce_start")
        lines.push_back("bucket " + std::to_string(r.bucket) + ": moved its start to op #" +
                        std::to_string(r.position) + " (right after its last gradient) and its "
                        "wait to op #" + std::to_string(r.waitPosition) + ": " +
                        std::to_string(std::max<int64_t>(0, r.waitPosition - r.position - 1)) +
                        " ops run while it travels");
  // Lowered to kernels.
  if (count(after, "kernel") > 0 && count(before, "kernel") == 0)
    lines.push_back("lowered " + std::to_string(count(after, "kernel")) +
                    (count(before, "push") ? " bucket(s) to push_start/pull_wait kernels (and "
                                             "the servers' to receive_push/reply_pull)"
                                           : " bucket(s) to allreduce_start/allreduce_wait "
                                             "kernels"));
  if (count(after, "broadcast_kernel") > 0 && count(before, "broadcast_kernel") == 0)
    lines.push_back("lowered " + std::to_string(count(after, "broadcast_kernel")) +
                    " broadcast bucket(s) to broadcast_start/broadcast_wait kernels");
  return lines;
}

} // namespace dp::reports
