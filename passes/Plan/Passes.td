// Passes of the plan phase.
#ifndef DP_PLAN_PASSES
#define DP_PLAN_PASSES

include "mlir/Pass/PassBase.td"

def PlanMemoryPass : Pass<"plan-memory", "mlir::ModuleOp"> {
  let summary = "Assign arena offsets to every buffer, reusing memory by liveness";
  let description = [{
    Every device has its own arena, planned separately (replicas are copies, so the arenas
    have the same size). Persistent buffers (`plan.param`, `plan.bucket`, `plan.grad`,
    `plan.input`) are laid out first, one after the other; a gradient in a bucket takes its
    slot inside the bucket. Optimizer state that one process alone holds (`plan.param` with
    `process`, state sharded over the processes) comes after them, each process's share of
    the device from the same offset: the shares lie over one another, and the largest sets
    the size. Then, for each `plan.step` separately (steps never run concurrently, so
    their transient regions overlap), every `plan.alloc` lives from its first to its last use
    (uses through `plan.view`s count, a `plan.output` keeps a buffer live to the end of the
    step) and is placed at the lowest offset that no simultaneously live buffer occupies,
    largest first; a buffer that only the kernels of one process touch (`process`: an
    owner's copies of its means under `--shard-optimizer 2`) never meets another process's,
    whatever their lifetimes. A transient bucket (`--shard-optimizer 2`) is placed so too.
    All offsets are multiples of 64 bytes. The program gets `arena_bytes` and
    `persistent_bytes`, each step its `peak_bytes` (its transient high-water mark).
  }];
}

def FoldPaddingPass : Pass<"plan-fold-padding", "mlir::ModuleOp"> {
  let summary = "Fold a zero padding into the convolutions that read it";
  let description = [{
    A `zero_pad2d` (zeros, not `lowest`) whose result only convolutions read, as their image
    (input 0 of `conv2d` and `conv2d_grad_filter`), goes: they read its input instead, with
    its padding added to their own (`pad_top` ... `pad_right`). A `zero_pad2d_grad` that
    crops the result of a single `conv2d_grad_input` goes too: that kernel writes the cropped
    gradient itself, with the padding added to its own. Keras's ResNets pad explicitly before
    their strided and 3x3 convolutions: the padded copies, their kernels and their memory go,
    and the convolutions see which of their taps read only padding (a 3x3 convolution of a
    1x1 image reads its centre alone), which the kernels then skip (contract::liveTaps).

    Before: `zero_pad2d ins(%x) outs(%xp) {pad_top = 1 ...}`,
            `conv2d ins(%xp, %w) outs(%y) {pad_top = 0 ...}`
    After:  `conv2d ins(%x, %w) outs(%y) {pad_top = 1 ...}`

    The padding's input must not change after it: no later kernel writes it, and it is
    neither a view nor viewed (writes through views are not followed). The results equal the
    unfolded plan's up to the summation order of the kernels (zero products are no longer
    added). Runs before `plan-memory`; `dpc compile --fuse none` or `--fuse epilogues` skips
    it.
  }];
}

def FuseEpiloguesPass : Pass<"plan-fuse-epilogues", "mlir::ModuleOp"> {
  let summary = "Run a relu that follows a batch normalisation, a bias added to a dense product, and a cast to bf16 after a layer normalisation, transpose or activation gradient, inside their kernels";
  let description = [{
    A `batch_norm_train` or `batch_norm_infer` kernel whose result is read only by an
    `activation {activation = "relu"}` kernel writes that kernel's result itself, with
    `{activation = "relu"}` (y = max(0, ...), computed as the values are written), and the
    activation kernel and the normalisation's own result buffer go: one kernel and one pass
    over the activations fewer per pair (ResNet50V2's 49 pre-activation blocks, in both steps).
    The relu's gradient reads the relu's result, which stays. The results are bit for bit the
    unfused kernels'. Runs before `plan-memory`. A normalisation whose result is also read elsewhere (a residual, a step
    output, a view) is left alone, as is any other activation. `dpc compile --fuse none` (or
    `--fuse padding`) skips the pass: the unfused plan, for the equivalence tests.

    A `dense` product without a bias or an activation whose result is read only by an
    `add_rows` (directly, or through one `plan.view`) adding an f32 vector of the product's
    column count to every row takes that vector as its bias, and writes the sum's buffer
    (through a view of the product's shape when the sum's differs): the bias is added as the
    product is written (a oneDNN matmul's bias), and one kernel and one pass over the
    activations go. ONNX models write a Linear as MatMul then Add: the vision transformer's 24
    in each step. The vector must not be written, nor the sum's buffer touched, between the
    two. The sums round once as before: the results equal the unfused plan's to float
    rounding (the library may add the bias inside its accumulation).

    Under mixed precision, a `layer_norm`, a `transpose` or an `activation_grad` whose f32
    result only a `cast` to bf16 reads (directly, or through a chain of `plan.view`s) writes the
    cast's bf16 buffer itself (through a view of its result's shape when the copy's differs),
    and the cast, the views and the f32 buffer go: mixed precision's copies of the normalised
    tokens, of attention's heads and outputs and of the softmax's gradients for the products
    (the vision transformer's 36 in the train step). The kernel contracts allow these kinds (and
    `cast`) a bf16 result of f32 inputs. The copy's buffer must not be used before the cast but
    by it. The transpose and the activation gradient round as the cast did (the transpose's
    library may flush subnormals to zero); the layer normalisation computes in its own kernel
    and rounds once, so a value may land one bf16 unit apart.
  }];
}

def AssignLayoutsPass : Pass<"plan-assign-layouts", "mlir::ModuleOp"> {
  let summary = "Choose the layout each convolution kernel reads its weights in";
  let description = [{
    Parameters, gradients and optimizer state are stored in one canonical layout (HWIO for a
    convolution's kernel): checkpoints, `--save-params` and ONNX export read them as they are.
    A convolution kernel (`conv2d`, `conv2d_grad_input`, `conv2d_grad_filter`) either works on
    the stored weights (`plain_weights = 1`), or on a copy in the library's blocked layout
    (oneDNN's `OIhw16i16o` and kin), which it reorders from the weights (or, for the filter
    gradient, into the gradient) on every call. This pass chooses, per kernel, from the
    kernel's live window of taps (runtime/format/ConvGeometry.h) and its size, and writes
    `plain_weights` 0 or 1 on every convolution kernel, so that the dumps show each choice:

    - a product of matrices (a 1x1 live window at stride 1, unpadded, one group): plain, it
      runs as a matrix product on the stored weights, with no reorder;
    - `conv2d` and `conv2d_grad_input` in f32 with fewer than `conv-min-rows` output rows
      (of the forward convolution: a device's batch x height x width), one group, a dense
      window: plain. Such a convolution reads more weight than it computes: the reorder cost
      as much as the convolution (ResNet50V2 at 32x32, batch 16: the 2x2 and 1x1 stages'
      forward went from 42 to 29 ms per step);
    - every other kernel: blocked. The library's jit kernels on blocked weights beat its gemm
      on plain ones for larger convolutions: mnist_cnn's input gradients, 2,446 against 2,922
      samples/s for the step on an AVX-512 EPYC; bf16 input gradients 2.7x; the filter
      gradient's gemm path was slower on every ResNet stage; grouped and strided windows
      want the library's layouts.

    `weight-layouts=blocked` leaves every kernel blocked, `plain` makes every kernel with one
    group and a dense window plain: the equivalence tests compare them. Runs after the fusion
    passes (folded paddings change the live windows), before `plan-memory`. The compile report
    counts the kernels of each layout and the bytes of the blocked copies (each kernel owns
    its copy, outside the arena, and reorders it on every call).
  }];
  let options = [
    Option<"convMinRows", "conv-min-rows", "int64_t", /*default=*/"65",
           "f32 convolutions and input gradients with fewer output rows than this read the "
           "stored weights">,
    Option<"weightLayouts", "weight-layouts", "std::string", /*default=*/"\"auto\"",
           "auto (the rules above), blocked (every kernel) or plain (wherever allowed)">,
  ];
}

#endif // DP_PLAN_PASSES
