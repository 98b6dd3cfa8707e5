// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer=shard-optimizer=1 -dist-verify -convert-dist-to-plan -plan-memory | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer=shard-optimizer=2 -dist-verify -convert-dist-to-plan -plan-memory | FileCheck %s --check-prefix=STAGE2

// Tests the lowering of sharded optimizer state's broadcast buckets: each bucket is a
// persistent plan.bucket on every device, in which the weights it copies lie one after
// another in `tensors` order, each from a 64-byte boundary (16 floats): replica 1's bucket 2
// holds dense2.kernel (15 floats) at 0, dense2.bias (3) at 16 and dense1.bias (5) at 32, 48
// floats in all; plan-memory gives each param its bucket's offset plus its slot. The
// broadcast kernels take the buckets, device by device.
// CHECK-DAG: plan.bucket 0 {offset = {{[0-9]+}} : i64, segments = array<i64: 0, 32, 80>} : memref<80xf32>
// CHECK-DAG: %[[B1_0:.*]] = plan.bucket 1 {offset = [[O1:[0-9]+]] : i64} : memref<32xf32>
// CHECK-DAG: %[[B1_1:.*]] = plan.bucket 1 {device = 1 : i64, offset = [[O1]] : i64} : memref<32xf32>
// CHECK-DAG: %[[B2_0:.*]] = plan.bucket 2 {offset = 320 : i64} : memref<48xf32>
// CHECK-DAG: %[[B2_1:.*]] = plan.bucket 2 {device = 1 : i64, offset = 320 : i64} : memref<48xf32>
// CHECK-DAG: plan.param "dense1.kernel" in %[[B1_0]] : memref<32xf32> {bucket_offset = 0 : i64, init = {{.*}}, offset = [[O1]] : i64} : memref<6x5xf32>
// CHECK-DAG: plan.param "dense1.kernel" in %[[B1_1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64, init = {{.*}}, offset = [[O1]] : i64} : memref<6x5xf32>
// CHECK-DAG: plan.param "dense2.kernel" in %[[B2_0]] : memref<48xf32> {bucket_offset = 0 : i64, init = {{.*}}, offset = 320 : i64} : memref<5x3xf32>
// CHECK-DAG: plan.param "dense2.bias" in %[[B2_0]] : memref<48xf32> {bucket_offset = 16 : i64, init = {{.*}}, offset = 384 : i64} : memref<3xf32>
// CHECK-DAG: plan.param "dense1.bias" in %[[B2_0]] : memref<48xf32> {bucket_offset = 32 : i64, init = {{.*}}, offset = 448 : i64} : memref<5xf32>
// CHECK-DAG: plan.param "dense1.bias" in %[[B2_1]] : memref<48xf32> {bucket_offset = 32 : i64, device = 1 : i64, init = {{.*}}, offset = 448 : i64} : memref<5xf32>
// The optimizer state is no bucket's.
// CHECK-DAG: plan.param "dense1.kernel/m" {init = {{.*}}, offset = {{[0-9]+}} : i64, optimizer_state} : memref<6x5xf32>
// CHECK: plan.step "train"
// CHECK: plan.kernel "broadcast_start" ins(%[[B1_0]], %[[B1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64, root = 0 : i64}
// CHECK: plan.kernel "broadcast_start" ins(%[[B2_0]], %[[B2_1]] : memref<48xf32>, memref<48xf32>) {bucket = 2 : i64, root = 1 : i64}
// CHECK-NEXT: plan.kernel "broadcast_wait" ins(%[[B1_0]], %[[B1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64, root = 0 : i64}
// CHECK-NEXT: plan.kernel "broadcast_wait" ins(%[[B2_0]], %[[B2_1]] : memref<48xf32>, memref<48xf32>) {bucket = 2 : i64, root = 1 : i64}
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.01>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// Tests (CHECK-DAG above) that the gradients' bucket is reduce-scattered (each owner's segment:
// replica 0's 32 elements, then replica 1's 48), and that under stage 2 it is transient: placed with the train
// step's buffers (at the same offset on both devices, past the persistent region), which no
// longer holds it.
// STAGE2: plan.program "mlp" attributes {arena_bytes = 1728 : i64, batch = 8 : i64, devices_per_process = 2 : i64, persistent_bytes = 896 : i64}
// STAGE2-DAG: plan.bucket 0 {offset = 896 : i64, segments = array<i64: 0, 32, 80>, transient} : memref<80xf32>
// STAGE2-DAG: plan.bucket 0 {device = 1 : i64, offset = 896 : i64, segments = array<i64: 0, 32, 80>, transient} : memref<80xf32>
// At the bucket's wait each owner copies the means its updates read out of it, into buffers
// of the step on its own device (replica 0 its one, replica 1 its three), and the updates read
// the copies: the bucket dies at the wait.
// STAGE2: plan.kernel "allreduce_wait" {{.*}} {bucket = 0 : i64}
// STAGE2-NEXT: %[[C0:.*]] = plan.alloc {offset = {{[0-9]+}} : i64} : memref<6x5xf32>
// STAGE2-NEXT: plan.kernel "copy" ins(%{{.*}} : memref<6x5xf32>) outs(%[[C0]] : memref<6x5xf32>)
// STAGE2-NEXT: %[[C1:.*]] = plan.alloc {device = 1 : i64, offset = {{[0-9]+}} : i64} : memref<5x3xf32>
// STAGE2-NEXT: plan.kernel "copy" ins(%{{.*}} : memref<5x3xf32>) outs(%[[C1]] : memref<5x3xf32>)
// STAGE2-NEXT: %[[C2:.*]] = plan.alloc {device = 1 : i64, offset = {{[0-9]+}} : i64} : memref<3xf32>
// STAGE2-NEXT: plan.kernel "copy" ins(%{{.*}} : memref<3xf32>) outs(%[[C2]] : memref<3xf32>)
// STAGE2-NEXT: %[[C3:.*]] = plan.alloc {device = 1 : i64, offset = {{[0-9]+}} : i64} : memref<5xf32>
// STAGE2-NEXT: plan.kernel "copy" ins(%{{.*}} : memref<5xf32>) outs(%[[C3]] : memref<5xf32>)
// STAGE2-NEXT: plan.kernel "adam_update" ins(%[[C1]] : memref<5x3xf32>)
// STAGE2: plan.kernel "adam_update" ins(%[[C2]] : memref<3xf32>)
// STAGE2: plan.kernel "adam_update" ins(%[[C0]] : memref<6x5xf32>)
// STAGE2: plan.kernel "adam_update" ins(%[[C3]] : memref<5xf32>)
