// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff | FileCheck %s

// The backward pass through padding, average pooling, batch normalisation and LSTMs.

// Tests the backward pass of a small CNN with batch normalisation (conv2d, batch_norm, relu,
// zero_pad2d, avg_pool2d, global_avg_pool2d, dense): global_avg_pool2d's gradient reshapes
// the [N, C] gradient to [N, 1, 1, C] and spreads it with avg_pool2d_grad over the whole
// 6x4 image (window = strides = [6, 4]); avg_pool2d_grad keeps the forward window and
// strides; zero_pad2d_grad the padding; batch_norm_train's gradient is
// batch_norm_grad_params (on the input, the batch statistics and the incoming gradient) and
// batch_norm_grad_input (the conv's output is active), with gamma's and beta's gradients
// applied and nothing for the moving statistics; batch_moments is not differentiated (the
// conv's filter gradient reads batch_norm_grad_input only).
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8x8x1xf32> {graph.input = "image", graph.role = "samples"}
// CHECK: %[[K:.*]] = graph.param "conv.kernel"
// CHECK-NEXT: %[[C:.*]] = graph.conv2d %[[X]], %[[K]]
// CHECK-NEXT: %[[G:.*]] = graph.param "bn.gamma"
// CHECK-NEXT: %[[B:.*]] = graph.param "bn.beta"
// CHECK-NEXT: %[[M:.*]] = graph.param "bn.moving_mean"
// CHECK-NEXT: %[[V:.*]] = graph.param "bn.moving_variance"
// CHECK-NEXT: %[[S:.*]] = graph.batch_moments %[[C]] : tensor<4x6x6x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[N:.*]] = graph.batch_norm_train %[[C]], %[[S]], %[[G]], %[[B]] {epsilon = 1.001000e-05 : f64}
// CHECK-NEXT: graph.moving_stats_update %[[M]], %[[V]], %[[S]]
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[N]] : tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[Z:.*]] = graph.zero_pad2d %[[R]] {padding = [1, 1, 0, 2]} : tensor<4x6x6x2xf32> -> tensor<4x8x8x2xf32>
// CHECK-NEXT: %[[A:.*]] = graph.avg_pool2d %[[Z]] {strides = [1, 2], window = [3, 2]} : tensor<4x8x8x2xf32> -> tensor<4x6x4x2xf32>
// CHECK-NEXT: %[[P:.*]] = graph.global_avg_pool2d %[[A]] : tensor<4x6x4x2xf32> -> tensor<4x2xf32>
// CHECK: %[[DP:.*]] = graph.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[DW:.*]] = graph.matmul %[[P]], %{{.*}} {transpose_lhs}
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DW]] : tensor<2x3xf32>
// CHECK-NEXT: %[[DP4:.*]] = graph.reshape %[[DP]] : tensor<4x2xf32> -> tensor<4x1x1x2xf32>
// CHECK-NEXT: %[[DA:.*]] = graph.avg_pool2d_grad %[[DP4]] {strides = [6, 4], window = [6, 4]} : tensor<4x1x1x2xf32> -> tensor<4x6x4x2xf32>
// CHECK-NEXT: %[[DZ:.*]] = graph.avg_pool2d_grad %[[DA]] {strides = [1, 2], window = [3, 2]} : tensor<4x6x4x2xf32> -> tensor<4x8x8x2xf32>
// CHECK-NEXT: %[[DR:.*]] = graph.zero_pad2d_grad %[[DZ]] {padding = [1, 1, 0, 2]} : tensor<4x8x8x2xf32> -> tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[DN:.*]] = graph.activation_grad %[[R]], %[[DR]] {activation = #graph.act<relu>} : tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[DG:.*]], %[[DB:.*]] = graph.batch_norm_grad_params %[[C]], %[[S]], %[[DN]] {epsilon = 1.001000e-05 : f64} : (tensor<4x6x6x2xf32>, tensor<2x2xf32>, tensor<4x6x6x2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT: %[[DC:.*]] = graph.batch_norm_grad_input %[[C]], %[[S]], %[[G]], %[[DG]], %[[DB]], %[[DN]] {epsilon = 1.001000e-05 : f64} : (tensor<4x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<4x6x6x2xf32>) -> tensor<4x6x6x2xf32>
// CHECK-NEXT: graph.apply_gradient %[[G]], %[[DG]] : tensor<2xf32>
// CHECK-NEXT: graph.apply_gradient %[[B]], %[[DB]] : tensor<2xf32>
// CHECK-NEXT: %[[DK:.*]] = graph.conv2d_grad_filter %[[X]], %[[DC]]
// CHECK-NEXT: graph.apply_gradient %[[K]], %[[DK]] : tensor<3x3x1x2xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK: graph.batch_norm
// CHECK-NOT: _grad
// CHECK-NOT: graph.apply_gradient
// CHECK: return
func.func @cnn(%x: tensor<4x8x8x1xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x2xf32>
  %c = graph.conv2d %x, %k : (tensor<4x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<4x6x6x2xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<2xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<2xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<2xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<2xf32>
  %n = graph.batch_norm %c, %g, %b, %m, %v {epsilon = 1.001e-05}
      : (tensor<4x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
  %r = graph.relu %n : tensor<4x6x6x2xf32>
  %z = graph.zero_pad2d %r {padding = [1, 1, 0, 2]} : tensor<4x6x6x2xf32> -> tensor<4x8x8x2xf32>
  %a = graph.avg_pool2d %z {window = [3, 2], strides = [1, 2]} : tensor<4x8x8x2xf32> -> tensor<4x6x4x2xf32>
  %p = graph.global_avg_pool2d %a : tensor<4x6x4x2xf32> -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %y = graph.dense %p, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a batch_norm of the model's input (not active) gets no batch_norm_grad_input,
// and that with a frozen gamma only beta's gradient is applied (batch_norm_grad_params still
// gives both sums).
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}
// CHECK: %[[G:.*]] = graph.param "bn.gamma" {init = #graph.ones, trainable = false}
// CHECK-NEXT: %[[B:.*]] = graph.param "bn.beta"
// CHECK: %[[S:.*]] = graph.batch_moments %[[X]] : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK: %[[DN:.*]] = graph.matmul %{{.*}}, %{{.*}} {transpose_rhs}
// CHECK: %[[DG:.*]], %[[DB:.*]] = graph.batch_norm_grad_params %[[X]], %[[S]], %[[DN]] {epsilon = 1.000000e-03 : f64}
// CHECK-NOT: graph.batch_norm_grad_input
// CHECK-NOT: graph.apply_gradient %[[G]]
// CHECK-NEXT: graph.apply_gradient %[[B]], %[[DB]] : tensor<4xf32>
// CHECK-NEXT: return
func.func @frozen(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %g = graph.param "bn.gamma" {init = #graph.ones, trainable = false} : tensor<4xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<4xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<4xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<4xf32>
  %n = graph.batch_norm %x, %g, %b, %m, %v
      : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %n, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests the backward pass of two stacked LSTMs: each gets one lstm_grad of its operands, its
// output and the incoming gradient (with the forward's return_sequences), with four results;
// the kernel, recurrent kernel and bias gradients are applied right after it, the second
// LSTM's input gradient (result #0, [N, T, U1]) is the first's incoming gradient, and the
// first's input gradient (the model's input) is not used.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x5x6xf32> {graph.input = "seq", graph.role = "samples"}
// CHECK: %[[W1:.*]] = graph.param "lstm1.kernel"
// CHECK-NEXT: %[[R1:.*]] = graph.param "lstm1.recurrent_kernel"
// CHECK-NEXT: %[[B1:.*]] = graph.param "lstm1.bias"
// CHECK-NEXT: %[[H1:.*]] = graph.lstm %[[X]], %[[W1]], %[[R1]], %[[B1]] {return_sequences}
// CHECK-NEXT: %[[W2:.*]] = graph.param "lstm2.kernel"
// CHECK-NEXT: %[[R2:.*]] = graph.param "lstm2.recurrent_kernel"
// CHECK-NEXT: %[[B2:.*]] = graph.param "lstm2.bias"
// CHECK-NEXT: %[[H2:.*]] = graph.lstm %[[H1]], %[[W2]], %[[R2]], %[[B2]] :
// CHECK: %[[DH2:.*]] = graph.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
// CHECK: graph.apply_gradient
// CHECK-NEXT: %[[DX2:.*]], %[[DW2:.*]], %[[DR2:.*]], %[[DB2:.*]] = graph.lstm_grad %[[H1]], %[[W2]], %[[R2]], %[[B2]], %[[H2]], %[[DH2]] : (tensor<4x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>)
// CHECK-NEXT: graph.apply_gradient %[[W2]], %[[DW2]] : tensor<3x8xf32>
// CHECK-NEXT: graph.apply_gradient %[[R2]], %[[DR2]] : tensor<2x8xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2]], %[[DB2]] : tensor<8xf32>
// CHECK-NEXT: %[[DX1:.*]], %[[DW1:.*]], %[[DR1:.*]], %[[DB1:.*]] = graph.lstm_grad %[[X]], %[[W1]], %[[R1]], %[[B1]], %[[H1]], %[[DX2]] {return_sequences} : (tensor<4x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<4x5x3xf32>, tensor<4x5x3xf32>) -> (tensor<4x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
// CHECK-NEXT: graph.apply_gradient %[[W1]], %[[DW1]] : tensor<6x12xf32>
// CHECK-NEXT: graph.apply_gradient %[[R1]], %[[DR1]] : tensor<3x12xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1]], %[[DB1]] : tensor<12xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.lstm_grad
// CHECK: return
func.func @rnn(%x: tensor<4x5x6xf32> {graph.input = "seq"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w1 = graph.param "lstm1.kernel" {init = #graph.glorot_uniform} : tensor<6x12xf32>
  %r1 = graph.param "lstm1.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  %b1 = graph.param "lstm1.bias" {init = #graph.unit_forget_bias} : tensor<12xf32>
  %h1 = graph.lstm %x, %w1, %r1, %b1 {return_sequences}
      : (tensor<4x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<4x5x3xf32>
  %w2 = graph.param "lstm2.kernel" {init = #graph.glorot_uniform} : tensor<3x8xf32>
  %r2 = graph.param "lstm2.recurrent_kernel" {init = #graph.orthogonal} : tensor<2x8xf32>
  %b2 = graph.param "lstm2.bias" {init = #graph.unit_forget_bias} : tensor<8xf32>
  %h2 = graph.lstm %h1, %w2, %r2, %b2
      : (tensor<4x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %y = graph.dense %h2, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
