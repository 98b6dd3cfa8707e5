// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2 micro-batch=2" -dist-split-batch -dist-accumulate | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate="devices-per-process=2 micro-batch=2" -dist-split-batch -dist-accumulate -dist-insert-allreduce -dist-fuse-allreduce -dist-schedule -dist-verify -convert-dist-to-plan | FileCheck %s --check-prefix=PLAN
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate="micro-batch=4" -dist-split-batch -dist-accumulate -dist-insert-allreduce -dist-verify -convert-dist-to-plan | FileCheck %s --check-prefix=ONE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate="micro-batch=2" -dist-split-batch -dist-accumulate -dist-insert-allreduce -dist-verify -convert-dist-to-plan | FileCheck %s --check-prefix=FOUR
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2" -dist-split-batch -dist-accumulate | FileCheck %s --check-prefix=NONE

// Tests that with R = 2 devices and micro-batches of 2 rows the 8-row batch is cut into
// R x M = 2 x 2 micro-shards (each replica reads shard r of 4 through dist.shard, the mesh says
// accumulation = 2), and that each gradient an update reads goes through a dist.accumulate of
// count 2 right after it is computed, on its replica; the updates read the sums.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu", accumulation = 2>
// CHECK: dist.shard %arg0 {dist.replica = 0 : i64, replica = 0 : i64, shards = 4 : i64} : tensor<8x6xf32> -> tensor<2x6xf32>
// CHECK: %[[G0:.*]] = graph.matmul %{{.*}}, %{{.*}} {dist.replica = 0 : i64, transpose_lhs} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[A0:.*]] = dist.accumulate %[[G0]] {count = 2 : i64, dist.replica = 0 : i64} : tensor<5x3xf32>
// CHECK-NEXT: %[[G1:.*]] = graph.matmul %{{.*}}, %{{.*}} {dist.replica = 1 : i64, transpose_lhs} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[A1:.*]] = dist.accumulate %[[G1]] {count = 2 : i64, dist.replica = 1 : i64} : tensor<5x3xf32>
// CHECK: graph.apply_gradient %{{.*}}, %[[A0]] {dist.replica = 0 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[A1]] {dist.replica = 1 : i64} : tensor<5x3xf32>
// CHECK-COUNT-4: dist.accumulate
// CHECK-NOT: dist.accumulate
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu", accumulation = 2>
// CHECK-NOT: dist.accumulate

// In the plan: the program says accumulation = 2; each gradient is computed into a fresh buffer
// and summed by an accumulate kernel (not final) into its bucket slot; the collectives and the
// updates that read the sums are final, the forward and backward kernels are not, and nothing
// of the eval step is.
// PLAN: plan.program "mlp" attributes {accumulation = 2 : i64, batch = 8 : i64, devices_per_process = 2 : i64}
// PLAN: %[[SLOT:.*]] = plan.grad "dense2.kernel" in %{{.*}} {bucket_offset = 0 : i64}
// PLAN: plan.step "train"
// PLAN-NOT: final
// PLAN: plan.kernel "matmul" ins(%{{.*}}, %{{.*}} : memref<2x5xf32>, memref<2x3xf32>) outs(%[[G:.*]] : memref<5x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// PLAN-NEXT: plan.kernel "accumulate" ins(%[[G]] : memref<5x3xf32>) outs(%[[SLOT]] : memref<5x3xf32>) {count = 2 : i64}
// PLAN: plan.kernel "allreduce_start" {{.*}} {bucket = {{[0-9]+}} : i64, final}
// PLAN: plan.kernel "allreduce_wait" {{.*}} {bucket = {{[0-9]+}} : i64, final}
// PLAN: plan.kernel "sgd_update" {{.*}} {final, lr = 1.000000e-01 : f64}
// PLAN: plan.step "eval"
// PLAN-NOT: final

// On one device, micro-batches of 4 rows: M = 2; the sums go to the gradients' persistent
// buffers, and only the updates are final.
// ONE: plan.program "mlp" attributes {accumulation = 2 : i64, batch = 8 : i64}
// ONE: plan.step "train"
// ONE-NOT: final
// ONE: plan.kernel "accumulate" ins(%{{.*}} : memref<5x3xf32>) outs(%{{.*}} : memref<5x3xf32>) {count = 2 : i64}
// ONE-NOT: allreduce
// ONE: plan.kernel "sgd_update" {{.*}} {final, lr = 1.000000e-01 : f64}

// With M = 4 micro-shards the tree of sums keeps one level past the sum: a persistent buffer of
// partial sums per gradient, the accumulate kernel's output 1.
// FOUR: plan.program "mlp" attributes {accumulation = 4 : i64, batch = 8 : i64}
// FOUR-DAG: %[[P:.*]] = plan.grad "dense2.kernel.partial_sums" : memref<1x15xf32>
// FOUR-DAG: %[[G:.*]] = plan.grad "dense2.kernel" : memref<5x3xf32>
// FOUR: plan.kernel "accumulate" ins(%{{.*}} : memref<5x3xf32>) outs(%[[G]], %[[P]] : memref<5x3xf32>, memref<1x15xf32>) {count = 4 : i64}

// Without a micro-batch nothing changes: no accumulation on the mesh, no dist.accumulate.
// NONE: dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">
// NONE-NOT: accumulat
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
