// The gradient-rule interface: how an op contributes to the backward pass. The autodiff pass
// knows no op by name; it asks each op on the path from the parameters to the loss for this.
#ifndef DP_GRADIENT_OP_INTERFACE
#define DP_GRADIENT_OP_INTERFACE

include "mlir/IR/OpBase.td"

def GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op that can be differentiated. Given the gradients of the loss with respect to its
    results, the op builds, at the builder's insertion point, the ops computing the gradients
    with respect to its operands. Only the operands whose `wanted` flag is set need a
    gradient; the others get a null value (labels, or inputs that no parameter depends on).
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Builds the operand gradients from the result gradients.",
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"buildGradient",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                    "::mlir::ValueRange":$resultGrads,
                    "::llvm::ArrayRef<bool>":$wanted,
                    "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

// An op whose results take no gradient, although they depend on values that do: batch
// statistics, whose dependence on the input the op normalising with them accounts for in its
// own gradient. The autodiff pass treats its results as constants.
def StopsGradient : NativeOpTrait<"StopsGradient"> {
  let cppNamespace = "::dp";
}

#endif // DP_GRADIENT_OP_INTERFACE
