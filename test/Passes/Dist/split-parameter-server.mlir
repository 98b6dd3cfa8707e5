// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=2 -dist-split-batch -dist-place-parameters=servers=2 -dist-split-parameter-server=bucket-mb=0 -dist-verify | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -graph-expand-optimizer -dist-replicate=processes=2 -dist-split-batch -dist-place-parameters=servers=2 -dist-split-parameter-server -dist-verify | FileCheck %s --check-prefix=FUSED

// Tests the split with a bucket per gradient (bucket-mb=0): on the worker, each push comes
// right after its gradient (dense2.kernel's before dense2.bias is even reduced, while the
// backward pass goes on), numbered in the order they leave, each to the server holding the
// parameter; the pulls come at the end of the step, after the last read of dense2.kernel
// (the backward matmul %[[DH]]), in bucket order; no update and no optimizer state is left on
// the worker. Each server function receives its buckets in order, applies Adam with the state
// that now lives only there, and replies with the updated parameter.
// CHECK-LABEL: func.func @train(
// CHECK-SAME: #dist.parameter_server<servers = 2, workers = 2, staleness = -1, sync = false>
// CHECK-NOT: optimizer_state
// CHECK: %[[W1:.*]] = graph.param "dense1.kernel" {dist.server = 0 : i64
// CHECK-NEXT: %[[B1:.*]] = graph.param "dense1.bias" {dist.server = 1 : i64
// CHECK: %[[W2:.*]] = graph.param "dense2.kernel" {dist.server = 1 : i64
// CHECK-NEXT: %[[B2:.*]] = graph.param "dense2.bias" {dist.server = 1 : i64
// CHECK: %[[DH:.*]] = graph.matmul %{{.*}}, %[[W2]] {transpose_rhs}
// CHECK-NEXT: %[[DW2:.*]] = graph.matmul %{{.*}} {transpose_lhs}
// CHECK-NEXT: dist.push %[[DW2]] {bucket = 0 : i64, server = 1 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>
// CHECK-NEXT: %[[DB2:.*]] = graph.reduce_rows
// CHECK-NEXT: dist.push %[[DB2]] {bucket = 1 : i64, server = 1 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>
// CHECK-NEXT: graph.activation_grad
// CHECK-NEXT: %[[DW1:.*]] = graph.matmul
// CHECK-NEXT: dist.push %[[DW1]] {bucket = 2 : i64, server = 0 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// CHECK-NEXT: %[[DB1:.*]] = graph.reduce_rows
// CHECK-NEXT: dist.push %[[DB1]] {bucket = 3 : i64, server = 1 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>
// CHECK-NEXT: dist.pull %[[W2]] {bucket = 0 : i64, server = 1 : i64, tensors = ["dense2.kernel"]} : tensor<5x3xf32>
// CHECK-NEXT: dist.pull %[[B2]] {bucket = 1 : i64, server = 1 : i64, tensors = ["dense2.bias"]} : tensor<3xf32>
// CHECK-NEXT: dist.pull %[[W1]] {bucket = 2 : i64, server = 0 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// CHECK-NEXT: dist.pull %[[B1]] {bucket = 3 : i64, server = 1 : i64, tensors = ["dense1.bias"]} : tensor<5xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: dist.p
// CHECK: return
// CHECK-LABEL: func.func private @server0()
// CHECK-SAME: attributes {dist.parameter_server = #dist.parameter_server<servers = 2, workers = 2, staleness = -1, sync = false>, dist.server = 0 : i64
// CHECK-NEXT: %[[G:.*]] = dist.receive {bucket = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// CHECK-NEXT: %[[P:.*]] = graph.param "dense1.kernel" {dist.server = 0 : i64
// CHECK-NEXT: %[[M:.*]] = graph.param "dense1.kernel/m" {init = #graph.zeros, optimizer_state
// CHECK-NEXT: %[[V:.*]] = graph.param "dense1.kernel/v" {init = #graph.zeros, optimizer_state
// CHECK-NEXT: graph.adam_update %[[P]], %[[M]], %[[V]], %[[G]]
// CHECK-NEXT: dist.reply %[[P]] {bucket = 2 : i64, tensors = ["dense1.kernel"]} : tensor<6x5xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @server1()
// CHECK-NEXT: dist.receive {bucket = 0 : i64, tensors = ["dense2.kernel"]}
// CHECK-COUNT-3: graph.param "dense2.kernel
// CHECK-NEXT: graph.adam_update
// CHECK-NEXT: dist.reply {{.*}} {bucket = 0 : i64
// CHECK-NEXT: dist.receive {bucket = 1 : i64, tensors = ["dense2.bias"]}
// CHECK: dist.reply {{.*}} {bucket = 1 : i64
// CHECK-NEXT: dist.receive {bucket = 3 : i64, tensors = ["dense1.bias"]}
// CHECK: dist.reply {{.*}} {bucket = 3 : i64
// CHECK-NEXT: return

// Tests the default bucket size: one bucket per server, each pushed after its last gradient
// (server 1's after dense1.bias, the last one; server 0's after dense1.kernel), numbered in
// the order they leave; server 1 updates its three parameters from one received bucket.
// FUSED-LABEL: func.func @train(
// FUSED: dist.push %{{.*}} {bucket = 0 : i64, server = 0 : i64, tensors = ["dense1.kernel"]}
// FUSED-NEXT: graph.reduce_rows
// FUSED-NEXT: dist.push %{{.*}}, %{{.*}}, %{{.*}} {bucket = 1 : i64, server = 1 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.bias"]}
// FUSED-LABEL: func.func private @server1()
// FUSED-NEXT: %[[G:.*]]:3 = dist.receive {bucket = 1 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.bias"]}
// FUSED-COUNT-3: graph.adam_update
// FUSED: dist.reply %{{.*}}, %{{.*}}, %{{.*}} {bucket = 1 : i64, tensors = ["dense2.kernel", "dense2.bias", "dense1.bias"]}
func.func @mlp(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.001>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<6x5xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<5xf32>
  %h = graph.dense %x, %w1, %b1 {activation = #graph.act<sigmoid>} : (tensor<8x6xf32>, tensor<6x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<5x3xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %h, %w2, %b2 : (tensor<8x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
