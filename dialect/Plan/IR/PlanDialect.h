// The plan dialect: the compiled plan as IR, one op per record of the .dpx file.
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "runtime/format/Enums.h"

#include "dialect/Plan/IR/PlanDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Plan/IR/PlanAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/Plan/IR/PlanOps.h.inc"

namespace dp::plan {
/// Bytes of a buffer of this type.
int64_t bufferBytes(mlir::MemRefType type);
/// The device a buffer lives on (its root's `device`; 0 when absent).
int64_t bufferDevice(mlir::Value buffer);
/// Arena offsets are multiples of this many bytes.
inline constexpr int64_t kAlignment = 64;
} // namespace dp::plan
