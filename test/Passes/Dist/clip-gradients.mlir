// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-verify | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients=clip-norm=0.5 -dist-verify | FileCheck %s --check-prefix=ONE
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce -graph-expand-optimizer -dist-schedule -dist-clip-gradients | FileCheck %s --check-prefix=OFF

// Tests that with 2 replicas each replica gets one clip factor, after the last allreduce's
// wait, of the allreduced means its updates read (in their order: bucket 0's dense2 kernel
// and bias, then dense1's), that every update comes after the factors and reads its own
// replica's as its scale, and that the updates scheduling placed between the waits moved
// after them.
// CHECK-LABEL: func.func @train(
// CHECK: %[[P2:.*]] = dist.allreduce_start {{.*}} {bucket = 2 : i64
// CHECK-NEXT: %[[M0:.*]]:4 = dist.allreduce_wait
// CHECK-NEXT: %[[M1:.*]]:2 = dist.allreduce_wait
// CHECK-NEXT: %[[M2:.*]]:2 = dist.allreduce_wait %[[P2]]
// CHECK-NEXT: %[[F0:.*]] = graph.clip_factor %[[M0]]#0, %[[M0]]#1, %[[M1]]#0, %[[M2]]#0 {dist.replica = 0 : i64, max_norm = 5.000000e-01 : f64} : tensor<5x3xf32>, tensor<3xf32>, tensor<6x5xf32>, tensor<5xf32> -> tensor<f32>
// CHECK-NEXT: %[[F1:.*]] = graph.clip_factor %[[M0]]#2, %[[M0]]#3, %[[M1]]#1, %[[M2]]#1 {dist.replica = 1 : i64, max_norm = 5.000000e-01 : f64}
// CHECK-NOT: dist.allreduce_wait
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M0]]#0 scale(%[[F0]] : tensor<f32>) {{.*}}dist.replica = 0 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M0]]#1 scale(%[[F0]] : tensor<f32>) {{.*}}dist.replica = 0 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M1]]#0 scale(%[[F0]] : tensor<f32>) {{.*}}dist.replica = 0 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M2]]#0 scale(%[[F0]] : tensor<f32>) {{.*}}dist.replica = 0 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M0]]#2 scale(%[[F1]] : tensor<f32>) {{.*}}dist.replica = 1 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M0]]#3 scale(%[[F1]] : tensor<f32>) {{.*}}dist.replica = 1 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M1]]#1 scale(%[[F1]] : tensor<f32>) {{.*}}dist.replica = 1 : i64
// CHECK-DAG: graph.adam_update %{{.*}}, %[[M2]]#1 scale(%[[F1]] : tensor<f32>) {{.*}}dist.replica = 1 : i64
// CHECK: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: graph.clip_factor
// CHECK: return

// Tests that on one device (no allreduce) the factor reads the gradients themselves, after the
// last of them (dense1's bias), and that dense2's updates, which autodiff placed before
// dense1's backward pass, move after it.
// ONE-LABEL: func.func @train(
// ONE: %[[DW2:.*]] = graph.matmul {{.*}} {transpose_lhs} : (tensor<8x5xf32>, tensor<8x3xf32>) -> tensor<5x3xf32>
// ONE-NEXT: %[[DB2:.*]] = graph.reduce_rows
// ONE-NEXT: graph.activation_grad
// ONE-NEXT: %[[DW1:.*]] = graph.matmul
// ONE-NEXT: %[[DB1:.*]] = graph.reduce_rows
// ONE-NEXT: %[[F:.*]] = graph.clip_factor %[[DW2]], %[[DB2]], %[[DW1]], %[[DB1]] {max_norm = 5.000000e-01 : f64}
// ONE-NEXT: graph.adam_update %{{.*}}, %[[DW2]] scale(%[[F]] : tensor<f32>)
// ONE-NEXT: graph.adam_update %{{.*}}, %[[DB2]] scale(%[[F]] : tensor<f32>)
// ONE-NEXT: graph.adam_update %{{.*}}, %[[DW1]] scale(%[[F]] : tensor<f32>)
// ONE-NEXT: graph.adam_update %{{.*}}, %[[DB1]] scale(%[[F]] : tensor<f32>)
// ONE-NEXT: return

// Tests that clip-norm 0 (the default) changes nothing.
// OFF-NOT: clip_factor
// OFF-NOT: scale(
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
