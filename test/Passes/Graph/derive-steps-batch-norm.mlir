// RUN: dp-opt %s -split-input-file -graph-derive-steps | FileCheck %s

// graph-derive-steps on models with batch normalisation: the train step normalises with the
// batch's statistics and moves the moving ones, the eval step keeps graph.batch_norm.

// Tests that a batch_norm on NHWC images becomes, in the train step, a batch_moments of its
// input ([2, C]), a batch_norm_train of the input with those statistics, gamma and beta (the
// epsilon carried over) and a moving_stats_update of the moving mean and variance with the
// same statistics (the momentum carried over), the rest of the model reading the
// batch_norm_train; the eval step keeps the batch_norm with both attributes.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x6x6x2xf32> {graph.input = "image", graph.role = "samples"}
// CHECK-NEXT: %[[G:.*]] = graph.param "bn.gamma" {init = #graph.ones} : tensor<2xf32>
// CHECK-NEXT: %[[B:.*]] = graph.param "bn.beta" {init = #graph.zeros} : tensor<2xf32>
// CHECK-NEXT: %[[M:.*]] = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<2xf32>
// CHECK-NEXT: %[[V:.*]] = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<2xf32>
// CHECK-NEXT: %[[S:.*]] = graph.batch_moments %[[X]] : tensor<4x6x6x2xf32> -> tensor<2x2xf32>
// CHECK-NEXT: %[[N:.*]] = graph.batch_norm_train %[[X]], %[[S]], %[[G]], %[[B]] {epsilon = 1.001000e-05 : f64} : (tensor<4x6x6x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
// CHECK-NEXT: graph.moving_stats_update %[[M]], %[[V]], %[[S]] {momentum = 9.000000e-01 : f64} : tensor<2xf32>, tensor<2x2xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[N]] : tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[P:.*]] = graph.global_avg_pool2d %[[R]]
// CHECK-NOT: graph.batch_norm
// CHECK: return
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x6x6x2xf32> {graph.input = "image", graph.role = "samples"}
// CHECK-NEXT: %[[G:.*]] = graph.param "bn.gamma"
// CHECK-NEXT: %[[B:.*]] = graph.param "bn.beta"
// CHECK-NEXT: %[[M:.*]] = graph.param "bn.moving_mean"
// CHECK-NEXT: %[[V:.*]] = graph.param "bn.moving_variance"
// CHECK-NEXT: %[[N:.*]] = graph.batch_norm %[[X]], %[[G]], %[[B]], %[[M]], %[[V]] {epsilon = 1.001000e-05 : f64, momentum = 9.000000e-01 : f64} : (tensor<4x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[N]] : tensor<4x6x6x2xf32>
// CHECK-NOT: batch_moments
// CHECK-NOT: batch_norm_train
// CHECK-NOT: moving_stats_update
// CHECK: return
func.func @bn(%x: tensor<4x6x6x2xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<2xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<2xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<2xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<2xf32>
  %n = graph.batch_norm %x, %g, %b, %m, %v {epsilon = 1.001e-05, momentum = 0.9}
      : (tensor<4x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
  %r = graph.relu %n : tensor<4x6x6x2xf32>
  %p = graph.global_avg_pool2d %r : tensor<4x6x6x2xf32> -> tensor<4x2xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<2x3xf32>
  %y = graph.dense %p, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that Keras's defaults (epsilon 1e-3, momentum 0.99), not printed on batch_norm, are
// written out on the train-time ops; that each of two batch_norms (here on [N, C] rows, the
// second normalising the first's output after a dense layer, with parameters of their own)
// gets its own statistics; and that the loss reads the last batch_norm_train.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-NEXT: %[[G1:.*]] = graph.param "bn1.gamma"
// CHECK-NEXT: %[[B1:.*]] = graph.param "bn1.beta"
// CHECK-NEXT: %[[M1:.*]] = graph.param "bn1.moving_mean"
// CHECK-NEXT: %[[V1:.*]] = graph.param "bn1.moving_variance"
// CHECK-NEXT: %[[S1:.*]] = graph.batch_moments %[[X]] : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[N1:.*]] = graph.batch_norm_train %[[X]], %[[S1]], %[[G1]], %[[B1]] {epsilon = 1.000000e-03 : f64} : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: graph.moving_stats_update %[[M1]], %[[V1]], %[[S1]] {momentum = 0.98999999999999999 : f64} : tensor<4xf32>, tensor<2x4xf32>
// CHECK-NEXT: graph.param "dense.kernel"
// CHECK-NEXT: %[[Y:.*]] = graph.dense %[[N1]], %{{.*}} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: %[[G2:.*]] = graph.param "bn2.gamma"
// CHECK-NEXT: %[[B2:.*]] = graph.param "bn2.beta"
// CHECK-NEXT: %[[M2:.*]] = graph.param "bn2.moving_mean"
// CHECK-NEXT: %[[V2:.*]] = graph.param "bn2.moving_variance"
// CHECK-NEXT: %[[S2:.*]] = graph.batch_moments %[[Y]] : tensor<8x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[N2:.*]] = graph.batch_norm_train %[[Y]], %[[S2]], %[[G2]], %[[B2]] {epsilon = 5.000000e-01 : f64} : (tensor<8x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: graph.moving_stats_update %[[M2]], %[[V2]], %[[S2]] {momentum = 0.000000e+00 : f64} : tensor<3xf32>, tensor<2x3xf32>
// CHECK-NEXT: %[[LOSS:.*]] = graph.softmax_cross_entropy %[[N2]], %[[L]]
// CHECK-NEXT: graph.count_correct %[[N2]], %[[L]]
// CHECK-LABEL: func.func @eval(
// CHECK: graph.batch_norm %{{.*}} : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK: graph.batch_norm %{{.*}} {epsilon = 5.000000e-01 : f64, momentum = 0.000000e+00 : f64} : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: graph.softmax_cross_entropy
func.func @two(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %g1 = graph.param "bn1.gamma" {init = #graph.ones} : tensor<4xf32>
  %b1 = graph.param "bn1.beta" {init = #graph.zeros} : tensor<4xf32>
  %m1 = graph.param "bn1.moving_mean" {init = #graph.zeros, trainable = false} : tensor<4xf32>
  %v1 = graph.param "bn1.moving_variance" {init = #graph.ones, trainable = false} : tensor<4xf32>
  %n1 = graph.batch_norm %x, %g1, %b1, %m1, %v1
      : (tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %n1, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %g2 = graph.param "bn2.gamma" {init = #graph.ones} : tensor<3xf32>
  %b2 = graph.param "bn2.beta" {init = #graph.zeros} : tensor<3xf32>
  %m2 = graph.param "bn2.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %v2 = graph.param "bn2.moving_variance" {init = #graph.ones, trainable = false} : tensor<3xf32>
  %n2 = graph.batch_norm %y, %g2, %b2, %m2, %v2 {epsilon = 0.5, momentum = 0.0}
      : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %n2, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
