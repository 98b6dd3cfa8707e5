// The mixed-precision interface: which operands an op reads in bf16 under
// `dpc compile --precision bf16` (graph-mixed-precision), and whether its result becomes bf16.
// The pass knows no op by name; it asks each op for this.
#ifndef DP_MIXED_PRECISION_OP_INTERFACE
#define DP_MIXED_PRECISION_OP_INTERFACE

include "mlir/IR/OpBase.td"

def MixedPrecisionOpInterface : OpInterface<"MixedPrecisionOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op with a bf16 form: a product that reads two bf16 factors and accumulates in f32, or a
    layer (an LSTM) whose kernels run in bf16 throughout. Its low-precision operands get one
    cast to bf16, shared by every reader of the f32 value; everything else stays f32.
  }];
  let methods = [
    InterfaceMethod<
      [{The operands (indices) read in bf16. A product too small for bf16 to pay returns
        none: a convolution with fewer than `minRows` output rows (batch x height x width).}],
      "::llvm::SmallVector<unsigned>", "getLowPrecisionOperands",
      (ins "int64_t":$minRows)>,
    InterfaceMethod<
      [{Whether the op's result becomes bf16 as well (oneDNN's bf16 LSTM writes bf16 h).
        Readers that take it as it is say so (readsLowPrecisionResultAsIs); every other
        reader gets one cast back to f32.}],
      "bool", "hasLowPrecisionResult", (ins), "", "return false;">,
    InterfaceMethod<
      [{Whether operand `index` takes the bf16 result of an op with hasLowPrecisionResult as
        it is (an LSTM's input, an lstm_grad's input and output).}],
      "bool", "readsLowPrecisionResultAsIs", (ins "unsigned":$index), "", "return false;">,
  ];
}

#endif // DP_MIXED_PRECISION_OP_INTERFACE
