// Passes of the graph phase: from the model a user wrote to train and eval steps with explicit
// backward pass and optimizer updates, all still in the graph dialect.
#ifndef DP_GRAPH_PASSES
#define DP_GRAPH_PASSES

include "mlir/Pass/PassBase.td"

def InlineCallsPass : Pass<"graph-inline-calls", "mlir::ModuleOp"> {
  let summary = "Inline the blocks a model calls, naming their parameters per call site";
  let description = [{
    Repeated blocks (a residual block, say) are written once as private functions and called
    with `func.call`. This pass replaces every call in the model function by the callee's
    body, recursively, and prefixes the name of each `graph.param` of the copy with the call
    site's scope and an underscore: the call's `graph.scope` attribute, or `<callee>_<n>` for
    the n-th call of that callee in its caller. Each call site thus has its own parameters;
    two sites with the same scope share them. Inlined ops keep their location, wrapped in
    the call site's. Private functions left without calls are erased. Recursion, calls of
    external or unknown functions and multi-block callees are errors.

    Before: `%y = func.call @block(%x) {graph.scope = "conv2_block1"}` with
            `graph.param "1_conv.kernel"` in `@block`.
    After:  the body of `@block`, with `graph.param "conv2_block1_1_conv.kernel"`.
  }];
  let dependentDialects = ["dp::graph::GraphDialect", "mlir::func::FuncDialect"];
}

def VerifyModelPass : Pass<"graph-verify-model", "mlir::ModuleOp"> {
  let summary = "Check that the module holds one well-formed model";
  let description = [{
    The op verifiers check each op's shapes; this pass checks what makes a function a
    trainable model: exactly one model function; every argument named by `graph.input`
    (unique names) with the same leading (batch) dimension; a `graph.optimizer`; parameter
    names declared once (or again with the same type); at least one trainable parameter; a
    single result, the scalar produced by a loss op (`graph.softmax_cross_entropy`,
    `graph.mean_squared_error`).
    Changes nothing.
  }];
  let dependentDialects = ["dp::graph::GraphDialect"];
}

def DeriveStepsPass : Pass<"graph-derive-steps", "mlir::ModuleOp"> {
  let summary = "Turn the model function into a train step and an eval step";
  let description = [{
    Replaces the model function `@m` by `@train` and `@eval` (`graph.step` = "train" /
    "eval", `graph.model` = "m"). Both compute the forward pass, the loss and the number of
    correctly classified rows (`graph.count_correct` on the loss's logits), and return
    `(loss, correct)` with results named by `graph.output` (a regression loss,
    `graph.mean_squared_error`, has no count: its steps return the loss alone). Each result and argument gets the
    role (`graph.role`) the runtime finds it by, whatever the model named it: the results
    `loss` and `correct`, the argument the loss takes its targets from `targets` (which must
    be an argument, not a computed value), every other argument `samples`. Later passes add
    the backward pass and the optimizer to `@train` only.

    Dropout is the identity in `@eval`. In `@train`, `graph.batch_norm` normalises with the
    statistics of the batch: it becomes `graph.batch_moments`, `graph.batch_norm_train` and a
    `graph.moving_stats_update` of the moving statistics, which `@eval` uses.

    Before: `func.func @m(...) -> tensor<f32> { ...; return %loss }`
    After:  `func.func @train(...) -> (tensor<f32>, tensor<f32>) {...; return %loss, %correct}`
            and the same `@eval`.
  }];
}

def AutodiffPass : Pass<"graph-autodiff", "mlir::ModuleOp"> {
  let summary = "Append the backward pass to the train step";
  let description = [{
    Reverse-mode differentiation of the loss returned by each `graph.step = "train"`
    function with respect to every trainable `graph.param`. Gradients flow only through ops
    that lie on a path from a trainable parameter to the loss; each of those ops builds its
    rule through GradientOpInterface (an op on that path without the interface is an error).
    Gradients of a value used several times are summed with `graph.add`. As soon as the
    gradient of a parameter is complete, a `graph.apply_gradient %param, %grad` follows, so
    the order of those ops is the order in which gradients become ready.
  }];
}

def ExpandOptimizerPass : Pass<"graph-expand-optimizer", "mlir::ModuleOp"> {
  let summary = "Replace apply_gradient by the optimizer's update ops";
  let description = [{
    Reads the train step's `graph.optimizer` and rewrites every `graph.apply_gradient`:
    `#graph.sgd` into `graph.sgd_update`; `#graph.momentum` into `graph.momentum_update`
    with a velocity parameter `<name>/velocity`; `#graph.adam` into `graph.adam_update` with
    moment parameters `<name>/m` and `<name>/v`. Optimizer state parameters are zero-
    initialised, not trainable, and marked `optimizer_state`. With `lr-schedule`, the train
    step gets `graph.lr_schedule`: the schedule's canonical text, which the plan carries for
    the runtime to apply to every update's rate.
  }];
  let options = [
    Option<"lrScale", "lr-scale", "double", /*default=*/"1.0",
           "Multiply the learning rate by this factor (linear scaling for larger batches)">,
    Option<"lrSchedule", "lr-schedule", "std::string", /*default=*/"\"\"",
           "The learning-rate schedule (a SPEC of runtime/format/LrSchedule.h); empty: constant">,
  ];
}

def MixedPrecisionPass : Pass<"graph-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Run the products in bf16, everything else in f32 (mixed precision)";
  let description = [{
    With `precision=bf16`, the products of both steps (`graph.dense`, `graph.matmul`,
    `graph.batch_matmul`, `graph.conv2d` and the convolution gradients) read bf16 factors and accumulate in f32:
    each f32 value a product reads gets one `graph.cast` to bf16, right after it is defined,
    which every product reading it shares (a weight is cast once per step, an activation once
    for its forward and backward uses). Reshapes of one value to one shape share one cast too:
    that of a reshape placed right after the value (an ONNX model reshapes the normalised
    tokens once for each of attention's q, k and v products); the reshapes it supersedes go
    once nothing reads them. `graph.lstm` and `graph.lstm_grad` read their input
    and kernels in bf16 too (the bias stays f32), and an LSTM's result becomes bf16 (oneDNN's
    bf16 LSTM writes bf16 h): LSTMs and lstm_grads read it so, any other reader through one
    cast back to f32; lstm_grad's gradients stay f32. The products' results stay f32, and so
    does the rest:
    the parameters (master weights), the gradients as averaged, the optimizer state, losses,
    softmax and normalisation statistics. `precision=fp32` changes nothing.

    Convolutions with fewer than `conv-min-rows` output rows (batch x height x width: the
    late, 1x1 and 2x2 stages of a ResNet on small images) stay f32, with their gradients:
    they are bound by reading their weights, so bf16 saves them nothing, while it would cast
    their (large) weights every step.

    Before: `%y = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x2xf32>, ...) -> ...`
    After:  `%xb = graph.cast %x : tensor<8x4xf32> to tensor<8x4xbf16>`, the same for `%w`,
            and `%y = graph.dense %xb, %wb, %b : (tensor<8x4xbf16>, tensor<4x2xbf16>, ...)`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "fp32 (no change) or bf16 (the products in bf16)">,
    Option<"convMinRows", "conv-min-rows", "int64_t", /*default=*/"65",
           "convolutions (and their gradients) with fewer output rows (batch x height x "
           "width) stay f32: they read more weight than they compute">,
  ];
  let dependentDialects = ["dp::graph::GraphDialect"];
}

def VerifyStepsPass : Pass<"graph-verify-steps", "mlir::ModuleOp"> {
  let summary = "Check the contract of the graph phase on its output";
  let description = [{
    The last pass of the graph phase. The module must hold a `@train` and an `@eval` step,
    each returning `loss` and `correct` (by `graph.role`) and each argument marked with its
    input role, at most one of them `targets`; every op of both steps but `graph.param` must lower
    to kernels (KernelLoweringOpInterface: a `graph.apply_gradient` left over means the
    optimizer was not expanded); every parameter is updated (ParameterUpdateOpInterface) at
    most once, and only in the train step. Changes nothing.
  }];
}

#endif // DP_GRAPH_PASSES
