// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s

// Tests the lowering of graph.mean_squared_error on 2 replicas: each replica's "squared_error"
// and "squared_error_grad" kernels take its 4 rows of the predictions and of the float
// targets; the steps have no correct output.
// CHECK-LABEL: plan.step "train"
// CHECK: plan.kernel "squared_error" ins(%{{.*}}, %{{.*}} : memref<4x2xf32>, memref<4x2xf32>) outs(%{{.*}} : memref<f32>)
// CHECK: plan.kernel "squared_error_grad" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<4x2xf32>, memref<4x2xf32>, memref<f32>) outs(%{{.*}} : memref<4x2xf32>)
// CHECK-NOT: count_correct
// CHECK-LABEL: plan.step "eval"
// CHECK: plan.kernel "squared_error" ins(%{{.*}}, %{{.*}} : memref<4x2xf32>, memref<4x2xf32>) outs(%{{.*}} : memref<f32>)
// CHECK-NOT: count_correct
func.func @m(%x: tensor<8x4xf32> {graph.input = "x"}, %t: tensor<8x2xf32> {graph.input = "target"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
  %loss = graph.mean_squared_error %y, %t : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
