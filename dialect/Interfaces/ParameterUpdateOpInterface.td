// The parameter-update interface: an op that changes a parameter in place from its gradient
// (the abstract `graph.apply_gradient` or an optimizer's update). The passes that average
// gradients and the lowering that keeps them in persistent buffers find updates through it.
#ifndef DP_PARAMETER_UPDATE_OP_INTERFACE
#define DP_PARAMETER_UPDATE_OP_INTERFACE

include "mlir/IR/OpBase.td"

def ParameterUpdateOpInterface : OpInterface<"ParameterUpdateOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op without results that writes the parameter `param` (the result of a `graph.param`)
    from the gradient operand `gradient`. The default methods read the op's `param` and
    `gradient` operands.
  }];
  let methods = [
    InterfaceMethod<"The parameter the op updates.", "::mlir::Value", "getUpdatedParameter",
      (ins), "", "return $_op.getParam();">,
    InterfaceMethod<"The operand holding the parameter's gradient.", "::mlir::OpOperand &",
      "getGradientOperand", (ins), "", "return $_op.getGradientMutable();">,
  ];
}

#endif // DP_PARAMETER_UPDATE_OP_INTERFACE
