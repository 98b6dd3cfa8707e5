// Tests that the gradients of a single-head attention, softmax(alpha q k^T) v with q, k and v
// in [N, heads, T, d] (transpose and batch_matmul with both operands and their transposes),
// match finite differences of the loss.
// REQUIRES: dprun
// RUN: dpc compile %s -o %t.dpx --quiet
// RUN: dprun %t.dpx --check-gradients | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: gradient check passed
func.func @m(%x: tensor<8x6xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %wq = graph.param "q.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %wk = graph.param "k.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %wv = graph.param "v.kernel" {init = #graph.glorot_uniform} : tensor<6x24xf32>
  %hq = graph.dense %x, %wq : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %hk = graph.dense %x, %wk : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  %hv = graph.dense %x, %wv : (tensor<8x6xf32>, tensor<6x24xf32>) -> tensor<8x24xf32>
  // Tokens [N, T = 3, heads = 2, d = 4] to [N, heads, T, d].
  %rq = graph.reshape %hq : tensor<8x24xf32> -> tensor<8x3x2x4xf32>
  %rk = graph.reshape %hk : tensor<8x24xf32> -> tensor<8x3x2x4xf32>
  %rv = graph.reshape %hv : tensor<8x24xf32> -> tensor<8x3x2x4xf32>
  %q = graph.transpose %rq [0, 2, 1, 3] : tensor<8x3x2x4xf32> -> tensor<8x2x3x4xf32>
  %k = graph.transpose %rk [0, 2, 1, 3] : tensor<8x3x2x4xf32> -> tensor<8x2x3x4xf32>
  %v = graph.transpose %rv [0, 2, 1, 3] : tensor<8x3x2x4xf32> -> tensor<8x2x3x4xf32>
  %s = graph.batch_matmul %q, %k {transpose_rhs, alpha = 0.5 : f64} : (tensor<8x2x3x4xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x3xf32>
  %p = graph.softmax %s : tensor<8x2x3x3xf32>
  %o = graph.batch_matmul %p, %v : (tensor<8x2x3x3xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x4xf32>
  // A transposed product too: p^T v.
  %t = graph.batch_matmul %p, %v {transpose_lhs} : (tensor<8x2x3x3xf32>, tensor<8x2x3x4xf32>) -> tensor<8x2x3x4xf32>
  %ot = graph.transpose %o [0, 2, 1, 3] : tensor<8x2x3x4xf32> -> tensor<8x3x2x4xf32>
  %f = graph.reshape %ot : tensor<8x3x2x4xf32> -> tensor<8x24xf32>
  %ft = graph.reshape %t : tensor<8x2x3x4xf32> -> tensor<8x24xf32>
  %w2 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %w3 = graph.param "out2.kernel" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %z1 = graph.dense %f, %w2 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %z2 = graph.dense %ft, %w3 : (tensor<8x24xf32>, tensor<24x3xf32>) -> tensor<8x3xf32>
  %z = graph.add %z1, %z2 : tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
