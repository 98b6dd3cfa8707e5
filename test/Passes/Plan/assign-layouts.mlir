// RUN: dp-opt %s -split-input-file -plan-assign-layouts | FileCheck %s
// RUN: dp-opt %s -split-input-file -plan-assign-layouts="weight-layouts=blocked" | FileCheck %s --check-prefix=BLOCKED
// RUN: dp-opt %s -split-input-file -plan-assign-layouts="weight-layouts=plain" | FileCheck %s --check-prefix=PLAIN
// RUN: dp-opt %s -split-input-file -plan-assign-layouts="conv-min-rows=200" | FileCheck %s --check-prefix=ROWS
// RUN: dp-opt %s -split-input-file -plan-assign-layouts="conv-min-rows=32" | FileCheck %s --check-prefix=AT32
// RUN: dp-opt %s -split-input-file -plan-assign-layouts="conv-min-rows=33" | FileCheck %s --check-prefix=AT33
// RUN: not dp-opt %s -split-input-file -plan-assign-layouts="weight-layouts=packed" 2>&1 | FileCheck %s --check-prefix=BAD

// The compiler's rules (weight-layouts=auto): the stored weights for products of matrices (a
// 1x1 window, or the live centre of a 3x3 one over a 1x1 image, in f32 and bf16), the f32
// forward convolution and input gradient with fewer than conv-min-rows output rows (2x4x4 =
// 32); a blocked copy for the large ones (8x4x4 = 128 rows), the filter gradient, bf16 3x3
// windows (forward and input gradient), groups, and a window that is not one block of the
// kernel (the middle column of taps).
// CHECK-LABEL: plan.program "rules"
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xf32>, memref<1x1x8x8xf32>) {{.*}} {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, plain_weights = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_input" ins({{.*}} : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_input" ins({{.*}} : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// CHECK: plan.kernel "conv2d_grad_filter" ins({{.*}} : memref<8x4x4x8xf32>, memref<8x4x4x8xf32>) outs({{.*}} : memref<3x3x8x8xf32>) {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_filter" ins({{.*}} : memref<2x4x4x8xf32>, memref<2x4x4x8xf32>) outs({{.*}} : memref<1x1x8x8xf32>) {{.*}} plain_weights = 1
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x1x1x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xbf16>, memref<3x3x8x8xbf16>) {{.*}} {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xbf16>, memref<1x1x8x8xbf16>) {{.*}} plain_weights = 1
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xf32>, memref<3x3x4x8xf32>) {{.*}} {activation = "none", groups = 2 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d" ins({{.*}} : memref<2x3x1x8xf32>, memref<3x3x8x8xf32>) {{.*}} {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK: plan.kernel "conv2d_grad_input" ins({{.*}} : memref<2x4x4x8xbf16>, memref<3x3x8x8xbf16>) {{.*}} plain_weights = 0
// CHECK: plan.kernel "fill"
// Every convolution kernel on a blocked copy (the attribute on each of the 13, one already
// there overwritten).
// BLOCKED-LABEL: plan.program "rules"
// BLOCKED-NOT: plain_weights = 1
// BLOCKED-COUNT-13: plain_weights = 0
// BLOCKED-NOT: plain_weights = 1
// BLOCKED: plan.kernel "fill"
// Wherever the contract allows: the large ones, the filter gradient and bf16 too; not groups,
// not a column.
// PLAIN-LABEL: plan.program "rules"
// PLAIN-NOT: plain_weights = 0
// PLAIN-COUNT-11: plain_weights = 1
// PLAIN-NOT: plain_weights = 1
// PLAIN: plan.kernel "fill"
// More rows allowed: the large forward convolution and input gradient read the stored
// weights; the bf16 one still does not.
// ROWS-LABEL: plan.program "rules"
// ROWS: plan.kernel "conv2d" ins({{.*}} : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// ROWS: plan.kernel "conv2d_grad_input" ins({{.*}} : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// ROWS: plan.kernel "conv2d_grad_filter" ins({{.*}} : memref<8x4x4x8xf32>, memref<8x4x4x8xf32>) {{.*}} plain_weights = 0
// ROWS: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xbf16>, memref<3x3x8x8xbf16>) {{.*}} {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, plain_weights = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// The threshold is strict: the 32-row forward convolution is small under 33 rows, not 32.
// AT32: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 0
// AT33: plan.kernel "conv2d" ins({{.*}} : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) {{.*}} plain_weights = 1
// BAD: plan-assign-layouts: {{.*}}weight-layouts{{.*}}packed
plan.program "rules" attributes {batch = 8 : i64} {
  %x2 = plan.input "x2" as samples : memref<2x4x4x8xf32>
  %x8 = plan.param "x8" {init = #plan.init<kind = "ones">} : memref<8x4x4x8xf32>
  %x1 = plan.param "x1" {init = #plan.init<kind = "ones">} : memref<2x1x1x8xf32>
  %xc = plan.param "xc" {init = #plan.init<kind = "ones">} : memref<2x3x1x8xf32>
  %xb = plan.param "xb" {init = #plan.init<kind = "ones">} : memref<2x4x4x8xbf16>
  %w1 = plan.param "w1" {init = #plan.init<kind = "ones">} : memref<1x1x8x8xf32>
  %w3 = plan.param "w3" {init = #plan.init<kind = "ones">} : memref<3x3x8x8xf32>
  %wg = plan.param "wg" {init = #plan.init<kind = "ones">} : memref<3x3x4x8xf32>
  %wb3 = plan.param "wb3" {init = #plan.init<kind = "ones">} : memref<3x3x8x8xbf16>
  %wb1 = plan.param "wb1" {init = #plan.init<kind = "ones">} : memref<1x1x8x8xbf16>
  plan.step "train" {
    %y1 = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d" ins(%x2, %w1 : memref<2x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%y1 : memref<2x4x4x8xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, plain_weights = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %y2 = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d" ins(%x2, %w3 : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) outs(%y2 : memref<2x4x4x8xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %y8 = plan.alloc : memref<8x4x4x8xf32>
    plan.kernel "conv2d" ins(%x8, %w3 : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) outs(%y8 : memref<8x4x4x8xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dx8 = plan.alloc : memref<8x4x4x8xf32>
    plan.kernel "conv2d_grad_input" ins(%y8, %w3 : memref<8x4x4x8xf32>, memref<3x3x8x8xf32>) outs(%dx8 : memref<8x4x4x8xf32>) {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dx2 = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d_grad_input" ins(%y2, %w3 : memref<2x4x4x8xf32>, memref<3x3x8x8xf32>) outs(%dx2 : memref<2x4x4x8xf32>) {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dw3 = plan.alloc : memref<3x3x8x8xf32>
    plan.kernel "conv2d_grad_filter" ins(%x8, %y8 : memref<8x4x4x8xf32>, memref<8x4x4x8xf32>) outs(%dw3 : memref<3x3x8x8xf32>) {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dw1 = plan.alloc : memref<1x1x8x8xf32>
    plan.kernel "conv2d_grad_filter" ins(%x2, %y1 : memref<2x4x4x8xf32>, memref<2x4x4x8xf32>) outs(%dw1 : memref<1x1x8x8xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %yc = plan.alloc : memref<2x1x1x8xf32>
    plan.kernel "conv2d" ins(%x1, %w3 : memref<2x1x1x8xf32>, memref<3x3x8x8xf32>) outs(%yc : memref<2x1x1x8xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %yb3 = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d" ins(%xb, %wb3 : memref<2x4x4x8xbf16>, memref<3x3x8x8xbf16>) outs(%yb3 : memref<2x4x4x8xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %yb1 = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d" ins(%xb, %wb1 : memref<2x4x4x8xbf16>, memref<1x1x8x8xbf16>) outs(%yb1 : memref<2x4x4x8xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %yg = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d" ins(%x2, %wg : memref<2x4x4x8xf32>, memref<3x3x4x8xf32>) outs(%yg : memref<2x4x4x8xf32>) {activation = "none", groups = 2 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %ycol = plan.alloc : memref<2x3x1x8xf32>
    plan.kernel "conv2d" ins(%xc, %w3 : memref<2x3x1x8xf32>, memref<3x3x8x8xf32>) outs(%ycol : memref<2x3x1x8xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dxb = plan.alloc : memref<2x4x4x8xf32>
    plan.kernel "conv2d_grad_input" ins(%xb, %wb3 : memref<2x4x4x8xbf16>, memref<3x3x8x8xbf16>) outs(%dxb : memref<2x4x4x8xf32>) {pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %loss = plan.alloc : memref<f32>
    plan.kernel "fill" outs(%loss : memref<f32>) {value = 0.0 : f64}
    plan.output "loss" as loss, %loss : memref<f32>
  }
}
