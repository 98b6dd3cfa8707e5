// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -verify-diagnostics | FileCheck %s
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="processes=2 device=cuda" -verify-diagnostics | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate -verify-diagnostics | FileCheck %s --check-prefix=ONE
// RUN: not dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=processes=0 2>&1 | FileCheck %s --check-prefix=NOPROC
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="processes=4 nodes=2" | FileCheck %s --check-prefix=NODES
// RUN: not dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="processes=4 nodes=3" 2>&1 | FileCheck %s --check-prefix=BADNODES
// RUN: not dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=device=tpu 2>&1 | FileCheck %s --check-prefix=TPU
// RUN: not dp-opt %s -split-input-file -dist-replicate 2>&1 | FileCheck %s --check-prefix=NOSTEPS

// Tests that with R = 2 devices per process every op of both steps is followed by its copy,
// op by op (replica 0, then replica 1), each tagged with its dist.replica; that each copy has
// its own graph.param ops (mirrored parameters, same names and initialisers) and computes
// from them only; that both copies still read the whole global batch (dist-split-batch
// shards it); that each replica updates its own parameters; and that the steps return every
// replica's outputs, replica by replica, each result tagged with its replica and named as
// before. Both steps get the mesh.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x6xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {dist.replica = 0 : i64, graph.output = "loss", graph.role = "loss"}, tensor<f32> {dist.replica = 0 : i64, graph.output = "correct", graph.role = "correct"}, tensor<f32> {dist.replica = 1 : i64, graph.output = "loss", graph.role = "loss"}, tensor<f32> {dist.replica = 1 : i64, graph.output = "correct", graph.role = "correct"})
// CHECK-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">, graph.model = "mlp", graph.optimizer = #graph.sgd<lr = 1.000000e-01>, graph.step = "train"}
// CHECK-NEXT: %[[W1_0:.*]] = graph.param "dense1.kernel" {dist.replica = 0 : i64, init = #graph.glorot_uniform} : tensor<6x5xf32>
// CHECK-NEXT: %[[W1_1:.*]] = graph.param "dense1.kernel" {dist.replica = 1 : i64, init = #graph.glorot_uniform} : tensor<6x5xf32>
// CHECK-NEXT: %[[B1_0:.*]] = graph.param "dense1.bias" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<5xf32>
// CHECK-NEXT: %[[B1_1:.*]] = graph.param "dense1.bias" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<5xf32>
// CHECK-NEXT: %[[H_0:.*]] = graph.dense %[[X]], %[[W1_0]], %[[B1_0]] {activation = #graph.act<sigmoid>, dist.replica = 0 : i64} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT: %[[H_1:.*]] = graph.dense %[[X]], %[[W1_1]], %[[B1_1]] {activation = #graph.act<sigmoid>, dist.replica = 1 : i64} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
// CHECK-NEXT: %[[W2_0:.*]] = graph.param "dense2.kernel" {dist.replica = 0 : i64, init = #graph.glorot_uniform} : tensor<5x3xf32>
// CHECK-NEXT: %[[W2_1:.*]] = graph.param "dense2.kernel" {dist.replica = 1 : i64, init = #graph.glorot_uniform} : tensor<5x3xf32>
// CHECK-NEXT: %[[B2_0:.*]] = graph.param "dense2.bias" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
// CHECK-NEXT: %[[B2_1:.*]] = graph.param "dense2.bias" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
// CHECK-NEXT: %[[Y_0:.*]] = graph.dense %[[H_0]], %[[W2_0]], %[[B2_0]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[Y_1:.*]] = graph.dense %[[H_1]], %[[W2_1]], %[[B2_1]] {dist.replica = 1 : i64}
// CHECK-NEXT: %[[LOSS_0:.*]] = graph.softmax_cross_entropy %[[Y_0]], %[[L]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[LOSS_1:.*]] = graph.softmax_cross_entropy %[[Y_1]], %[[L]] {dist.replica = 1 : i64}
// CHECK-NEXT: %[[C_0:.*]] = graph.count_correct %[[Y_0]], %[[L]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[C_1:.*]] = graph.count_correct %[[Y_1]], %[[L]] {dist.replica = 1 : i64}
// CHECK-NEXT: %[[ONE_0:.*]] = graph.fill 1.000000e+00 {dist.replica = 0 : i64} : tensor<f32>
// CHECK-NEXT: %[[ONE_1:.*]] = graph.fill 1.000000e+00 {dist.replica = 1 : i64} : tensor<f32>
// CHECK-NEXT: %[[DY_0:.*]] = graph.softmax_cross_entropy_grad %[[Y_0]], %[[L]], %[[ONE_0]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[DY_1:.*]] = graph.softmax_cross_entropy_grad %[[Y_1]], %[[L]], %[[ONE_1]] {dist.replica = 1 : i64}
// CHECK-NEXT: %[[DH_0:.*]] = graph.matmul %[[DY_0]], %[[W2_0]] {dist.replica = 0 : i64, transpose_rhs}
// CHECK-NEXT: %[[DH_1:.*]] = graph.matmul %[[DY_1]], %[[W2_1]] {dist.replica = 1 : i64, transpose_rhs}
// CHECK-NEXT: %[[DW2_0:.*]] = graph.matmul %[[H_0]], %[[DY_0]] {dist.replica = 0 : i64, transpose_lhs}
// CHECK-NEXT: %[[DW2_1:.*]] = graph.matmul %[[H_1]], %[[DY_1]] {dist.replica = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[DB2_0:.*]] = graph.reduce_rows %[[DY_0]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[DB2_1:.*]] = graph.reduce_rows %[[DY_1]] {dist.replica = 1 : i64}
// CHECK-NEXT: graph.apply_gradient %[[W2_0]], %[[DW2_0]] {dist.replica = 0 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[W2_1]], %[[DW2_1]] {dist.replica = 1 : i64} : tensor<5x3xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2_0]], %[[DB2_0]] {dist.replica = 0 : i64} : tensor<3xf32>
// CHECK-NEXT: graph.apply_gradient %[[B2_1]], %[[DB2_1]] {dist.replica = 1 : i64} : tensor<3xf32>
// CHECK-NEXT: %[[DZ_0:.*]] = graph.activation_grad %[[H_0]], %[[DH_0]] {activation = #graph.act<sigmoid>, dist.replica = 0 : i64}
// CHECK-NEXT: %[[DZ_1:.*]] = graph.activation_grad %[[H_1]], %[[DH_1]] {activation = #graph.act<sigmoid>, dist.replica = 1 : i64}
// CHECK-NEXT: %[[DW1_0:.*]] = graph.matmul %[[X]], %[[DZ_0]] {dist.replica = 0 : i64, transpose_lhs}
// CHECK-NEXT: %[[DW1_1:.*]] = graph.matmul %[[X]], %[[DZ_1]] {dist.replica = 1 : i64, transpose_lhs}
// CHECK-NEXT: %[[DB1_0:.*]] = graph.reduce_rows %[[DZ_0]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[DB1_1:.*]] = graph.reduce_rows %[[DZ_1]] {dist.replica = 1 : i64}
// CHECK-NEXT: graph.apply_gradient %[[W1_0]], %[[DW1_0]] {dist.replica = 0 : i64} : tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[W1_1]], %[[DW1_1]] {dist.replica = 1 : i64} : tensor<6x5xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1_0]], %[[DB1_0]] {dist.replica = 0 : i64} : tensor<5xf32>
// CHECK-NEXT: graph.apply_gradient %[[B1_1]], %[[DB1_1]] {dist.replica = 1 : i64} : tensor<5xf32>
// CHECK-NEXT: return %[[LOSS_0]], %[[C_0]], %[[LOSS_1]], %[[C_1]] : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
// CHECK-LABEL: func.func @eval(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x6xf32> {graph.input = "x", graph.role = "samples"}, %[[L:[^:]*]]: tensor<8xi32> {graph.input = "label", graph.role = "targets"})
// CHECK-SAME: -> (tensor<f32> {dist.replica = 0 : i64, graph.output = "loss", graph.role = "loss"}, tensor<f32> {dist.replica = 0 : i64, graph.output = "correct", graph.role = "correct"}, tensor<8x3xf32> {dist.replica = 0 : i64, graph.output = "logits", graph.role = "logits"}, tensor<f32> {dist.replica = 1 : i64, graph.output = "loss", graph.role = "loss"}, tensor<f32> {dist.replica = 1 : i64, graph.output = "correct", graph.role = "correct"}, tensor<8x3xf32> {dist.replica = 1 : i64, graph.output = "logits", graph.role = "logits"})
// CHECK-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">, graph.model = "mlp", graph.step = "eval"}
// CHECK-COUNT-2: graph.param "dense1.kernel"
// CHECK-COUNT-2: graph.param "dense1.bias"
// CHECK-NEXT: %[[H_0:.*]] = graph.dense %[[X]], {{.*}} {activation = #graph.act<sigmoid>, dist.replica = 0 : i64}
// CHECK-NEXT: %[[H_1:.*]] = graph.dense %[[X]], {{.*}} {activation = #graph.act<sigmoid>, dist.replica = 1 : i64}
// CHECK-COUNT-4: graph.param "dense2.
// CHECK-NEXT: %[[Y_0:.*]] = graph.dense %[[H_0]], {{.*}} {dist.replica = 0 : i64}
// CHECK-NEXT: %[[Y_1:.*]] = graph.dense %[[H_1]], {{.*}} {dist.replica = 1 : i64}
// CHECK-NEXT: %[[LOSS_0:.*]] = graph.softmax_cross_entropy %[[Y_0]], %[[L]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[LOSS_1:.*]] = graph.softmax_cross_entropy %[[Y_1]], %[[L]] {dist.replica = 1 : i64}
// CHECK-NEXT: %[[C_0:.*]] = graph.count_correct %[[Y_0]], %[[L]] {dist.replica = 0 : i64}
// CHECK-NEXT: %[[C_1:.*]] = graph.count_correct %[[Y_1]], %[[L]] {dist.replica = 1 : i64}
// CHECK-NEXT: return %[[LOSS_0]], %[[C_0]], %[[Y_0]], %[[LOSS_1]], %[[C_1]], %[[Y_1]] : tensor<f32>, tensor<f32>, tensor<8x3xf32>, tensor<f32>, tensor<f32>, tensor<8x3xf32>

// Tests that with one device per process (R = 1, here P = 2 processes of a cuda device) the
// steps only get the mesh: no copies, no replica tags, the same outputs.
// PROCS-LABEL: func.func @train(
// PROCS-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"})
// PROCS-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cuda">, graph.model = "mlp"
// PROCS-NOT: dist.replica
// PROCS-COUNT-1: graph.param "dense1.kernel"
// PROCS-NOT: graph.param "dense1.kernel"
// PROCS: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// PROCS-LABEL: func.func @eval(
// PROCS-SAME: -> (tensor<f32> {graph.output = "loss", graph.role = "loss"}, tensor<f32> {graph.output = "correct", graph.role = "correct"}, tensor<8x3xf32> {graph.output = "logits", graph.role = "logits"})
// PROCS-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cuda">, graph.model = "mlp", graph.step = "eval"}
// PROCS-NOT: dist.replica
// PROCS: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<8x3xf32>

// Tests that the default options give the one-device mesh.
// ONE-LABEL: func.func @train(
// ONE-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">
// ONE-NOT: dist.replica
// ONE-LABEL: func.func @eval(
// ONE-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">

// Tests that bad options are rejected with the mesh's own diagnostics, and that the steps must
// have been derived.
// ZERO: error: devices_per_process and processes must be at least 1, got 0 and 1
// NOPROC: error: devices_per_process and processes must be at least 1, got 1 and 0
// TPU: error: unknown device kind 'tpu' (expected cpu or cuda)
// NOSTEPS: error: expected a 'train' step function (run graph-derive-steps first)
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

// The node layout rides on the mesh (and is left out when it is one node, above).
// NODES: func.func @train(
// NODES-SAME: dist.mesh = #dist.mesh<devices_per_process = 1, processes = 4, device = "cpu", nodes = 2>
// BADNODES: error: nodes must be at least 1 and divide the 4 processes evenly, got 3
