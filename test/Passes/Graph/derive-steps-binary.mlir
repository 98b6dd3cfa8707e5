// RUN: dp-opt %s -graph-derive-steps | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s --check-prefix=GRAD

// Tests the steps of yes/no outputs (graph.sigmoid_cross_entropy against float targets): they
// return the loss and the binary accuracy's count (graph.count_binary_correct), the eval step
// its logits after them; the targets input has the targets role.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[T:[^:]*]]: tensor<8x2xf32> {graph.input = "target", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"})
// CHECK: %[[LOSS:.*]] = graph.sigmoid_cross_entropy %[[Y:.*]], %[[T]]
// CHECK-NEXT: %[[C:.*]] = graph.count_binary_correct %[[Y]], %[[T]] : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]], %[[C]] : tensor<f32>, tensor<f32>
// CHECK-LABEL: func.func @eval(
// CHECK: graph.sigmoid_cross_entropy
// CHECK-NEXT: graph.count_binary_correct
// CHECK-NEXT: return {{.*}} : tensor<f32>, tensor<f32>, tensor<8x2xf32>

// The gradient: graph.sigmoid_cross_entropy_grad of the logits against the targets, by the
// loss's gradient of one; the targets get none.
// GRAD-LABEL: func.func @train(
// GRAD: %[[Y:.*]] = graph.dense
// GRAD: graph.sigmoid_cross_entropy %[[Y]], %[[T:[^ ]*]]
// GRAD: %[[ONE:.*]] = graph.fill
// GRAD: graph.sigmoid_cross_entropy_grad %[[Y]], %[[T]], %[[ONE]] : (tensor<8x2xf32>, tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %t: tensor<8x2xf32> {graph.input = "target"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %loss = graph.sigmoid_cross_entropy %y, %t : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
