// Ops of the graph dialect. User-facing layers first, then the ops that autodiff and optimizer
// expansion introduce (gradients and updates).
#ifndef DP_GRAPH_OPS
#define DP_GRAPH_OPS

include "dialect/Graph/IR/GraphBase.td"
include "dialect/Graph/IR/GraphAttrs.td"
include "dialect/Interfaces/GradientOpInterface.td"
include "dialect/Interfaces/BatchShardingOpInterface.td"
include "dialect/Interfaces/KernelLoweringOpInterface.td"
include "dialect/Interfaces/ParameterUpdateOpInterface.td"
include "dialect/Interfaces/MixedPrecisionOpInterface.td"
include "dialect/Interfaces/StepOpInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// Every tensor of a model has a static shape: memory is planned at compile time.
class Graph_StaticTensorOf<Type element> : Type<
    And<[RankedTensorOf<[element]>.predicate, HasStaticShapePred]>,
    "statically shaped tensor of " # element.summary, "::mlir::RankedTensorType">;
def Graph_F32Tensor : Graph_StaticTensorOf<F32>;
def Graph_I32Tensor : Graph_StaticTensorOf<I32>;
// The factors of the products (dense, matmul, the convolutions): f32, or bf16 under mixed
// precision (graph-mixed-precision casts them); their results stay f32.
def Graph_FactorTensor : Graph_StaticTensorOf<AnyTypeOf<[F32, BF16]>>;
def Graph_AnyTensor : Graph_StaticTensorOf<AnyTypeOf<[F32, I32]>>;
def Graph_F32Scalar : 0DTensorOf<[F32]>;
def Graph_Gradient : DeclareOpInterfaceMethods<GradientOpInterface>;
// Batch sharding (BatchShardingOpInterface): by default an op's results carry the batch when
// an operand does, or, with Graph_ReducesBatch, all reduce over it; other rules and the global
// statistics (averaged across replicas where they are computed) are in Ops/<Family>.cpp.
defvar Graph_BatchSharding = BatchShardingOpInterface;
defvar Graph_ReducesBatch = ReducesBatchTrait;
def Graph_ShardingRule : DeclareOpInterfaceMethods<BatchShardingOpInterface,
    ["getResultSharding"]>;
def Graph_GlobalStatistic : DeclareOpInterfaceMethods<BatchShardingOpInterface,
    ["isGlobalStatistic", "getStatisticName"]>;
// Lowering to runtime kernels (KernelLoweringOpInterface, in Ops/<Family>.cpp).
def Graph_Lowering : DeclareOpInterfaceMethods<KernelLoweringOpInterface>;
// A bf16 form under mixed precision (MixedPrecisionOpInterface): the operands it reads in bf16.
def Graph_MixedPrecision : DeclareOpInterfaceMethods<MixedPrecisionOpInterface>;
// A different computation in the train and the eval step (StepFormOpInterface).
def Graph_StepForm : DeclareOpInterfaceMethods<StepFormOpInterface>;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def Graph_ParamOp : Graph_Op<"param"> {
  let summary = "a named persistent tensor with an initialiser";
  let description = [{
    Declares a parameter: a tensor that lives across steps, drawn once from `init` (an
    initialiser attribute such as `#graph.glorot_uniform`), or given by it: f32 elements of
    the parameter's type (`dense<...>`, `dense_resource<...>`: an imported model's weights).
    Trainable parameters receive a
    gradient from autodiff and are updated by the optimizer; `trainable = false` ones are not.
    Optimizer expansion adds `optimizer_state` parameters (moments, velocities). Every use of
    the same name refers to the same storage, also across functions.

    ```mlir
    %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<784x100xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, AnyAttr:$init,
                       DefaultValuedAttr<BoolAttr, "true">:$trainable,
                       UnitAttr:$optimizer_state);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

def Graph_DenseOp : Graph_Op<"dense", [Graph_MixedPrecision, Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "fully connected layer: act(x . kernel + bias)";
  let description = [{
    `input` is [N, K], `kernel` [K, M], the optional `bias` [M]; the result is [N, M] with the
    activation applied (default none).

    ```mlir
    %h = graph.dense %x, %w, %b {activation = #graph.act<sigmoid>}
        : (tensor<100x784xf32>, tensor<784x100xf32>, tensor<100xf32>) -> tensor<100x100xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$input, Graph_FactorTensor:$kernel,
                       Optional<Graph_F32Tensor>:$bias,
                       DefaultValuedAttr<Graph_ActivationAttr, "Activation::none">:$activation);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $kernel (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Graph_ActivationOp<string mnemonic, string fn> : Graph_Op<mnemonic,
    [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient, SameOperandsAndResultType]> {
  let summary = fn # " applied elementwise";
  let description = [{
    Applies the function to every element (softmax: over the last axis).

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<100x10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDeclaration = [{
    static constexpr Activation kActivation = Activation::}] # mnemonic # [{;
  }];
}
def Graph_ReluOp : Graph_ActivationOp<"relu", "max(x, 0)">;
def Graph_SigmoidOp : Graph_ActivationOp<"sigmoid", "1 / (1 + exp(-x))">;
def Graph_TanhOp : Graph_ActivationOp<"tanh", "tanh(x)">;
def Graph_SoftmaxOp : Graph_ActivationOp<"softmax", "softmax over the last axis">;

def Graph_ReshapeOp : Graph_Op<"reshape", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "the same elements under another static shape";
  let description = [{
    The element count must be unchanged. Reshapes are free: no data moves.

    ```mlir
    %y = graph.reshape %x : tensor<100x28x28xf32> -> tensor<100x784xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Graph_Lowering, Graph_ShardingRule, Pure, Graph_Gradient]> {
  let summary = "the axes of a tensor in another order";
  let description = [{
    Result axis `i` is input axis `permutation[i]`: the result's sizes are the input's in that
    order. Unlike a reshape, the elements move. Under data parallelism a transpose of a
    batch-carrying tensor keeps the batch axis first (`permutation[0] = 0`).

    ```mlir
    %y = graph.transpose %x [0, 2, 1, 3] : tensor<8x49x4x32xf32> -> tensor<8x4x49x32xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_FlattenOp : Graph_Op<"flatten", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "keep the batch axis, flatten the others";
  let description = [{
    [N, d1, d2, ...] becomes [N, d1 * d2 * ...].

    ```mlir
    %y = graph.flatten %x : tensor<100x28x28x1xf32> -> tensor<100x784xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_Conv2DOp : Graph_Op<"conv2d", [Graph_MixedPrecision, Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "2-D convolution layer on NHWC images: act(conv(x, kernel) + bias)";
  let description = [{
    `input` is [N, H, W, C], `kernel` [KH, KW, C / groups, F] (Keras's HWIO layout), the
    optional `bias` [F]; the result is [N, OH, OW, F] with the activation applied (default
    none). `padding` is "valid" (no padding: OH = (H - EH) / SH + 1, floored) or "same"
    (OH = ceil(H / SH), the padding split as TensorFlow does, the extra row or column at the
    bottom/right), where the window's extent EH = (KH - 1) * dilations[0] + 1. With `groups`
    G (default 1) the channels and filters are split into G groups, filter group g convolving
    channel group g only: G = C is a depthwise convolution. `dilations` (default [1, 1]) are
    the distances between a window's taps.

    ```mlir
    %h = graph.conv2d %x, %w, %b {strides = [1, 1], padding = "valid",
        activation = #graph.act<relu>}
        : (tensor<64x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<32xf32>) -> tensor<64x26x26x32xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$input, Graph_FactorTensor:$kernel,
                       Optional<Graph_F32Tensor>:$bias,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedStrAttr<StrAttr, "valid">:$padding,
                       DefaultValuedAttr<Graph_ActivationAttr, "Activation::none">:$activation,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $kernel (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MaxPool2DOp : Graph_Op<"max_pool2d", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "2-D max pooling on NHWC images (valid padding)";
  let description = [{
    `input` is [N, H, W, C]; the result [N, OH, OW, C] with OH = (H - window[0]) / strides[0] + 1
    (floored, as Keras's valid pooling), each element the largest of its window.

    ```mlir
    %p = graph.max_pool2d %h {window = [2, 2], strides = [2, 2]}
        : tensor<64x26x26x32xf32> -> tensor<64x13x13x32xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$window,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$strides);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ZeroPad2DOp : Graph_Op<"zero_pad2d", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "surround NHWC images with zeros (or the lowest float, before a max pool)";
  let description = [{
    `input` is [N, H, W, C]; `padding` = [top, bottom, left, right] rows and columns of zeros
    are added (Keras's ZeroPadding2D): the result is [N, H + top + bottom, W + left + right, C].
    With `lowest` they hold the lowest float (-3.40282347e38) instead: a max pool's padding
    (ONNX's and PyTorch's -inf), which no window that also covers the image picks.

    ```mlir
    %p = graph.zero_pad2d %x {padding = [3, 3, 3, 3]}
        : tensor<8x32x32x3xf32> -> tensor<8x38x38x3xf32>
    %q = graph.zero_pad2d %y {padding = [1, 1, 1, 1], lowest}
        : tensor<8x16x16x8xf32> -> tensor<8x18x18x8xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, I64ArrayAttr:$padding, UnitAttr:$lowest);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_AvgPool2DOp : Graph_Op<"avg_pool2d", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "2-D average pooling on NHWC images (valid padding)";
  let description = [{
    `input` is [N, H, W, C]; the result [N, OH, OW, C] with OH = (H - window[0]) / strides[0] + 1
    (floored), each element the mean of its window.

    ```mlir
    %p = graph.avg_pool2d %h {window = [2, 2], strides = [2, 2]}
        : tensor<64x26x26x32xf32> -> tensor<64x13x13x32xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$window,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$strides);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_GlobalAvgPool2DOp : Graph_Op<"global_avg_pool2d", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "mean over the spatial axes of NHWC images";
  let description = [{
    [N, H, W, C] becomes [N, C] (Keras's GlobalAveragePooling2D).

    ```mlir
    %g = graph.global_avg_pool2d %h : tensor<64x4x4x2048xf32> -> tensor<64x2048xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_BatchNormOp : Graph_Op<"batch_norm", [Graph_StepForm, Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "batch normalisation over the last (channel) axis";
  let description = [{
    `input` is [..., C]; `gamma`, `beta`, `moving_mean` and `moving_var` are [C]. In the eval
    step the result is `gamma * (x - moving_mean) / sqrt(moving_var + epsilon) + beta`. In the
    train step (graph-derive-steps rewrites the op) the mean and variance of the batch are
    used instead, and the moving statistics move towards them:
    `moving = momentum * moving + (1 - momentum) * batch`. `gamma` and `beta` are normally
    trainable parameters, the moving statistics `trainable = false` ones (Keras's
    BatchNormalization; defaults epsilon 1e-3, momentum 0.99).

    ```mlir
    %y = graph.batch_norm %x, %gamma, %beta, %mean, %var {epsilon = 1.001e-05}
        : (tensor<8x16x16x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<64xf32>) -> tensor<8x16x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$gamma, Graph_F32Tensor:$beta,
                       Graph_F32Tensor:$moving_mean, Graph_F32Tensor:$moving_var,
                       DefaultValuedAttr<F64Attr, "1.0e-3">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.99">:$momentum);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta `,` $moving_mean `,` $moving_var attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_LstmOp : Graph_Op<"lstm", [DeclareOpInterfaceMethods<MixedPrecisionOpInterface, ["hasLowPrecisionResult", "readsLowPrecisionResultAsIs"]>, Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient]> {
  let summary = "LSTM layer over a batch of sequences (Keras gates and state)";
  let description = [{
    `input` is [N, T, F], `kernel` [F, 4U], `recurrent_kernel` [U, 4U], `bias` [4U], the gate
    columns in Keras's order i, f, c, o. With zero initial state, for each step t:
    `z = x_t . kernel + h . recurrent_kernel + bias`, `i, f, o = sigmoid(z_i, z_f, z_o)`,
    `c = f * c + i * tanh(z_c)`, `h = o * tanh(c)`. The result is h of every step [N, T, U]
    (`return_sequences`) or of the last one [N, U].

    ```mlir
    %h = graph.lstm %x, %w, %r, %b {return_sequences}
        : (tensor<128x28x28xf32>, tensor<28x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>)
        -> tensor<128x28x256xf32>
    ```
  }];
  // Under mixed precision the input, both kernels and the result are bf16 (oneDNN's bf16
  // LSTM writes bf16 h); the bias stays f32.
  let arguments = (ins Graph_FactorTensor:$input, Graph_FactorTensor:$kernel,
                       Graph_FactorTensor:$recurrent_kernel, Graph_F32Tensor:$bias,
                       UnitAttr:$return_sequences);
  let results = (outs Graph_FactorTensor:$result);
  let assemblyFormat = "$input `,` $kernel `,` $recurrent_kernel `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_DropoutOp : Graph_Op<"dropout", [Graph_StepForm, Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient, SameOperandsAndResultType]> {
  let summary = "inverted dropout: zeroes elements with probability `rate` while training";
  let description = [{
    In the train step each element is kept with probability 1 - rate and scaled by
    1 / (1 - rate); the mask is drawn per step and per sample row from the run's seed, so a
    data-parallel run draws the same masks as one device. In the eval step it is the identity.

    ```mlir
    %d = graph.dropout %h {rate = 5.0e-01} : tensor<128x256xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, F64Attr:$rate);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_SoftmaxCrossEntropyOp : Graph_Op<"softmax_cross_entropy", [DeclareOpInterfaceMethods<LossOpInterface>, Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure, Graph_Gradient]> {
  let summary = "mean softmax cross-entropy of logits against integer labels";
  let description = [{
    `logits` is [N, C], `labels` [N] with values in [0, C). The result is the mean over the
    batch of -log(softmax(logits)[label]), a scalar. (Keras's softmax output layer with sparse
    categorical cross-entropy, computed stably from the logits.) With `label_smoothing` s in
    [0, 1], each row's target is `(1 - s) onehot(label) + s / C` and its loss
    `-((1 - s) log p[label] + s mean_j log p[j])` (PyTorch's and Keras's label_smoothing).

    ```mlir
    %loss = graph.softmax_cross_entropy %logits, %label {label_smoothing = 0.1}
        : (tensor<100x10xf32>, tensor<100xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_I32Tensor:$labels,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Graph_F32Scalar:$loss);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MeanSquaredErrorOp : Graph_Op<"mean_squared_error", [DeclareOpInterfaceMethods<LossOpInterface>, Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure, Graph_Gradient]> {
  let summary = "mean squared error of predictions against float targets (regression)";
  let description = [{
    `prediction` and `target` are [N, K] f32. The result is the mean over the batch's
    elements of (prediction - target)^2, a scalar: the sum over the rows and the K columns
    divided by N K (PyTorch's `MSELoss()`, Keras's `mean_squared_error`). A model with this
    loss has no accuracy: its steps return no `correct` count.

    ```mlir
    %loss = graph.mean_squared_error %y, %target
        : (tensor<100x16xf32>, tensor<100x16xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$prediction, Graph_F32Tensor:$target);
  let results = (outs Graph_F32Scalar:$loss);
  let assemblyFormat = "$prediction `,` $target attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_SigmoidCrossEntropyOp : Graph_Op<"sigmoid_cross_entropy", [DeclareOpInterfaceMethods<LossOpInterface>, Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure, Graph_Gradient]> {
  let summary = "mean binary cross-entropy of logits against float targets";
  let description = [{
    `logits` and `targets` are [N, K] f32, each target in [0, 1] (a label 0 or 1, or a soft
    one). The result is the mean over the batch's elements of the binary cross-entropy of
    sigmoid(logit) against its target, computed stably from the logit as
    `max(x, 0) - x t + log(1 + exp(-|x|))` (PyTorch's `BCEWithLogitsLoss()`, Keras's
    `BinaryCrossentropy(from_logits=True)`): K independent yes/no outputs per sample. The
    steps count right answers with `graph.count_binary_correct` (binary accuracy).

    ```mlir
    %loss = graph.sigmoid_cross_entropy %logits, %targets
        : (tensor<100x2xf32>, tensor<100x2xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_F32Tensor:$targets);
  let results = (outs Graph_F32Scalar:$loss);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_CountBinaryCorrectOp : Graph_Op<"count_binary_correct", [Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure]> {
  let summary = "rows' right yes/no answers: binary accuracy's count";
  let description = [{
    `logits` and `targets` [N, K]; the result, a scalar f32, is the sum over the rows of the
    fraction of their K outputs whose prediction (logit > 0) agrees with the target (> 0.5),
    so that the accuracy, the count over N, is Keras's `binary_accuracy`. Not differentiable.

    ```mlir
    %c = graph.count_binary_correct %logits, %targets
        : (tensor<100x2xf32>, tensor<100x2xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_F32Tensor:$targets);
  let results = (outs Graph_F32Scalar:$result);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_CountCorrectOp : Graph_Op<"count_correct", [Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure]> {
  let summary = "number of rows whose largest logit is at the label";
  let description = [{
    `logits` [N, C] and `labels` [N]; the result is a scalar f32 count. Not differentiable.

    ```mlir
    %c = graph.count_correct %logits, %label : (tensor<100x10xf32>, tensor<100xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_I32Tensor:$labels);
  let results = (outs Graph_F32Scalar:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Train-time forms (graph-derive-steps)
//===----------------------------------------------------------------------===//

def Graph_BatchMomentsOp : Graph_Op<"batch_moments", [StopsGradient, Graph_Lowering, Graph_GlobalStatistic, Graph_ReducesBatch, Pure]> {
  let summary = "per-channel mean and mean of squares of a batch";
  let description = [{
    `input` is [..., C], every axis but the last a row; the result is [2, C]: the mean and the
    mean of the squares over the rows. Means (not a variance) so that the moments of equal
    shards combine by averaging. Autodiff does not differentiate through it: the
    `graph.batch_norm_train` that reads it accounts for the dependence in its own gradient.

    ```mlir
    %s = graph.batch_moments %x : tensor<8x16x16x64xf32> -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_BatchNormTrainOp : Graph_Op<"batch_norm_train",
    [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient, AllTypesMatch<["input", "result"]>]> {
  let summary = "batch normalisation with the statistics of the batch";
  let description = [{
    `gamma * (x - mean) / sqrt(var + epsilon) + beta` with `mean = stats[0]` and
    `var = stats[1] - mean^2`, `stats` the `graph.batch_moments` of `input`.

    ```mlir
    %y = graph.batch_norm_train %x, %s, %gamma, %beta {epsilon = 1.0e-03}
        : (tensor<8x16x16x64xf32>, tensor<2x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> tensor<8x16x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$stats, Graph_F32Tensor:$gamma,
                       Graph_F32Tensor:$beta, F64Attr:$epsilon);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $stats `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MovingStatsUpdateOp : Graph_Op<"moving_stats_update",
    [Graph_Lowering, Graph_BatchSharding, AllTypesMatch<["moving_mean", "moving_var"]>]> {
  let summary = "moving averages of the batch statistics, in place";
  let description = [{
    `moving_mean = momentum * moving_mean + (1 - momentum) * stats[0]`, and the same for
    `moving_var` with the batch variance `stats[1] - stats[0]^2`.

    ```mlir
    graph.moving_stats_update %mean, %var, %s {momentum = 9.9e-01}
        : tensor<64xf32>, tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$moving_mean, Graph_F32Tensor:$moving_var,
                       Graph_F32Tensor:$stats, F64Attr:$momentum);
  let assemblyFormat = "$moving_mean `,` $moving_var `,` $stats attr-dict `:` type($moving_mean) `,` type($stats)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ops of the backward pass
//===----------------------------------------------------------------------===//

def Graph_AddOp : Graph_Op<"add", [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient, SameOperandsAndResultType]> {
  let summary = "elementwise sum";
  let description = [{
    ```mlir
    %c = graph.add %a, %b : tensor<100x10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$lhs, Graph_F32Tensor:$rhs);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Graph_BiasAddOp : Graph_Op<"bias_add", [Graph_Lowering, Graph_ShardingRule, Pure, Graph_Gradient]> {
  let summary = "a tensor added to every sample: input + bias, bias broadcast over the leading axes";
  let description = [{
    `bias` has the shape of `input`'s trailing axes (at least the batch axis is left out); it
    is added to each of `input`'s slices of that shape. A vision transformer's position
    embedding `[T, D]` is added to every sample of `[N, T, D]` tokens. The bias's gradient is
    the sum of the result's over the leading axes.

    ```mlir
    %y = graph.bias_add %x, %pos : (tensor<8x49x128xf32>, tensor<49x128xf32>) -> tensor<8x49x128xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$bias);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $bias attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MulOp : Graph_Op<"mul", [Graph_Lowering, Graph_ShardingRule, Pure, Graph_Gradient]> {
  let summary = "elementwise product, the right operand broadcast along its axes of size 1";
  let description = [{
    `rhs` has the rank of `lhs`, and each of its axes is `lhs`'s or of size 1, along which it
    is repeated (ONNX's and NumPy's broadcasting, one-sided). A squeeze-and-excitation block
    scales each channel of its image by a weight computed from the image:
    `[N, H, W, C] * [N, 1, 1, C]`. The gradient for `lhs` is `dy * rhs` (the same product);
    for `rhs`, `graph.mul_reduce` of `dy` and `lhs`.

    ```mlir
    %y = graph.mul %x, %s : (tensor<8x4x4x16xf32>, tensor<8x1x1x16xf32>) -> tensor<8x4x4x16xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$lhs, Graph_F32Tensor:$rhs);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MulReduceOp : Graph_Op<"mul_reduce", [Graph_Lowering, Graph_ShardingRule, Pure]> {
  let summary = "the product of two tensors summed over the result's axes of size 1";
  let description = [{
    `lhs` and `rhs` have one shape; the result has their rank, each axis theirs or of size 1,
    and holds the sum of `lhs * rhs` over the axes where it has size 1: the gradient of
    `graph.mul`'s broadcast operand.

    ```mlir
    %ds = graph.mul_reduce %dy, %x : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x1x1x16xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$lhs, Graph_F32Tensor:$rhs);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Graph_Lowering, Graph_ShardingRule, Pure, Graph_Gradient]> {
  let summary = "rows of a table picked by integer indices: an embedding lookup";
  let description = [{
    `table` is [V, D], `indices` integers of any shape with values in [0, V); the result has
    the indices' shape and a last axis D: row `indices[i...]` of the table (PyTorch's
    `nn.Embedding`, ONNX's `Gather` on axis 0). An index outside [0, V) gives a row of NaN
    (the data loader refuses such samples first). The table's gradient is
    `graph.gather_grad`, a scatter-add; the indices have none.

    ```mlir
    %e = graph.gather %table, %tokens : (tensor<256x8xf32>, tensor<32x784xi32>) -> tensor<32x784x8xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$table, Graph_I32Tensor:$indices);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$table `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherGradOp : Graph_Op<"gather_grad", [Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure]> {
  let summary = "the gradient of graph.gather for its table: a scatter-add";
  let description = [{
    `grad` has the indices' shape and a last axis D; the result is the table's [V, D]: row v
    holds the sum of the rows of `grad` whose index is v (zero for a row no index picks),
    summed in the order of the indices. Indices outside [0, V) add nothing.

    ```mlir
    %dt = graph.gather_grad %de, %tokens : (tensor<32x784x8xf32>, tensor<32x784xi32>) -> tensor<256x8xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$grad, Graph_I32Tensor:$indices);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$grad `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "elementwise conversion between f32 and bf16";
  let description = [{
    The same shape in the other element type; towards bf16 the values are rounded to
    nearest even. `graph-mixed-precision` places these before the products it runs in bf16.

    ```mlir
    %xb = graph.cast %x : tensor<128x784xf32> to tensor<128x784xbf16>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$input);
  let results = (outs Graph_FactorTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
}

def Graph_FillOp : Graph_Op<"fill", [Graph_Lowering, Pure]> {
  let summary = "a tensor with every element equal to `value`";
  let description = [{
    ```mlir
    %one = graph.fill 1.0 : tensor<f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def Graph_MatMulOp : Graph_Op<"matmul", [Graph_MixedPrecision, Graph_Lowering, Graph_ShardingRule, Pure]> {
  let summary = "2-D matrix product with optional transposes";
  let description = [{
    `op(lhs) . op(rhs)` where op transposes its operand when the flag is set.

    ```mlir
    %dw = graph.matmul %x, %dy {transpose_lhs}
        : (tensor<100x784xf32>, tensor<100x100xf32>) -> tensor<784x100xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$lhs, Graph_FactorTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_BatchMatMulOp : Graph_Op<"batch_matmul", [Graph_MixedPrecision, Graph_Lowering, Graph_ShardingRule, Pure, Graph_Gradient]> {
  let summary = "matrix products over the leading axes, scaled: alpha * op(lhs) . op(rhs)";
  let description = [{
    `lhs` and `rhs` have one rank (at least 3) and the same sizes on every axis but the last
    two; for each index of those leading axes the result holds the product of the two
    matrices there, op transposing its operand's matrices when the flag is set, times `alpha`
    (default 1). Attention's scores are `batch_matmul %q, %k {transpose_rhs, alpha = 1/sqrt(d)}`
    of [N, heads, T, d] tensors. Under data parallelism both operands carry the batch.

    ```mlir
    %s = graph.batch_matmul %q, %k {transpose_rhs, alpha = 0.17677669529663687 : f64}
        : (tensor<8x4x49x32xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x49xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$lhs, Graph_FactorTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       DefaultValuedAttr<F64Attr, "1.0">:$alpha);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ReduceRowsOp : Graph_Op<"reduce_rows", [Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure]> {
  let summary = "sum over the leading (batch) axis";
  let description = [{
    [N, d1, ...] becomes [d1, ...]: the gradient of a broadcast bias.

    ```mlir
    %db = graph.reduce_rows %dy : tensor<100x10xf32> -> tensor<10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ActivationGradOp : Graph_Op<"activation_grad",
    [Graph_Lowering, Graph_BatchSharding, Pure, AllTypesMatch<["output", "grad", "result"]>]> {
  let summary = "gradient through an activation, from its output";
  let description = [{
    Given the activation's forward output `output` and the gradient `grad` with respect to it,
    returns the gradient with respect to its input: relu `grad * (output > 0)`, sigmoid
    `grad * output * (1 - output)`, tanh `grad * (1 - output^2)`, softmax (last axis)
    `output * (grad - sum(grad * output))`.

    ```mlir
    %dx = graph.activation_grad %y, %dy {activation = #graph.act<sigmoid>} : tensor<100x100xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$output, Graph_F32Tensor:$grad,
                       Graph_ActivationAttr:$activation);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_SoftmaxCrossEntropyGradOp : Graph_Op<"softmax_cross_entropy_grad", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of the mean softmax cross-entropy with respect to the logits";
  let description = [{
    `(softmax(logits) - onehot(labels)) * loss_grad / N`.

    ```mlir
    %dl = graph.softmax_cross_entropy_grad %logits, %label, %one
        : (tensor<100x10xf32>, tensor<100xi32>, tensor<f32>) -> tensor<100x10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_I32Tensor:$labels,
                       Graph_F32Scalar:$loss_grad, OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$logits `,` $labels `,` $loss_grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_SigmoidCrossEntropyGradOp : Graph_Op<"sigmoid_cross_entropy_grad", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of the binary cross-entropy with respect to the logits";
  let description = [{
    `(sigmoid(logits) - targets) * loss_grad / (N K)`, the logits' shape.

    ```mlir
    %dz = graph.sigmoid_cross_entropy_grad %z, %t, %one
        : (tensor<100x2xf32>, tensor<100x2xf32>, tensor<f32>) -> tensor<100x2xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$logits, Graph_F32Tensor:$targets,
                       Graph_F32Scalar:$loss_grad);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$logits `,` $targets `,` $loss_grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MeanSquaredErrorGradOp : Graph_Op<"mean_squared_error_grad", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of the mean squared error with respect to the predictions";
  let description = [{
    `2 (prediction - target) * loss_grad / (N K)`, the prediction's shape.

    ```mlir
    %dy = graph.mean_squared_error_grad %y, %target, %one
        : (tensor<100x16xf32>, tensor<100x16xf32>, tensor<f32>) -> tensor<100x16xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$prediction, Graph_F32Tensor:$target,
                       Graph_F32Scalar:$loss_grad);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$prediction `,` $target `,` $loss_grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_Conv2DGradInputOp : Graph_Op<"conv2d_grad_input", [Graph_MixedPrecision, Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of a 2-D convolution with respect to its input";
  let description = [{
    `grad` is the gradient [N, OH, OW, F] of the convolution's pre-activation output,
    `kernel` its [KH, KW, C / groups, F] kernel; the result is the input's shape [N, H, W, C],
    which together with `strides`, `padding`, `groups` and `dilations` identifies the forward
    convolution.

    ```mlir
    %dx = graph.conv2d_grad_input %dz, %w {strides = [1, 1], padding = "valid"}
        : (tensor<64x11x11x64xf32>, tensor<3x3x32x64xf32>) -> tensor<64x13x13x32xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$grad, Graph_FactorTensor:$kernel,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedStrAttr<StrAttr, "valid">:$padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$grad `,` $kernel attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_Conv2DGradFilterOp : Graph_Op<"conv2d_grad_filter", [Graph_MixedPrecision, Graph_Lowering, Graph_BatchSharding, Graph_ReducesBatch, Pure]> {
  let summary = "gradient of a 2-D convolution with respect to its kernel";
  let description = [{
    `input` is the convolution's input [N, H, W, C], `grad` the gradient [N, OH, OW, F] of its
    pre-activation output; the result is the kernel's shape [KH, KW, C / groups, F] (a sum
    over the batch).

    ```mlir
    %dw = graph.conv2d_grad_filter %x, %dz {strides = [1, 1], padding = "valid"}
        : (tensor<64x13x13x32xf32>, tensor<64x11x11x64xf32>) -> tensor<3x3x32x64xf32>
    ```
  }];
  let arguments = (ins Graph_FactorTensor:$input, Graph_FactorTensor:$grad,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$strides,
                       DefaultValuedStrAttr<StrAttr, "valid">:$padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<I64ArrayAttr, "{1, 1}">:$dilations);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_MaxPool2DGradOp : Graph_Op<"max_pool2d_grad", [Graph_Lowering, Graph_BatchSharding, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "gradient of 2-D max pooling with respect to its input";
  let description = [{
    Routes each element of `grad` (the pooled output's gradient) to the first largest element
    of its window in the forward `input`; the result has the input's shape.

    ```mlir
    %dx = graph.max_pool2d_grad %h, %dp {window = [2, 2], strides = [2, 2]}
        : (tensor<64x26x26x32xf32>, tensor<64x13x13x32xf32>) -> tensor<64x26x26x32xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$grad,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$window,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$strides);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_DropoutGradOp : Graph_Op<"dropout_grad", [Graph_Lowering, Graph_BatchSharding, Pure, AllTypesMatch<["output", "grad", "result"]>]> {
  let summary = "gradient of dropout: the incoming gradient under the forward step's mask";
  let description = [{
    `output` is the result of the `graph.dropout` being differentiated (its mask is the one
    applied here), `grad` the gradient with respect to it: `grad * mask / (1 - rate)`.

    ```mlir
    %dx = graph.dropout_grad %d, %dd {rate = 5.0e-01} : tensor<128x256xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$output, Graph_F32Tensor:$grad, F64Attr:$rate);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$output `,` $grad attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_ZeroPad2DGradOp : Graph_Op<"zero_pad2d_grad", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of zero padding: the interior of the incoming gradient";
  let description = [{
    ```mlir
    %dx = graph.zero_pad2d_grad %dp {padding = [3, 3, 3, 3]}
        : tensor<8x38x38x3xf32> -> tensor<8x32x32x3xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$grad, I64ArrayAttr:$padding);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_AvgPool2DGradOp : Graph_Op<"avg_pool2d_grad", [Graph_Lowering, Graph_BatchSharding, Pure]> {
  let summary = "gradient of 2-D average pooling with respect to its input";
  let description = [{
    Spreads each element of `grad` [N, OH, OW, C] evenly over its window; the result has the
    forward input's shape [N, H, W, C].

    ```mlir
    %dx = graph.avg_pool2d_grad %dp {window = [2, 2], strides = [2, 2]}
        : tensor<64x13x13x32xf32> -> tensor<64x26x26x32xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$grad,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$window,
                       DefaultValuedAttr<I64ArrayAttr, "{2, 2}">:$strides);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_BatchNormGradParamsOp : Graph_Op<"batch_norm_grad_params", [Graph_Lowering, Graph_GlobalStatistic, Graph_ReducesBatch, Pure]> {
  let summary = "gradients of batch_norm_train's gamma and beta";
  let description = [{
    `gamma_grad = sum(grad * xhat)`, `beta_grad = sum(grad)` over the rows, with
    `xhat = (x - mean) / sqrt(var + epsilon)`.

    ```mlir
    %dg, %db = graph.batch_norm_grad_params %x, %s, %dy {epsilon = 1.0e-03}
        : (tensor<8x16x16x64xf32>, tensor<2x64xf32>, tensor<8x16x16x64xf32>)
        -> (tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$stats, Graph_F32Tensor:$grad,
                       F64Attr:$epsilon);
  let results = (outs Graph_F32Tensor:$gamma_grad, Graph_F32Tensor:$beta_grad);
  let assemblyFormat = "$input `,` $stats `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_BatchNormGradInputOp : Graph_Op<"batch_norm_grad_input",
    [Graph_Lowering, Graph_BatchSharding, Pure, AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "gradient of batch_norm_train with respect to its input";
  let description = [{
    The statistics' dependence on the input included:
    `gamma / sqrt(var + epsilon) * (grad - (beta_grad + xhat * gamma_grad) / rows)`, where
    `gamma_grad` and `beta_grad` are the sums of `graph.batch_norm_grad_params` and `rows` the
    number of rows of `input`.

    ```mlir
    %dx = graph.batch_norm_grad_input %x, %s, %gamma, %dg, %db, %dy {epsilon = 1.0e-03}
        : (tensor<8x16x16x64xf32>, tensor<2x64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<64xf32>, tensor<8x16x16x64xf32>) -> tensor<8x16x16x64xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$stats, Graph_F32Tensor:$gamma,
                       Graph_F32Tensor:$gamma_grad, Graph_F32Tensor:$beta_grad,
                       Graph_F32Tensor:$grad, F64Attr:$epsilon);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $stats `,` $gamma `,` $gamma_grad `,` $beta_grad `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_LstmGradOp : Graph_Op<"lstm_grad", [DeclareOpInterfaceMethods<MixedPrecisionOpInterface, ["readsLowPrecisionResultAsIs"]>, Graph_Lowering, Graph_ShardingRule, Pure]> {
  let summary = "gradients of an LSTM layer";
  let description = [{
    `output` is the result of the `graph.lstm` being differentiated (with the same operands),
    `grad` the gradient with respect to it; the results are the gradients of the input, the
    kernel, the recurrent kernel and the bias (back-propagation through time).

    ```mlir
    %dx, %dw, %dr, %db = graph.lstm_grad %x, %w, %r, %b, %h, %dh {return_sequences}
        : (tensor<128x28x28xf32>, tensor<28x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>,
           tensor<128x28x256xf32>, tensor<128x28x256xf32>)
        -> (tensor<128x28x28xf32>, tensor<28x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>)
    ```
  }];
  // The gradients are f32 whatever the forward computed in; `grad` is f32.
  let arguments = (ins Graph_FactorTensor:$input, Graph_FactorTensor:$kernel,
                       Graph_FactorTensor:$recurrent_kernel, Graph_F32Tensor:$bias,
                       Graph_FactorTensor:$output, Graph_F32Tensor:$grad,
                       UnitAttr:$return_sequences);
  let results = (outs Graph_F32Tensor:$input_grad, Graph_F32Tensor:$kernel_grad,
                      Graph_F32Tensor:$recurrent_kernel_grad, Graph_F32Tensor:$bias_grad);
  let assemblyFormat = "$input `,` $kernel `,` $recurrent_kernel `,` $bias `,` $output `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients and optimizer updates
//===----------------------------------------------------------------------===//

def Graph_ApplyGradientOp : Graph_Op<"apply_gradient", [Graph_BatchSharding, ParameterUpdateOpInterface, AllTypesMatch<["param", "gradient"]>]> {
  let summary = "the gradient of a parameter is ready for the optimizer";
  let description = [{
    Autodiff emits one per trainable parameter; passes that act on gradients (averaging across
    replicas) rewrite `gradient`, and optimizer expansion replaces the op with update ops.

    ```mlir
    graph.apply_gradient %w, %dw : tensor<784x100xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$param, Graph_F32Tensor:$gradient);
  let assemblyFormat = "$param `,` $gradient attr-dict `:` type($param)";
  let hasVerifier = 1;
}

def Graph_SgdUpdateOp : Graph_Op<"sgd_update", [Graph_Lowering, ParameterUpdateOpInterface, Graph_BatchSharding, AllTypesMatch<["param", "gradient"]>]> {
  let summary = "param -= lr * gradient, in place";
  let description = [{
    Every update with a `weight_decay` first decays the parameter, decoupled from the
    gradient: `param -= lr * weight_decay * param`, lr the step's scheduled rate (Keras 3's
    weight_decay; PyTorch's AdamW). Every update with a `scale` (a `tensor<f32>`, the
    `graph.clip_factor` that dist-clip-gradients places) reads `gradient * scale` in place of
    `gradient`.

    ```mlir
    graph.sgd_update %w, %dw {lr = 1.0e-01} : tensor<784x100xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$param, Graph_F32Tensor:$gradient,
                       Optional<Graph_F32Tensor>:$scale, F64Attr:$lr,
                       OptionalAttr<F64Attr>:$weight_decay);
  let assemblyFormat = "$param `,` $gradient (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict `:` type($param)";
  let hasVerifier = 1;
}

def Graph_MomentumUpdateOp : Graph_Op<"momentum_update",
    [Graph_Lowering, ParameterUpdateOpInterface, Graph_BatchSharding, AllTypesMatch<["param", "velocity", "gradient"]>]> {
  let summary = "momentum step on a parameter and its velocity, in place";
  let description = [{
    `v = momentum * v - lr * g; param += v` (Nesterov: `param += momentum * v - lr * g`).

    ```mlir
    graph.momentum_update %w, %v, %dw {lr = 1.0e-02, momentum = 9.0e-01} : tensor<10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$param, Graph_F32Tensor:$velocity,
                       Graph_F32Tensor:$gradient, Optional<Graph_F32Tensor>:$scale,
                       F64Attr:$lr, F64Attr:$momentum,
                       UnitAttr:$nesterov, OptionalAttr<F64Attr>:$weight_decay);
  let assemblyFormat = "$param `,` $velocity `,` $gradient (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict `:` type($param)";
  let hasVerifier = 1;
}

def Graph_AdamUpdateOp : Graph_Op<"adam_update",
    [Graph_Lowering, ParameterUpdateOpInterface, Graph_BatchSharding, AllTypesMatch<["param", "m", "v", "gradient"]>]> {
  let summary = "Adam step on a parameter and its two moments, in place";
  let description = [{
    With the 1-based step t: `m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
    param -= lr sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + epsilon)` (Keras); with
    `torch_epsilon`, epsilon is added to the bias-corrected sqrt(v) (PyTorch): the same with
    epsilon sqrt(1-b2^t) in its place.

    ```mlir
    graph.adam_update %w, %m, %v, %dw {lr = 1.0e-03, beta1 = 9.0e-01, beta2 = 9.990e-01,
        epsilon = 1.0e-07} : tensor<10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$param, Graph_F32Tensor:$m, Graph_F32Tensor:$v,
                       Graph_F32Tensor:$gradient, Optional<Graph_F32Tensor>:$scale,
                       F64Attr:$lr, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$epsilon, UnitAttr:$torch_epsilon,
                       OptionalAttr<F64Attr>:$weight_decay);
  let assemblyFormat = "$param `,` $m `,` $v `,` $gradient (`scale` `(` $scale^ `:` type($scale) `)`)? attr-dict `:` type($param)";
  let hasVerifier = 1;
}

def Graph_ClipFactorOp : Graph_Op<"clip_factor", [Graph_Lowering, Pure]> {
  let summary = "the scale that clips gradients to a global norm";
  let description = [{
    `min(1, max_norm / (norm + 1e-6))`, `norm` the square root of the sum of the squares of
    every element of every operand (PyTorch's `clip_grad_norm_`). dist-clip-gradients places
    one per replica, on the gradients its updates read after the allreduce, and hands the
    factor to each update as its `scale`: every replica clips by the same norm, that of the
    averaged gradient. The sum is formed in double in an order fixed by the sizes alone.

    ```mlir
    %f = graph.clip_factor %dw, %db {max_norm = 1.0} : tensor<784x100xf32>, tensor<100xf32>
        -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Graph_F32Tensor>:$gradients, F64Attr:$max_norm);
  let results = (outs 0DTensorOf<[F32]>:$result);
  let assemblyFormat = "$gradients attr-dict `:` type($gradients) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Concatenation and layer normalisation (each family's rules: Ops/<Family>.cpp)
//===----------------------------------------------------------------------===//

def Graph_ConcatOp : Graph_Op<"concat", [Pure, Graph_Gradient, Graph_Lowering,
    Graph_ShardingRule]> {
  let summary = "tensors joined along one axis";
  let description = [{
    The inputs (f32 or i32, one element type) have one rank and equal sizes on every axis
    but `axis`; the result's `axis` is the sum of theirs, the inputs in order along it.

    Under data parallelism every input must carry the batch or none may. Along a feature
    axis each replica joins its rows; along the batch axis (0) each replica stacks its own
    rows of every input, so the replicas together hold the global result's rows in another
    order. Row-wise ops and losses that are means over the rows do not see the order; a
    concatenation of the labels along the batch keeps every row with its label.

    ```mlir
    %y = graph.concat %a, %b {axis = 1 : i64}
        : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def Graph_SplitOp : Graph_Op<"split", [Pure, Graph_Gradient, Graph_Lowering,
    Graph_ShardingRule]> {
  let summary = "consecutive pieces of a tensor along one axis: the inverse of concat";
  let description = [{
    The results' sizes along `axis` add up to the input's, every other size equal to the
    input's; result `i` is the `i`-th piece in order. The gradient of `graph.concat`.

    Under data parallelism a split along a feature axis is row-wise. Along the batch axis
    (0) a replica can only cut what it holds: `stacked` says that the input is a stack of
    the pieces along the batch (the gradient of a batch-axis `graph.concat`, where each
    replica holds its rows of every piece); a batch-axis split without it cannot be
    distributed and is an error there.

    ```mlir
    %a, %b = graph.split %y {axis = 1 : i64}
        : (tensor<8x8xf32>) -> (tensor<8x3xf32>, tensor<8x5xf32>)
    ```
  }];
  let arguments = (ins Graph_AnyTensor:$input, I64Attr:$axis, UnitAttr:$stacked);
  let results = (outs Variadic<Graph_AnyTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $results)";
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_Op<"layer_norm", [Pure, Graph_BatchSharding, Graph_Gradient,
    Graph_Lowering, AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalisation over the last axis of each sample";
  let description = [{
    `input` is [..., C], `gamma` and `beta` [C]; each row of C values is normalised with its
    own mean and variance: `gamma * (x - mean) / sqrt(var + epsilon) + beta` (Keras's
    LayerNormalization over the last axis, epsilon 1e-3 by default). The statistics are per
    sample, so a replica needs no other replica's rows: it splits along the batch as a
    row-wise op (unlike `graph.batch_norm`).

    ```mlir
    %y = graph.layer_norm %x, %gamma, %beta {epsilon = 1.0e-03}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$gamma, Graph_F32Tensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-3">:$epsilon);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_LayerNormGradOp : Graph_Op<"layer_norm_grad", [Pure, Graph_Lowering,
    Graph_ShardingRule,
    AllTypesMatch<["input", "grad", "input_grad"]>]> {
  let summary = "gradients of layer normalisation";
  let description = [{
    From the forward `input` [..., C], `gamma` [C] and the gradient `grad` of the result:
    the gradient of the input (each row's statistics' dependence on it included), and of
    gamma and beta (sums over the rows).

    ```mlir
    %dx, %dg, %db = graph.layer_norm_grad %x, %gamma, %dy {epsilon = 1.0e-03}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xf32>)
        -> (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$gamma, Graph_F32Tensor:$grad,
                       F64Attr:$epsilon);
  let results = (outs Graph_F32Tensor:$input_grad, Graph_F32Tensor:$gamma_grad,
                      Graph_F32Tensor:$beta_grad);
  let assemblyFormat = "$input `,` $gamma `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// ------------------------------------------------------------------------- pointwise ops
// y = f(x) on every element, f32, any shape (DP_POINTWISE_KERNEL of runtime/format/Kernels.def,
// f a function of runtime/kernels/Pointwise.h); the gradient op computes dx = dy * f'(x). The
// lowering and the gradient rule come with these classes, and the sharding is row-wise: a new
// pointwise op is its two defs here, its two kernels in Kernels.def and its function in
// Pointwise.h.
class Graph_PointwiseGradOp<string mnemonic, string kernel, string forward> : Graph_Op<mnemonic,
    [Graph_Lowering, Graph_BatchSharding, Pure, AllTypesMatch<["input", "grad", "result"]>]> {
  let summary = "gradient through graph." # forward;
  let description = [{
    The gradient with respect to the input `input` of graph.}] # forward # [{, given the
    gradient `grad` with respect to its result.

    ```mlir
    %dx = graph.}] # mnemonic # [{ %x, %dy : tensor<100x10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input, Graph_F32Tensor:$grad);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($result)";
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::lowerToKernels(::dp::KernelLowering &l) {
      l.kernel(*this, ::dp::rt::KernelKind::}] # kernel # [{);
      return ::mlir::success();
    }
  }];
}

class Graph_PointwiseOp<string mnemonic, string fn, string kernel, string gradOp> :
    Graph_Op<mnemonic, [Graph_Lowering, Graph_BatchSharding, Pure, Graph_Gradient,
                        SameOperandsAndResultType]> {
  let summary = fn # " applied elementwise";
  let description = [{
    Applies the function to every element.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<100x10xf32>
    ```
  }];
  let arguments = (ins Graph_F32Tensor:$input);
  let results = (outs Graph_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::lowerToKernels(::dp::KernelLowering &l) {
      l.kernel(*this, ::dp::rt::KernelKind::}] # kernel # [{);
      return ::mlir::success();
    }
    ::mlir::LogicalResult $cppClass::buildGradient(::mlir::OpBuilder &b,
        ::mlir::ValueRange resultGrads, ::llvm::ArrayRef<bool>,
        ::llvm::SmallVectorImpl<::mlir::Value> &operandGrads) {
      operandGrads.assign(1, b.create<}] # gradOp # [{>(getLoc(), getInput().getType(),
                                                      getInput(), resultGrads[0]));
      return ::mlir::success();
    }
  }];
}

def Graph_GeluOp : Graph_PointwiseOp<"gelu", "x * Phi(x) (GELU, exact erf form)", "Gelu",
                                     "GeluGradOp">;
def Graph_GeluGradOp : Graph_PointwiseGradOp<"gelu_grad", "GeluGrad", "gelu">;
def Graph_Relu6Op : Graph_PointwiseOp<"relu6", "min(max(x, 0), 6) (ReLU6)", "Relu6",
                                      "Relu6GradOp">;
def Graph_Relu6GradOp : Graph_PointwiseGradOp<"relu6_grad", "Relu6Grad", "relu6">;
def Graph_HardSigmoidOp : Graph_PointwiseOp<"hard_sigmoid", "relu6(x + 3) / 6 (hard sigmoid)",
                                            "HardSigmoid", "HardSigmoidGradOp">;
def Graph_HardSigmoidGradOp : Graph_PointwiseGradOp<"hard_sigmoid_grad", "HardSigmoidGrad",
                                                    "hard_sigmoid">;
def Graph_HardSwishOp : Graph_PointwiseOp<"hard_swish", "x * relu6(x + 3) / 6 (hard swish)",
                                          "HardSwish", "HardSwishGradOp">;
def Graph_HardSwishGradOp : Graph_PointwiseGradOp<"hard_swish_grad", "HardSwishGrad",
                                                  "hard_swish">;

#endif // DP_GRAPH_OPS
