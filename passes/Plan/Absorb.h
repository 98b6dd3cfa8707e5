// A rewrite the plan fusion passes share: a kernel takes over what the one kernel reading its
// result wrote.
#pragma once

#include "dialect/Plan/IR/PlanDialect.h"

namespace dp::plan {

/// `writer` writes `consumer`'s (single) result itself, and `consumer` goes, as does
/// `writer`'s former result buffer once nothing uses it. The result's alloc moves before
/// `writer` when it came after. The caller has checked that this computes the same: nothing
/// else reads the former result, and nothing touches the new one between the two kernels.
inline void absorbConsumer(KernelOp writer, KernelOp consumer) {
  mlir::Value former = writer.getOutputs()[0], result = consumer.getOutputs()[0];
  mlir::Operation *alloc = result.getDefiningOp();
  if (writer->isBeforeInBlock(alloc))
    alloc->moveBefore(writer);
  writer->setOperand(writer.getInputs().size(), result);
  consumer.erase();
  if (former.use_empty())
    former.getDefiningOp()->erase();
}

} // namespace dp::plan
