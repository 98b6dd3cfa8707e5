// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff | FileCheck %s --check-prefix=GRAD

// Tests an embedding on 2 replicas: each replica's "gather" takes its 4 rows of the token ids
// (an i32 samples input) from the shared table; the table's gradient is a "gather_grad" (a
// scatter-add) over the replica's rows, which the allreduce averages.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "gather" ins(%{{.*}}, %{{.*}} : memref<16x4xf32>, memref<4x3xi32>) outs(%{{.*}} : memref<4x3x4xf32>)
// CHECK: plan.kernel "gather_grad" ins(%{{.*}}, %{{.*}} : memref<4x3x4xf32>, memref<4x3xi32>) outs(%{{.*}} : memref<16x4xf32>)
// CHECK: plan.kernel "allreduce_start"

// The gradient rule: the table's gradient is graph.gather_grad of the result's gradient by
// the same indices; the token ids get none.
// GRAD-LABEL: func.func @train(
// GRAD-SAME: %[[IDS:[^:]*]]: tensor<8x3xi32> {graph.input = "tokens", graph.role = "samples"}
// GRAD: %[[T:.*]] = graph.param "embed"
// GRAD: graph.gather %[[T]], %[[IDS]]
// GRAD: %[[DE:.*]] = graph.reshape %{{.*}} : tensor<8x12xf32> -> tensor<8x3x4xf32>
// GRAD: graph.gather_grad %[[DE]], %[[IDS]] : (tensor<8x3x4xf32>, tensor<8x3xi32>) -> tensor<16x4xf32>
func.func @m(%ids: tensor<8x3xi32> {graph.input = "tokens"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %t = graph.param "embed" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<16x4xf32>
  %e = graph.gather %t, %ids : (tensor<16x4xf32>, tensor<8x3xi32>) -> tensor<8x3x4xf32>
  %f = graph.reshape %e : tensor<8x3x4xf32> -> tensor<8x12xf32>
  %w = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<12x3xf32>
  %z = graph.dense %f, %w : (tensor<8x12xf32>, tensor<12x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
