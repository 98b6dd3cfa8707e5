// Rewrites the plan fusion passes share: a kernel takes over what the one kernel reading its
// result wrote.
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"

#include "mlir/IR/Builders.h"

namespace dp::plan {

/// Moves `result`'s alloc before `writer` when it came after, so that `writer` can write it.
inline void allocBefore(KernelOp writer, mlir::Value result) {
  mlir::Operation *alloc = result.getDefiningOp();
  if (writer->isBeforeInBlock(alloc))
    alloc->moveBefore(writer);
}

/// `result` (an alloc's), ready for `writer` to write in place of its output `former` of the
/// same element count: allocBefore, and viewed in `former`'s shape, keeping its own element
/// type, when its shape differs.
inline mlir::Value takeOver(KernelOp writer, mlir::Value former, mlir::Value result) {
  allocBefore(writer, result);
  auto formerType = mlir::cast<mlir::MemRefType>(former.getType());
  auto resultType = mlir::cast<mlir::MemRefType>(result.getType());
  if (formerType.getShape() == resultType.getShape())
    return result;
  mlir::OpBuilder b(writer);
  return b.create<ViewOp>(writer.getLoc(), formerType.clone(resultType.getElementType()), result);
}

/// `writer` writes `consumer`'s (single) result itself, as it is (the caller has made the two
/// shapes agree), and `consumer` goes, as does `writer`'s former result buffer once nothing
/// uses it. The caller has checked that this computes the same: nothing else reads the former
/// result, and nothing touches the new one between the two kernels.
inline void absorbConsumer(KernelOp writer, KernelOp consumer) {
  mlir::Value former = writer.getOutputs()[0], result = consumer.getOutputs()[0];
  allocBefore(writer, result);
  writer->setOperand(writer.getInputs().size(), result);
  consumer.erase();
  if (former.use_empty())
    former.getDefiningOp()->erase();
}

} // namespace dp::plan
