// The kernel-lowering interface: how an op becomes calls of runtime kernels. The conversion to
// the plan dialect knows no compute op by name; it hands each op a KernelLowering (the buffers
// of the values it has lowered so far) and the op emits its kernels through it.
#ifndef DP_KERNEL_LOWERING_OP_INTERFACE
#define DP_KERNEL_LOWERING_OP_INTERFACE

include "mlir/IR/OpBase.td"

def KernelLoweringOpInterface : OpInterface<"KernelLoweringOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op that lowers to kernels of the runtime's contract table (runtime/format/Kernels.def).
    `lowerToKernels` binds a buffer to each of the op's results (a new one, a view of an
    operand's, or the persistent buffer the result is stored in) and emits the kernel calls
    that fill them, with typed attributes (`dp::rt::<Set>` structs generated from the same
    table), so that a kernel's attributes cannot be misspelt on either side.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Emits the op's kernels through `lowering`; fails with a diagnostic at the op.",
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"lowerToKernels",
      /*args=*/(ins "::dp::KernelLowering &":$lowering)>,
  ];
}

#endif // DP_KERNEL_LOWERING_OP_INTERFACE
