// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer="shard-optimizer=1 bucket-mb=0" -dist-verify | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s --check-prefix=BUCKETS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-shard-optimizer="shard-optimizer=1 bucket-mb=0" -dist-verify | FileCheck %s --check-prefix=CLIP
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer | FileCheck %s --check-prefix=OFF
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=8 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s --check-prefix=IDLE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2 processes=2" -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer="shard-optimizer=1 bucket-mb=0" -dist-verify | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer=shard-optimizer=1 -dist-verify | FileCheck %s --check-prefix=ONEDEV
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-shard-optimizer="shard-optimizer=1 bucket-mb=0.00013" -dist-verify | FileCheck %s --check-prefix=CAP
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0 -graph-expand-optimizer -dist-schedule -dist-shard-optimizer="shard-optimizer=2 bucket-mb=0" -dist-verify | FileCheck %s --check-prefix=STAGE2

// Tests that each parameter's Adam state lives on one replica, largest first onto the
// replica with the fewest bytes (dense1.kernel's 240 bytes on replica 0, the other three's
// 184 on replica 1), that only the owner updates it, that with a cap of 0 (bucket-mb=0) a
// broadcast from the owner of the parameter's two copies follows each update (buckets after
// the allreduce's, in the updates' order), and that their waits end the step. The gradients'
// bucket is reduce-scattered: its tensors ordered by owner, each mean read by its owner only.
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
// CHECK: dist.allreduce_start {{.*}} {bucket = 0 : i64, owners = array<i64: 0, 1, 1, 1>, replicas = 2 : i64, tensors = ["dense1.kernel", "dense2.kernel", "dense2.bias", "dense1.bias"]}
// CHECK: %[[M:.*]]:8 = dist.allreduce_wait
// CHECK-NEXT: graph.adam_update %[[W2_1]], {{.*}}, %[[M]]#5 {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: %[[B1:[0-9]+]] = dist.broadcast_start %[[W2_0]], %[[W2_1]] {bucket = 1 : i64, root = 1 : i64, tensors = ["dense2.kernel"]}
// CHECK-NEXT: graph.adam_update {{.*}}, %[[M]]#6 {{.*}}dist.replica = 1 : i64
// CHECK-NEXT: %[[B2:[0-9]+]] = dist.broadcast_start {{.*}} {bucket = 2 : i64, root = 1 : i64, tensors = ["dense2.bias"]}
// CHECK-NEXT: graph.adam_update %[[W1_0]], {{.*}}, %[[M]]#0 {{.*}}dist.replica = 0 : i64
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

// Tests that by default each owner's parameters travel in one bucket, in the order of its
// updates, replica 0's copies first: replica 1's three after the last of their updates.
// BUCKETS: %[[M:.*]]:8 = dist.allreduce_wait
// BUCKETS-NEXT: graph.adam_update %[[W2:[0-9]+]], {{.*}}, %[[M]]#5 {{.*}}dist.replica = 1 : i64
// BUCKETS-NEXT: graph.adam_update %[[B2:[0-9]+]], {{.*}}, %[[M]]#6 {{.*}}dist.replica = 1 : i64
// BUCKETS-NEXT: graph.adam_update %[[W1:[0-9]+]], {{.*}}, %[[M]]#0 {{.*}}dist.replica = 0 : i64
// BUCKETS-NEXT: %[[P1:.*]] = dist.broadcast_start %[[W1]], %{{.*}} {bucket = 1 : i64, root = 0 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>, tensor<6x5xf32>
// BUCKETS-NEXT: graph.adam_update %[[B1:[0-9]+]], {{.*}}, %[[M]]#7 {{.*}}dist.replica = 1 : i64
// BUCKETS-NEXT: %[[P2:.*]] = dist.broadcast_start %{{.*}}, %{{.*}}, %{{.*}}, %[[W2]], %[[B2]], %[[B1]] {bucket = 2 : i64, root = 1 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.bias"]} : tensor<5x3xf32>, tensor<3xf32>, tensor<5xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<5xf32>
// BUCKETS-NEXT: dist.broadcast_wait %[[P1]]
// BUCKETS-NEXT: dist.broadcast_wait %[[P2]]
// BUCKETS-NEXT: return

// Tests that a bucket holds no more than the cap, counting each parameter as the slot it takes
// in the bucket, from a 64-byte boundary (bucket-mb=0.00013 is 136 bytes: dense2's kernel of 60
// and bias of 12, 64 bytes each, share one, which starts after the bias's update; dense1's
// bias of 20 would pass it and opens another; unpadded, all three would fit).
// CAP: %[[M:.*]]:8 = dist.allreduce_wait
// CAP-NEXT: graph.adam_update {{.*}}, %[[M]]#5
// CAP-NEXT: graph.adam_update {{.*}}, %[[M]]#6
// CAP-NEXT: dist.broadcast_start {{.*}} {bucket = 1 : i64, root = 1 : i64, tensors = ["dense2.kernel", "dense2.bias"]}
// CAP-NEXT: graph.adam_update {{.*}}, %[[M]]#0
// CAP-NEXT: dist.broadcast_start {{.*}} {bucket = 2 : i64, root = 0 : i64, tensors = ["dense1.kernel"]}
// CAP-NEXT: graph.adam_update {{.*}}, %[[M]]#7
// CAP-NEXT: dist.broadcast_start {{.*}} {bucket = 3 : i64, root = 1 : i64, tensors = ["dense1.bias"]}

// Tests that under clipping each replica's factor still reads every averaged gradient of its
// replica (the norm is that of all), while its updates are its share.
// CLIP-NOT: owners
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

// Tests that with 2 processes of 2 devices the owners are the job's 4 replicas (replica r of
// process p counts as 2p + r), largest state first: dense1.kernel's 240 bytes on process 0's
// replica 0, dense2.kernel's 120 on its replica 1, dense1.bias's 40 and dense2.bias's 24 on
// process 1's replicas 0 and 1; the owner's update and state carry its process, and the
// broadcast from it names the process.
// PROCS-DAG: graph.param "dense1.kernel/m" {dist.process = 0 : i64, dist.replica = 0 : i64
// PROCS-DAG: graph.param "dense2.kernel/v" {dist.process = 0 : i64, dist.replica = 1 : i64
// PROCS-DAG: graph.param "dense1.bias/m" {dist.process = 1 : i64, dist.replica = 0 : i64
// PROCS-DAG: graph.param "dense2.bias/v" {dist.process = 1 : i64, dist.replica = 1 : i64
// PROCS: dist.allreduce_start {{.*}} {bucket = 0 : i64, owners = array<i64: 0, 1, 2, 3>, replicas = 2 : i64, tensors = ["dense1.kernel", "dense2.kernel", "dense1.bias", "dense2.bias"]}
// PROCS: graph.adam_update {{.*}}dist.process = 0 : i64, dist.replica = 1 : i64
// PROCS-NEXT: dist.broadcast_start {{.*}} {bucket = 1 : i64, process = 0 : i64, root = 1 : i64, tensors = ["dense2.kernel"]}
// PROCS-NEXT: graph.adam_update {{.*}}dist.process = 1 : i64, dist.replica = 1 : i64
// PROCS-NEXT: dist.broadcast_start {{.*}} {bucket = 2 : i64, process = 1 : i64, root = 1 : i64, tensors = ["dense2.bias"]}
// PROCS-NEXT: graph.adam_update {{.*}}dist.process = 0 : i64, dist.replica = 0 : i64
// PROCS-NEXT: dist.broadcast_start {{.*}} {bucket = 3 : i64, process = 0 : i64, root = 0 : i64, tensors = ["dense1.kernel"]}
// PROCS-NEXT: graph.adam_update {{.*}}dist.process = 1 : i64, dist.replica = 0 : i64
// PROCS-NEXT: dist.broadcast_start {{.*}} {bucket = 4 : i64, process = 1 : i64, root = 0 : i64, tensors = ["dense1.bias"]}
// PROCS-COUNT-4: dist.broadcast_wait
// PROCS-NEXT: return

// Tests that with 2 processes of 1 device each process is a replica: dense1.kernel's state on
// process 0, the three others' (120 + 40 + 24 bytes) on process 1; each process's bucket
// has one group of operands, the process's copies (one parameter, then three).
// ONEDEV-DAG: graph.param "dense1.kernel/m" {dist.process = 0 : i64, init
// ONEDEV-DAG: graph.param "dense2.kernel/m" {dist.process = 1 : i64, init
// ONEDEV-DAG: graph.param "dense1.bias/m" {dist.process = 1 : i64, init
// ONEDEV-DAG: graph.param "dense2.bias/m" {dist.process = 1 : i64, init
// ONEDEV: dist.allreduce_start {{.*}} {bucket = 0 : i64, owners = array<i64: 0, 1, 1, 1>, replicas = 1 : i64
// ONEDEV: dist.broadcast_start %{{[0-9]+}} {bucket = 1 : i64, process = 0 : i64, root = 0 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>{{$}}
// ONEDEV: dist.broadcast_start %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {bucket = 2 : i64, process = 1 : i64, root = 0 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.bias"]} : tensor<5x3xf32>, tensor<3xf32>, tensor<5xf32>{{$}}

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

// Tests that under stage 2 each reduce-scattered bucket is waited for as soon as the next one
// has started (one bucket a gradient here: bucket-mb=0), while the backward pass goes on,
// the waits in the starts' order; the last bucket's wait stays before its update.
// STAGE2-LABEL: func.func @train(
// STAGE2-SAME: dist.shard_optimizer = 2 : i64
// STAGE2: %[[S0:.*]] = dist.allreduce_start {{.*}} {bucket = 0 : i64, owners = array<i64: 1>, replicas = 2 : i64, tensors = ["dense2.kernel"]}
// STAGE2: %[[S1:.*]] = dist.allreduce_start {{.*}} {bucket = 1 : i64, owners = array<i64: 1>, replicas = 2 : i64, tensors = ["dense2.bias"]}
// STAGE2-NEXT: dist.allreduce_wait %[[S0]]
// STAGE2-NEXT: graph.activation_grad
// STAGE2: %[[S2:.*]] = dist.allreduce_start {{.*}} {bucket = 2 : i64, owners = array<i64: 0>, replicas = 2 : i64, tensors = ["dense1.kernel"]}
// STAGE2-NEXT: dist.allreduce_wait %[[S1]]
// STAGE2-NEXT: graph.reduce_rows
// STAGE2: %[[S3:.*]] = dist.allreduce_start {{.*}} {bucket = 3 : i64, owners = array<i64: 1>, replicas = 2 : i64, tensors = ["dense1.bias"]}
// STAGE2-NEXT: dist.allreduce_wait %[[S2]]
// STAGE2-NEXT: graph.adam_update
// STAGE2: dist.allreduce_wait %[[S3]]
// STAGE2-NEXT: graph.adam_update
