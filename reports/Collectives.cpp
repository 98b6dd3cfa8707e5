// Collective change reports for the IR dumps (see Collectives.h).
#include "reports/Collectives.h"

#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Plan/IR/PlanDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

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
    } else if (auto k = dyn_cast<plan::KernelOp>(op); k && k.getKind() == "allreduce_start") {
      auto bucket = k->getAttrOfType<IntegerAttr>("bucket");
      out.push_back({"kernel", bucket ? bucket.getInt() : -1, {}, position(op)});
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
  // Added: allreduces of gradients no collective carried before.
  llvm::StringSet<> known;
  for (const CollectiveRecord &r : before)
    for (const std::string &t : r.tensors)
      known.insert(t);
  std::vector<std::string> added;
  for (const CollectiveRecord &r : after)
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
                    " bucket(s) to allreduce_start/allreduce_wait kernels");
  return lines;
}

} // namespace dp::reports
