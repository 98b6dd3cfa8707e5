// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0.0001 -graph-expand-optimizer -convert-dist-to-plan | FileCheck %s
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch -dist-insert-allreduce -dist-fuse-allreduce=bucket-mb=0 -graph-expand-optimizer -dist-schedule -convert-dist-to-plan | FileCheck %s --check-prefix=PROCS
// RUN: dp-opt %s -graph-derive-steps -graph-autodiff -dist-replicate=processes=2 -dist-split-batch "-dist-insert-allreduce=allreduce-precision=bf16" -dist-fuse-allreduce=bucket-mb=0 -graph-expand-optimizer -dist-schedule -convert-dist-to-plan | FileCheck %s --check-prefix=BF16

// Tests that the train step's allreduce precision reaches the program.
// BF16: plan.program "mlp" attributes {allreduce_precision = "bf16", batch = 8 : i64, processes = 2 : i64} {

// Tests the lowering of a replicated step (R = 2, buckets not scheduled): the program carries
// devices_per_process; each replica's shard of an input is its device's plan.input (device 0's
// `device` is not printed) and each replica's parameter its device's plan.param; each bucket
// becomes one plan.bucket per device with the gradients of that device inside it, at
// 16-element boundaries in bucket order, declared before the steps; the kernels computing a
// gradient write straight into its slot; an unscheduled allreduce lowers to an
// allreduce_start and an allreduce_wait right where it was, on every device's copy of the
// bucket, in device order; the updates read the means in place (the gradient buffers).
// CHECK-LABEL: plan.program "mlp" attributes {batch = 8 : i64, devices_per_process = 2 : i64} {
// CHECK-DAG: %[[X0:.*]] = plan.input "x" as samples : memref<4x6xf32>
// CHECK-DAG: %[[X1:.*]] = plan.input "x" as samples {device = 1 : i64} : memref<4x6xf32>
// CHECK-DAG: %[[L0:.*]] = plan.input "label" as targets : memref<4xi32>
// CHECK-DAG: %[[L1:.*]] = plan.input "label" as targets {device = 1 : i64} : memref<4xi32>
// CHECK: %[[W1_0:.*]] = plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 6, fan_out = 5>} : memref<6x5xf32>
// CHECK-NEXT: %[[W1_1:.*]] = plan.param "dense1.kernel" {device = 1 : i64, init = #plan.init<kind = "glorot_uniform", fan_in = 6, fan_out = 5>} : memref<6x5xf32>
// CHECK-NEXT: plan.param "dense1.bias" {init
// CHECK-NEXT: plan.param "dense1.bias" {device = 1 : i64, init
// CHECK-NEXT: %[[W2_0:.*]] = plan.param "dense2.kernel" {init
// CHECK-NEXT: %[[W2_1:.*]] = plan.param "dense2.kernel" {device = 1 : i64, init
// CHECK-NEXT: %[[B2_0:.*]] = plan.param "dense2.bias" {init
// CHECK-NEXT: %[[B2_1:.*]] = plan.param "dense2.bias" {device = 1 : i64, init
// CHECK-NEXT: %[[K0_0:.*]] = plan.bucket 0 : memref<32xf32>
// CHECK-NEXT: %[[GW2_0:.*]] = plan.grad "dense2.kernel" in %[[K0_0]] : memref<32xf32> {bucket_offset = 0 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[GB2_0:.*]] = plan.grad "dense2.bias" in %[[K0_0]] : memref<32xf32> {bucket_offset = 16 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K0_1:.*]] = plan.bucket 0 {device = 1 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW2_1:.*]] = plan.grad "dense2.kernel" in %[[K0_1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[GB2_1:.*]] = plan.grad "dense2.bias" in %[[K0_1]] : memref<32xf32> {bucket_offset = 16 : i64, device = 1 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K1_0:.*]] = plan.bucket 1 : memref<32xf32>
// CHECK-NEXT: %[[GW1_0:.*]] = plan.grad "dense1.kernel" in %[[K1_0]] : memref<32xf32> {bucket_offset = 0 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[K1_1:.*]] = plan.bucket 1 {device = 1 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW1_1:.*]] = plan.grad "dense1.kernel" in %[[K1_1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[K2_0:.*]] = plan.bucket 2 : memref<16xf32>
// CHECK-NEXT: plan.grad "dense1.bias" in %[[K2_0]] : memref<16xf32> {bucket_offset = 0 : i64} : memref<5xf32>
// CHECK-NEXT: %[[K2_1:.*]] = plan.bucket 2 {device = 1 : i64} : memref<16xf32>
// CHECK-NEXT: plan.grad "dense1.bias" in %[[K2_1]] : memref<16xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<5xf32>
// CHECK-NEXT: plan.step "train" {
// CHECK-NEXT: %[[H0:.*]] = plan.alloc : memref<4x5xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X0]], %[[W1_0]], %{{.*}} : memref<4x6xf32>, memref<6x5xf32>, memref<5xf32>) outs(%[[H0]] : memref<4x5xf32>) {activation = "sigmoid"}
// CHECK-NEXT: %[[H1:.*]] = plan.alloc {device = 1 : i64} : memref<4x5xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X1]], %[[W1_1]], %{{.*}} : memref<4x6xf32>, memref<6x5xf32>, memref<5xf32>) outs(%[[H1]] : memref<4x5xf32>) {activation = "sigmoid"}
// CHECK: plan.kernel "softmax_xent" ins(%{{.*}}, %[[L0]] : memref<4x3xf32>, memref<4xi32>)
// CHECK: plan.kernel "softmax_xent" ins(%{{.*}}, %[[L1]] : memref<4x3xf32>, memref<4xi32>)
// CHECK: plan.kernel "matmul" ins(%[[H0]], %{{.*}} : memref<4x5xf32>, memref<4x3xf32>) outs(%[[GW2_0]] : memref<5x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[H1]], %{{.*}} : memref<4x5xf32>, memref<4x3xf32>) outs(%[[GW2_1]] : memref<5x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%{{.*}} : memref<4x3xf32>) outs(%[[GB2_0]] : memref<3xf32>)
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%{{.*}} : memref<4x3xf32>) outs(%[[GB2_1]] : memref<3xf32>)
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K0_0]], %[[K0_1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K0_0]], %[[K0_1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW2_0]] : memref<5x3xf32>) outs(%[[W2_0]] : memref<5x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW2_1]] : memref<5x3xf32>) outs(%[[W2_1]] : memref<5x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB2_0]] : memref<3xf32>) outs(%[[B2_0]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB2_1]] : memref<3xf32>) outs(%[[B2_1]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
// CHECK: plan.kernel "matmul" ins(%[[X0]], %{{.*}} : memref<4x6xf32>, memref<4x5xf32>) outs(%[[GW1_0]] : memref<6x5xf32>)
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X1]], %{{.*}} : memref<4x6xf32>, memref<4x5xf32>) outs(%[[GW1_1]] : memref<6x5xf32>)
// CHECK: plan.kernel "allreduce_start" ins(%[[K1_0]], %[[K1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K1_0]], %[[K1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW1_0]] : memref<6x5xf32>) outs(%[[W1_0]] : memref<6x5xf32>)
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW1_1]] : memref<6x5xf32>) outs(%[[W1_1]] : memref<6x5xf32>)
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K2_0]], %[[K2_1]] : memref<16xf32>, memref<16xf32>) {bucket = 2 : i64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K2_0]], %[[K2_1]] : memref<16xf32>, memref<16xf32>) {bucket = 2 : i64}
// CHECK-NEXT: plan.kernel "sgd_update"
// CHECK-NEXT: plan.kernel "sgd_update"
// Every replica's outputs, each from its device's buffers.
// CHECK-NEXT: plan.output "loss" as loss, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "loss" as loss, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %{{.*}} : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: plan.step "eval" {
// CHECK-NOT: allreduce
// CHECK: plan.kernel "dense" ins(%[[X0]], %[[W1_0]]
// CHECK: plan.kernel "dense" ins(%[[X1]], %[[W1_1]]

// Tests a scheduled step of one device per process: the program keeps `processes` for the
// runtime, the only device's input is its shard, and each allreduce_start / allreduce_wait
// lowers to its kernel on device 0's bucket where the schedule put it.
// PROCS-LABEL: plan.program "mlp" attributes {batch = 8 : i64, processes = 2 : i64} {
// PROCS-NEXT: %[[X:.*]] = plan.input "x" as samples : memref<4x6xf32>
// PROCS-NEXT: %[[L:.*]] = plan.input "label" as targets : memref<4xi32>
// PROCS-NOT: device
// PROCS: %[[K0:.*]] = plan.bucket 0 : memref<16xf32>
// PROCS-NEXT: %[[G0:.*]] = plan.grad "dense2.kernel" in %[[K0]] : memref<16xf32> {bucket_offset = 0 : i64} : memref<5x3xf32>
// PROCS-NEXT: %[[K1:.*]] = plan.bucket 1 : memref<16xf32>
// PROCS-NEXT: %[[G1:.*]] = plan.grad "dense2.bias" in %[[K1]] : memref<16xf32> {bucket_offset = 0 : i64} : memref<3xf32>
// PROCS: plan.kernel "matmul" ins(%{{.*}}, %{{.*}} : memref<4x5xf32>, memref<4x3xf32>) outs(%[[G0]] : memref<5x3xf32>)
// PROCS-NEXT: plan.kernel "allreduce_start" ins(%[[K0]] : memref<16xf32>) {bucket = 0 : i64}
// PROCS-NEXT: plan.kernel "reduce_rows" ins(%{{.*}} : memref<4x3xf32>) outs(%[[G1]] : memref<3xf32>)
// PROCS-NEXT: plan.kernel "allreduce_start" ins(%[[K1]] : memref<16xf32>) {bucket = 1 : i64}
// PROCS: plan.kernel "allreduce_start" {{.*}} {bucket = 3 : i64}
// PROCS-NEXT: plan.kernel "allreduce_wait" ins(%[[K0]] : memref<16xf32>) {bucket = 0 : i64}
// PROCS-NEXT: plan.kernel "sgd_update" ins(%[[G0]] : memref<5x3xf32>)
// PROCS-NEXT: plan.kernel "allreduce_wait" ins(%[[K1]] : memref<16xf32>) {bucket = 1 : i64}
// PROCS-NEXT: plan.kernel "sgd_update" ins(%[[G1]] : memref<3xf32>)
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
