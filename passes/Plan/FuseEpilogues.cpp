// plan-fuse-epilogues: a relu that only follows a batch normalisation runs inside its kernel,
// and a bias added to a dense product's rows becomes the product's own (see Passes.td).
#include "passes/Plan/Absorb.h"
#include "passes/Plan/Passes.h"

#include "mlir/IR/Builders.h"

#include <optional>

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

/// True when no kernel strictly between `first` and `last` (one block) writes `written`'s
/// buffer or reads or writes `touched`'s (through any view of them), and no collective runs
/// there (their waits write parameters, buckets and gradients in place, listing no output).
bool untouchedBetween(Operation *first, Operation *last, Value written, Value touched) {
  const Value w = bufferRoot(written), t = bufferRoot(touched);
  for (Operation *op = first->getNextNode(); op && op != last; op = op->getNextNode()) {
    auto k = dyn_cast<KernelOp>(op);
    if (!k)
      continue;
    if (k.getOutputs().empty())
      return false;
    for (Value v : k.getOutputs())
      if (Value r = bufferRoot(v); r == w || r == t)
        return false;
    for (Value v : k.getInputs())
      if (bufferRoot(v) == t)
        return false;
  }
  return true;
}

/// A dense product without a bias and the `add_rows` that alone reads its result (directly or
/// through one view), adding a vector of the product's column count to every row: the bias
/// ONNX models write as MatMul then Add.
struct BiasEpilogue {
  KernelOp dense, addRows;
  ViewOp view; // null when add_rows reads the product's buffer itself
};

std::optional<BiasEpilogue> fusableBias(KernelOp dense) {
  if (dense.getKind() != "dense" || dense.getInputs().size() != 2 ||
      activationOf(dense) != "none" || dense.getOutputs().size() != 1)
    return std::nullopt;
  Value y = dense.getOutputs()[0];
  if (!y.getDefiningOp<AllocOp>())
    return std::nullopt;
  BiasEpilogue e{dense, nullptr, nullptr};
  Value read = y; // what add_rows reads: y or its one view
  for (Operation *user : y.getUsers()) {
    if (user == dense.getOperation())
      continue;
    if (e.view || e.addRows)
      return std::nullopt;
    if (auto v = dyn_cast<ViewOp>(user))
      e.view = v, read = v.getBuffer();
    else if (auto k = dyn_cast<KernelOp>(user))
      e.addRows = k;
    else
      return std::nullopt;
  }
  if (e.view) {
    if (!read.hasOneUse())
      return std::nullopt;
    e.addRows = dyn_cast<KernelOp>(*read.getUsers().begin());
  }
  KernelOp add = e.addRows;
  if (!add || add.getKind() != "add_rows" || add.getInputs().size() != 2 ||
      add.getInputs()[0] != read || add->getBlock() != dense->getBlock() ||
      !dense->isBeforeInBlock(add))
    return std::nullopt;
  // The vector: f32 [columns], defined before the product and not written until the sum.
  Value bias = add.getInputs()[1], z = add.getOutputs()[0];
  auto yType = cast<MemRefType>(y.getType());
  auto bType = cast<MemRefType>(bias.getType());
  if (yType.getRank() != 2 || bType.getRank() != 1 || bType.getDimSize(0) != yType.getDimSize(1) ||
      !bType.getElementType().isF32() || llvm::is_contained(dense.getInputs(), y))
    return std::nullopt;
  if (Operation *def = bias.getDefiningOp())
    if (def->getBlock() == dense->getBlock() && !def->isBeforeInBlock(dense))
      return std::nullopt;
  // The sum's buffer: step-local, of the product's elements, untouched until the sum.
  if (!z.getDefiningOp<AllocOp>() || z == bias ||
      cast<MemRefType>(z.getType()).getNumElements() != yType.getNumElements() ||
      !untouchedBetween(dense, add, bias, z))
    return std::nullopt;
  for (Operation *user : z.getUsers())
    if (user != add.getOperation() && user->isBeforeInBlock(add))
      return std::nullopt;
  return e;
}

/// The product writes the sum's buffer (through a view of the product's shape when the sum's
/// differs) with the vector as its bias; the sum, the view and the former result go.
void fuseBias(BiasEpilogue e) {
  KernelOp dense = e.dense, add = e.addRows;
  Value y = dense.getOutputs()[0], z = add.getOutputs()[0], bias = add.getInputs()[1];
  Operation *alloc = z.getDefiningOp();
  if (dense->isBeforeInBlock(alloc))
    alloc->moveBefore(dense);
  OpBuilder b(dense);
  Value out = z;
  if (z.getType() != y.getType())
    out = b.create<ViewOp>(dense.getLoc(), y.getType(), z);
  auto fused = b.create<KernelOp>(dense.getLoc(), dense.getKind(),
                                  ValueRange{dense.getInputs()[0], dense.getInputs()[1], bias},
                                  ValueRange{out});
  fused->setDiscardableAttrs(dense->getDiscardableAttrDictionary());
  add.erase();
  if (e.view)
    e.view.erase();
  dense.erase();
  if (y.use_empty())
    y.getDefiningOp()->erase();
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
    SmallVector<BiasEpilogue> biases;
    getOperation().walk([&](KernelOp dense) {
      if (std::optional<BiasEpilogue> e = fusableBias(dense))
        biases.push_back(*e);
    });
    for (const BiasEpilogue &e : biases)
      fuseBias(e);
  }
};

} // namespace
