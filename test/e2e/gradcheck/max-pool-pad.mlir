// Tests that the gradients through a max pool whose pads hold the lowest float (its input a
// convolution's, which may be negative: ONNX's and PyTorch's -inf padding) match finite
// differences of the loss, and that the plan pads with it.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --inspect | FileCheck %s --check-prefix=PLAN
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// PLAN: zero_pad2d{{.*}}lowest
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<4x6x6x1xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x4xf32>
  %b = graph.param "conv.bias" {init = #graph.uniform<low = -0.5, high = 0.5>} : tensor<4xf32>
  %c = graph.conv2d %x, %k, %b {strides = [1, 1], padding = "valid"} : (tensor<4x6x6x1xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<4x4x4x4xf32>
  %p = graph.zero_pad2d %c {padding = [1, 1, 1, 1], lowest} : tensor<4x4x4x4xf32> -> tensor<4x6x6x4xf32>
  %m = graph.max_pool2d %p {window = [3, 3], strides = [2, 2]} : tensor<4x6x6x4xf32> -> tensor<4x2x2x4xf32>
  %f = graph.reshape %m : tensor<4x2x2x4xf32> -> tensor<4x16xf32>
  %w = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<16x3xf32>
  %z = graph.dense %f, %w : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
