// The plan dialect: the compiled plan as IR, one op per record of the .dpx file.
#pragma once

#include "llvm/ADT/DenseSet.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "runtime/format/ConvGeometry.h"
#include "runtime/format/Enums.h"

#include <optional>

#include "dialect/Plan/IR/PlanDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Plan/IR/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/Plan/IR/PlanOps.h.inc"

namespace dp::plan {
/// Bytes of a buffer of this type.
int64_t bufferBytes(mlir::MemRefType type);
/// The buffer `buffer` views through `plan.view`s (itself when it is no view): an alloc, a
/// param, an input, a bucket or a grad.
mlir::Value bufferRoot(mlir::Value buffer);
/// The device a buffer lives on (its root's `device`; 0 when absent).
int64_t bufferDevice(mlir::Value buffer);
/// The buckets of `program` that cross the processes as bf16: with `allreduce_precision`,
/// those holding parameters' gradients (not batch statistics, which dist-sync-batch-norm
/// averages under names of no parameter); none without it.
llvm::DenseSet<mlir::Value> bf16WireBuckets(ProgramOp program);
/// The live taps (runtime/format/ConvGeometry.h) of a `conv2d`, `conv2d_grad_input` or
/// `conv2d_grad_filter` kernel, from its buffers' shapes and its attributes; none for another
/// kind, or for shapes and attributes that do not make a convolution.
std::optional<dp::rt::LiveTaps> convLiveTaps(KernelOp kernel);
/// Arena offsets are multiples of this many bytes.
inline constexpr int64_t kAlignment = 64;
} // namespace dp::plan
