// plan-fold-padding: a zero padding that only convolutions read becomes their own padding
// (see Passes.td).
#include "passes/Plan/Absorb.h"
#include "passes/Plan/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "plan-fold-padding"

namespace dp::plan {
#define GEN_PASS_DEF_FOLDPADDINGPASS
#include "passes/Plan/Passes.h.inc"
} // namespace dp::plan

using namespace mlir;
using namespace dp::plan;

namespace {

constexpr const char *kPads[4] = {"pad_top", "pad_bottom", "pad_left", "pad_right"};

/// The kernel's integer attribute `name`, 0 when absent.
int64_t intAttr(KernelOp k, StringRef name) {
  auto a = k->getAttrOfType<IntegerAttr>(name);
  return a ? a.getInt() : 0;
}

/// A zero padding kernel (zero_pad2d or zero_pad2d_grad, not `lowest`) of one input and one
/// output, whose padded side is a step-local buffer.
bool isFoldablePad(KernelOp k, StringRef kind) {
  if (k.getKind() != kind || intAttr(k, "lowest") != 0 || k.getInputs().size() != 1 ||
      k.getOutputs().size() != 1)
    return false;
  Value padded = kind == "zero_pad2d" ? k.getOutputs()[0] : k.getInputs()[0];
  return padded.getDefiningOp<AllocOp>() != nullptr;
}

/// Whether `k` is its block's kernel and comes after `pad`.
bool after(Operation *pad, Operation *k) {
  return k->getBlock() == pad->getBlock() && pad->isBeforeInBlock(k);
}

/// Whether `v` may change after `from`: a kernel after it writes `v`, or `v` is a view or has
/// one (writes through views are not followed), or an op other than a kernel or a step output
/// uses it.
bool mayChangeAfter(Value v, Operation *from) {
  if (v.getDefiningOp<ViewOp>())
    return true;
  for (Operation *user : v.getUsers()) {
    if (user == from || isa<OutputOp>(user))
      continue;
    auto k = dyn_cast<KernelOp>(user);
    if (!k)
      return true;
    if (llvm::is_contained(k.getOutputs(), v) &&
        (k->getBlock() != from->getBlock() || !k->isBeforeInBlock(from)))
      return true;
  }
  return false;
}

/// The convolutions that read `v` as their image, when they alone read it after `producer`
/// (which writes it); empty otherwise.
SmallVector<KernelOp> imageReaders(Value v, KernelOp producer) {
  SmallVector<KernelOp> readers;
  for (OpOperand &use : v.getUses()) {
    if (use.getOwner() == producer.getOperation())
      continue;
    auto k = dyn_cast<KernelOp>(use.getOwner());
    if (!k || (k.getKind() != "conv2d" && k.getKind() != "conv2d_grad_filter") ||
        use.getOperandNumber() != 0 || !after(producer, k))
      return {};
    readers.push_back(k);
  }
  return readers;
}

/// A padding to fold: the convolutions that read its result, directly or through the one
/// cast to bf16 that alone reads it (mixed precision casts the padded image).
struct PaddingFold {
  KernelOp cast;
  SmallVector<KernelOp> readers;
};

/// What folds `pad` (no readers when it cannot be folded).
PaddingFold paddingFold(KernelOp pad) {
  Value x = pad.getInputs()[0], xp = pad.getOutputs()[0];
  if (mayChangeAfter(x, pad))
    return {};
  if (llvm::range_size(xp.getUsers()) == 2)
    for (Operation *user : xp.getUsers()) {
      auto k = dyn_cast<KernelOp>(user);
      if (k && k.getKind() == "cast" && k.getInputs().size() == 1 && k.getOutputs().size() == 1 &&
          k.getInputs()[0] == xp && k.getOutputs()[0].getDefiningOp<AllocOp>() && after(pad, k))
        return {k, imageReaders(k.getOutputs()[0], k)};
    }
  return {nullptr, imageReaders(xp, pad)};
}

/// The conv2d_grad_input whose result `crop` (a zero_pad2d_grad) alone reads, when it can
/// write the cropped gradient itself: nothing reads or writes that gradient between the two.
KernelOp croppedWriter(KernelOp crop) {
  Value dxp = crop.getInputs()[0], dx = crop.getOutputs()[0];
  if (!dx.getDefiningOp<AllocOp>())
    return nullptr;
  KernelOp writer;
  for (OpOperand &use : dxp.getUses()) {
    Operation *user = use.getOwner();
    if (user == crop.getOperation())
      continue;
    auto k = dyn_cast<KernelOp>(user);
    if (!k || writer || k.getKind() != "conv2d_grad_input" || k.getOutputs().size() != 1 ||
        k.getOutputs()[0] != dxp || k->getBlock() != crop->getBlock() || !k->isBeforeInBlock(crop))
      return nullptr;
    writer = k;
  }
  if (!writer)
    return nullptr;
  for (Operation *user : dx.getUsers())
    if (user != crop.getOperation() && user->isBeforeInBlock(crop))
      return nullptr;
  return writer;
}

/// Adds `pad`'s padding to convolution `k`'s.
void addPadding(KernelOp pad, KernelOp k, Builder &b) {
  for (const char *name : kPads)
    k->setAttr(name, b.getI64IntegerAttr(intAttr(k, name) + intAttr(pad, name)));
}

struct FoldPaddingPass : dp::plan::impl::FoldPaddingPassBase<FoldPaddingPass> {
  void runOnOperation() override {
    SmallVector<KernelOp> pads, crops;
    getOperation().walk([&](KernelOp k) {
      if (isFoldablePad(k, "zero_pad2d"))
        pads.push_back(k);
      else if (isFoldablePad(k, "zero_pad2d_grad"))
        crops.push_back(k);
    });
    Builder b(&getContext());
    for (KernelOp pad : pads) {
      auto [toBf16, readers] = paddingFold(pad);
      if (readers.empty())
        continue;
      Value x = pad.getInputs()[0], xp = pad.getOutputs()[0], image = x, padded;
      if (toBf16) {
        // The cast reads the unpadded image and writes a buffer of its shape (a copy of the
        // padded one's alloc, device included), which the convolutions read.
        padded = toBf16.getOutputs()[0];
        OpBuilder before(toBf16);
        Operation *alloc = before.clone(*padded.getDefiningOp());
        alloc->getResult(0).setType(
            MemRefType::get(cast<MemRefType>(x.getType()).getShape(),
                            cast<MemRefType>(padded.getType()).getElementType()));
        image = alloc->getResult(0);
        toBf16->setOperand(0, x);
        toBf16->setOperand(1, image);
      }
      for (KernelOp k : readers) {
        k->setOperand(0, image);
        addPadding(pad, k, b);
      }
      pad.erase();
      for (Value v : {xp, padded})
        if (v && v.use_empty())
          v.getDefiningOp()->erase();
    }
    for (KernelOp crop : crops) {
      KernelOp writer = croppedWriter(crop);
      if (!writer)
        continue;
      addPadding(crop, writer, b);
      absorbConsumer(writer, crop);
    }
  }
};

} // namespace
