// How ops take part in deriving the train and eval steps from a model (graph-derive-steps,
// graph-verify-model): the loss a model returns, and the ops whose form depends on the step.
// The passes know no op by name; they ask each op through these.
#ifndef DP_STEP_OP_INTERFACES
#define DP_STEP_OP_INTERFACES

include "mlir/IR/OpBase.td"

def LossOpInterface : OpInterface<"LossOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    A loss a model may return: a scalar mean over the batch's valid rows. It also builds the
    step's `correct` output, the number of rows it predicts right (a classification loss
    has one, a regression none), and names the operand it
    compares the predictions with: the model input the runtime feeds the batch's targets, and
    the operand holding the predictions themselves (the eval step's `logits` output).
  }];
  let methods = [
    InterfaceMethod<
      "The operand holding the batch's targets (the labels).",
      "::mlir::Value", "getTargets", (ins)>,
    InterfaceMethod<
      "The operand holding the model's predictions for the batch, one row per sample (the "
      "logits).",
      "::mlir::Value", "getPredictions", (ins)>,
    InterfaceMethod<
      "Builds, at the builder's insertion point, the count of the batch's correct predictions "
      "(an f32 scalar, like the loss); a null value for a loss without one (a regression).",
      "::mlir::Value", "buildCorrectCount", (ins "::mlir::OpBuilder &":$builder)>,
  ];
}

def StepFormOpInterface : OpInterface<"StepFormOpInterface"> {
  let cppNamespace = "::dp";
  let description = [{
    An op whose computation differs between the train and the eval step: dropout is the
    identity when evaluating; batch normalisation trains on the batch's statistics and moves
    the moving ones.
  }];
  let methods = [
    InterfaceMethod<
      [{The value that replaces the op's result in the train step (`training`) or the eval
        step, built at the builder's insertion point (before the op); a null value keeps the
        op as it is in that step.}],
      "::mlir::Value", "buildStepForm",
      (ins "::mlir::OpBuilder &":$builder, "bool":$training)>,
  ];
}

#endif // DP_STEP_OP_INTERFACES
