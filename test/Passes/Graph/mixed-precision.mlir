// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer "-graph-mixed-precision=precision=bf16 conv-min-rows=1" | FileCheck %s
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer -graph-mixed-precision | FileCheck %s --check-prefix=FP32
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer -graph-mixed-precision=precision=bf16 | FileCheck %s --check-prefix=ROWS
// RUN: not dp-opt %s -split-input-file -graph-mixed-precision=precision=fp16 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not dp-opt %s -split-input-file "-graph-mixed-precision=precision=bf16 conv-min-rows=-5" 2>&1 | FileCheck %s --check-prefix=ROWSBAD

// BAD: graph-mixed-precision: precision must be fp32 or bf16, not 'fp16'
// ROWSBAD: graph-mixed-precision: conv-min-rows must be at least 0, found -5

// fp32 (the default) changes nothing.
// FP32-NOT: graph.cast
// FP32-NOT: bf16

// Tests that every product reads bf16 factors: each f32 value a product reads is cast once,
// right after its definition (the input at the top of the step, a weight after its
// graph.param), and the casts are shared: the forward dense and the backward matmul of dw
// read the same cast of x and of h, both backward matmuls the same cast of the logits'
// gradient, the forward and the backward the same cast of w2. Products still return f32; the
// bias, the updates, the loss and the reduce_rows of the bias gradient stay f32.
// CHECK-LABEL: func.func @train(
// CHECK-NEXT: %[[X:.*]] = graph.cast %arg0 : tensor<8x4xf32> to tensor<8x4xbf16>
// CHECK-NEXT: %[[W:.*]] = graph.param "w"
// CHECK-NEXT: %[[WB:.*]] = graph.cast %[[W]] : tensor<4x3xf32> to tensor<4x3xbf16>
// CHECK-NEXT: %[[B:.*]] = graph.param "b" {{.*}} : tensor<3xf32>
// CHECK-NEXT: %[[H:.*]] = graph.dense %[[X]], %[[WB]], %[[B]] {{.*}} : (tensor<8x4xbf16>, tensor<4x3xbf16>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[HB:.*]] = graph.cast %[[H]] : tensor<8x3xf32> to tensor<8x3xbf16>
// CHECK-NEXT: %[[W2:.*]] = graph.param "w2"
// CHECK-NEXT: %[[W2B:.*]] = graph.cast %[[W2]] : tensor<3x2xf32> to tensor<3x2xbf16>
// CHECK-NEXT: %[[Y:.*]] = graph.dense %[[HB]], %[[W2B]] : (tensor<8x3xbf16>, tensor<3x2xbf16>) -> tensor<8x2xf32>
// CHECK-NEXT: graph.softmax_cross_entropy %[[Y]], %arg1 : (tensor<8x2xf32>
// CHECK: %[[DY:.*]] = graph.softmax_cross_entropy_grad {{.*}} -> tensor<8x2xf32>
// CHECK-NEXT: %[[DYB:.*]] = graph.cast %[[DY]] : tensor<8x2xf32> to tensor<8x2xbf16>
// CHECK-NEXT: %[[DH:.*]] = graph.matmul %[[DYB]], %[[W2B]] {transpose_rhs} : (tensor<8x2xbf16>, tensor<3x2xbf16>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[DW2:.*]] = graph.matmul %[[HB]], %[[DYB]] {transpose_lhs} : (tensor<8x3xbf16>, tensor<8x2xbf16>) -> tensor<3x2xf32>
// CHECK-NEXT: graph.sgd_update %[[W2]], %[[DW2]] {{.*}} : tensor<3x2xf32>
// CHECK-NEXT: %[[DZ:.*]] = graph.activation_grad %[[H]], %[[DH]] {{.*}} : tensor<8x3xf32>
// CHECK-NEXT: %[[DZB:.*]] = graph.cast %[[DZ]] : tensor<8x3xf32> to tensor<8x3xbf16>
// CHECK-NEXT: %[[DW:.*]] = graph.matmul %[[X]], %[[DZB]] {transpose_lhs} : (tensor<8x4xbf16>, tensor<8x3xbf16>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_rows %[[DZ]] : tensor<8x3xf32> -> tensor<3xf32>
// CHECK-NEXT: graph.sgd_update %[[W]], %[[DW]] {{.*}} : tensor<4x3xf32>
// CHECK-NEXT: graph.sgd_update %[[B]], %[[DB]] {{.*}} : tensor<3xf32>
// The eval step gets the same casts of its forward pass.
// CHECK-LABEL: func.func @eval(
// CHECK-COUNT-4: graph.cast
// CHECK-NOT: graph.cast
// CHECK: return
func.func @mlp(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %h = graph.dense %x, %w, %b {activation = #graph.act<relu>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %w2 = graph.param "w2" {init = #graph.glorot_uniform} : tensor<3x2xf32>
  %y = graph.dense %h, %w2 : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x2xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests the convolutions: the forward, the input gradient (the output gradient's cast and the
// kernel's, shared with the forward) and the kernel gradient (the forward input's cast and the
// output gradient's) all read bf16 and return f32; the relu's gradient reads the f32 output.
// CHECK-LABEL: func.func @train(
// CHECK-NEXT: %[[X:.*]] = graph.cast %arg0 : tensor<2x6x6x1xf32> to tensor<2x6x6x1xbf16>
// CHECK-NEXT: %[[W1:.*]] = graph.param "c1.kernel"
// CHECK-NEXT: %[[W1B:.*]] = graph.cast %[[W1]]
// CHECK-NEXT: %[[C1:.*]] = graph.conv2d %[[X]], %[[W1B]] {{.*}} : (tensor<2x6x6x1xbf16>, tensor<3x3x1x4xbf16>) -> tensor<2x4x4x4xf32>
// CHECK-NEXT: %[[C1B:.*]] = graph.cast %[[C1]]
// CHECK-NEXT: %[[W2:.*]] = graph.param "c2.kernel"
// CHECK-NEXT: %[[W2B:.*]] = graph.cast %[[W2]]
// CHECK-NEXT: graph.conv2d %[[C1B]], %[[W2B]] : (tensor<2x4x4x4xbf16>, tensor<3x3x4x2xbf16>) -> tensor<2x2x2x2xf32>
// CHECK: %[[G:.*]] = graph.reshape {{.*}} -> tensor<2x2x2x2xf32>
// CHECK-NEXT: %[[GB:.*]] = graph.cast %[[G]]
// CHECK-NEXT: %[[DX:.*]] = graph.conv2d_grad_input %[[GB]], %[[W2B]] : (tensor<2x2x2x2xbf16>, tensor<3x3x4x2xbf16>) -> tensor<2x4x4x4xf32>
// CHECK-NEXT: graph.conv2d_grad_filter %[[C1B]], %[[GB]] : (tensor<2x4x4x4xbf16>, tensor<2x2x2x2xbf16>) -> tensor<3x3x4x2xf32>
// CHECK: %[[DZ:.*]] = graph.activation_grad %[[C1]], %[[DX]]
// CHECK-NEXT: %[[DZB:.*]] = graph.cast %[[DZ]]
// CHECK-NEXT: graph.conv2d_grad_filter %[[X]], %[[DZB]] : (tensor<2x6x6x1xbf16>, tensor<2x4x4x4xbf16>) -> tensor<3x3x1x4xf32>
func.func @cnn(%x: tensor<2x6x6x1xf32> {graph.input = "image"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "c1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x4xf32>
  %c1 = graph.conv2d %x, %w {strides = [1, 1], padding = "valid", activation = #graph.act<relu>} : (tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32>) -> tensor<2x4x4x4xf32>
  %w2 = graph.param "c2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x4x2xf32>
  %c2 = graph.conv2d %c1, %w2 {strides = [1, 1], padding = "valid"} : (tensor<2x4x4x4xf32>, tensor<3x3x4x2xf32>) -> tensor<2x2x2x2xf32>
  %f = graph.flatten %c2 : tensor<2x2x2x2xf32> -> tensor<2x8xf32>
  %loss = graph.softmax_cross_entropy %f, %l : (tensor<2x8xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests the LSTM: its input and kernels are cast (the bias stays f32) and its result becomes
// bf16 (oneDNN's bf16 LSTM writes bf16 h). The next LSTM and both lstm_grads read that result
// as it is; the loss reads it through one cast back to f32. The lstm_grads read the casts
// their LSTMs read, take f32 gradients and return f32 gradients.
// CHECK-LABEL: func.func @train(
// CHECK-NEXT: %[[X:.*]] = graph.cast %arg0 : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[W:.*]] = graph.param "l1.kernel"
// CHECK-NEXT: %[[WB:.*]] = graph.cast %[[W]]
// CHECK-NEXT: %[[R:.*]] = graph.param "l1.recurrent_kernel"
// CHECK-NEXT: %[[RB:.*]] = graph.cast %[[R]]
// CHECK-NEXT: %[[B:.*]] = graph.param "l1.bias" {{.*}} : tensor<20xf32>
// CHECK-NEXT: %[[H:.*]] = graph.lstm %[[X]], %[[WB]], %[[RB]], %[[B]] {return_sequences} : (tensor<2x3x4xbf16>, tensor<4x20xbf16>, tensor<5x20xbf16>, tensor<20xf32>) -> tensor<2x3x5xbf16>
// CHECK-NOT: graph.cast %[[H]]
// CHECK: %[[H2:.*]] = graph.lstm %[[H]], {{.*}} -> tensor<2x3xbf16>
// CHECK-NEXT: %[[WIDE:.*]] = graph.cast %[[H2]] : tensor<2x3xbf16> to tensor<2x3xf32>
// CHECK-NEXT: graph.softmax_cross_entropy %[[WIDE]], %arg1
// CHECK: %[[DY:.*]] = graph.softmax_cross_entropy_grad
// CHECK: %[[DH:.*]], %{{.*}}, %{{.*}}, %{{.*}} = graph.lstm_grad %[[H]], {{.*}}, %[[H2]], %[[DY]] : (tensor<2x3x5xbf16>, tensor<5x12xbf16>, tensor<3x12xbf16>, tensor<12xf32>, tensor<2x3xbf16>, tensor<2x3xf32>) -> (tensor<2x3x5xf32>, tensor<5x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
// CHECK: graph.lstm_grad %[[X]], %[[WB]], %[[RB]], %[[B]], %[[H]], %[[DH]] {return_sequences}
func.func @rnn(%x: tensor<2x3x4xf32> {graph.input = "x"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "l1.kernel" {init = #graph.glorot_uniform} : tensor<4x20xf32>
  %r = graph.param "l1.recurrent_kernel" {init = #graph.orthogonal} : tensor<5x20xf32>
  %b = graph.param "l1.bias" {init = #graph.zeros} : tensor<20xf32>
  %h = graph.lstm %x, %w, %r, %b {return_sequences} : (tensor<2x3x4xf32>, tensor<4x20xf32>, tensor<5x20xf32>, tensor<20xf32>) -> tensor<2x3x5xf32>
  %w2 = graph.param "l2.kernel" {init = #graph.glorot_uniform} : tensor<5x12xf32>
  %r2 = graph.param "l2.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  %b2 = graph.param "l2.bias" {init = #graph.zeros} : tensor<12xf32>
  %h2 = graph.lstm %h, %w2, %r2, %b2 : (tensor<2x3x5xf32>, tensor<5x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %h2, %l : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests conv-min-rows (default 65): the convolutions with 8x6x6 and 8x4x4 output rows read
// bf16; the one with 8x2x2 = 32 rows, its input gradient and its kernel gradient stay f32 and
// its kernel is not cast. (The other cases run with conv-min-rows=1.)
// ROWS: %[[W2:.*]] = graph.param "r2.kernel"
// ROWS-NEXT: %[[W2B:.*]] = graph.cast %[[W2]]
// ROWS-NEXT: %[[C2:.*]] = graph.conv2d %{{.*}}, %[[W2B]] : (tensor<8x6x6x4xbf16>, tensor<3x3x4x4xbf16>) -> tensor<8x4x4x4xf32>
// ROWS-NEXT: %[[W3:.*]] = graph.param "r3.kernel"
// ROWS-NEXT: graph.conv2d %[[C2]], %[[W3]] : (tensor<8x4x4x4xf32>, tensor<3x3x4x2xf32>) -> tensor<8x2x2x2xf32>
// ROWS: %[[G:.*]] = graph.reshape {{.*}} -> tensor<8x2x2x2xf32>
// ROWS-NEXT: %[[DX:.*]] = graph.conv2d_grad_input %[[G]], %[[W3]] : (tensor<8x2x2x2xf32>, tensor<3x3x4x2xf32>) -> tensor<8x4x4x4xf32>
// ROWS-NEXT: %[[DXB:.*]] = graph.cast %[[DX]]
// ROWS-NEXT: graph.conv2d_grad_filter %[[C2]], %[[G]] : (tensor<8x4x4x4xf32>, tensor<8x2x2x2xf32>) -> tensor<3x3x4x2xf32>
// ROWS: graph.conv2d_grad_input %[[DXB]], %[[W2B]] : (tensor<8x4x4x4xbf16>, tensor<3x3x4x4xbf16>) -> tensor<8x6x6x4xf32>
func.func @rows(%x: tensor<8x8x8x1xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "r1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x4xf32>
  %c1 = graph.conv2d %x, %w1 {strides = [1, 1], padding = "valid"} : (tensor<8x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<8x6x6x4xf32>
  %w2 = graph.param "r2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x4x4xf32>
  %c2 = graph.conv2d %c1, %w2 {strides = [1, 1], padding = "valid"} : (tensor<8x6x6x4xf32>, tensor<3x3x4x4xf32>) -> tensor<8x4x4x4xf32>
  %w3 = graph.param "r3.kernel" {init = #graph.glorot_uniform} : tensor<3x3x4x2xf32>
  %c3 = graph.conv2d %c2, %w3 {strides = [1, 1], padding = "valid"} : (tensor<8x4x4x4xf32>, tensor<3x3x4x2xf32>) -> tensor<8x2x2x2xf32>
  %f = graph.flatten %c3 : tensor<8x2x2x2xf32> -> tensor<8x8xf32>
  %loss = graph.softmax_cross_entropy %f, %l : (tensor<8x8xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that reshapes of one value to one shape share one cast (an ONNX model reshapes the
// normalised tokens once for each of attention's q, k and v products): a reshape right after
// the value, its cast, read by both products and by both weight gradients; the model's own
// reshapes, left with no readers, go. In both steps.
// CHECK-LABEL: func.func @train(%arg0: tensor<2x3x4xf32>
// CHECK-NEXT: %[[N:.*]] = graph.relu %arg0 : tensor<2x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[N]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[RB:.*]] = graph.cast %[[R]] : tensor<6x4xf32> to tensor<6x4xbf16>
// CHECK-NEXT: graph.param "q"
// CHECK-NEXT: %[[QB:.*]] = graph.cast
// CHECK-NEXT: graph.dense %[[RB]], %[[QB]]
// CHECK-NEXT: graph.param "k"
// CHECK-NEXT: %[[KB:.*]] = graph.cast
// CHECK-NEXT: graph.dense %[[RB]], %[[KB]]
// CHECK-NOT: graph.reshape
// CHECK: graph.matmul %[[RB]], %{{.*}} {transpose_lhs}
// CHECK: graph.matmul %[[RB]], %{{.*}} {transpose_lhs}
// CHECK-LABEL: func.func @eval(%arg0: tensor<2x3x4xf32>
// CHECK-NEXT: %[[N:.*]] = graph.relu %arg0 : tensor<2x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.reshape %[[N]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[RB:.*]] = graph.cast %[[R]] : tensor<6x4xf32> to tensor<6x4xbf16>
// CHECK-NOT: graph.reshape
// CHECK: graph.dense %[[RB]]
// CHECK-NOT: graph.reshape
// CHECK: graph.dense %[[RB]]
// CHECK-NOT: graph.reshape
// CHECK: return
func.func @shared(%x: tensor<2x3x4xf32> {graph.input = "x"}, %l: tensor<6xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %n = graph.relu %x : tensor<2x3x4xf32>
  %wq = graph.param "q" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %a = graph.reshape %n : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %q = graph.dense %a, %wq : (tensor<6x4xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>
  %b = graph.reshape %n : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %wk = graph.param "k" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %k = graph.dense %b, %wk : (tensor<6x4xf32>, tensor<4x2xf32>) -> tensor<6x2xf32>
  %s = graph.add %q, %k : tensor<6x2xf32>
  %loss = graph.softmax_cross_entropy %s, %l : (tensor<6x2xf32>, tensor<6xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests attention's batched products: both factors of the scores' product and of the weights'
// product with v read bf16 casts, as do the products of their gradients; the softmax and its
// gradient stay f32 (the softmax's result is cast for the product and kept f32 for its
// gradient, whose result is cast for the two products that read it). Every batch_matmul
// returns f32.
// CHECK-LABEL: func.func @train(%arg0: tensor<2x3x4xf32> {graph.input = "q"
// CHECK-NEXT: %[[Q:.*]] = graph.relu %arg0
// CHECK-NEXT: %[[QB:.*]] = graph.cast %[[Q]] : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[K:.*]] = graph.param "k"
// CHECK-NEXT: %[[KB:.*]] = graph.cast %[[K]] : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[S:.*]] = graph.batch_matmul %[[QB]], %[[KB]] {alpha = 5.000000e-01 : f64, transpose_rhs} : (tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x3xf32>
// CHECK-NEXT: %[[P:.*]] = graph.softmax %[[S]] : tensor<2x3x3xf32>
// CHECK-NEXT: %[[PB:.*]] = graph.cast %[[P]] : tensor<2x3x3xf32> to tensor<2x3x3xbf16>
// CHECK-NEXT: graph.batch_matmul %[[PB]], %[[KB]] : (tensor<2x3x3xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
// CHECK: %[[DO:.*]] = graph.cast %{{.*}} : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
// CHECK-NEXT: %[[DP:.*]] = graph.batch_matmul %[[DO]], %[[KB]] {transpose_rhs} : (tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x3xf32>
// CHECK-NEXT: graph.batch_matmul %[[PB]], %[[DO]] {transpose_lhs} : (tensor<2x3x3xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[DS:.*]] = graph.activation_grad %[[P]], %[[DP]] {activation = #graph.act<softmax>} : tensor<2x3x3xf32>
// CHECK-NEXT: %[[DSB:.*]] = graph.cast %[[DS]] : tensor<2x3x3xf32> to tensor<2x3x3xbf16>
// CHECK-NEXT: graph.batch_matmul %[[DSB]], %[[QB]] {alpha = 5.000000e-01 : f64, transpose_lhs} : (tensor<2x3x3xbf16>, tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
func.func @attention(%x: tensor<2x3x4xf32> {graph.input = "q"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %q = graph.relu %x : tensor<2x3x4xf32>
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<2x3x4xf32>
  %s = graph.batch_matmul %q, %k {transpose_rhs, alpha = 0.5 : f64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x3xf32>
  %p = graph.softmax %s : tensor<2x3x3xf32>
  %o = graph.batch_matmul %p, %k : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %f = graph.flatten %o : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %loss = graph.softmax_cross_entropy %f, %l : (tensor<2x12xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
