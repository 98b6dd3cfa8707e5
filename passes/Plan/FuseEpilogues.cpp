// plan-fuse-epilogues: a relu that only follows a batch normalisation runs inside its kernel
// (see Passes.td).
#include "passes/Plan/Absorb.h"
#include "passes/Plan/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "plan-fuse-epilogues"

namespace dp::plan {
#define GEN_PASS_DEF_FUSEEPILOGUESPASS
#include "passes/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;
using namespace dp::plan;

namespace {

/// The kernel's `activation` attribute, "none" when absent.
StringRef activationOf(KernelOp k) {
  auto a = k->getAttrOfType<StringAttr>("activation");
  return a ? a.getValue() : "none";
}

/// The relu kernel that alone reads `norm`'s result, when `norm` can run it: its result is a
/// step-local buffer (not a view, a parameter or an output) that nothing else reads, and the
/// relu's result is not touched between the two.
KernelOp fusableRelu(KernelOp norm) {
  if ((norm.getKind() != "batch_norm_train" && norm.getKind() != "batch_norm_infer") ||
      activationOf(norm) != "none" || norm.getOutputs().size() != 1)
    return nullptr;
  Value h = norm.getOutputs()[0];
  if (!h.getDefiningOp<AllocOp>())
    return nullptr;
  KernelOp relu;
  for (Operation *user : h.getUsers()) {
    if (user == norm.getOperation())
      continue;
    auto k = dyn_cast<KernelOp>(user);
    if (!k || relu || k.getKind() != "activation" || activationOf(k) != "relu" ||
        k.getInputs().size() != 1 || k.getOutputs().size() != 1 || k.getOutputs()[0] == h ||
        k->getBlock() != norm->getBlock() || !norm->isBeforeInBlock(k))
      return nullptr;
    relu = k;
  }
  if (!relu)
    return nullptr;
  // The normalisation writes a result of its input's shape: the relu's must be the same.
  Value a = relu.getOutputs()[0];
  if (!a.getDefiningOp<AllocOp>() || a.getType() != h.getType())
    return nullptr;
  for (Operation *user : a.getUsers())
    if (user != relu.getOperation() && user->isBeforeInBlock(relu))
      return nullptr;
  return relu;
}

struct FuseEpiloguesPass : dp::plan::impl::FuseEpiloguesPassBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<KernelOp, KernelOp>> pairs;
    getOperation().walk([&](KernelOp norm) {
      if (KernelOp relu = fusableRelu(norm))
        pairs.push_back({norm, relu});
    });
    Builder b(&getContext());
    for (auto [norm, relu] : pairs) {
      norm->setAttr("activation", b.getStringAttr("relu"));
      absorbConsumer(norm, relu);
    }
  }
};

} // namespace
