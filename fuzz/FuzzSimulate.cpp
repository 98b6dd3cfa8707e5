// Fuzz target: bytes as the two JSON files `dpc simulate` reads, a profile and a topology,
// split at the first NUL byte (no NUL: the whole input is tried as both). What parses is then
// used as dpc simulate uses it: the profile matched against a small two-bucket plan and, with
// the topology, the step replayed at its own layout and at scaled ones, and the bucket costs
// of both layouts computed. Only a crash or a sanitizer report is a finding: a refused file is
// the expected answer.
#include "sim/Model.h"

#include <cstdint>
#include <string>

namespace {

using namespace dp;

/// Per replica: dense, matmul, start 0, matmul, start 1, sgd_update, wait 0, wait 1; 2 ranks.
const rt::Plan &plan() {
  static const rt::Plan p = [] {
    rt::Plan plan;
    plan.model = "mnist_mlp";
    plan.batch = 100;
    plan.processes = 2;
    for (int b = 0; b < 2; ++b) {
      rt::CollectiveDesc c;
      c.kind = rt::CollectiveKind::AllReduceMean;
      c.bucket = b;
      c.elements = b == 0 ? 1024 : 78400;
      c.tensors = {"t" + std::to_string(b)};
      plan.collectives.push_back(c);
    }
    auto kernel = [](rt::KernelKind kind, int device, int bucket = -1) {
      rt::KernelDesc k;
      k.kind = kind;
      k.device = device;
      if (bucket >= 0) {
        rt::CollectiveAttrs attrs;
        attrs.bucket = bucket;
        k.attrs = attrs;
      }
      return k;
    };
    using K = rt::KernelKind;
    plan.train.kernels = {kernel(K::Dense, 0),           kernel(K::MatMul, 0),
                          kernel(K::AllReduceStart, -1, 0), kernel(K::MatMul, 0),
                          kernel(K::AllReduceStart, -1, 1), kernel(K::SgdUpdate, 0),
                          kernel(K::AllReduceWait, -1, 0),  kernel(K::AllReduceWait, -1, 1)};
    return plan;
  }();
  return p;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string input(reinterpret_cast<const char *>(data), size);
  const size_t cut = input.find('\0');
  const std::string profileText = cut == std::string::npos ? input : input.substr(0, cut);
  const std::string topologyText = cut == std::string::npos ? input : input.substr(cut + 1);

  llvm::Expected<sim::Profile> profile = sim::parseProfile(profileText, "profile");
  if (!profile)
    llvm::consumeError(profile.takeError());
  llvm::Expected<sim::Topology> topology = sim::parseTopology(topologyText, "topology");
  if (!topology) {
    llvm::consumeError(topology.takeError());
  } else {
    for (double bytes : {0.0, 4096.0, 1e9})
      for (sim::Layout layout : {sim::Layout::Flat, sim::Layout::Hierarchical}) {
        sim::Topology t = *topology;
        t.nodes = t.nodes ? t.nodes : 2;
        t.ranksPerNode = t.ranksPerNode ? t.ranksPerNode : 2;
        t.devicesPerRank = t.devicesPerRank ? t.devicesPerRank : 1;
        (void)sim::bucketCost(bytes, t, layout);
      }
  }
  if (!profile)
    return 0;
  const bool otherRows = !profileText.empty() && profileText[0] == ' ';
  if (llvm::Error e = sim::matchProfile(plan(), *profile, otherRows)) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  if (!topology)
    return 0;
  for (int nodes : {1, 2, 1 << 20}) {
    sim::Topology t = *topology;
    t.nodes = nodes;
    t.ranksPerNode = t.ranksPerNode ? t.ranksPerNode : 2;
    t.devicesPerRank = t.devicesPerRank ? t.devicesPerRank : 1;
    for (sim::Layout layout : {sim::Layout::Flat, sim::Layout::Hierarchical}) {
      llvm::Expected<sim::Prediction> p =
          sim::predict(plan(), *profile, t, layout, otherRows ? 1e-3 : 1.0);
      if (!p) {
        llvm::consumeError(p.takeError());
        continue;
      }
      (void)p->hidden();
      (void)p->efficiency();
      (void)p->samplesPerSecond();
    }
  }
  return 0;
}
