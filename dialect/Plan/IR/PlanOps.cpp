// Verifiers of the plan dialect's ops. Kernel kinds and arities come from the runtime's own
// kernel table, so the compiler cannot emit a kernel the runtime does not know.
#include "dialect/Plan/IR/PlanDialect.h"

#include "runtime/format/Enums.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dp::plan;

#define GET_OP_CLASSES
#include "dialect/Plan/IR/PlanOps.cpp.inc"

LogicalResult ProgramOp::verify() {
  if (getBatch() <= 0)
    return emitOpError() << "needs a positive batch, found " << getBatch();
  return success();
}

LogicalResult ViewOp::verify() {
  if (getSource().getType().getNumElements() != getBuffer().getType().getNumElements() ||
      getSource().getType().getElementType() != getBuffer().getType().getElementType())
    return emitOpError() << "cannot view " << getSource().getType() << " as "
                         << getBuffer().getType();
  return success();
}

LogicalResult KernelOp::verify() {
  dp::rt::KernelKind kind = dp::rt::kernelKindByName(getKind());
  if (kind == dp::rt::KernelKind::NumKinds)
    return emitOpError() << "unknown kernel '" << getKind() << "'";
  const dp::rt::KernelInfo &info = dp::rt::kernelInfo(kind);
  int nIn = getInputs().size(), nOut = getOutputs().size();
  if (nIn < info.minInputs || nIn > info.maxInputs)
    return emitOpError() << "kernel '" << getKind() << "' takes " << info.minInputs
                         << (info.maxInputs != info.minInputs
                                 ? " to " + std::to_string(info.maxInputs)
                                 : std::string())
                         << " inputs, found " << nIn;
  if (nOut != info.numOutputs)
    return emitOpError() << "kernel '" << getKind() << "' takes " << info.numOutputs
                         << " outputs, found " << nOut;
  return success();
}
