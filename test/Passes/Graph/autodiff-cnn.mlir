// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s

// Tests the backward pass of a small CNN (conv + relu, max-pool, conv, flatten, dropout,
// dense): each conv2d gives its filter gradient, its bias gradient as a row sum of the NHWC
// gradient seen as [N*H*W, F], and (only for the second, whose input is active) the input
// gradient; relu goes through activation_grad on the conv's output; the pool's gradient
// reads the pooled input; dropout's gradient names the forward dropout (its mask). The eval
// step has no dropout.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8x8x1xf32>
// CHECK: %[[W1:.*]] = graph.param "conv1.kernel"
// CHECK: %[[B1:.*]] = graph.param "conv1.bias"
// CHECK: %[[C1:.*]] = graph.conv2d %[[X]], %[[W1]], %[[B1]] {activation = #graph.act<relu>}
// CHECK: %[[P:.*]] = graph.max_pool2d %[[C1]] : tensor<4x6x6x2xf32> -> tensor<4x3x3x2xf32>
// CHECK: %[[W2:.*]] = graph.param "conv2.kernel"
// CHECK: %[[C2:.*]] = graph.conv2d %[[P]], %[[W2]] {padding = "same"}
// CHECK: %[[F:.*]] = graph.flatten %[[C2]]
// CHECK: %[[D:.*]] = graph.dropout %[[F]] {rate = 5.000000e-01 : f64} : tensor<4x27xf32>
// CHECK: %[[DD:.*]] = graph.matmul %{{.*}}, %{{.*}} {transpose_rhs}
// CHECK: %[[DF:.*]] = graph.dropout_grad %[[D]], %[[DD]] {rate = 5.000000e-01 : f64} : tensor<4x27xf32>
// CHECK-NEXT: %[[DC2:.*]] = graph.reshape %[[DF]] : tensor<4x27xf32> -> tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[DP:.*]] = graph.conv2d_grad_input %[[DC2]], %[[W2]] {padding = "same"} : (tensor<4x3x3x3xf32>, tensor<3x3x2x3xf32>) -> tensor<4x3x3x2xf32>
// CHECK-NEXT: %[[DW2:.*]] = graph.conv2d_grad_filter %[[P]], %[[DC2]] {padding = "same"} : (tensor<4x3x3x2xf32>, tensor<4x3x3x3xf32>) -> tensor<3x3x2x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[W2]], %[[DW2]]
// CHECK-NEXT: %[[DC1:.*]] = graph.max_pool2d_grad %[[C1]], %[[DP]] : (tensor<4x6x6x2xf32>, tensor<4x3x3x2xf32>) -> tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[DZ1:.*]] = graph.activation_grad %[[C1]], %[[DC1]] {activation = #graph.act<relu>} : tensor<4x6x6x2xf32>
// CHECK-NEXT: %[[DW1:.*]] = graph.conv2d_grad_filter %[[X]], %[[DZ1]] : (tensor<4x8x8x1xf32>, tensor<4x6x6x2xf32>) -> tensor<3x3x1x2xf32>
// CHECK-NEXT: %[[ROWS:.*]] = graph.reshape %[[DZ1]] : tensor<4x6x6x2xf32> -> tensor<144x2xf32>
// CHECK-NEXT: %[[DB1:.*]] = graph.reduce_rows %[[ROWS]] : tensor<144x2xf32> -> tensor<2xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1]], %[[DW1]]
// CHECK-NEXT: graph.apply_gradient %[[B1]], %[[DB1]]
// CHECK-NOT: conv2d_grad_input
// CHECK: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.dropout
// CHECK: return
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
