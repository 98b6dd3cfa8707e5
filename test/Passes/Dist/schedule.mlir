// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 -graph-expand-optimizer -dist-schedule | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0 -graph-expand-optimizer -dist-schedule | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule | FileCheck %s --check-prefix=ONE

// Tests that each bucket's allreduce is split into a dist.allreduce_start right after the last
// of its gradients is computed (bucket 0, the dense2 gradients, after their reduce_rows, while
// the dense1 gradients are still to come; bucket 1 between the dense1 kernel and bias
// gradients) and a dist.allreduce_wait right before the first update that needs its means;
// that the updates sink to the end of the step, after the whole backward pass, in their
// order; and that the waits yield the means the updates take (same result order as the
// allreduce). No plain dist.allreduce is left.
// CHECK-LABEL: func.func @train(
// CHECK-NOT: dist.allreduce
// CHECK: %[[W2_0:.*]] = graph.param "dense2.kernel" {dist.replica = 0 : i64
// CHECK-NEXT: %[[W2_1:.*]] = graph.param "dense2.kernel" {dist.replica = 1 : i64
// CHECK-NEXT: %[[B2_0:.*]] = graph.param "dense2.bias" {dist.replica = 0 : i64
// CHECK-NEXT: %[[B2_1:.*]] = graph.param "dense2.bias" {dist.replica = 1 : i64
// CHECK-NOT: dist.allreduce
// CHECK: %[[DH_0:.*]] = graph.matmul {{.*}} {dist.replica = 0 : i64, transpose_rhs}
// CHECK-NEXT: %[[DH_1:.*]] = graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_rhs}
// CHECK-NEXT: %[[DW2_0:.*]] = graph.matmul {{.*}} {dist.replica = 0 : i64, transpose_lhs}
// CHECK-NEXT: %[[DW2_1:.*]] = graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[DB2_0:.*]] = graph.reduce_rows
// CHECK-NEXT: %[[DB2_1:.*]] = graph.reduce_rows
// CHECK-NEXT: %[[P0:.*]] = dist.allreduce_start %[[DW2_0]], %[[DB2_0]], %[[DW2_1]], %[[DB2_1]] {bucket = 0 : i64, replicas = 2 : i64, tensors = ["dense2.kernel", "dense2.bias"]} : tensor<5x3xf32>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>
// CHECK-NEXT: %[[DZ_0:.*]] = graph.activation_grad %{{.*}}, %[[DH_0]]
// CHECK-NEXT: %[[DZ_1:.*]] = graph.activation_grad %{{.*}}, %[[DH_1]]
// CHECK-NEXT: %[[DW1_0:.*]] = graph.matmul %{{.*}}, %[[DZ_0]] {dist.replica = 0 : i64, transpose_lhs}
// CHECK-NEXT: %[[DW1_1:.*]] = graph.matmul %{{.*}}, %[[DZ_1]] {dist.replica = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[P1:.*]] = dist.allreduce_start %[[DW1_0]], %[[DW1_1]] {bucket = 1 : i64, replicas = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>, tensor<6x5xf32>
// CHECK-NEXT: %[[DB1_0:.*]] = graph.reduce_rows %[[DZ_0]]
// CHECK-NEXT: %[[DB1_1:.*]] = graph.reduce_rows %[[DZ_1]]
// CHECK-NEXT: %[[P2:.*]] = dist.allreduce_start %[[DB1_0]], %[[DB1_1]] {bucket = 2 : i64, replicas = 2 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>, tensor<5xf32>
// CHECK-NEXT: %[[M0:.*]]:4 = dist.allreduce_wait %[[P0]] : tensor<5x3xf32>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>
// CHECK-NEXT: graph.sgd_update %[[W2_0]], %[[M0]]#0 {dist.replica = 0 : i64, lr = 1.000000e-01 : f64} : tensor<5x3xf32>
// CHECK-NEXT: graph.sgd_update %[[W2_1]], %[[M0]]#2 {dist.replica = 1 : i64, lr = 1.000000e-01 : f64} : tensor<5x3xf32>
// CHECK-NEXT: graph.sgd_update %[[B2_0]], %[[M0]]#1 {dist.replica = 0 : i64, lr = 1.000000e-01 : f64} : tensor<3xf32>
// CHECK-NEXT: graph.sgd_update %[[B2_1]], %[[M0]]#3 {dist.replica = 1 : i64, lr = 1.000000e-01 : f64} : tensor<3xf32>
// CHECK-NEXT: %[[M1:.*]]:2 = dist.allreduce_wait %[[P1]] : tensor<6x5xf32>, tensor<6x5xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %[[M1]]#0 {dist.replica = 0 : i64, lr = 1.000000e-01 : f64} : tensor<6x5xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %[[M1]]#1 {dist.replica = 1 : i64, lr = 1.000000e-01 : f64} : tensor<6x5xf32>
// CHECK-NEXT: %[[M2:.*]]:2 = dist.allreduce_wait %[[P2]] : tensor<5xf32>, tensor<5xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %[[M2]]#0 {dist.replica = 0 : i64, lr = 1.000000e-01 : f64} : tensor<5xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %[[M2]]#1 {dist.replica = 1 : i64, lr = 1.000000e-01 : f64} : tensor<5xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: dist.allreduce
// CHECK: return

// Tests one replica per process with a bucket per gradient: the dense2.kernel start comes
// right after its matmul, before the bias gradient is reduced, and every wait comes after the
// backward pass.
// PROCS-LABEL: func.func @train(
// PROCS: %[[DW2:.*]] = graph.matmul {{.*}} {transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// PROCS-NEXT: %[[P0:.*]] = dist.allreduce_start %[[DW2]] {bucket = 0 : i64, replicas = 1 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>
// PROCS-NEXT: %[[DB2:.*]] = graph.reduce_rows
// PROCS-NEXT: %[[P1:.*]] = dist.allreduce_start %[[DB2]] {bucket = 1 : i64, replicas = 1 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>
// PROCS-NEXT: graph.activation_grad
// PROCS-NEXT: %[[DW1:.*]] = graph.matmul
// PROCS-NEXT: %[[P2:.*]] = dist.allreduce_start %[[DW1]] {bucket = 2 : i64, replicas = 1 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// PROCS-NEXT: %[[DB1:.*]] = graph.reduce_rows
// PROCS-NEXT: %[[P3:.*]] = dist.allreduce_start %[[DB1]] {bucket = 3 : i64, replicas = 1 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>
// PROCS-NEXT: %[[M0:.*]] = dist.allreduce_wait %[[P0]] : tensor<5x3xf32>
// PROCS-NEXT: graph.sgd_update %{{.*}}, %[[M0]] {lr = 1.000000e-01 : f64} : tensor<5x3xf32>
// PROCS-NEXT: %[[M1:.*]] = dist.allreduce_wait %[[P1]] : tensor<3xf32>
// PROCS-NEXT: graph.sgd_update %{{.*}}, %[[M1]] {lr = 1.000000e-01 : f64} : tensor<3xf32>
// PROCS-NEXT: %[[M2:.*]] = dist.allreduce_wait %[[P2]] : tensor<6x5xf32>
// PROCS-NEXT: graph.sgd_update %{{.*}}, %[[M2]] {lr = 1.000000e-01 : f64} : tensor<6x5xf32>
// PROCS-NEXT: %[[M3:.*]] = dist.allreduce_wait %[[P3]] : tensor<5xf32>
// PROCS-NEXT: graph.sgd_update %{{.*}}, %[[M3]] {lr = 1.000000e-01 : f64} : tensor<5xf32>
// PROCS-NEXT: return

// Tests that a step without allreduces is left as it is: its updates stay where autodiff put
// them (dense2's before dense1's backward).
// ONE-LABEL: func.func @train(
// ONE-NOT: dist.allreduce
// ONE: graph.reduce_rows
// ONE-NEXT: graph.sgd_update
// ONE-NEXT: graph.sgd_update
// ONE-NEXT: graph.activation_grad
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
