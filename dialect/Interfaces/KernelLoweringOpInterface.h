// The kernel-lowering op interface (see KernelLoweringOpInterface.td) and the KernelLowering
// that a conversion hands to each op: buffers of lowered values and kernel emission with typed
// attributes from the runtime's kernel contract table.
#pragma once

#include "runtime/format/KernelAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include <type_traits>
#include <utility>

namespace dp {

/// What an op's lowering may ask of the conversion that runs it. Buffers are values of memref
/// type in the target IR; tensors are the op's own operands and results.
class KernelLowering {
public:
  virtual ~KernelLowering() = default;

  /// The buffer holding `tensor`, a value lowered before.
  virtual mlir::Value buffer(mlir::Value tensor) = 0;
  /// Binds `result` to a new buffer (or to the persistent buffer it is stored in) and returns
  /// it.
  virtual mlir::Value newBuffer(mlir::Value result) = 0;
  /// A transient buffer of the step, shaped like `tensorType`, on the device of `op`.
  virtual mlir::Value scratch(mlir::Operation *op, mlir::Type tensorType) = 0;
  /// Binds `result` to the bytes of `source`'s buffer under `result`'s shape.
  virtual void view(mlir::Value result, mlir::Value source) = 0;
  /// Remembers `buffer` under `key` for a later op of the step (a dropout's mask for its
  /// gradient), and finds it again; null when nothing was remembered.
  virtual void remember(mlir::Value key, mlir::Value buffer) = 0;
  virtual mlir::Value recall(mlir::Value key) = 0;
  /// Numbers the ops of one kind on the device of `op` in step order, from 0: random kernels
  /// draw from a stream of their own (replicas of one op share a number).
  virtual int64_t nextIndex(mlir::Operation *op, llvm::StringRef counter) = 0;

  /// Emits one call of `kind` on buffers, with its typed attributes.
  template <typename Attrs>
  void emit(mlir::Location loc, rt::KernelKind kind, mlir::ValueRange inputs,
            mlir::ValueRange outputs, const Attrs &attrs) {
    emitKernel(loc, kind, inputs, outputs, kernelAttributes(attrs));
  }
  /// Emits `kind` for `op` reading the buffers of `operands` and writing a new buffer for each
  /// of the op's results: the common case.
  template <typename Attrs>
  void kernel(mlir::Operation *op, rt::KernelKind kind, mlir::ValueRange operands,
              const Attrs &attrs) {
    llvm::SmallVector<mlir::Value> ins, outs;
    for (mlir::Value v : operands)
      ins.push_back(buffer(v));
    for (mlir::Value r : op->getResults())
      outs.push_back(newBuffer(r));
    emit(op->getLoc(), kind, ins, outs, attrs);
  }
  template <typename Attrs>
  void kernel(mlir::Operation *op, rt::KernelKind kind, const Attrs &attrs) {
    kernel(op, kind, op->getOperands(), attrs);
  }
  void kernel(mlir::Operation *op, rt::KernelKind kind) { kernel(op, kind, rt::NoAttrs{}); }

  /// The IR form of typed kernel attributes: integers and flags as i64, floats as f64,
  /// activations by name.
  template <typename Attrs> llvm::SmallVector<mlir::NamedAttribute> kernelAttributes(const Attrs &a) {
    mlir::Builder b(context());
    llvm::SmallVector<mlir::NamedAttribute> attrs;
    a.visitFields([&](const rt::AttrSpec &spec, const auto &field) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, int64_t>)
        if (!spec.required && field == spec.absent)
          return;
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, double>)
        if (!spec.required && field == 0)
          return;
      attrs.push_back(b.getNamedAttr(spec.name, attribute(b, field)));
    });
    return attrs;
  }

protected:
  virtual mlir::MLIRContext *context() = 0;
  virtual void emitKernel(mlir::Location loc, rt::KernelKind kind, mlir::ValueRange inputs,
                          mlir::ValueRange outputs,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs) = 0;

private:
  static mlir::Attribute attribute(mlir::Builder &b, int64_t v) { return b.getI64IntegerAttr(v); }
  static mlir::Attribute attribute(mlir::Builder &b, bool v) { return b.getI64IntegerAttr(v); }
  static mlir::Attribute attribute(mlir::Builder &b, double v) { return b.getF64FloatAttr(v); }
  static mlir::Attribute attribute(mlir::Builder &b, rt::Activation v) {
    return b.getStringAttr(rt::activationName(v));
  }
};

} // namespace dp

#include "dialect/Interfaces/KernelLoweringOpInterface.h.inc"
