// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// The lowering of padding, average pooling, batch normalisation and LSTMs to plan kernels.

// Tests the kernels of a CNN with batch normalisation: zero_pad2d and zero_pad2d_grad with
// pad_top/pad_bottom/pad_left/pad_right; avg_pool2d and avg_pool2d_grad with the pooling
// geometry; global_avg_pool2d as an avg_pool2d writing [N, C] with the whole 6x4 image as
// window and strides; batch_moments writing [2, C]; batch_norm_train reading the input, the
// moments, gamma and beta; moving_stats_update reading the moments and writing the moving
// mean and variance parameters in place; batch_norm_grad_params writing gamma's and beta's
// gradient buffers, which batch_norm_grad_input reads; and in the eval step batch_norm_infer
// reading the moving statistics, all with their epsilon or momentum.
// CHECK-LABEL: plan.program "cnn" attributes {batch = 4 : i64} {
// CHECK: %[[G:.*]] = plan.param "bn.gamma" {init = #plan.init<kind = "ones", fan_in = 2, fan_out = 2>} : memref<2xf32>
// CHECK-NEXT: %[[B:.*]] = plan.param "bn.beta" {init = #plan.init<kind = "zeros", fan_in = 2, fan_out = 2>} : memref<2xf32>
// CHECK-NEXT: %[[M:.*]] = plan.param "bn.moving_mean" {init = #plan.init<kind = "zeros", fan_in = 2, fan_out = 2>} : memref<2xf32>
// CHECK-NEXT: %[[V:.*]] = plan.param "bn.moving_variance" {init = #plan.init<kind = "ones", fan_in = 2, fan_out = 2>} : memref<2xf32>
// CHECK-NOT: plan.grad "bn.moving
// CHECK: %[[GG:.*]] = plan.grad "bn.gamma" : memref<2xf32>
// CHECK-NEXT: %[[GB:.*]] = plan.grad "bn.beta" : memref<2xf32>
// CHECK-NOT: plan.grad "bn.moving
// CHECK: plan.step "train" {
// CHECK: plan.kernel "conv2d" {{.*}} outs(%[[C:.*]] : memref<4x6x6x2xf32>)
// CHECK-NEXT: %[[S:.*]] = plan.alloc : memref<2x2xf32>
// CHECK-NEXT: plan.kernel "batch_moments" ins(%[[C]] : memref<4x6x6x2xf32>) outs(%[[S]] : memref<2x2xf32>)
// CHECK-NEXT: %[[N:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "batch_norm_train" ins(%[[C]], %[[S]], %[[G]], %[[B]] : memref<4x6x6x2xf32>, memref<2x2xf32>, memref<2xf32>, memref<2xf32>) outs(%[[N]] : memref<4x6x6x2xf32>) {epsilon = 1.001000e-05 : f64}
// CHECK-NEXT: plan.kernel "moving_stats_update" ins(%[[S]] : memref<2x2xf32>) outs(%[[M]], %[[V]] : memref<2xf32>, memref<2xf32>) {momentum = 7.500000e-01 : f64}
// CHECK-NEXT: %[[R:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[N]] : memref<4x6x6x2xf32>) outs(%[[R]] : memref<4x6x6x2xf32>) {activation = "relu"}
// CHECK-NEXT: %[[Z:.*]] = plan.alloc : memref<4x8x8x2xf32>
// CHECK-NEXT: plan.kernel "zero_pad2d" ins(%[[R]] : memref<4x6x6x2xf32>) outs(%[[Z]] : memref<4x8x8x2xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 0 : i64, pad_right = 2 : i64, pad_top = 1 : i64}
// CHECK-NEXT: %[[A:.*]] = plan.alloc : memref<4x6x4x2xf32>
// CHECK-NEXT: plan.kernel "avg_pool2d" ins(%[[Z]] : memref<4x8x8x2xf32>) outs(%[[A]] : memref<4x6x4x2xf32>) {stride_h = 1 : i64, stride_w = 2 : i64, window_h = 3 : i64, window_w = 2 : i64}
// CHECK-NEXT: %[[P:.*]] = plan.alloc : memref<4x2xf32>
// CHECK-NEXT: plan.kernel "avg_pool2d" ins(%[[A]] : memref<4x6x4x2xf32>) outs(%[[P]] : memref<4x2xf32>) {stride_h = 6 : i64, stride_w = 4 : i64, window_h = 6 : i64, window_w = 4 : i64}
// CHECK: %[[DP:.*]] = plan.alloc : memref<4x2xf32>
// CHECK-NEXT: plan.kernel "matmul" {{.*}} outs(%[[DP]] : memref<4x2xf32>) {transpose_a = 0 : i64, transpose_b = 1 : i64}
// CHECK: %[[DP4:.*]] = plan.view %[[DP]] : memref<4x2xf32> to memref<4x1x1x2xf32>
// CHECK-NEXT: %[[DA:.*]] = plan.alloc : memref<4x6x4x2xf32>
// CHECK-NEXT: plan.kernel "avg_pool2d_grad" ins(%[[DP4]] : memref<4x1x1x2xf32>) outs(%[[DA]] : memref<4x6x4x2xf32>) {stride_h = 6 : i64, stride_w = 4 : i64, window_h = 6 : i64, window_w = 4 : i64}
// CHECK-NEXT: %[[DZ:.*]] = plan.alloc : memref<4x8x8x2xf32>
// CHECK-NEXT: plan.kernel "avg_pool2d_grad" ins(%[[DA]] : memref<4x6x4x2xf32>) outs(%[[DZ]] : memref<4x8x8x2xf32>) {stride_h = 1 : i64, stride_w = 2 : i64, window_h = 3 : i64, window_w = 2 : i64}
// CHECK-NEXT: %[[DR:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "zero_pad2d_grad" ins(%[[DZ]] : memref<4x8x8x2xf32>) outs(%[[DR]] : memref<4x6x6x2xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 0 : i64, pad_right = 2 : i64, pad_top = 1 : i64}
// CHECK-NEXT: %[[DN:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%[[R]], %[[DR]] : memref<4x6x6x2xf32>, memref<4x6x6x2xf32>) outs(%[[DN]] : memref<4x6x6x2xf32>) {activation = "relu"}
// CHECK-NEXT: plan.kernel "batch_norm_grad_params" ins(%[[C]], %[[S]], %[[DN]] : memref<4x6x6x2xf32>, memref<2x2xf32>, memref<4x6x6x2xf32>) outs(%[[GG]], %[[GB]] : memref<2xf32>, memref<2xf32>) {epsilon = 1.001000e-05 : f64}
// CHECK-NEXT: %[[DC:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "batch_norm_grad_input" ins(%[[C]], %[[S]], %[[G]], %[[GG]], %[[GB]], %[[DN]] : memref<4x6x6x2xf32>, memref<2x2xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>, memref<4x6x6x2xf32>) outs(%[[DC]] : memref<4x6x6x2xf32>) {epsilon = 1.001000e-05 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GG]] : memref<2xf32>) outs(%[[G]] : memref<2xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB]] : memref<2xf32>) outs(%[[B]] : memref<2xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "conv2d_grad_filter" ins(%{{.*}}, %[[DC]] :
// CHECK-NOT: moving_stats_update
// CHECK: plan.step "eval" {
// CHECK-NEXT: %[[C:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "conv2d"
// CHECK-NEXT: %[[N:.*]] = plan.alloc : memref<4x6x6x2xf32>
// CHECK-NEXT: plan.kernel "batch_norm_infer" ins(%[[C]], %[[G]], %[[B]], %[[M]], %[[V]] : memref<4x6x6x2xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>) outs(%[[N]] : memref<4x6x6x2xf32>) {epsilon = 1.001000e-05 : f64}
// CHECK-NOT: batch_moments
// CHECK-NOT: moving_stats_update
// CHECK: plan.kernel "zero_pad2d" {{.*}} {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 0 : i64, pad_right = 2 : i64, pad_top = 1 : i64}
// CHECK-NEXT: plan.alloc
// CHECK-NEXT: plan.kernel "avg_pool2d" {{.*}} {stride_h = 1 : i64, stride_w = 2 : i64, window_h = 3 : i64, window_w = 2 : i64}
// CHECK-NEXT: plan.alloc
// CHECK-NEXT: plan.kernel "avg_pool2d" {{.*}} outs(%{{.*}} : memref<4x2xf32>) {stride_h = 6 : i64, stride_w = 4 : i64, window_h = 6 : i64, window_w = 4 : i64}
// CHECK-NOT: _grad
// CHECK: plan.output "correct"
func.func @cnn(%x: tensor<4x8x8x1xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x2xf32>
  %c = graph.conv2d %x, %k : (tensor<4x8x8x1xf32>, tensor<3x3x1x2xf32>) -> tensor<4x6x6x2xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<2xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<2xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<2xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<2xf32>
  %n = graph.batch_norm %c, %g, %b, %m, %v {epsilon = 1.001e-05, momentum = 0.75}
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

// Tests the kernels of two stacked LSTMs: lstm with return_sequences = 1 / 0 and training = 1
// in the train step (its lstm_grad reads what it saved) but training = 0 in the eval step;
// lstm_grad reading the operands, the forward output and the incoming gradient and writing the
// input gradient to a fresh buffer and the weight gradients straight into their plan.grad
// buffers; the second LSTM's input gradient feeding the first's lstm_grad; and the LSTM
// initialisers: orthogonal with its gain as `a` and the tensor seen as [product of the leading
// axes, last axis] (fan_in, fan_out), unit_forget_bias.
// CHECK-LABEL: plan.program "rnn" attributes {batch = 4 : i64} {
// CHECK: %[[X:.*]] = plan.input "seq" as samples : memref<4x5x6xf32>
// CHECK: %[[W1:.*]] = plan.param "lstm1.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 6, fan_out = 12>} : memref<6x12xf32>
// CHECK-NEXT: %[[R1:.*]] = plan.param "lstm1.recurrent_kernel" {init = #plan.init<kind = "orthogonal", a = 1.000000e+00, fan_in = 3, fan_out = 12>} : memref<3x12xf32>
// CHECK-NEXT: %[[B1:.*]] = plan.param "lstm1.bias" {init = #plan.init<kind = "unit_forget_bias", fan_in = 12, fan_out = 12>} : memref<12xf32>
// CHECK-NEXT: %[[W2:.*]] = plan.param "lstm2.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 3, fan_out = 8>} : memref<3x8xf32>
// CHECK-NEXT: %[[R2:.*]] = plan.param "lstm2.recurrent_kernel" {init = #plan.init<kind = "orthogonal", a = 2.500000e+00, fan_in = 2, fan_out = 8>} : memref<2x8xf32>
// CHECK-NEXT: %[[B2:.*]] = plan.param "lstm2.bias" {init = #plan.init<kind = "unit_forget_bias", fan_in = 8, fan_out = 8>} : memref<8xf32>
// CHECK-NEXT: plan.param "dense.kernel"
// CHECK-NEXT: plan.param "conv_shaped" {init = #plan.init<kind = "orthogonal", a = 5.000000e-01, fan_in = 18, fan_out = 4>} : memref<3x3x2x4xf32>
// CHECK-NEXT: %[[GD:.*]] = plan.grad "dense.kernel"
// CHECK-NEXT: %[[GW2:.*]] = plan.grad "lstm2.kernel" : memref<3x8xf32>
// CHECK-NEXT: %[[GR2:.*]] = plan.grad "lstm2.recurrent_kernel" : memref<2x8xf32>
// CHECK-NEXT: %[[GB2:.*]] = plan.grad "lstm2.bias" : memref<8xf32>
// CHECK-NEXT: %[[GW1:.*]] = plan.grad "lstm1.kernel" : memref<6x12xf32>
// CHECK-NEXT: %[[GR1:.*]] = plan.grad "lstm1.recurrent_kernel" : memref<3x12xf32>
// CHECK-NEXT: %[[GB1:.*]] = plan.grad "lstm1.bias" : memref<12xf32>
// CHECK-NEXT: plan.step "train" {
// CHECK-NEXT: %[[H1:.*]] = plan.alloc : memref<4x5x3xf32>
// CHECK-NEXT: plan.kernel "lstm" ins(%[[X]], %[[W1]], %[[R1]], %[[B1]] : memref<4x5x6xf32>, memref<6x12xf32>, memref<3x12xf32>, memref<12xf32>) outs(%[[H1]] : memref<4x5x3xf32>) {return_sequences = 1 : i64, training = 1 : i64}
// CHECK-NEXT: %[[H2:.*]] = plan.alloc : memref<4x2xf32>
// CHECK-NEXT: plan.kernel "lstm" ins(%[[H1]], %[[W2]], %[[R2]], %[[B2]] : memref<4x5x3xf32>, memref<3x8xf32>, memref<2x8xf32>, memref<8xf32>) outs(%[[H2]] : memref<4x2xf32>) {return_sequences = 0 : i64, training = 1 : i64}
// CHECK: %[[DH2:.*]] = plan.alloc : memref<4x2xf32>
// CHECK-NEXT: plan.kernel "matmul" {{.*}} outs(%[[DH2]] : memref<4x2xf32>) {transpose_a = 0 : i64, transpose_b = 1 : i64}
// CHECK: %[[DX2:.*]] = plan.alloc : memref<4x5x3xf32>
// CHECK-NEXT: plan.kernel "lstm_grad" ins(%[[H1]], %[[W2]], %[[R2]], %[[B2]], %[[H2]], %[[DH2]] : memref<4x5x3xf32>, memref<3x8xf32>, memref<2x8xf32>, memref<8xf32>, memref<4x2xf32>, memref<4x2xf32>) outs(%[[DX2]], %[[GW2]], %[[GR2]], %[[GB2]] : memref<4x5x3xf32>, memref<3x8xf32>, memref<2x8xf32>, memref<8xf32>){{$}}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW2]]
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GR2]]
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB2]]
// CHECK-NEXT: %[[DX1:.*]] = plan.alloc : memref<4x5x6xf32>
// CHECK-NEXT: plan.kernel "lstm_grad" ins(%[[X]], %[[W1]], %[[R1]], %[[B1]], %[[H1]], %[[DX2]] : memref<4x5x6xf32>, memref<6x12xf32>, memref<3x12xf32>, memref<12xf32>, memref<4x5x3xf32>, memref<4x5x3xf32>) outs(%[[DX1]], %[[GW1]], %[[GR1]], %[[GB1]] : memref<4x5x6xf32>, memref<6x12xf32>, memref<3x12xf32>, memref<12xf32>){{$}}
// CHECK: plan.step "eval" {
// CHECK-NEXT: %[[H1:.*]] = plan.alloc : memref<4x5x3xf32>
// CHECK-NEXT: plan.kernel "lstm" ins(%[[X]], %[[W1]], %[[R1]], %[[B1]] : {{.*}}) outs(%[[H1]] : memref<4x5x3xf32>) {return_sequences = 1 : i64, training = 0 : i64}
// CHECK-NEXT: %[[H2:.*]] = plan.alloc : memref<4x2xf32>
// CHECK-NEXT: plan.kernel "lstm" ins(%[[H1]], %[[W2]], %[[R2]], %[[B2]] : {{.*}}) outs(%[[H2]] : memref<4x2xf32>) {return_sequences = 0 : i64, training = 0 : i64}
// CHECK-NOT: lstm_grad
// CHECK: plan.output "correct"
func.func @rnn(%x: tensor<4x5x6xf32> {graph.input = "seq"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "lstm1.kernel" {init = #graph.glorot_uniform} : tensor<6x12xf32>
  %r1 = graph.param "lstm1.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  %b1 = graph.param "lstm1.bias" {init = #graph.unit_forget_bias} : tensor<12xf32>
  %h1 = graph.lstm %x, %w1, %r1, %b1 {return_sequences}
      : (tensor<4x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<4x5x3xf32>
  %w2 = graph.param "lstm2.kernel" {init = #graph.glorot_uniform} : tensor<3x8xf32>
  %r2 = graph.param "lstm2.recurrent_kernel" {init = #graph.orthogonal<gain = 2.5>} : tensor<2x8xf32>
  %b2 = graph.param "lstm2.bias" {init = #graph.unit_forget_bias} : tensor<8xf32>
  %h2 = graph.lstm %h1, %w2, %r2, %b2
      : (tensor<4x5x3xf32>, tensor<3x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %q = graph.param "conv_shaped" {init = #graph.orthogonal<gain = 0.5>, trainable = false} : tensor<3x3x2x4xf32>
  %y = graph.dense %h2, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
