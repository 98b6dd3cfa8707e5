// RUN: dp-opt %s -graph-derive-steps | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s --check-prefix=GRAD

// Tests the steps of a regression (graph.mean_squared_error against float targets): they
// return the loss without a correct count, the eval step its predictions after it; the
// targets input has the targets role.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}, %[[T:[^:]*]]: tensor<8x2xf32> {graph.input = "target", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
// CHECK: %[[LOSS:.*]] = graph.mean_squared_error %[[Y:.*]], %[[T]]
// CHECK-NOT: graph.count_correct
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<8x2xf32> {graph.output = "logits", graph.role = "logits"})
// CHECK: %[[LOSS:.*]] = graph.mean_squared_error %[[Y:.*]], %{{.*}}
// CHECK-NEXT: return %[[LOSS]], %[[Y]] : tensor<f32>, tensor<8x2xf32>

// The gradient: graph.mean_squared_error_grad of the predictions against the targets, by
// the loss's gradient of one; the targets get none.
// GRAD-LABEL: func.func @train(
// GRAD: %[[Y:.*]] = graph.dense
// GRAD: graph.mean_squared_error %[[Y]], %[[T:[^ ]*]]
// GRAD: %[[ONE:.*]] = graph.fill
// GRAD: graph.mean_squared_error_grad %[[Y]], %[[T]], %[[ONE]] : (tensor<8x2xf32>, tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %t: tensor<8x2xf32> {graph.input = "target"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %loss = graph.mean_squared_error %y, %t : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
