// RUN: dp-opt %s -dp-compile="devices-per-process=2 processes=2 bucket-mb=0.0001" | FileCheck %s
// RUN: dp-opt %s -dp-compile | FileCheck %s --check-prefix=SINGLE
// RUN: dp-opt %models/mnist_mlp.mlir -dp-compile="devices-per-process=2 processes=2 bucket-mb=0.01" | FileCheck %s --check-prefix=MNIST

// Tests that the whole pipeline with data parallelism (2 devices per process x 2 processes = 4
// replicas of 2 rows) gives a program with the mesh, one copy of every persistent buffer per
// device (device 1's tagged; device 0 is the default and not printed), each device's input
// buffer holding its 2-row shard; the gradients inside gradient buckets, one copy per device
// and bucket (a cap of 104 bytes: dense2's two gradients share bucket 0, dense1's kernel and
// bias get buckets 1 and 2), each gradient at a 16-element (64-byte) boundary of its bucket;
// and per-device arenas: both devices' buffers at the same offsets.
//
// Persistent, per device: x 48 B @0, label 8 B @64, dense1.kernel 120 B @128, dense1.bias
// @256, dense2.kernel @320, dense2.bias @384; bucket 0 of 32 elements @448 (dense2.kernel at
// element 0, dense2.bias at element 16: @512), bucket 1 of 32 @576, bucket 2 of 16 @704: 768.
// Train peak 384, eval peak 192: arena 768 + 384 = 1152.
// CHECK-LABEL: plan.program "mlp" attributes {arena_bytes = 1152 : i64, batch = 8 : i64, devices_per_process = 2 : i64, persistent_bytes = 768 : i64, processes = 2 : i64} {
// CHECK-DAG: %[[X0:.*]] = plan.input "x" as samples {offset = 0 : i64} : memref<2x6xf32>
// CHECK-DAG: %[[X1:.*]] = plan.input "x" as samples {device = 1 : i64, offset = 0 : i64} : memref<2x6xf32>
// CHECK-DAG: %[[L0:.*]] = plan.input "label" as targets {offset = 64 : i64} : memref<2xi32>
// CHECK-DAG: %[[L1:.*]] = plan.input "label" as targets {device = 1 : i64, offset = 64 : i64} : memref<2xi32>
// CHECK: %[[W1_0:.*]] = plan.param "dense1.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 6, fan_out = 5>, offset = 128 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[W1_1:.*]] = plan.param "dense1.kernel" {device = 1 : i64, init = #plan.init<kind = "glorot_uniform", fan_in = 6, fan_out = 5>, offset = 128 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[B1_0:.*]] = plan.param "dense1.bias" {init = #plan.init<kind = "zeros", fan_in = 5, fan_out = 5>, offset = 256 : i64} : memref<5xf32>
// CHECK-NEXT: %[[B1_1:.*]] = plan.param "dense1.bias" {device = 1 : i64, init = #plan.init<kind = "zeros", fan_in = 5, fan_out = 5>, offset = 256 : i64} : memref<5xf32>
// CHECK-NEXT: %[[W2_0:.*]] = plan.param "dense2.kernel" {init = #plan.init<kind = "glorot_uniform", fan_in = 5, fan_out = 3>, offset = 320 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[W2_1:.*]] = plan.param "dense2.kernel" {device = 1 : i64, init = #plan.init<kind = "glorot_uniform", fan_in = 5, fan_out = 3>, offset = 320 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[B2_0:.*]] = plan.param "dense2.bias" {init = #plan.init<kind = "zeros", fan_in = 3, fan_out = 3>, offset = 384 : i64} : memref<3xf32>
// CHECK-NEXT: %[[B2_1:.*]] = plan.param "dense2.bias" {device = 1 : i64, init = #plan.init<kind = "zeros", fan_in = 3, fan_out = 3>, offset = 384 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K0_0:.*]] = plan.bucket 0 {offset = 448 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW2_0:.*]] = plan.grad "dense2.kernel" in %[[K0_0]] : memref<32xf32> {bucket_offset = 0 : i64, offset = 448 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[GB2_0:.*]] = plan.grad "dense2.bias" in %[[K0_0]] : memref<32xf32> {bucket_offset = 16 : i64, offset = 512 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K0_1:.*]] = plan.bucket 0 {device = 1 : i64, offset = 448 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW2_1:.*]] = plan.grad "dense2.kernel" in %[[K0_1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64, offset = 448 : i64} : memref<5x3xf32>
// CHECK-NEXT: %[[GB2_1:.*]] = plan.grad "dense2.bias" in %[[K0_1]] : memref<32xf32> {bucket_offset = 16 : i64, device = 1 : i64, offset = 512 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K1_0:.*]] = plan.bucket 1 {offset = 576 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW1_0:.*]] = plan.grad "dense1.kernel" in %[[K1_0]] : memref<32xf32> {bucket_offset = 0 : i64, offset = 576 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[K1_1:.*]] = plan.bucket 1 {device = 1 : i64, offset = 576 : i64} : memref<32xf32>
// CHECK-NEXT: %[[GW1_1:.*]] = plan.grad "dense1.kernel" in %[[K1_1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64, offset = 576 : i64} : memref<6x5xf32>
// CHECK-NEXT: %[[K2_0:.*]] = plan.bucket 2 {offset = 704 : i64} : memref<16xf32>
// CHECK-NEXT: %[[GB1_0:.*]] = plan.grad "dense1.bias" in %[[K2_0]] : memref<16xf32> {bucket_offset = 0 : i64, offset = 704 : i64} : memref<5xf32>
// CHECK-NEXT: %[[K2_1:.*]] = plan.bucket 2 {device = 1 : i64, offset = 704 : i64} : memref<16xf32>
// CHECK-NEXT: %[[GB1_1:.*]] = plan.grad "dense1.bias" in %[[K2_1]] : memref<16xf32> {bucket_offset = 0 : i64, device = 1 : i64, offset = 704 : i64} : memref<5xf32>
// Train: each op once per device, device 0's first, on that device's buffers; transients of
// both devices from 768 in their own arenas.
// CHECK-NEXT: plan.step "train" attributes {peak_bytes = 384 : i64} {
// CHECK-NEXT: %[[H0:.*]] = plan.alloc {offset = 768 : i64} : memref<2x5xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X0]], %[[W1_0]], %[[B1_0]] : memref<2x6xf32>, memref<6x5xf32>, memref<5xf32>) outs(%[[H0]] : memref<2x5xf32>) {activation = "sigmoid"}
// CHECK-NEXT: %[[H1:.*]] = plan.alloc {device = 1 : i64, offset = 768 : i64} : memref<2x5xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X1]], %[[W1_1]], %[[B1_1]] : memref<2x6xf32>, memref<6x5xf32>, memref<5xf32>) outs(%[[H1]] : memref<2x5xf32>) {activation = "sigmoid"}
// CHECK: plan.kernel "softmax_xent" ins(%{{.*}}, %[[L0]] : memref<2x3xf32>, memref<2xi32>)
// CHECK: plan.kernel "softmax_xent" ins(%{{.*}}, %[[L1]] : memref<2x3xf32>, memref<2xi32>)
// Gradients are written straight into their slots of the buckets; each bucket's allreduce
// starts right after its last gradient and takes every device's copy, in device order.
// CHECK: plan.kernel "matmul" ins(%[[H0]], %[[DY0:.*]] : memref<2x5xf32>, memref<2x3xf32>) outs(%[[GW2_0]] : memref<5x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[H1]], %[[DY1:.*]] : memref<2x5xf32>, memref<2x3xf32>) outs(%[[GW2_1]] : memref<5x3xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DY0]] : memref<2x3xf32>) outs(%[[GB2_0]] : memref<3xf32>)
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DY1]] : memref<2x3xf32>) outs(%[[GB2_1]] : memref<3xf32>)
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K0_0]], %[[K0_1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: %[[DZ0:.*]] = plan.alloc {offset = {{[0-9]+}} : i64} : memref<2x5xf32>
// CHECK-NEXT: plan.kernel "activation_grad"
// CHECK-NEXT: %[[DZ1:.*]] = plan.alloc {device = 1 : i64, offset = {{[0-9]+}} : i64} : memref<2x5xf32>
// CHECK-NEXT: plan.kernel "activation_grad"
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X0]], %[[DZ0]] : memref<2x6xf32>, memref<2x5xf32>) outs(%[[GW1_0]] : memref<6x5xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "matmul" ins(%[[X1]], %[[DZ1]] : memref<2x6xf32>, memref<2x5xf32>) outs(%[[GW1_1]] : memref<6x5xf32>) {transpose_a = 1 : i64, transpose_b = 0 : i64}
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K1_0]], %[[K1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64}
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DZ0]] : memref<2x5xf32>) outs(%[[GB1_0]] : memref<5xf32>)
// CHECK-NEXT: plan.kernel "reduce_rows" ins(%[[DZ1]] : memref<2x5xf32>) outs(%[[GB1_1]] : memref<5xf32>)
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K2_0]], %[[K2_1]] : memref<16xf32>, memref<16xf32>) {bucket = 2 : i64}
// The updates run at the end, each after the wait of its bucket, reading the means in place.
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K0_0]], %[[K0_1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW2_0]] : memref<5x3xf32>) outs(%[[W2_0]] : memref<5x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW2_1]] : memref<5x3xf32>) outs(%[[W2_1]] : memref<5x3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB2_0]] : memref<3xf32>) outs(%[[B2_0]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB2_1]] : memref<3xf32>) outs(%[[B2_1]] : memref<3xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K1_0]], %[[K1_1]] : memref<32xf32>, memref<32xf32>) {bucket = 1 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW1_0]] : memref<6x5xf32>) outs(%[[W1_0]] : memref<6x5xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GW1_1]] : memref<6x5xf32>) outs(%[[W1_1]] : memref<6x5xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K2_0]], %[[K2_1]] : memref<16xf32>, memref<16xf32>) {bucket = 2 : i64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB1_0]] : memref<5xf32>) outs(%[[B1_0]] : memref<5xf32>) {lr = 1.000000e-01 : f64}
// CHECK-NEXT: plan.kernel "sgd_update" ins(%[[GB1_1]] : memref<5xf32>) outs(%[[B1_1]] : memref<5xf32>) {lr = 1.000000e-01 : f64}
// Every replica's outputs, device 0's first.
// CHECK-NEXT: plan.output "loss" as loss, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "loss" as loss, %{{.*}} : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %{{.*}} : memref<f32>
// CHECK-NEXT: }
// Eval has no collectives and no gradients.
// CHECK-NEXT: plan.step "eval" attributes {peak_bytes = 192 : i64} {
// CHECK-NOT: allreduce
// CHECK-NOT: plan.grad
// CHECK: plan.kernel "dense" ins(%[[X0]], %[[W1_0]], %[[B1_0]]
// CHECK: plan.kernel "dense" ins(%[[X1]], %[[W1_1]], %[[B1_1]]
// CHECK-NOT: allreduce

// Tests that an undistributed compile has no trace of data parallelism: no mesh attributes on
// the program, no device attributes, no buckets, plain gradients, no collectives.
// SINGLE-LABEL: plan.program "mlp" attributes {arena_bytes = {{[0-9]+}} : i64, batch = 8 : i64, persistent_bytes = {{[0-9]+}} : i64} {
// SINGLE-NOT: device
// SINGLE-NOT: plan.bucket
// SINGLE-NOT: bucket_offset
// SINGLE-NOT: allreduce
// SINGLE: plan.grad "dense2.kernel" {offset = {{[0-9]+}} : i64} : memref<5x3xf32>
// SINGLE-NOT: device
// SINGLE-NOT: allreduce
// SINGLE: plan.step "eval"

// Tests mnist_mlp on 2 x 2 replicas of 25 images with 0.01 MiB buckets: dense2's gradients
// (4,040 bytes) share bucket 0 (1,024 elements: the kernel's 1,000 padded to 1,008, then the
// bias), dense1.kernel (313,600 bytes, over the cap) has bucket 1, dense1.bias bucket 2.
// MNIST-LABEL: plan.program "mnist_mlp" attributes {arena_bytes = {{[0-9]+}} : i64, batch = 100 : i64, devices_per_process = 2 : i64, persistent_bytes = {{[0-9]+}} : i64, processes = 2 : i64} {
// MNIST-DAG: plan.input "image" as samples {offset = 0 : i64} : memref<25x784xf32>
// MNIST-DAG: plan.input "image" as samples {device = 1 : i64, offset = 0 : i64} : memref<25x784xf32>
// MNIST: %[[K0:.*]] = plan.bucket 0 {offset = [[OFF0:[0-9]+]] : i64} : memref<1024xf32>
// MNIST-NEXT: plan.grad "dense2.kernel" in %[[K0]] : memref<1024xf32> {bucket_offset = 0 : i64, offset = [[OFF0]] : i64} : memref<100x10xf32>
// MNIST-NEXT: plan.grad "dense2.bias" in %[[K0]] : memref<1024xf32> {bucket_offset = 1008 : i64, offset = {{[0-9]+}} : i64} : memref<10xf32>
// MNIST-NEXT: %[[K0D1:.*]] = plan.bucket 0 {device = 1 : i64, offset = [[OFF0]] : i64} : memref<1024xf32>
// MNIST: %[[K1:.*]] = plan.bucket 1 {offset = {{[0-9]+}} : i64} : memref<78400xf32>
// MNIST-NEXT: plan.grad "dense1.kernel" in %[[K1]]
// MNIST-NEXT: %[[K1D1:.*]] = plan.bucket 1 {device = 1 : i64
// MNIST: %[[K2:.*]] = plan.bucket 2 {offset = {{[0-9]+}} : i64} : memref<112xf32>
// MNIST-NEXT: plan.grad "dense1.bias" in %[[K2]]
// MNIST-NEXT: %[[K2D1:.*]] = plan.bucket 2 {device = 1 : i64
// MNIST: plan.step "train"
// MNIST: plan.kernel "allreduce_start" ins(%[[K0]], %[[K0D1]] : memref<1024xf32>, memref<1024xf32>) {bucket = 0 : i64}
// MNIST: plan.kernel "allreduce_start" ins(%[[K1]], %[[K1D1]] : memref<78400xf32>, memref<78400xf32>) {bucket = 1 : i64}
// MNIST: plan.kernel "allreduce_start" ins(%[[K2]], %[[K2D1]] : memref<112xf32>, memref<112xf32>) {bucket = 2 : i64}
// MNIST-NEXT: plan.kernel "allreduce_wait" ins(%[[K0]], %[[K0D1]] : memref<1024xf32>, memref<1024xf32>) {bucket = 0 : i64}
// MNIST-COUNT-4: plan.kernel "sgd_update"
// MNIST-NEXT: plan.kernel "allreduce_wait" ins(%[[K1]], %[[K1D1]]
// MNIST-COUNT-2: plan.kernel "sgd_update"
// MNIST-NEXT: plan.kernel "allreduce_wait" ins(%[[K2]], %[[K2D1]]
// MNIST-COUNT-2: plan.kernel "sgd_update"
// MNIST: plan.step "eval"
// MNIST-NOT: allreduce
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
