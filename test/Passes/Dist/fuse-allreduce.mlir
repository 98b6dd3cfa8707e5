// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0 | FileCheck %s --check-prefix=EACH
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 | FileCheck %s --check-prefix=CAP
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce | FileCheck %s --check-prefix=ALL
// RUN: not dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=-1 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -dist-fuse-allreduce 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce "-dist-fuse-allreduce=first-bucket-mb=0.00006" | FileCheck %s --check-prefix=FIRST
// RUN: not dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=first-bucket-mb=-2 2>&1 | FileCheck %s --check-prefix=NEG-FIRST

// The gradients per replica, in the order the backward pass completes them: dense2.kernel
// 5x3 (60 bytes), dense2.bias 3 (12), dense1.kernel 6x5 (120), dense1.bias 5 (20).

// Tests that bucket-mb = 0 gives every gradient its own bucket, numbered in order, in place.
// EACH-LABEL: func.func @train(
// EACH: %[[A0:.*]]:2 = dist.allreduce %{{.*}}, %{{.*}} {bucket = 0 : i64, replicas = 2 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>, tensor<5x3xf32>
// EACH-NEXT: graph.apply_gradient %{{.*}}, %[[A0]]#0 {dist.replica = 0 : i64} : tensor<5x3xf32>
// EACH-NEXT: graph.apply_gradient %{{.*}}, %[[A0]]#1 {dist.replica = 1 : i64} : tensor<5x3xf32>
// EACH-NEXT: %[[A1:.*]]:2 = dist.allreduce %{{.*}}, %{{.*}} {bucket = 1 : i64, replicas = 2 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>, tensor<3xf32>
// EACH-NEXT: graph.apply_gradient %{{.*}}, %[[A1]]#0 {dist.replica = 0 : i64} : tensor<3xf32>
// EACH-NEXT: graph.apply_gradient %{{.*}}, %[[A1]]#1 {dist.replica = 1 : i64} : tensor<3xf32>
// EACH: dist.allreduce {{.*}} {bucket = 2 : i64, replicas = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>, tensor<6x5xf32>
// EACH: dist.allreduce {{.*}} {bucket = 3 : i64, replicas = 2 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>, tensor<5xf32>
// EACH-NOT: dist.allreduce
// EACH-LABEL: func.func @eval(
// EACH-NOT: dist.allreduce

// Tests that a cap of 0.0001 MiB (104 bytes) packs the two dense2 gradients (72 bytes) into
// bucket 0, placed where the later one (dense2.bias) is ready, with operands replica by
// replica (replica 0's kernel and bias, then replica 1's) and the updates of dense2.kernel
// moved after it, each taking its mean from the fused results; that dense1.kernel (120 bytes,
// over the cap) gets a bucket of its own, and dense1.bias, which does not fit with it, the next.
// CAP-LABEL: func.func @train(
// CAP: %[[W2_0:.*]] = graph.param "dense2.kernel" {dist.replica = 0 : i64
// CAP-NEXT: %[[W2_1:.*]] = graph.param "dense2.kernel" {dist.replica = 1 : i64
// CAP-NEXT: %[[B2_0:.*]] = graph.param "dense2.bias" {dist.replica = 0 : i64
// CAP-NEXT: %[[B2_1:.*]] = graph.param "dense2.bias" {dist.replica = 1 : i64
// CAP: %[[DW2_0:.*]] = graph.matmul {{.*}} {dist.replica = 0 : i64, transpose_lhs}
// CAP-NEXT: %[[DW2_1:.*]] = graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_lhs}
// CAP-NEXT: %[[DB2_0:.*]] = graph.reduce_rows
// CAP-NEXT: %[[DB2_1:.*]] = graph.reduce_rows
// CAP-NEXT: %[[M:.*]]:4 = dist.allreduce %[[DW2_0]], %[[DB2_0]], %[[DW2_1]], %[[DB2_1]] {bucket = 0 : i64, replicas = 2 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<5x3xf32>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>
// CAP-NEXT: graph.apply_gradient %[[W2_0]], %[[M]]#0 {dist.replica = 0 : i64} : tensor<5x3xf32>
// CAP-NEXT: graph.apply_gradient %[[W2_1]], %[[M]]#2 {dist.replica = 1 : i64} : tensor<5x3xf32>
// CAP-NEXT: graph.apply_gradient %[[B2_0]], %[[M]]#1 {dist.replica = 0 : i64} : tensor<3xf32>
// CAP-NEXT: graph.apply_gradient %[[B2_1]], %[[M]]#3 {dist.replica = 1 : i64} : tensor<3xf32>
// CAP-NEXT: graph.activation_grad
// CAP-NEXT: graph.activation_grad
// CAP-NEXT: %[[DW1_0:.*]] = graph.matmul
// CAP-NEXT: %[[DW1_1:.*]] = graph.matmul
// CAP-NEXT: %[[DB1_0:.*]] = graph.reduce_rows
// CAP-NEXT: %[[DB1_1:.*]] = graph.reduce_rows
// CAP-NEXT: %[[K:.*]]:2 = dist.allreduce %[[DW1_0]], %[[DW1_1]] {bucket = 1 : i64, replicas = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>, tensor<6x5xf32>
// CAP-NEXT: graph.apply_gradient %{{.*}}, %[[K]]#0 {dist.replica = 0 : i64} : tensor<6x5xf32>
// CAP-NEXT: graph.apply_gradient %{{.*}}, %[[K]]#1 {dist.replica = 1 : i64} : tensor<6x5xf32>
// CAP-NEXT: %[[B:.*]]:2 = dist.allreduce %[[DB1_0]], %[[DB1_1]] {bucket = 2 : i64, replicas = 2 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>, tensor<5xf32>
// CAP-NEXT: graph.apply_gradient %{{.*}}, %[[B]]#0 {dist.replica = 0 : i64} : tensor<5xf32>
// CAP-NEXT: graph.apply_gradient %{{.*}}, %[[B]]#1 {dist.replica = 1 : i64} : tensor<5xf32>
// CAP-NEXT: return

// Tests that the cap is per replica: one replica per process packs the same buckets.
// PROCS-LABEL: func.func @train(
// PROCS: %[[M:.*]]:2 = dist.allreduce %{{.*}}, %{{.*}} {bucket = 0 : i64, replicas = 1 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<5x3xf32>, tensor<3xf32>
// PROCS-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#0 : tensor<5x3xf32>
// PROCS-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#1 : tensor<3xf32>
// PROCS: dist.allreduce %{{.*}} {bucket = 1 : i64, replicas = 1 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// PROCS: dist.allreduce %{{.*}} {bucket = 2 : i64, replicas = 1 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>

// Tests that the default cap (25 MiB) fuses all four into one bucket where the last gradient
// is ready, after the whole backward pass, with every update moved after it.
// ALL-LABEL: func.func @train(
// ALL-NOT: dist.allreduce
// ALL: %[[DB1_1:.*]] = graph.reduce_rows %{{.*}} {dist.replica = 1 : i64} : tensor<4x5xf32> -> tensor<5xf32>
// ALL-NEXT: %[[M:.*]]:8 = dist.allreduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DB1_1]] {bucket = 0 : i64, replicas = 2 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.kernel", "dense1.bias"]} : tensor<5x3xf32>, tensor<3xf32>, tensor<6x5xf32>, tensor<5xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<6x5xf32>, tensor<5xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#0 {dist.replica = 0 : i64} : tensor<5x3xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#4 {dist.replica = 1 : i64} : tensor<5x3xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#1 {dist.replica = 0 : i64} : tensor<3xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#5 {dist.replica = 1 : i64} : tensor<3xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#2 {dist.replica = 0 : i64} : tensor<6x5xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#6 {dist.replica = 1 : i64} : tensor<6x5xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#3 {dist.replica = 0 : i64} : tensor<5xf32>
// ALL-NEXT: graph.apply_gradient %{{.*}}, %[[M]]#7 {dist.replica = 1 : i64} : tensor<5xf32>
// ALL-NEXT: return

// Tests that a negative cap is rejected, and that buckets are formed once.
// NEG: error: dist-fuse-allreduce: bucket-mb must not be negative, found -1
// TWICE: error: 'dist.allreduce' op is already bucketed (dist-fuse-allreduce runs once)
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

// Tests that first-bucket-mb caps the first bucket only: dense2.kernel (60 bytes, ready
// first) fits 0.00006 MiB (62 bytes) alone and starts its allreduce at once; the rest share
// one bucket of the default 25 MiB.
// FIRST-LABEL: func.func @train(
// FIRST: dist.allreduce {{.*}} {bucket = 0 : i64, replicas = 2 : i64, tensors = ["dense2.kernel"]}
// FIRST: dist.allreduce {{.*}} {bucket = 1 : i64, replicas = 2 : i64, tensors = ["dense2.bias", "dense1.kernel", "dense1.bias"]}
// FIRST-NOT: dist.allreduce
// NEG-FIRST: error: dist-fuse-allreduce: first-bucket-mb must not be negative, found -2
