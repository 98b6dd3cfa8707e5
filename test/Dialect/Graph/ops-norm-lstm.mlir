// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of the padding, average pooling, batch normalisation and LSTM ops, and of the
// LSTM's initialisers: printing and parsing again gives the same IR.

// Tests that #graph.orthogonal round-trips with and without a gain (the default gain 1.0 is
// not printed) and #graph.unit_forget_bias without parameters.
// CHECK-LABEL: func.func @lstm_initialisers
func.func @lstm_initialisers() {
  // CHECK: graph.param "o" {init = #graph.orthogonal} : tensor<4x8xf32>
  %0 = graph.param "o" {init = #graph.orthogonal} : tensor<4x8xf32>
  // CHECK: graph.param "o.gain" {init = #graph.orthogonal<gain = 2.500000e+00>} : tensor<4x8xf32>
  %1 = graph.param "o.gain" {init = #graph.orthogonal<gain = 2.5>} : tensor<4x8xf32>
  // Explicit default values are not printed.
  // CHECK: graph.param "o.default" {init = #graph.orthogonal} : tensor<4x8xf32>
  %2 = graph.param "o.default" {init = #graph.orthogonal<gain = 1.0>} : tensor<4x8xf32>
  // Orthogonal accepts any rank from 2 (seen as [product of leading axes, last axis]).
  // CHECK: graph.param "o.conv" {init = #graph.orthogonal<gain = 5.000000e-01>} : tensor<3x3x2x4xf32>
  %3 = graph.param "o.conv" {init = #graph.orthogonal<gain = 0.5>} : tensor<3x3x2x4xf32>
  // CHECK: graph.param "ufb" {init = #graph.unit_forget_bias} : tensor<8xf32>
  %4 = graph.param "ufb" {init = #graph.unit_forget_bias} : tensor<8xf32>
  // CHECK: graph.param "ufb.frozen" {init = #graph.unit_forget_bias, trainable = false} : tensor<4xf32>
  %5 = graph.param "ufb.frozen" {init = #graph.unit_forget_bias, trainable = false} : tensor<4xf32>
  return
}

// Tests that zero_pad2d and its gradient round-trip with asymmetric padding, and that the
// average pools round-trip with the default window and strides (not printed), explicit ones,
// and global_avg_pool2d.
// CHECK-LABEL: func.func @pad_and_pool
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4x4x3xf32>, %[[DP:[^:]*]]: tensor<2x7x7x3xf32>)
func.func @pad_and_pool(%x: tensor<2x4x4x3xf32>, %dp: tensor<2x7x7x3xf32>) {
  // CHECK: graph.zero_pad2d %[[X]] {padding = [1, 2, 0, 3]} : tensor<2x4x4x3xf32> -> tensor<2x7x7x3xf32>
  %0 = graph.zero_pad2d %x {padding = [1, 2, 0, 3]} : tensor<2x4x4x3xf32> -> tensor<2x7x7x3xf32>
  // CHECK: graph.zero_pad2d %[[X]] {padding = [0, 0, 0, 0]} : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xf32>
  %1 = graph.zero_pad2d %x {padding = [0, 0, 0, 0]} : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xf32>
  // CHECK: graph.zero_pad2d %[[X]] {lowest, padding = [1, 1, 1, 1]} : tensor<2x4x4x3xf32> -> tensor<2x6x6x3xf32>
  %lo = graph.zero_pad2d %x {padding = [1, 1, 1, 1], lowest} : tensor<2x4x4x3xf32> -> tensor<2x6x6x3xf32>
  // CHECK: graph.zero_pad2d_grad %[[DP]] {padding = [1, 2, 0, 3]} : tensor<2x7x7x3xf32> -> tensor<2x4x4x3xf32>
  %2 = graph.zero_pad2d_grad %dp {padding = [1, 2, 0, 3]} : tensor<2x7x7x3xf32> -> tensor<2x4x4x3xf32>
  // CHECK: %[[A:.*]] = graph.avg_pool2d %[[X]] : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  %3 = graph.avg_pool2d %x : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  // CHECK: graph.avg_pool2d %[[X]] : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  %4 = graph.avg_pool2d %x {window = [2, 2], strides = [2, 2]} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  // CHECK: %[[A2:.*]] = graph.avg_pool2d %[[X]] {strides = [1, 2], window = [3, 2]} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  %5 = graph.avg_pool2d %x {window = [3, 2], strides = [1, 2]} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  // CHECK: graph.avg_pool2d_grad %[[A]] : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %6 = graph.avg_pool2d_grad %3 : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  // CHECK: graph.avg_pool2d_grad %[[A2]] {strides = [1, 2], window = [3, 2]} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %7 = graph.avg_pool2d_grad %5 {window = [3, 2], strides = [1, 2]} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  // CHECK: graph.global_avg_pool2d %[[X]] : tensor<2x4x4x3xf32> -> tensor<2x3xf32>
  %8 = graph.global_avg_pool2d %x : tensor<2x4x4x3xf32> -> tensor<2x3xf32>
  return
}

// Tests that batch_norm round-trips with its defaults (epsilon 1e-3, momentum 0.99: not
// printed) and explicit values, on an image and on a matrix, and that its train-time forms
// (batch_moments, batch_norm_train, moving_stats_update) and gradients (batch_norm_grad_params
// with its two named results, batch_norm_grad_input) round-trip.
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x4x4x3xf32>, %[[M:[^:]*]]: tensor<6x5xf32>, %[[DY:[^:]*]]: tensor<2x4x4x3xf32>)
func.func @batch_norm(%x: tensor<2x4x4x3xf32>, %m: tensor<6x5xf32>, %dy: tensor<2x4x4x3xf32>) {
  // CHECK: %[[G:.*]] = graph.param "bn.gamma" {init = #graph.ones} : tensor<3xf32>
  // CHECK: %[[B:.*]] = graph.param "bn.beta" {init = #graph.zeros} : tensor<3xf32>
  // CHECK: %[[MM:.*]] = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  // CHECK: %[[MV:.*]] = graph.param "bn.moving_var" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<3xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<3xf32>
  %mm = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %mv = graph.param "bn.moving_var" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %v = graph.param "v" {init = #graph.ones} : tensor<5xf32>
  // CHECK: graph.batch_norm %[[X]], %[[G]], %[[B]], %[[MM]], %[[MV]] : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %0 = graph.batch_norm %x, %g, %b, %mm, %mv : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  // CHECK: graph.batch_norm %[[X]], %[[G]], %[[B]], %[[MM]], %[[MV]] : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %1 = graph.batch_norm %x, %g, %b, %mm, %mv {epsilon = 1.0e-3, momentum = 0.99} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  // CHECK: graph.batch_norm %[[X]], %[[G]], %[[B]], %[[MM]], %[[MV]] {epsilon = 1.001000e-05 : f64, momentum = 5.000000e-01 : f64} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %2 = graph.batch_norm %x, %g, %b, %mm, %mv {epsilon = 1.001e-05, momentum = 0.5} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  // CHECK: graph.batch_norm %[[M]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<6x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  %3 = graph.batch_norm %m, %v, %v, %v, %v : (tensor<6x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  // CHECK: %[[S:.*]] = graph.batch_moments %[[X]] : tensor<2x4x4x3xf32> -> tensor<2x3xf32>
  %s = graph.batch_moments %x : tensor<2x4x4x3xf32> -> tensor<2x3xf32>
  // CHECK: graph.batch_moments %[[M]] : tensor<6x5xf32> -> tensor<2x5xf32>
  %4 = graph.batch_moments %m : tensor<6x5xf32> -> tensor<2x5xf32>
  // CHECK: graph.batch_norm_train %[[X]], %[[S]], %[[G]], %[[B]] {epsilon = 2.000000e-03 : f64} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  %5 = graph.batch_norm_train %x, %s, %g, %b {epsilon = 2.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  // CHECK: graph.moving_stats_update %[[MM]], %[[MV]], %[[S]] {momentum = 7.500000e-01 : f64} : tensor<3xf32>, tensor<2x3xf32>
  graph.moving_stats_update %mm, %mv, %s {momentum = 0.75} : tensor<3xf32>, tensor<2x3xf32>
  // CHECK: %[[DG:.*]], %[[DB:.*]] = graph.batch_norm_grad_params %[[X]], %[[S]], %[[DY]] {epsilon = 2.000000e-03 : f64} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %dg, %db = graph.batch_norm_grad_params %x, %s, %dy {epsilon = 2.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK: graph.batch_norm_grad_input %[[X]], %[[S]], %[[G]], %[[DG]], %[[DB]], %[[DY]] {epsilon = 2.000000e-03 : f64} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  %6 = graph.batch_norm_grad_input %x, %s, %g, %dg, %db, %dy {epsilon = 2.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// Tests that lstm round-trips with and without return_sequences, and lstm_grad of each with
// its four results ([N, T, U] gradients for the sequence form, [N, U] for the last step).
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x5x6xf32>, %[[DH:[^:]*]]: tensor<2x5x3xf32>, %[[DL:[^:]*]]: tensor<2x3xf32>)
func.func @lstm(%x: tensor<2x5x6xf32>, %dh: tensor<2x5x3xf32>, %dl: tensor<2x3xf32>) {
  // CHECK: %[[W:.*]] = graph.param "lstm.kernel" {init = #graph.glorot_uniform} : tensor<6x12xf32>
  // CHECK: %[[R:.*]] = graph.param "lstm.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  // CHECK: %[[B:.*]] = graph.param "lstm.bias" {init = #graph.unit_forget_bias} : tensor<12xf32>
  %w = graph.param "lstm.kernel" {init = #graph.glorot_uniform} : tensor<6x12xf32>
  %r = graph.param "lstm.recurrent_kernel" {init = #graph.orthogonal} : tensor<3x12xf32>
  %b = graph.param "lstm.bias" {init = #graph.unit_forget_bias} : tensor<12xf32>
  // CHECK: %[[H:.*]] = graph.lstm %[[X]], %[[W]], %[[R]], %[[B]] {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
  %h = graph.lstm %x, %w, %r, %b {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
  // CHECK: %[[L:.*]] = graph.lstm %[[X]], %[[W]], %[[R]], %[[B]] : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  %l = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = graph.lstm_grad %[[X]], %[[W]], %[[R]], %[[B]], %[[H]], %[[DH]] {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = graph.lstm_grad %[[X]], %[[W]], %[[R]], %[[B]], %[[L]], %[[DL]] : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  %1:4 = graph.lstm_grad %x, %w, %r, %b, %l, %dl : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}
