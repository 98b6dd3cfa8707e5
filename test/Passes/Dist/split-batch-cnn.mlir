// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch | FileCheck %s
// RUN: dp-opt %s -dp-compile="devices-per-process=2" | FileCheck %s --check-prefix=PLAN

// Tests that with R = 2 devices the image ops of a small CNN are split by rows: conv2d,
// max_pool2d, dropout, conv2d_grad_input, max_pool2d_grad and dropout_grad take and give
// 4 / 2 = 2 images, the bias gradient's [N*H*W, F] view has 2 * 36 = 72 rows, and the filter
// gradients (a sum over the batch) keep the kernel's shape.
// CHECK-LABEL: func.func @train(
// CHECK: %[[X0:.*]] = dist.shard %{{.*}} {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<4x8x8x1xf32> -> tensor<2x8x8x1xf32>
// CHECK: graph.conv2d %[[X0]], {{.*}} -> tensor<2x6x6x2xf32>
// CHECK: graph.max_pool2d {{.*}} : tensor<2x6x6x2xf32> -> tensor<2x3x3x2xf32>
// CHECK: graph.conv2d {{.*}} : (tensor<2x3x3x2xf32>, tensor<3x3x2x3xf32>) -> tensor<2x3x3x3xf32>
// CHECK: graph.dropout {{.*}} : tensor<2x27xf32>
// CHECK: graph.dropout_grad {{.*}} : tensor<2x27xf32>
// CHECK: graph.conv2d_grad_input {{.*}} : (tensor<2x3x3x3xf32>, tensor<3x3x2x3xf32>) -> tensor<2x3x3x2xf32>
// CHECK: graph.conv2d_grad_filter {{.*}} : (tensor<2x3x3x2xf32>, tensor<2x3x3x3xf32>) -> tensor<3x3x2x3xf32>
// CHECK: graph.max_pool2d_grad {{.*}} : (tensor<2x6x6x2xf32>, tensor<2x3x3x2xf32>) -> tensor<2x6x6x2xf32>
// CHECK: graph.conv2d_grad_filter {{.*}} : (tensor<2x8x8x1xf32>, tensor<2x6x6x2xf32>) -> tensor<3x3x1x2xf32>
// CHECK: graph.reshape {{.*}} : tensor<2x6x6x2xf32> -> tensor<72x2xf32>
// CHECK: graph.reduce_rows {{.*}} : tensor<72x2xf32> -> tensor<2xf32>
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.dropout
// CHECK: return

// Tests the lowering: the kernels' geometry attributes ("same" pads 1 on each side), and one
// dropout per device with its mask as a second output, numbered (stream) per device so that
// both replicas draw from the same stream, read back by dropout_grad.
// PLAN-LABEL: plan.step "train"
// PLAN: plan.kernel "conv2d" {{.*}} {activation = "relu", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// PLAN: plan.kernel "max_pool2d" {{.*}} {stride_h = 2 : i64, stride_w = 2 : i64, window_h = 2 : i64, window_w = 2 : i64}
// PLAN: plan.kernel "conv2d" {{.*}} {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// PLAN: plan.kernel "dropout" ins(%{{.*}} : memref<2x27xf32>) outs(%{{.*}}, %[[M0:.*]] : memref<2x27xf32>, memref<2x27xf32>) {rate = 5.000000e-01 : f64, stream = 0 : i64}
// PLAN: plan.kernel "dropout" ins(%{{.*}} : memref<2x27xf32>) outs(%{{.*}}, %[[M1:.*]] : memref<2x27xf32>, memref<2x27xf32>) {rate = 5.000000e-01 : f64, stream = 0 : i64}
// PLAN: plan.kernel "dropout_grad" ins(%[[M0]], %{{.*}} : memref<2x27xf32>, memref<2x27xf32>)
// PLAN: plan.kernel "dropout_grad" ins(%[[M1]], %{{.*}} : memref<2x27xf32>, memref<2x27xf32>)
// PLAN: plan.kernel "conv2d_grad_input"
// PLAN: plan.kernel "conv2d_grad_filter"
// PLAN: plan.kernel "max_pool2d_grad"
// PLAN-LABEL: plan.step "eval"
// PLAN-NOT: dropout
// PLAN: plan.output
func.func @cnn(%x: tensor<4x8x8x1xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x2xf32>
  %b1 = graph.param "conv1.bias" {init = #graph.zeros} : tensor<2xf32>
  %c1 = graph.conv2d %x, %w1, %b1 {activation = #graph.act<relu>}
      : (tensor<4x8x8x1xf32>, tensor<3x3x1x2xf32>, tensor<2xf32>) -> tensor<4x6x6x2xf32>
  %p = graph.max_pool2d %c1 {window = [2, 2], strides = [2, 2]} : tensor<4x6x6x2xf32> -> tensor<4x3x3x2xf32>
  %w2 = graph.param "conv2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x2x3xf32>
  %c2 = graph.conv2d %p, %w2 {padding = "same"} : (tensor<4x3x3x2xf32>, tensor<3x3x2x3xf32>) -> tensor<4x3x3x3xf32>
  %f = graph.flatten %c2 : tensor<4x3x3x3xf32> -> tensor<4x27xf32>
  %d = graph.dropout %f {rate = 0.5} : tensor<4x27xf32>
  %w3 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<27x3xf32>
  %y = graph.dense %d, %w3 : (tensor<4x27xf32>, tensor<27x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
