// RUN: dp-opt %s -split-input-file -plan-memory -verify-diagnostics | FileCheck %s

// Tests that a small hand-written program is placed as computed by hand (offsets exact).
//
// Persistent buffers come first, in program order (also one declared after the steps), each at
// a multiple of 64 bytes: x 128 B @0, label 32 B @128, w 64 B @192, w/m 64 B @256, s 4 B @320,
// grad w 64 B @384, late 4 B @448: persistent_bytes = 512.
//
// The steps' transients start at 512 and overlap each other. Train (positions of ops in the
// step; a view's uses count for its source, an output keeps its buffer to the end):
//   a 128 B [0, 8] (used through %av at 8)   b 128 B [3, 6]   c 128 B [5, 14] (output)
//   d 128 B [7, 12]                          e   4 B [9, 14] (output)   f 128 B [11, 12]
// Largest first, then earliest: a @0, b @128, c @256, d @128 (b is dead), f @0 (a is dead
// once its view is), e @384 (c, d and f are live): peak 448.
// Eval: a 128 B [1, 5] @0, b 4 B [3, 7] @128, c 4 B [5, 7] @192: peak 256.
// arena_bytes = 512 + max(448, 256) = 960.
// CHECK-LABEL: plan.program "m" attributes {arena_bytes = 960 : i64, batch = 8 : i64, persistent_bytes = 512 : i64} {
// CHECK-NEXT: %[[X:.*]] = plan.input "x" as samples {offset = 0 : i64} : memref<8x4xf32>
// CHECK-NEXT: %[[L:.*]] = plan.input "label" as targets {offset = 128 : i64} : memref<8xi32>
// CHECK-NEXT: %[[W:.*]] = plan.param "w" {init = #plan.init<kind = "zeros">, offset = 192 : i64} : memref<4x4xf32>
// CHECK-NEXT: %[[M:.*]] = plan.param "w/m" {init = #plan.init<kind = "zeros">, offset = 256 : i64, optimizer_state} : memref<4x4xf32>
// CHECK-NEXT: %[[S:.*]] = plan.param "s" {init = #plan.init<kind = "ones">, offset = 320 : i64} : memref<f32>
// CHECK-NEXT: %[[G:.*]] = plan.grad "w" {offset = 384 : i64} : memref<4x4xf32>
// CHECK-NEXT: plan.step "train" attributes {peak_bytes = 448 : i64} {
// CHECK-NEXT: %[[A:.*]] = plan.alloc {offset = 512 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[X]] : memref<8x4xf32>) outs(%[[A]] : memref<8x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[AV:.*]] = plan.view %[[A]] : memref<8x4xf32> to memref<32xf32>
// CHECK-NEXT: %[[B:.*]] = plan.alloc {offset = 640 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[A]] : memref<8x4xf32>) outs(%[[B]] : memref<8x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[C:.*]] = plan.alloc {offset = 768 : i64} : memref<32xf32>
// CHECK-NEXT: plan.kernel "copy" ins(%[[B]] : memref<8x4xf32>) outs(%[[C]] : memref<32xf32>)
// CHECK-NEXT: %[[D:.*]] = plan.alloc {offset = 640 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "copy" ins(%[[AV]] : memref<32xf32>) outs(%[[D]] : memref<8x4xf32>)
// CHECK-NEXT: %[[E:.*]] = plan.alloc {offset = 896 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "fill" outs(%[[E]] : memref<f32>) {value = 0.000000e+00 : f64}
// CHECK-NEXT: %[[F:.*]] = plan.alloc {offset = 512 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "add" ins(%[[D]], %[[D]] : memref<8x4xf32>, memref<8x4xf32>) outs(%[[F]] : memref<8x4xf32>)
// CHECK-NEXT: plan.output "y" as loss, %[[C]] : memref<32xf32>
// CHECK-NEXT: plan.output "e" as correct, %[[E]] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: plan.step "eval" attributes {peak_bytes = 256 : i64} {
// CHECK-NEXT: %[[WV:.*]] = plan.view %[[W]] : memref<4x4xf32> to memref<16xf32>
// CHECK-NEXT: %[[A:.*]] = plan.alloc {offset = 512 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[X]] : memref<8x4xf32>) outs(%[[A]] : memref<8x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[B:.*]] = plan.alloc {offset = 640 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "softmax_xent" ins(%[[A]], %[[L]] : memref<8x4xf32>, memref<8xi32>) outs(%[[B]] : memref<f32>)
// CHECK-NEXT: %[[C:.*]] = plan.alloc {offset = 704 : i64} : memref<f32>
// CHECK-NEXT: plan.kernel "count_correct" ins(%[[A]], %[[L]] : memref<8x4xf32>, memref<8xi32>) outs(%[[C]] : memref<f32>)
// CHECK-NEXT: plan.output "loss" as loss, %[[B]] : memref<f32>
// CHECK-NEXT: plan.output "correct" as correct, %[[C]] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: plan.param "late" {init = #plan.init<kind = "zeros">, offset = 448 : i64} : memref<f32>
// CHECK-NEXT: }
plan.program "m" attributes {batch = 8 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  %l = plan.input "label" as targets : memref<8xi32>
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4x4xf32>
  %m = plan.param "w/m" {init = #plan.init<kind = "zeros">, optimizer_state} : memref<4x4xf32>
  %s = plan.param "s" {init = #plan.init<kind = "ones">} : memref<f32>
  %g = plan.grad "w" : memref<4x4xf32>
  plan.step "train" {
    %a = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%x : memref<8x4xf32>) outs(%a : memref<8x4xf32>) {activation = "relu"}
    %av = plan.view %a : memref<8x4xf32> to memref<32xf32>
    %b = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%a : memref<8x4xf32>) outs(%b : memref<8x4xf32>) {activation = "relu"}
    %c = plan.alloc : memref<32xf32>
    plan.kernel "copy" ins(%b : memref<8x4xf32>) outs(%c : memref<32xf32>)
    %d = plan.alloc : memref<8x4xf32>
    plan.kernel "copy" ins(%av : memref<32xf32>) outs(%d : memref<8x4xf32>)
    %e = plan.alloc : memref<f32>
    plan.kernel "fill" outs(%e : memref<f32>) {value = 0.000000e+00 : f64}
    %f = plan.alloc : memref<8x4xf32>
    plan.kernel "add" ins(%d, %d : memref<8x4xf32>, memref<8x4xf32>) outs(%f : memref<8x4xf32>)
    plan.output "y" as loss, %c : memref<32xf32>
    plan.output "e" as correct, %e : memref<f32>
  }
  plan.step "eval" {
    %wv = plan.view %w : memref<4x4xf32> to memref<16xf32>
    %a = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%x : memref<8x4xf32>) outs(%a : memref<8x4xf32>) {activation = "relu"}
    %b = plan.alloc : memref<f32>
    plan.kernel "softmax_xent" ins(%a, %l : memref<8x4xf32>, memref<8xi32>) outs(%b : memref<f32>)
    %c = plan.alloc : memref<f32>
    plan.kernel "count_correct" ins(%a, %l : memref<8x4xf32>, memref<8xi32>) outs(%c : memref<f32>)
    plan.output "loss" as loss, %b : memref<f32>
    plan.output "correct" as correct, %c : memref<f32>
  }
  %late = plan.param "late" {init = #plan.init<kind = "zeros">} : memref<f32>
}

// -----

// Tests that a view of a view keeps the root alive, and that offsets already present are
// replaced: x 64 B @0; a [0, 5] @64 (used through vv at 5), b [3, 4] must not reuse a: @192.
// CHECK-LABEL: plan.program "views" attributes {arena_bytes = 320 : i64, batch = 1 : i64, persistent_bytes = 64 : i64} {
// CHECK: plan.step "s" attributes {peak_bytes = 256 : i64} {
// CHECK-NEXT: %[[A:.*]] = plan.alloc {offset = 64 : i64} : memref<4x8xf32>
// CHECK: %[[B:.*]] = plan.alloc {offset = 192 : i64} : memref<32xf32>
plan.program "views" attributes {batch = 1 : i64} {
  %x = plan.input "x" as samples {offset = 1000 : i64} : memref<2x2xf32>
  plan.step "s" {
    %a = plan.alloc {offset = 12345 : i64} : memref<4x8xf32>
    %v = plan.view %a : memref<4x8xf32> to memref<32xf32>
    %vv = plan.view %v : memref<32xf32> to memref<2x16xf32>
    %b = plan.alloc : memref<32xf32>
    plan.kernel "fill" outs(%b : memref<32xf32>) {value = 0.000000e+00 : f64}
    plan.kernel "copy" ins(%vv : memref<2x16xf32>) outs(%x : memref<2x2xf32>)
  }
}

// -----

// Tests that every device has an arena of its own, planned separately from offset 0: device 0
// and device 1 hold their copies of x (64 B @0) and w (64 B @64) and their bucket (128 B
// @128) at the same offsets; a gradient in a bucket takes its slot there (bucket_offset 16 is
// 64 B in: @192) instead of a place of its own; a buffer only device 1 has (@256) makes its
// persistent region the longer, and persistent_bytes is the longest (320), where every
// device's transients start. Train: a [0, 5] @320, b [4, 11] (output) @384 on each device,
// each device's buffers placed only against its own: peak 128, arena 320 + 128 = 448.
// CHECK-LABEL: plan.program "dp" attributes {arena_bytes = 448 : i64, batch = 4 : i64, devices_per_process = 2 : i64, persistent_bytes = 320 : i64} {
// CHECK-NEXT: %[[X0:.*]] = plan.input "x" as samples {offset = 0 : i64} : memref<2x4xf32>
// CHECK-NEXT: %[[X1:.*]] = plan.input "x" as samples {device = 1 : i64, offset = 0 : i64} : memref<2x4xf32>
// CHECK-NEXT: plan.param "w" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: plan.param "w" {device = 1 : i64, init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<4x4xf32>
// CHECK-NEXT: %[[K0:.*]] = plan.bucket 0 {offset = 128 : i64} : memref<32xf32>
// CHECK-NEXT: plan.grad "w" in %[[K0]] : memref<32xf32> {bucket_offset = 0 : i64, offset = 128 : i64} : memref<4x4xf32>
// CHECK-NEXT: plan.grad "b" in %[[K0]] : memref<32xf32> {bucket_offset = 16 : i64, offset = 192 : i64} : memref<3xf32>
// CHECK-NEXT: %[[K1:.*]] = plan.bucket 0 {device = 1 : i64, offset = 128 : i64} : memref<32xf32>
// CHECK-NEXT: plan.grad "w" in %[[K1]] : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64, offset = 128 : i64} : memref<4x4xf32>
// CHECK-NEXT: plan.grad "b" in %[[K1]] : memref<32xf32> {bucket_offset = 16 : i64, device = 1 : i64, offset = 192 : i64} : memref<3xf32>
// CHECK-NEXT: plan.param "only1" {device = 1 : i64, init = #plan.init<kind = "zeros">, offset = 256 : i64} : memref<16xf32>
// CHECK-NEXT: plan.step "train" attributes {peak_bytes = 128 : i64} {
// CHECK-NEXT: %[[A0:.*]] = plan.alloc {offset = 320 : i64} : memref<2x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[X0]] : memref<2x4xf32>) outs(%[[A0]] : memref<2x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[A1:.*]] = plan.alloc {device = 1 : i64, offset = 320 : i64} : memref<2x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[X1]] : memref<2x4xf32>) outs(%[[A1]] : memref<2x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[B0:.*]] = plan.alloc {offset = 384 : i64} : memref<2x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[A0]] : memref<2x4xf32>) outs(%[[B0]] : memref<2x4xf32>) {activation = "relu"}
// CHECK-NEXT: %[[B1:.*]] = plan.alloc {device = 1 : i64, offset = 384 : i64} : memref<2x4xf32>
// CHECK-NEXT: plan.kernel "activation" ins(%[[A1]] : memref<2x4xf32>) outs(%[[B1]] : memref<2x4xf32>) {activation = "relu"}
// CHECK-NEXT: plan.kernel "allreduce_start" ins(%[[K0]], %[[K1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.kernel "allreduce_wait" ins(%[[K0]], %[[K1]] : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
// CHECK-NEXT: plan.output "y" as loss, %[[B0]] : memref<2x4xf32>
// CHECK-NEXT: plan.output "y" as loss, %[[B1]] : memref<2x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: }
plan.program "dp" attributes {batch = 4 : i64, devices_per_process = 2 : i64} {
  %x0 = plan.input "x" as samples : memref<2x4xf32>
  %x1 = plan.input "x" as samples {device = 1 : i64} : memref<2x4xf32>
  %w0 = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<4x4xf32>
  %w1 = plan.param "w" {init = #plan.init<kind = "zeros">, device = 1 : i64} : memref<4x4xf32>
  %k0 = plan.bucket 0 : memref<32xf32>
  %g0 = plan.grad "w" in %k0 : memref<32xf32> {bucket_offset = 0 : i64} : memref<4x4xf32>
  %gb0 = plan.grad "b" in %k0 : memref<32xf32> {bucket_offset = 16 : i64} : memref<3xf32>
  %k1 = plan.bucket 0 {device = 1 : i64} : memref<32xf32>
  %g1 = plan.grad "w" in %k1 : memref<32xf32> {bucket_offset = 0 : i64, device = 1 : i64} : memref<4x4xf32>
  %gb1 = plan.grad "b" in %k1 : memref<32xf32> {bucket_offset = 16 : i64, device = 1 : i64} : memref<3xf32>
  %only1 = plan.param "only1" {init = #plan.init<kind = "zeros">, device = 1 : i64} : memref<16xf32>
  plan.step "train" {
    %a0 = plan.alloc : memref<2x4xf32>
    plan.kernel "activation" ins(%x0 : memref<2x4xf32>) outs(%a0 : memref<2x4xf32>) {activation = "relu"}
    %a1 = plan.alloc {device = 1 : i64} : memref<2x4xf32>
    plan.kernel "activation" ins(%x1 : memref<2x4xf32>) outs(%a1 : memref<2x4xf32>) {activation = "relu"}
    %b0 = plan.alloc : memref<2x4xf32>
    plan.kernel "activation" ins(%a0 : memref<2x4xf32>) outs(%b0 : memref<2x4xf32>) {activation = "relu"}
    %b1 = plan.alloc {device = 1 : i64} : memref<2x4xf32>
    plan.kernel "activation" ins(%a1 : memref<2x4xf32>) outs(%b1 : memref<2x4xf32>) {activation = "relu"}
    plan.kernel "allreduce_start" ins(%k0, %k1 : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
    plan.kernel "allreduce_wait" ins(%k0, %k1 : memref<32xf32>, memref<32xf32>) {bucket = 0 : i64}
    plan.output "y" as loss, %b0 : memref<2x4xf32>
    plan.output "y" as loss, %b1 : memref<2x4xf32>
  }
}

// -----

// Tests that the pass needs a program.
// expected-error @+1 {{expected a plan.program, found none}}
module {
}

// -----

// Tests that each program (the workers' and each server's under the parameter-server strategy)
// gets its own arena: each starts at offset 0.
// CHECK-LABEL: plan.program "w" attributes {arena_bytes = 64 : i64, batch = 1 : i64, persistent_bytes = 64 : i64, servers = 1 : i64}
// CHECK: plan.param "a" {{{.*}}offset = 0 : i64}
// CHECK-LABEL: plan.program "w" attributes {arena_bytes = 128 : i64, batch = 1 : i64, persistent_bytes = 128 : i64, server = 0 : i64}
// CHECK: plan.param "a" {{{.*}}offset = 0 : i64}
// CHECK: plan.param "a/m" {{{.*}}offset = 64 : i64
module {
  plan.program "w" attributes {batch = 1 : i64, servers = 1 : i64} {
    %a = plan.param "a" {init = #plan.init<kind = "zeros">} : memref<4xf32>
    plan.step "train" {
    }
    plan.step "eval" {
    }
  }
  plan.program "w" attributes {batch = 1 : i64, server = 0 : i64} {
    %a = plan.param "a" {init = #plan.init<kind = "zeros">} : memref<4xf32>
    %m = plan.param "a/m" {init = #plan.init<kind = "zeros">, optimizer_state} : memref<4xf32>
    plan.step "serve" {
    }
  }
}

// -----

// Tests that optimizer state one process alone holds (sharded over the processes) comes after
// the other persistent buffers ("a" 64 B at 0, "b" 128 B at 64), each process's share of a
// device from the same offset: process 0's "a/m" and "a/v" (64 B each) at 192 and 256,
// process 1's "b/m" (128 B) at 192 as well; the largest share (128 B) sets the size:
// persistent 192 + 128 = 320.
// CHECK-LABEL: plan.program "s" attributes {arena_bytes = 320 : i64, batch = 2 : i64, persistent_bytes = 320 : i64, processes = 2 : i64}
// CHECK-NEXT: plan.param "a" {init = #plan.init<kind = "zeros">, offset = 0 : i64} : memref<4xf32>
// CHECK-NEXT: plan.param "a/m" {init = #plan.init<kind = "zeros">, offset = 192 : i64, optimizer_state, process = 0 : i64} : memref<4xf32>
// CHECK-NEXT: plan.param "b/m" {init = #plan.init<kind = "zeros">, offset = 192 : i64, optimizer_state, process = 1 : i64} : memref<32xf32>
// CHECK-NEXT: plan.param "a/v" {init = #plan.init<kind = "zeros">, offset = 256 : i64, optimizer_state, process = 0 : i64} : memref<4xf32>
// CHECK-NEXT: plan.param "b" {init = #plan.init<kind = "zeros">, offset = 64 : i64} : memref<32xf32>
plan.program "s" attributes {batch = 2 : i64, processes = 2 : i64} {
  %a = plan.param "a" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %am = plan.param "a/m" {init = #plan.init<kind = "zeros">, optimizer_state, process = 0 : i64} : memref<4xf32>
  %bm = plan.param "b/m" {init = #plan.init<kind = "zeros">, optimizer_state, process = 1 : i64} : memref<32xf32>
  %av = plan.param "a/v" {init = #plan.init<kind = "zeros">, optimizer_state, process = 0 : i64} : memref<4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<32xf32>
  plan.step "train" {
  }
  plan.step "eval" {
  }
}

// -----

// Tests that a transient bucket (--shard-optimizer 2) is placed with the train step's buffers,
// not in the persistent region: live from the first kernel that writes one of its gradients
// (#2) to the last that reads one (#7), its gradients at their slots in it.
// Persistent: x 128 B @0, w 128 B @128: persistent_bytes = 256. Train: a 128 B [0, 2],
// bucket 256 B [2, 7], c 128 B [3, 5], d 128 B [6, 8] (output). Largest first: the bucket @0,
// a @256 (they meet at #2), c @256 (a is dead), d @256: peak 384; arena 640.
// CHECK-LABEL: plan.program "t" attributes {arena_bytes = 640 : i64, batch = 8 : i64, persistent_bytes = 256 : i64} {
// CHECK: %[[BK:.*]] = plan.bucket 0 {offset = 256 : i64, transient} : memref<64xf32>
// CHECK-NEXT: plan.grad "w" in %[[BK]] : memref<64xf32> {bucket_offset = 0 : i64, offset = 256 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.grad "u" in %[[BK]] : memref<64xf32> {bucket_offset = 32 : i64, offset = 384 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.step "train" attributes {peak_bytes = 384 : i64} {
// CHECK-NEXT: plan.alloc {offset = 512 : i64}
// CHECK: plan.alloc {offset = 512 : i64}
// CHECK: plan.alloc {offset = 512 : i64}
plan.program "t" attributes {batch = 8 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  %w = plan.param "w" {init = #plan.init<kind = "zeros">} : memref<8x4xf32>
  %bk = plan.bucket 0 {transient} : memref<64xf32>
  %gw = plan.grad "w" in %bk : memref<64xf32> {bucket_offset = 0 : i64} : memref<8x4xf32>
  %gu = plan.grad "u" in %bk : memref<64xf32> {bucket_offset = 32 : i64} : memref<8x4xf32>
  plan.step "train" {
    %a = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%x : memref<8x4xf32>) outs(%a : memref<8x4xf32>) {activation = "relu"}
    plan.kernel "copy" ins(%a : memref<8x4xf32>) outs(%gw : memref<8x4xf32>)
    %c = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%x : memref<8x4xf32>) outs(%c : memref<8x4xf32>) {activation = "relu"}
    plan.kernel "copy" ins(%c : memref<8x4xf32>) outs(%gu : memref<8x4xf32>)
    %d = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%gw : memref<8x4xf32>) outs(%d : memref<8x4xf32>) {activation = "relu"}
    plan.output "y" as loss, %d : memref<8x4xf32>
  }
}

// -----

// Tests that buffers only one process's kernels touch (an owner's copies of its means under
// --shard-optimizer 2, over the processes) share bytes with another process's whatever their
// lifetimes, but not with a buffer every process uses. Persistent: x 128 B. Train: p0 128 B
// [0, 6] (process 0), p1 128 B [2, 7] (process 1), e 64 B [4, 8] (every process). Largest
// first, then earliest: p0 @0, p1 @0 (process 1 never meets process 0's), e @128 (it meets
// both): peak 192, arena 320.
// CHECK-LABEL: plan.program "apart" attributes {arena_bytes = 320 : i64, batch = 8 : i64, persistent_bytes = 128 : i64, processes = 2 : i64} {
// CHECK: plan.step "train" attributes {peak_bytes = 192 : i64} {
// CHECK-NEXT: plan.alloc {offset = 128 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "copy" {{.*}} {process = 0 : i64}
// CHECK-NEXT: plan.alloc {offset = 128 : i64} : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "copy" {{.*}} {process = 1 : i64}
// CHECK-NEXT: plan.alloc {offset = 256 : i64} : memref<16xf32>
plan.program "apart" attributes {batch = 8 : i64, processes = 2 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  plan.step "train" {
    %p0 = plan.alloc : memref<8x4xf32>
    plan.kernel "copy" ins(%x : memref<8x4xf32>) outs(%p0 : memref<8x4xf32>) {process = 0 : i64}
    %p1 = plan.alloc : memref<8x4xf32>
    plan.kernel "copy" ins(%x : memref<8x4xf32>) outs(%p1 : memref<8x4xf32>) {process = 1 : i64}
    %e = plan.alloc : memref<16xf32>
    plan.kernel "fill" outs(%e : memref<16xf32>) {value = 1.0 : f64}
    plan.kernel "sgd_update" ins(%p0 : memref<8x4xf32>) outs(%x : memref<8x4xf32>) {lr = 0.1 : f64, process = 0 : i64}
    plan.kernel "sgd_update" ins(%p1 : memref<8x4xf32>) outs(%x : memref<8x4xf32>) {lr = 0.1 : f64, process = 1 : i64}
    plan.output "y" as loss, %e : memref<16xf32>
  }
}
