// RUN: dp-opt %s -split-input-file -plan-fold-padding | FileCheck %s

// A zero padding read only as the image of convolutions (the forward one and the filter
// gradient) goes: they read its input, with its padding added to theirs. The crop of the
// input gradient (zero_pad2d_grad) goes too: the input gradient's kernel writes the cropped
// buffer (its alloc moved before it), with the padding added. Both steps.
// CHECK-LABEL: plan.program "folded"
// CHECK: plan.step "train" {
// CHECK-NEXT: %[[Y:.*]] = plan.alloc : memref<2x1x1x4xf32>
// CHECK-NEXT: plan.kernel "conv2d" ins(%[[X:.*]], %[[W:.*]] : memref<2x1x1x3xf32>, memref<3x3x3x4xf32>) outs(%[[Y]] : memref<2x1x1x4xf32>) {activation = "none", pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK-NEXT: %[[DW:.*]] = plan.alloc : memref<3x3x3x4xf32>
// CHECK-NEXT: plan.kernel "conv2d_grad_filter" ins(%[[X]], %[[Y]] : {{.*}}) outs(%[[DW]] : memref<3x3x3x4xf32>) {pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK-NEXT: %[[DX:.*]] = plan.alloc : memref<2x1x1x3xf32>
// CHECK-NEXT: plan.kernel "conv2d_grad_input" ins(%[[Y]], %[[W]] : {{.*}}) outs(%[[DX]] : memref<2x1x1x3xf32>) {pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
// CHECK-NEXT: plan.output "dx" as loss, %[[DX]]
// CHECK-NEXT: plan.output "dw" as correct, %[[DW]]
// CHECK: plan.step "eval" {
// CHECK-NEXT: %[[E:.*]] = plan.alloc : memref<2x1x1x4xf32>
// CHECK-NEXT: plan.kernel "conv2d" ins(%[[X]], %[[W]] : {{.*}}) outs(%[[E]] : {{.*}}) {activation = "none", pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64
// CHECK-NOT: zero_pad2d
plan.program "folded" attributes {batch = 2 : i64} {
  %x = plan.input "x" as samples : memref<2x1x1x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<3x3x3x4xf32>
  plan.step "train" {
    %xp = plan.alloc : memref<2x3x3x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x1x1x3xf32>) outs(%xp : memref<2x3x3x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64}
    %y = plan.alloc : memref<2x1x1x4xf32>
    plan.kernel "conv2d" ins(%xp, %w : memref<2x3x3x3xf32>, memref<3x3x3x4xf32>) outs(%y : memref<2x1x1x4xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dw = plan.alloc : memref<3x3x3x4xf32>
    plan.kernel "conv2d_grad_filter" ins(%xp, %y : memref<2x3x3x3xf32>, memref<2x1x1x4xf32>) outs(%dw : memref<3x3x3x4xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dxp = plan.alloc : memref<2x3x3x3xf32>
    plan.kernel "conv2d_grad_input" ins(%y, %w : memref<2x1x1x4xf32>, memref<3x3x3x4xf32>) outs(%dxp : memref<2x3x3x3xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %dx = plan.alloc : memref<2x1x1x3xf32>
    plan.kernel "zero_pad2d_grad" ins(%dxp : memref<2x3x3x3xf32>) outs(%dx : memref<2x1x1x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64}
    plan.output "dx" as loss, %dx : memref<2x1x1x3xf32>
    plan.output "dw" as correct, %dw : memref<3x3x3x4xf32>
  }
  plan.step "eval" {
    %xp = plan.alloc : memref<2x3x3x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x1x1x3xf32>) outs(%xp : memref<2x3x3x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 2 : i64, pad_right = 0 : i64, pad_top = 1 : i64}
    %y = plan.alloc : memref<2x1x1x4xf32>
    plan.kernel "conv2d" ins(%xp, %w : memref<2x3x3x3xf32>, memref<3x3x3x4xf32>) outs(%y : memref<2x1x1x4xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    plan.output "y" as loss, %y : memref<2x1x1x4xf32>
  }
}

// -----

// Left alone: a max pool's padding (lowest); a padding also read by another kernel, or by a
// convolution as its kernel rather than its image; a padding of a buffer written after it;
// a crop of a gradient that two kernels write (an accumulation), or that another kernel reads
// too.
// CHECK-LABEL: plan.program "kept"
// CHECK: plan.kernel "zero_pad2d" ins(%[[X:.*]] : {{.*}}) outs(%[[P1:.*]] : {{.*}}) {lowest = 1
// CHECK: plan.kernel "max_pool2d" ins(%[[P1]]
// CHECK: plan.kernel "zero_pad2d" ins(%[[X]] : {{.*}}) outs(%[[P2:.*]] : {{.*}}) {lowest = 0
// CHECK: plan.kernel "conv2d" ins(%[[P2]],
// CHECK: plan.kernel "activation" ins(%[[P2]]
// CHECK: plan.kernel "zero_pad2d" ins(%[[T:.*]] : {{.*}}) outs(%[[P3:.*]] : {{.*}}) {lowest = 0
// CHECK: plan.kernel "conv2d" ins(%[[P3]],
// CHECK: plan.kernel "activation" ins(%{{.*}}) outs(%[[T]]
// CHECK: plan.kernel "conv2d_grad_input" {{.*}} outs(%[[G:.*]] : {{.*}}) {pad_bottom = 0
// CHECK: plan.kernel "add" ins(%[[G]], %[[G]] {{.*}}) outs(%[[G]]
// CHECK: plan.kernel "zero_pad2d_grad" ins(%[[G]]
// CHECK: plan.kernel "conv2d_grad_input" {{.*}} outs(%[[G2:.*]] : {{.*}}) {pad_bottom = 0
// CHECK: plan.kernel "zero_pad2d_grad" ins(%[[G2]] : {{.*}}) outs(%[[C:.*]] : {{.*}})
// CHECK: plan.kernel "activation" ins(%[[G2]]
plan.program "kept" attributes {batch = 2 : i64} {
  %x = plan.input "x" as samples : memref<2x2x2x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<3x3x3x3xf32>
  plan.step "train" {
    %p1 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x2x2x3xf32>) outs(%p1 : memref<2x4x4x3xf32>) {lowest = 1 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %m = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "max_pool2d" ins(%p1 : memref<2x4x4x3xf32>) outs(%m : memref<2x2x2x3xf32>) {stride_h = 1 : i64, stride_w = 1 : i64, window_h = 3 : i64, window_w = 3 : i64}
    %p2 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x2x2x3xf32>) outs(%p2 : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %y2 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "conv2d" ins(%p2, %w : memref<2x4x4x3xf32>, memref<3x3x3x3xf32>) outs(%y2 : memref<2x2x2x3xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %r2 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "activation" ins(%p2 : memref<2x4x4x3xf32>) outs(%r2 : memref<2x4x4x3xf32>) {activation = "relu"}
    %t = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "activation" ins(%x : memref<2x2x2x3xf32>) outs(%t : memref<2x2x2x3xf32>) {activation = "relu"}
    %p3 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%t : memref<2x2x2x3xf32>) outs(%p3 : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %y3 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "conv2d" ins(%p3, %w : memref<2x4x4x3xf32>, memref<3x3x3x3xf32>) outs(%y3 : memref<2x2x2x3xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    plan.kernel "activation" ins(%y2 : memref<2x2x2x3xf32>) outs(%t : memref<2x2x2x3xf32>) {activation = "relu"}
    %g = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "conv2d_grad_input" ins(%y3, %w : memref<2x2x2x3xf32>, memref<3x3x3x3xf32>) outs(%g : memref<2x4x4x3xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    plan.kernel "add" ins(%g, %g : memref<2x4x4x3xf32>, memref<2x4x4x3xf32>) outs(%g : memref<2x4x4x3xf32>)
    %c = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "zero_pad2d_grad" ins(%g : memref<2x4x4x3xf32>) outs(%c : memref<2x2x2x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %g2 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "conv2d_grad_input" ins(%y3, %w : memref<2x2x2x3xf32>, memref<3x3x3x3xf32>) outs(%g2 : memref<2x4x4x3xf32>) {pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %c2 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "zero_pad2d_grad" ins(%g2 : memref<2x4x4x3xf32>) outs(%c2 : memref<2x2x2x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %r3 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "activation" ins(%g2 : memref<2x4x4x3xf32>) outs(%r3 : memref<2x4x4x3xf32>) {activation = "relu"}
    plan.output "c" as loss, %c : memref<2x2x2x3xf32>
    plan.output "c2" as correct, %c2 : memref<2x2x2x3xf32>
  }
  plan.step "eval" {
    plan.output "x" as loss, %x : memref<2x2x2x3xf32>
  }
}

// -----

// Mixed precision casts the padded image to bf16 for the convolutions: the cast reads the
// unpadded image instead and writes a bf16 buffer of its shape (on the padded copy's device),
// which the convolutions read with the padding added.
// CHECK-LABEL: plan.program "cast"
// CHECK: plan.step "train" {
// CHECK-NEXT: %[[C:.*]] = plan.alloc {device = 1 : i64} : memref<2x2x2x3xbf16>
// CHECK-NEXT: plan.kernel "cast" ins(%[[X:.*]] : memref<2x2x2x3xf32>) outs(%[[C]] : memref<2x2x2x3xbf16>)
// CHECK-NEXT: %[[W:.*]] = plan.alloc {device = 1 : i64} : memref<3x3x3x4xbf16>
// CHECK-NEXT: plan.kernel "cast"
// CHECK-NEXT: %[[Y:.*]] = plan.alloc {device = 1 : i64} : memref<2x2x2x4xf32>
// CHECK-NEXT: plan.kernel "conv2d" ins(%[[C]], %[[W]] : memref<2x2x2x3xbf16>, memref<3x3x3x4xbf16>) outs(%[[Y]] : {{.*}}) {activation = "none", pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64
// CHECK-NOT: zero_pad2d
plan.program "cast" attributes {batch = 4 : i64, devices_per_process = 2 : i64} {
  %x0 = plan.input "x" as samples : memref<2x2x2x3xf32>
  %x = plan.input "x" as samples {device = 1 : i64} : memref<2x2x2x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">, device = 1 : i64} : memref<3x3x3x4xf32>
  plan.step "train" {
    %xp = plan.alloc {device = 1 : i64} : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x2x2x3xf32>) outs(%xp : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %xc = plan.alloc {device = 1 : i64} : memref<2x4x4x3xbf16>
    plan.kernel "cast" ins(%xp : memref<2x4x4x3xf32>) outs(%xc : memref<2x4x4x3xbf16>)
    %wc = plan.alloc {device = 1 : i64} : memref<3x3x3x4xbf16>
    plan.kernel "cast" ins(%w : memref<3x3x3x4xf32>) outs(%wc : memref<3x3x3x4xbf16>)
    %y = plan.alloc {device = 1 : i64} : memref<2x2x2x4xf32>
    plan.kernel "conv2d" ins(%xc, %wc : memref<2x4x4x3xbf16>, memref<3x3x3x4xbf16>) outs(%y : memref<2x2x2x4xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    plan.output "y" as loss, %y : memref<2x2x2x4xf32>
  }
  plan.step "eval" {
    plan.output "x" as loss, %x : memref<2x2x2x3xf32>
  }
}

// -----

// Left alone: a bf16 cast of the padding that another kernel reads too; a padding with a view;
// a padding of a view.
// CHECK-LABEL: plan.program "kept2"
// CHECK: plan.kernel "zero_pad2d" ins(%[[X:.*]] : {{.*}}) outs(%[[P1:.*]] : {{.*}})
// CHECK: plan.kernel "cast" ins(%[[P1]]
// CHECK: plan.kernel "zero_pad2d" ins(%[[X]] : {{.*}}) outs(%[[P2:.*]] : {{.*}})
// CHECK: plan.view %[[P2]]
// CHECK: plan.kernel "zero_pad2d" ins(%[[V:.*]] : {{.*}}) outs(%[[P3:.*]] : {{.*}})
// CHECK: plan.kernel "conv2d" ins(%[[P3]],
plan.program "kept2" attributes {batch = 2 : i64} {
  %x = plan.input "x" as samples : memref<2x2x2x3xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<3x3x3x3xf32>
  plan.step "train" {
    %p1 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x2x2x3xf32>) outs(%p1 : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %c1 = plan.alloc : memref<2x4x4x3xbf16>
    plan.kernel "cast" ins(%p1 : memref<2x4x4x3xf32>) outs(%c1 : memref<2x4x4x3xbf16>)
    %wc = plan.alloc : memref<3x3x3x3xbf16>
    plan.kernel "cast" ins(%w : memref<3x3x3x3xf32>) outs(%wc : memref<3x3x3x3xbf16>)
    %y1 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "conv2d" ins(%c1, %wc : memref<2x4x4x3xbf16>, memref<3x3x3x3xbf16>) outs(%y1 : memref<2x2x2x3xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %b1 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "cast" ins(%c1 : memref<2x4x4x3xbf16>) outs(%b1 : memref<2x4x4x3xf32>)
    %p2 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%x : memref<2x2x2x3xf32>) outs(%p2 : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %y2 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "conv2d" ins(%p2, %w : memref<2x4x4x3xf32>, memref<3x3x3x3xf32>) outs(%y2 : memref<2x2x2x3xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    %v2 = plan.view %p2 : memref<2x4x4x3xf32> to memref<96xf32>
    %xv = plan.view %y2 : memref<2x2x2x3xf32> to memref<2x2x2x3xf32>
    %p3 = plan.alloc : memref<2x4x4x3xf32>
    plan.kernel "zero_pad2d" ins(%xv : memref<2x2x2x3xf32>) outs(%p3 : memref<2x4x4x3xf32>) {lowest = 0 : i64, pad_bottom = 1 : i64, pad_left = 1 : i64, pad_right = 1 : i64, pad_top = 1 : i64}
    %y3 = plan.alloc : memref<2x2x2x3xf32>
    plan.kernel "conv2d" ins(%p3, %w : memref<2x4x4x3xf32>, memref<3x3x3x3xf32>) outs(%y3 : memref<2x2x2x3xf32>) {activation = "none", pad_bottom = 0 : i64, pad_left = 0 : i64, pad_right = 0 : i64, pad_top = 0 : i64, stride_h = 1 : i64, stride_w = 1 : i64}
    plan.output "y1" as loss, %y1 : memref<2x2x2x3xf32>
    plan.output "b1" as correct, %b1 : memref<2x4x4x3xf32>
  }
  plan.step "eval" {
    plan.output "x" as loss, %x : memref<2x2x2x3xf32>
  }
}
