// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// A grouped, dilated convolution (depthwise: a group per channel) behind an ordinary one: its
// gradients keep its groups and dilations, and its three kernels carry them as groups,
// dilation_h and dilation_w with the padding of the dilated window (a 3x3 window 2 apart
// spans 5x5: "same" pads 2 on each side). The ordinary convolution's kernels leave them out.

// GRAD-LABEL: func.func @train(
// GRAD: %[[H:.*]] = graph.conv2d %{{.*}}, %{{.*}} {dilations = [2, 2], groups = 4 : i64, padding = "same"} : (tensor<4x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<4x8x8x4xf32>
// GRAD: graph.conv2d_grad_input %{{.*}}, %{{.*}} {dilations = [2, 2], groups = 4 : i64, padding = "same"} : (tensor<4x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<4x8x8x4xf32>
// GRAD: graph.conv2d_grad_filter %{{.*}}, %{{.*}} {dilations = [2, 2], groups = 4 : i64, padding = "same"} : (tensor<4x8x8x4xf32>, tensor<4x8x8x4xf32>) -> tensor<3x3x1x4xf32>

// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "conv2d" ins(%{{.*}} : memref<4x8x8x2xf32>, memref<1x1x2x4xf32>) outs(%{{.*}} : memref<4x8x8x4xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d" ins(%{{.*}} : memref<4x8x8x4xf32>, memref<3x3x1x4xf32>) outs(%{{.*}} : memref<4x8x8x4xf32>) {activation = "none", dilation_h = 2 : i64, dilation_w = 2 : i64, groups = 4 : i64, pad_bottom = 2 : i64, pad_left = 2 : i64, pad_right = 2 : i64, pad_top = 2 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_input" ins(%{{.*}} : memref<4x8x8x4xf32>, memref<3x3x1x4xf32>) outs(%{{.*}} : memref<4x8x8x4xf32>) {dilation_h = 2 : i64, dilation_w = 2 : i64, groups = 4 : i64, pad_bottom = 2 : i64, pad_left = 2 : i64, pad_right = 2 : i64, pad_top = 2 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_filter" ins(%{{.*}} : memref<4x8x8x4xf32>, memref<4x8x8x4xf32>) outs(%{{.*}} : memref<3x3x1x4xf32>) {dilation_h = 2 : i64, dilation_w = 2 : i64, groups = 4 : i64, pad_bottom = 2 : i64, pad_left = 2 : i64, pad_right = 2 : i64, pad_top = 2 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_filter" ins(%{{.*}} : memref<4x8x8x2xf32>, memref<4x8x8x4xf32>) outs(%{{.*}} : memref<1x1x2x4xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
func.func @dw(%x: tensor<4x8x8x2xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w0 = graph.param "pw.kernel" {init = #graph.glorot_uniform} : tensor<1x1x2x4xf32>
  %p = graph.conv2d %x, %w0 : (tensor<4x8x8x2xf32>, tensor<1x1x2x4xf32>) -> tensor<4x8x8x4xf32>
  %w = graph.param "dw.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x4xf32>
  %h = graph.conv2d %p, %w {groups = 4, dilations = [2, 2], padding = "same"} : (tensor<4x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<4x8x8x4xf32>
  %f = graph.flatten %h : tensor<4x8x8x4xf32> -> tensor<4x256xf32>
  %k = graph.param "fc.kernel" {init = #graph.glorot_uniform} : tensor<256x3xf32>
  %z = graph.dense %f, %k : (tensor<4x256xf32>, tensor<256x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
