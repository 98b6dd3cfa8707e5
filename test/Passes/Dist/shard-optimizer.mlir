// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s --check-prefix=CLIP
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer | FileCheck %s --check-prefix=OFF
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=8 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s --check-prefix=IDLE

// Tests that each parameter's Adam state lives on one replica, largest first onto the
// replica with the fewest bytes (dense1.kernel's 240 bytes on replica 0, the other three's
// 184 on replica 1), that only the owner updates it, that a broadcast from the owner of the
// parameter's two copies follows each update (buckets after the allreduce's, in the updates'
// order), and that their waits end the step.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: dist.shard_optimizer = 1 : i64
// CHECK-DAG: %[[W1_0:.*]] = graph.param "dense1.kernel" {dist.replica = 0 : i64
// CHECK-DAG: %[[W1_1:.*]] = graph.param "dense1.kernel" {dist.replica = 1 : i64
// CHECK-DAG: graph.param "dense1.kernel/m" {dist.replica = 0 : i64
// CHECK-DAG: graph.param "dense1.kernel/v" {dist.replica = 0 : i64
// CHECK-DAG: %[[W2_0:.*]] = graph.param "dense2.kernel" {dist.replica = 0 : i64
// CHECK-DAG: %[[W2_1:.*]] = graph.param "dense2.kernel" {dist.replica = 1 : i64
// CHECK-DAG: graph.param "dense2.kernel/m" {dist.replica = 1 : i64
// CHECK-DAG: graph.param "dense1.bias/m" {dist.replica = 1 : i64
// CHECK-DAG: graph.param "dense2.bias/v" {dist.replica = 1 : i64
// CHECK-NOT: graph.param "dense1.kernel/{{m|v}}" {dist.replica = 1
// CHECK: %[[M:.*]]:8 = dist.allreduce_wait
// CHECK-NEXT: graph.adam_update %[[W2_1]], {{.*}}, %[[M]]#4 {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: %[[B1:.*]] = dist.broadcast_start %[[W2_0]], %[[W2_1]] {bucket = 1 : i64, root = 1 : i64, tensors = ["dense2.kernel"]}
// CHECK-NEXT: graph.adam_update {{.*}}, %[[M]]#5 {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: %[[B2:.*]] = dist.broadcast_start {{.*}} {bucket = 2 : i64, root = 1 : i64, tensors = ["dense2.bias"]}
// CHECK-NEXT: graph.adam_update %[[W1_0]], {{.*}}, %[[M]]#2 {{.*}}dist.replica = 0 : i64
// CHECK-NEXT: %[[B3:.*]] = dist.broadcast_start %[[W1_0]], %[[W1_1]] {bucket = 3 : i64, root = 0 : i64, tensors = ["dense1.kernel"]}
// CHECK-NEXT: graph.adam_update {{.*}}, %[[M]]#7 {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: %[[B4:.*]] = dist.broadcast_start {{.*}} {bucket = 4 : i64, root = 1 : i64, tensors = ["dense1.bias"]}
// CHECK-NEXT: dist.broadcast_wait %[[B1]]
// CHECK-NEXT: dist.broadcast_wait %[[B2]]
// CHECK-NEXT: dist.broadcast_wait %[[B3]]
// CHECK-NEXT: dist.broadcast_wait %[[B4]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: dist.broadcast
// CHECK: return

// Tests that under clipping each replica's factor still reads every averaged gradient of its
// replica (the norm is that of all), while its updates are its share.
// CLIP: %[[M:.*]]:8 = dist.allreduce_wait
// CLIP-NEXT: %[[F0:.*]] = graph.clip_factor %[[M]]#0, %[[M]]#1, %[[M]]#2, %[[M]]#3 {dist.replica = 0 : i64
// CLIP-NEXT: %[[F1:.*]] = graph.clip_factor %[[M]]#4, %[[M]]#5, %[[M]]#6, %[[M]]#7 {dist.replica = 1 : i64
// CLIP-NEXT: graph.adam_update {{.*}}, %[[M]]#4 scale(%[[F1]] : tensor<f32>)
// CLIP-NEXT: dist.broadcast_start
// CLIP-NEXT: graph.adam_update {{.*}}, %[[M]]#5 scale(%[[F1]] : tensor<f32>)
// CLIP-NEXT: dist.broadcast_start
// CLIP-NEXT: graph.adam_update {{.*}}, %[[M]]#2 scale(%[[F0]] : tensor<f32>)
// CLIP-NEXT: dist.broadcast_start
// CLIP-NEXT: graph.adam_update {{.*}}, %[[M]]#7 scale(%[[F1]] : tensor<f32>)
// CLIP-NEXT: dist.broadcast_start

// Tests that on 8 replicas, 4 of which own none of the 4 parameters, only the owners keep a
// clip factor (the others' would compute a norm nothing reads).
// IDLE-LABEL: func.func @train(
// IDLE-COUNT-4: graph.clip_factor
// IDLE-NOT: graph.clip_factor
// IDLE: return

// Tests that stage 0 (the default) changes nothing.
// OFF-NOT: dist.broadcast
// OFF-NOT: dist.shard_optimizer
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
