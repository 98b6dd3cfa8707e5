// plan-fuse-epilogues: a relu that only follows a batch normalisation runs inside its kernel, a
// bias added to a dense product's rows becomes the product's own, and a layer normalisation or
// a transpose whose result is only cast to bf16 writes bf16 itself (see Passes.td).
#include "passes/Plan/Absorb.h"
#include "passes/Plan/Passes.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <type_traits>
#include <utility>

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

/// The one kernel that reads `writer`'s result `y`, directly or through a chain of views of
/// it: nothing else uses `y` or the views, and the reader comes after `writer` in its block.
struct SoleReader {
  KernelOp kernel;
  SmallVector<ViewOp> views; // y's view, that view's, ...: empty when the kernel reads y
  Value read;                // what the kernel reads: y or the last view
};

std::optional<SoleReader> soleReader(KernelOp writer, Value y) {
  SoleReader r{nullptr, {}, y};
  for (Operation *user : y.getUsers()) {
    if (user == writer.getOperation())
      continue;
    if (!r.views.empty() || r.kernel)
      return std::nullopt;
    if (auto v = dyn_cast<ViewOp>(user))
      r.views.push_back(v);
    else if (auto k = dyn_cast<KernelOp>(user))
      r.kernel = k;
    else
      return std::nullopt;
  }
  while (!r.views.empty() && !r.kernel) {
    r.read = r.views.back().getBuffer();
    if (!r.read.hasOneUse())
      return std::nullopt;
    Operation *user = *r.read.getUsers().begin();
    if (auto v = dyn_cast<ViewOp>(user))
      r.views.push_back(v);
    else if (auto k = dyn_cast<KernelOp>(user))
      r.kernel = k;
    else
      return std::nullopt; // a step output, say
  }
  if (!r.kernel || r.kernel->getBlock() != writer->getBlock() ||
      !writer->isBeforeInBlock(r.kernel) || llvm::is_contained(r.kernel.getOutputs(), r.read))
    return std::nullopt;
  return r;
}

/// Erases `views` (a chain from a buffer) and then `y`'s alloc, once nothing uses them.
void eraseUnused(ArrayRef<ViewOp> views, Value y) {
  for (ViewOp v : llvm::reverse(views))
    v.erase();
  if (y.use_empty())
    y.getDefiningOp()->erase();
}

/// True when `z` is a step-local buffer of `elements` elements that nothing uses before
/// `reader` (its alloc aside).
bool freshBefore(Value z, int64_t elements, KernelOp reader) {
  if (!z.getDefiningOp<AllocOp>() || cast<MemRefType>(z.getType()).getNumElements() != elements)
    return false;
  for (Operation *user : z.getUsers())
    if (user != reader.getOperation() && user->isBeforeInBlock(reader))
      return false;
  return true;
}

/// A dense product without a bias and the `add_rows` that alone reads its result (directly or
/// through views), adding a vector of the product's column count to every row: the bias
/// ONNX models write as MatMul then Add.
struct BiasEpilogue {
  KernelOp dense, addRows;
  SmallVector<ViewOp> views; // through which add_rows reads the product's buffer
};

std::optional<BiasEpilogue> fusableBias(KernelOp dense) {
  if (dense.getKind() != "dense" || dense.getInputs().size() != 2 ||
      activationOf(dense) != "none" || dense.getOutputs().size() != 1)
    return std::nullopt;
  Value y = dense.getOutputs()[0];
  if (!y.getDefiningOp<AllocOp>())
    return std::nullopt;
  std::optional<SoleReader> r = soleReader(dense, y);
  if (!r)
    return std::nullopt;
  KernelOp add = r->kernel;
  if (add.getKind() != "add_rows" || add.getInputs().size() != 2 || add.getInputs()[0] != r->read)
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
  if (z == bias || !freshBefore(z, yType.getNumElements(), add) ||
      !untouchedBetween(dense, add, bias, z))
    return std::nullopt;
  return BiasEpilogue{dense, add, r->views};
}

/// The product writes the sum's buffer (through a view of the product's shape when the sum's
/// differs) with the vector as its bias; the sum, the views and the former result go.
void fuseBias(BiasEpilogue e) {
  KernelOp dense = e.dense, add = e.addRows;
  Value y = dense.getOutputs()[0], z = add.getOutputs()[0], bias = add.getInputs()[1];
  Value out = takeOver(dense, y, z);
  OpBuilder b(dense);
  auto fused = b.create<KernelOp>(dense.getLoc(), dense.getKind(),
                                  ValueRange{dense.getInputs()[0], dense.getInputs()[1], bias},
                                  ValueRange{out}, /*final=*/false, dense.getProcessAttr());
  fused->setDiscardableAttrs(dense->getDiscardableAttrDictionary());
  fused.setFinal(dense.getFinal());
  add.erase();
  dense.erase();
  eraseUnused(e.views, y);
}

/// A kernel writing an f32 result that only a cast to bf16 reads (directly or through
/// views): mixed precision's copy of a layer normalisation or a transpose for the products.
struct CastEpilogue {
  KernelOp producer, cast;
  SmallVector<ViewOp> views; // through which the cast reads the producer's buffer
};

/// The kinds whose kernels write bf16 where their result is f32 (the kernel contracts).
bool writesBf16(KernelOp k) {
  return (k.getKind() == "layer_norm" || k.getKind() == "transpose" ||
          k.getKind() == "activation_grad") &&
         k.getOutputs().size() == 1;
}

std::optional<CastEpilogue> fusableCast(KernelOp producer) {
  if (!writesBf16(producer))
    return std::nullopt;
  Value y = producer.getOutputs()[0];
  auto yType = cast<MemRefType>(y.getType());
  if (!y.getDefiningOp<AllocOp>() || !yType.getElementType().isF32() ||
      llvm::is_contained(producer.getInputs(), y))
    return std::nullopt;
  std::optional<SoleReader> r = soleReader(producer, y);
  if (!r || r->kernel.getKind() != "cast" || r->kernel.getInputs().size() != 1 ||
      r->kernel.getOutputs().size() != 1)
    return std::nullopt;
  // The copy: step-local bf16 of the result's elements, untouched until the cast.
  KernelOp c = r->kernel;
  Value z = c.getOutputs()[0];
  if (!cast<MemRefType>(z.getType()).getElementType().isBF16() ||
      !freshBefore(z, yType.getNumElements(), c) || !untouchedBetween(producer, c, y, z))
    return std::nullopt;
  return CastEpilogue{producer, c, r->views};
}

/// The producer writes the copy (through a view of its result's shape when the copy's
/// differs); the cast, the views and the f32 result go.
void fuseCast(CastEpilogue e) {
  Value y = e.producer.getOutputs()[0];
  e.producer->setOperand(e.producer.getInputs().size(),
                         takeOver(e.producer, y, e.cast.getOutputs()[0]));
  e.cast.erase();
  eraseUnused(e.views, y);
}

/// What `find` returns for each kernel of `module` where it finds something, collected before
/// any of it is rewritten.
template <typename Find> auto collect(ModuleOp module, Find find) {
  SmallVector<typename std::invoke_result_t<Find, KernelOp>::value_type> found;
  module.walk([&](KernelOp k) {
    if (auto match = find(k))
      found.push_back(*match);
  });
  return found;
}

struct FuseEpiloguesPass : dp::plan::impl::FuseEpiloguesPassBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    auto reluAfterNorm = [](KernelOp norm) -> std::optional<std::pair<KernelOp, KernelOp>> {
      if (KernelOp relu = fusableRelu(norm))
        return std::make_pair(norm, relu);
      return std::nullopt;
    };
    Builder b(&getContext());
    for (auto [norm, relu] : collect(getOperation(), reluAfterNorm)) {
      norm->setAttr("activation", b.getStringAttr("relu"));
      absorbConsumer(norm, relu);
    }
    for (const BiasEpilogue &e : collect(getOperation(), fusableBias))
      fuseBias(e);
    for (const CastEpilogue &e : collect(getOperation(), fusableCast))
      fuseCast(e);
  }
};

} // namespace
