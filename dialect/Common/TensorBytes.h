// The bytes of a statically shaped tensor or memref: its element count times its element type's
// width. Every size the compiler adds up (buckets, a server's share, the reports, the memory
// plan) goes through this, so a bf16 or i32 tensor counts what it holds, not f32's 4 bytes.
#pragma once

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>

namespace dp {

/// Bytes of one element of `type` (rounded up to whole bytes).
inline int64_t elementBytes(mlir::Type type) {
  return (static_cast<int64_t>(type.getIntOrFloatBitWidth()) + 7) / 8;
}

/// Bytes of a shaped value of `type` (static shape).
inline int64_t tensorBytes(mlir::Type type) {
  auto shaped = mlir::cast<mlir::ShapedType>(type);
  return shaped.getNumElements() * elementBytes(shaped.getElementType());
}

} // namespace dp
