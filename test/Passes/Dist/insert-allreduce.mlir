// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch -dist-insert-allreduce | FileCheck %s --check-prefix=ONE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch "-dist-insert-allreduce=allreduce-precision=bf16" | FileCheck %s --check-prefix=BF16
// RUN: not dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch "-dist-insert-allreduce=allreduce-precision=fp16" 2>&1 | FileCheck %s --check-prefix=BADPRECISION

// Tests precision=bf16: the train step says that its gradients cross the processes as bf16
// (the allreduces themselves are unchanged: f32 in, f32 means out).
// BF16-LABEL: func.func @train(
// BF16-SAME: dist.allreduce_precision = "bf16"
// BF16: dist.allreduce {{.*}} : tensor<5x3xf32>
// BADPRECISION: dist-insert-allreduce: allreduce-precision must be fp32 or bf16, not 'fp16'

// Tests that with R = 2 devices each parameter gets one dist.allreduce of its two replicas'
// gradients (replica 0's, then replica 1's; no replica tag: it spans them), named after the
// parameter in `tensors`, placed right before the first update of the parameter (where both
// gradients are ready), and that each replica's apply_gradient takes its own result, the mean.
// Allreduces follow the order in which the backward pass completes the gradients.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W1_0:.*]] = graph.param "dense1.kernel" {dist.replica = 0 : i64
// CHECK-NEXT: %[[W1_1:.*]] = graph.param "dense1.kernel" {dist.replica = 1 : i64
// CHECK-NEXT: %[[B1_0:.*]] = graph.param "dense1.bias" {dist.replica = 0 : i64
// CHECK-NEXT: %[[B1_1:.*]] = graph.param "dense1.bias" {dist.replica = 1 : i64
// CHECK: %[[W2_0:.*]] = graph.param "dense2.kernel" {dist.replica = 0 : i64
// CHECK-NEXT: %[[W2_1:.*]] = graph.param "dense2.kernel" {dist.replica = 1 : i64
// CHECK-NEXT: %[[B2_0:.*]] = graph.param "dense2.bias" {dist.replica = 0 : i64
// CHECK-NEXT: %[[B2_1:.*]] = graph.param "dense2.bias" {dist.replica = 1 : i64
// CHECK-NOT: dist.allreduce
// CHECK: %[[DW2_0:.*]] = graph.matmul {{.*}} {dist.replica = 0 : i64, transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[DW2_1:.*]] = graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[DB2_0:.*]] = graph.reduce_rows {{.*}} {dist.replica = 0 : i64} : tensor<4x3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[DB2_1:.*]] = graph.reduce_rows {{.*}} {dist.replica = 1 : i64} : tensor<4x3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[MW2:.*]]:2 = dist.allreduce %[[DW2_0]], %[[DW2_1]] {replicas = 2 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>, tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[W2_0]], %[[MW2]]#0 {dist.replica = 0 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[W2_1]], %[[MW2]]#1 {dist.replica = 1 : i64} : tensor<5x3xf32>
// CHECK-NEXT: %[[MB2:.*]]:2 = dist.allreduce %[[DB2_0]], %[[DB2_1]] {replicas = 2 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2_0]], %[[MB2]]#0 {dist.replica = 0 : i64} : tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2_1]], %[[MB2]]#1 {dist.replica = 1 : i64} : tensor<3xf32>
// CHECK-NEXT: graph.activation_grad
// CHECK-NEXT: graph.activation_grad
// CHECK-NEXT: %[[DW1_0:.*]] = graph.matmul {{.*}} {dist.replica = 0 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[DW1_1:.*]] = graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[DB1_0:.*]] = graph.reduce_rows
// CHECK-NEXT: %[[DB1_1:.*]] = graph.reduce_rows
// CHECK-NEXT: %[[MW1:.*]]:2 = dist.allreduce %[[DW1_0]], %[[DW1_1]] {replicas = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>, tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1_0]], %[[MW1]]#0 {dist.replica = 0 : i64} : tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1_1]], %[[MW1]]#1 {dist.replica = 1 : i64} : tensor<6x5xf32>
// CHECK-NEXT: %[[MB1:.*]]:2 = dist.allreduce %[[DB1_0]], %[[DB1_1]] {replicas = 2 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>, tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1_0]], %[[MB1]]#0 {dist.replica = 0 : i64} : tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1_1]], %[[MB1]]#1 {dist.replica = 1 : i64} : tensor<5xf32>
// CHECK-NEXT: return
// The eval step has no gradients to average.
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: dist.allreduce
// CHECK: return

// Tests that with one device in each of 2 processes every gradient is still averaged (across
// the processes): an allreduce of one tensor per parameter, of replicas = 1.
// PROCS-LABEL: func.func @train(
// PROCS: %[[DW2:.*]] = graph.matmul {{.*}} {transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// PROCS-NEXT: %[[DB2:.*]] = graph.reduce_rows
// PROCS-NEXT: %[[MW2:.*]] = dist.allreduce %[[DW2]] {replicas = 1 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>
// PROCS-NEXT: graph.apply_gradient %{{.*}}, %[[MW2]] : tensor<5x3xf32>
// PROCS-NEXT: %[[MB2:.*]] = dist.allreduce %[[DB2]] {replicas = 1 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>
// PROCS-NEXT: graph.apply_gradient %{{.*}}, %[[MB2]] : tensor<3xf32>
// PROCS-COUNT-2: dist.allreduce
// PROCS-NOT: dist.allreduce
// PROCS-LABEL: func.func @eval(
// PROCS-NOT: dist.allreduce

// Tests that a single replica averages nothing.
// ONE-NOT: dist.allreduce
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
