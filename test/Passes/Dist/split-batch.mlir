// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch | FileCheck %s
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2 processes=2" -dist-split-batch | FileCheck %s --check-prefix=MESH
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate -dist-split-batch | FileCheck %s --check-prefix=ONE

// Tests that with R = 2 devices (S = 2 shards of the 8-row batch) each replica reads each input
// through one dist.shard of its own (replica r takes shard r, tagged with r): one per (input,
// replica), however many ops read the input; that the function still takes the global batch;
// that every value computed from the batch gets 8 / 2 = 4 rows; and that the weight gradients
// (matmul with transpose_lhs, contracting over the rows), the bias gradients (reduce_rows), the
// losses and the correct counts keep their types.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x6xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-DAG: %[[X0:.*]] = dist.shard %[[X]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-DAG: %[[X1:.*]] = dist.shard %[[X]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-DAG: %[[L0:.*]] = dist.shard %[[L]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<8xi32> -> tensor<4xi32>
// CHECK-DAG: %[[L1:.*]] = dist.shard %[[L]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<8xi32> -> tensor<4xi32>
// CHECK-NOT: dist.shard
// CHECK: %[[W1_0:.*]] = graph.param "dense1.kernel" {dist.replica = 0 : i64
// CHECK-NEXT: %[[W1_1:.*]] = graph.param "dense1.kernel" {dist.replica = 1 : i64
// CHECK: %[[H0:.*]] = graph.dense %[[X0]], %[[W1_0]], %{{.*}} {activation = #graph.act<sigmoid>, dist.replica = 0 : i64} : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[H1:.*]] = graph.dense %[[X1]], %[[W1_1]], %{{.*}} {activation = #graph.act<sigmoid>, dist.replica = 1 : i64} : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
// CHECK: %[[Y0:.*]] = graph.dense %[[H0]], {{.*}} : (tensor<4x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[Y1:.*]] = graph.dense %[[H1]], {{.*}} : (tensor<4x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[LOSS0:.*]] = graph.softmax_cross_entropy %[[Y0]], %[[L0]] {dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: %[[LOSS1:.*]] = graph.softmax_cross_entropy %[[Y1]], %[[L1]] {dist.replica = 1 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: %[[C0:.*]] = graph.count_correct %[[Y0]], %[[L0]] {dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: %[[C1:.*]] = graph.count_correct %[[Y1]], %[[L1]] {dist.replica = 1 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: %[[ONE0:.*]] = graph.fill 1.000000e+00 {dist.replica = 0 : i64} : tensor<f32>
// CHECK-NEXT: %[[ONE1:.*]] = graph.fill 1.000000e+00 {dist.replica = 1 : i64} : tensor<f32>
// CHECK-NEXT: %[[DY0:.*]] = graph.softmax_cross_entropy_grad %[[Y0]], %[[L0]], %[[ONE0]] {dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[DY1:.*]] = graph.softmax_cross_entropy_grad %[[Y1]], %[[L1]], %[[ONE1]] {dist.replica = 1 : i64} : (tensor<4x3xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[DH0:.*]] = graph.matmul %[[DY0]], %{{.*}} {dist.replica = 0 : i64, transpose_rhs} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[DH1:.*]] = graph.matmul %[[DY1]], %{{.*}} {dist.replica = 1 : i64, transpose_rhs} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[DW2_0:.*]] = graph.matmul %[[H0]], %[[DY0]] {dist.replica = 0 : i64, transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[DW2_1:.*]] = graph.matmul %[[H1]], %[[DY1]] {dist.replica = 1 : i64, transpose_lhs} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// CHECK-NEXT: %[[DB2_0:.*]] = graph.reduce_rows %[[DY0]] {dist.replica = 0 : i64} : tensor<4x3xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[DB2_1:.*]] = graph.reduce_rows %[[DY1]] {dist.replica = 1 : i64} : tensor<4x3xf32> -> tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DW2_0]] {dist.replica = 0 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DW2_1]] {dist.replica = 1 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB2_0]] {dist.replica = 0 : i64} : tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB2_1]] {dist.replica = 1 : i64} : tensor<3xf32>
// CHECK-NEXT: %[[DZ0:.*]] = graph.activation_grad %[[H0]], %[[DH0]] {activation = #graph.act<sigmoid>, dist.replica = 0 : i64} : tensor<4x5xf32>
// CHECK-NEXT: %[[DZ1:.*]] = graph.activation_grad %[[H1]], %[[DH1]] {activation = #graph.act<sigmoid>, dist.replica = 1 : i64} : tensor<4x5xf32>
// CHECK-NEXT: %[[DW1_0:.*]] = graph.matmul %[[X0]], %[[DZ0]] {dist.replica = 0 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[DW1_1:.*]] = graph.matmul %[[X1]], %[[DZ1]] {dist.replica = 1 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[DB1_0:.*]] = graph.reduce_rows %[[DZ0]] {dist.replica = 0 : i64} : tensor<4x5xf32> -> tensor<5xf32>
// CHECK-NEXT: %[[DB1_1:.*]] = graph.reduce_rows %[[DZ1]] {dist.replica = 1 : i64} : tensor<4x5xf32> -> tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1_0]], %[[DW1_0]] {dist.replica = 0 : i64} : tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1_1]], %[[DW1_1]] {dist.replica = 1 : i64} : tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB1_0]] {dist.replica = 0 : i64} : tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %{{.*}}, %[[DB1_1]] {dist.replica = 1 : i64} : tensor<5xf32>
// CHECK-NEXT: return %[[LOSS0]], %[[C0]], %[[LOSS1]], %[[C1]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
// The eval step is split the same way.
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x6xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-DAG: %[[X0:.*]] = dist.shard %[[X]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-DAG: %[[X1:.*]] = dist.shard %[[X]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-DAG: %[[L0:.*]] = dist.shard %[[L]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<8xi32> -> tensor<4xi32>
// CHECK-DAG: %[[L1:.*]] = dist.shard %[[L]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<8xi32> -> tensor<4xi32>
// CHECK-NOT: dist.shard
// CHECK: graph.dense %[[X0]], {{.*}} -> tensor<4x5xf32>
// CHECK-NEXT: graph.dense %[[X1]], {{.*}} -> tensor<4x5xf32>
// CHECK: graph.softmax_cross_entropy %{{.*}}, %[[L0]] {dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NEXT: graph.softmax_cross_entropy %{{.*}}, %[[L1]] {dist.replica = 1 : i64} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK: return

// Tests that with 2 devices in each of 2 processes (S = 4 shards of 2 rows) replica r of
// every process takes its shard r of 4 (the rank is added at run time).
// MESH-LABEL: func.func @train(
// MESH-DAG: dist.shard %{{.*}} {dist.replica = 0 : i64, replica = 0 : i64, shards = 4 : i64} : tensor<8x6xf32> -> tensor<2x6xf32>
// MESH-DAG: dist.shard %{{.*}} {dist.replica = 1 : i64, replica = 1 : i64, shards = 4 : i64} : tensor<8x6xf32> -> tensor<2x6xf32>
// MESH-DAG: dist.shard %{{.*}} {dist.replica = 0 : i64, replica = 0 : i64, shards = 4 : i64} : tensor<8xi32> -> tensor<2xi32>
// MESH-DAG: dist.shard %{{.*}} {dist.replica = 1 : i64, replica = 1 : i64, shards = 4 : i64} : tensor<8xi32> -> tensor<2xi32>
// MESH-NOT: dist.shard
// MESH: graph.dense {{.*}} : (tensor<2x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// MESH: graph.matmul {{.*}} {dist.replica = 1 : i64, transpose_lhs} : (tensor<2x6xf32>, tensor<2x5xf32>) -> tensor<6x5xf32>

// Tests that with one device in each of 2 processes the only replica takes shard 0 of 2, and
// neither the shards nor anything else gets a replica tag.
// PROCS-LABEL: func.func @train(
// PROCS-SAME: %[[X:[^:]*]]: tensor<8x6xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// PROCS-NEXT: %[[X0:.*]] = dist.shard %[[X]] {replica = 0 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>
// PROCS-NEXT: %[[L0:.*]] = dist.shard %[[L]] {replica = 0 : i64, shards = 2 : i64} : tensor<8xi32> -> tensor<4xi32>
// PROCS-NOT: dist.
// PROCS: graph.dense %[[X0]], {{.*}} -> tensor<4x5xf32>
// PROCS: graph.softmax_cross_entropy %{{.*}}, %[[L0]] : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
// PROCS: graph.matmul %[[X0]], %{{.*}} {transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// PROCS-LABEL: func.func @eval(
// PROCS-NEXT: dist.shard %{{.*}} {replica = 0 : i64, shards = 2 : i64} : tensor<8x6xf32> -> tensor<4x6xf32>

// Tests that a single replica (R = P = 1) reads the whole batch: nothing changes.
// ONE-LABEL: func.func @train(
// ONE-NOT: dist.shard
// ONE: graph.dense %{{.*}} -> tensor<8x5xf32>
// ONE-LABEL: func.func @eval(
// ONE-NOT: dist.shard
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

// -----

// Tests the row-wise rules of the other ops (flatten, reshape, relu, add, their gradients) on
// an input of rank 3: each keeps the batch in its rows, so its result gets 4 of 8 rows.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[IMG:[^:]*]]: tensor<8x2x3xf32> {graph.input = "image", graph.role = "samples"}
// CHECK-DAG: %[[I0:.*]] = dist.shard %[[IMG]] {dist.replica = 0 : i64, replica = 0 : i64, shards = 2 : i64} : tensor<8x2x3xf32> -> tensor<4x2x3xf32>
// CHECK-DAG: %[[I1:.*]] = dist.shard %[[IMG]] {dist.replica = 1 : i64, replica = 1 : i64, shards = 2 : i64} : tensor<8x2x3xf32> -> tensor<4x2x3xf32>
// CHECK: %[[F0:.*]] = graph.flatten %[[I0]] {dist.replica = 0 : i64} : tensor<4x2x3xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[F1:.*]] = graph.flatten %[[I1]] {dist.replica = 1 : i64} : tensor<4x2x3xf32> -> tensor<4x6xf32>
// CHECK: %[[H0:.*]] = graph.dense %[[F0]], %{{.*}} {dist.replica = 0 : i64} : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[H1:.*]] = graph.dense %[[F1]], %{{.*}} {dist.replica = 1 : i64} : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[R0:.*]] = graph.relu %[[H0]] {dist.replica = 0 : i64} : tensor<4x5xf32>
// CHECK-NEXT: %[[R1:.*]] = graph.relu %[[H1]] {dist.replica = 1 : i64} : tensor<4x5xf32>
// CHECK-NEXT: graph.add %[[R0]], %[[H0]] {dist.replica = 0 : i64} : tensor<4x5xf32>
// CHECK-NEXT: graph.add %[[R1]], %[[H1]] {dist.replica = 1 : i64} : tensor<4x5xf32>
// CHECK-NEXT: graph.reshape %{{.*}} {dist.replica = 0 : i64} : tensor<4x5xf32> -> tensor<4x1x5xf32>
// CHECK-NEXT: graph.reshape %{{.*}} {dist.replica = 1 : i64} : tensor<4x5xf32> -> tensor<4x1x5xf32>
// CHECK-NEXT: graph.flatten %{{.*}} {dist.replica = 0 : i64} : tensor<4x1x5xf32> -> tensor<4x5xf32>
// CHECK-NEXT: graph.flatten %{{.*}} {dist.replica = 1 : i64} : tensor<4x1x5xf32> -> tensor<4x5xf32>
// CHECK: graph.activation_grad %[[R0]], %{{.*}} {activation = #graph.act<relu>, dist.replica = 0 : i64} : tensor<4x5xf32>
// CHECK-NEXT: graph.activation_grad %[[R1]], %{{.*}} {activation = #graph.act<relu>, dist.replica = 1 : i64} : tensor<4x5xf32>
// CHECK-NEXT: %[[G0:.*]] = graph.add {{.*}} {dist.replica = 0 : i64} : tensor<4x5xf32>
// CHECK-NEXT: %[[G1:.*]] = graph.add {{.*}} {dist.replica = 1 : i64} : tensor<4x5xf32>
// CHECK-NEXT: graph.matmul %[[F0]], %[[G0]] {dist.replica = 0 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: graph.matmul %[[F1]], %[[G1]] {dist.replica = 1 : i64, transpose_lhs} : (tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
// MESH-LABEL: func.func @train(
// MESH: graph.flatten %{{.*}} {dist.replica = 0 : i64} : tensor<2x2x3xf32> -> tensor<2x6xf32>
// PROCS-LABEL: func.func @train(
// PROCS: graph.flatten %{{.*}} : tensor<4x2x3xf32> -> tensor<4x6xf32>
// ONE-LABEL: func.func @train(
// ONE: graph.flatten %{{.*}} : tensor<8x2x3xf32> -> tensor<8x6xf32>
func.func @rows(%img: tensor<8x2x3xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %f = graph.flatten %img : tensor<8x2x3xf32> -> tensor<8x6xf32>
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %h = graph.dense %f, %w : (tensor<8x6xf32>, tensor<6x5xf32>) -> tensor<8x5xf32>
  %r = graph.relu %h : tensor<8x5xf32>
  %s = graph.add %r, %h : tensor<8x5xf32>
  %p = graph.reshape %s : tensor<8x5xf32> -> tensor<8x1x5xf32>
  %q = graph.flatten %p : tensor<8x1x5xf32> -> tensor<8x5xf32>
  %loss = graph.softmax_cross_entropy %q, %l : (tensor<8x5xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
