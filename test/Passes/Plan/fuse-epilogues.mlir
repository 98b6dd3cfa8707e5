// RUN: dp-opt %s -split-input-file -plan-fuse-epilogues | FileCheck %s

// A relu that alone reads a batch normalisation's result runs in the normalisation's kernel, in
// both steps: the normalisation writes the relu's buffer (its alloc moved before it), with
// {activation = "relu"}, and its own result buffer goes. The relu's gradient reads the relu's
// result, which stays.
// CHECK-LABEL: plan.program "fused"
// CHECK: plan.step "train" {
// CHECK-NEXT: %[[S:.*]] = plan.alloc : memref<2x4xf32>
// CHECK-NEXT: plan.kernel "batch_moments" ins(%[[X:.*]] : memref<8x4xf32>) outs(%[[S]] : memref<2x4xf32>)
// CHECK-NEXT: %[[A:.*]] = plan.alloc : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "batch_norm_train" ins(%[[X]], %[[S]], %{{.*}}, %{{.*}} : {{.*}}) outs(%[[A]] : memref<8x4xf32>) {activation = "relu", epsilon = 1.000000e-03 : f64}
// CHECK-NEXT: %[[D:.*]] = plan.alloc : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%[[A]], %[[A]] : memref<8x4xf32>, memref<8x4xf32>) outs(%[[D]] : memref<8x4xf32>) {activation = "relu"}
// CHECK-NEXT: plan.output "y" as loss, %[[D]] : memref<8x4xf32>
// CHECK: plan.step "eval" {
// CHECK-NEXT: %[[B:.*]] = plan.alloc : memref<8x4xf32>
// CHECK-NEXT: plan.kernel "batch_norm_infer" ins({{.*}}) outs(%[[B]] : memref<8x4xf32>) {activation = "relu", epsilon = 1.000000e-03 : f64}
// CHECK-NEXT: plan.output "y" as loss, %[[B]] : memref<8x4xf32>
// CHECK-NOT: plan.kernel "activation"
plan.program "fused" attributes {batch = 8 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  %g = plan.param "g" {init = #plan.init<kind = "ones">} : memref<4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %mm = plan.param "mm" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %mv = plan.param "mv" {init = #plan.init<kind = "ones">} : memref<4xf32>
  plan.step "train" {
    %s = plan.alloc : memref<2x4xf32>
    plan.kernel "batch_moments" ins(%x : memref<8x4xf32>) outs(%s : memref<2x4xf32>)
    %h = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_train" ins(%x, %s, %g, %b : memref<8x4xf32>, memref<2x4xf32>, memref<4xf32>, memref<4xf32>) outs(%h : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%h : memref<8x4xf32>) outs(%a : memref<8x4xf32>) {activation = "relu"}
    %d = plan.alloc : memref<8x4xf32>
    plan.kernel "activation_grad" ins(%a, %a : memref<8x4xf32>, memref<8x4xf32>) outs(%d : memref<8x4xf32>) {activation = "relu"}
    plan.output "y" as loss, %d : memref<8x4xf32>
  }
  plan.step "eval" {
    %h = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_infer" ins(%x, %g, %b, %mm, %mv : memref<8x4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%h : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%h : memref<8x4xf32>) outs(%a : memref<8x4xf32>) {activation = "relu"}
    plan.output "y" as loss, %a : memref<8x4xf32>
  }
}

// -----

// Left alone: a normalisation result also read by another kernel (a residual), or kept as a
// step output; an activation other than relu; a relu that reads a parameter; a relu whose
// result has another shape.
// CHECK-LABEL: plan.program "kept"
// CHECK: plan.kernel "batch_norm_train" {{.*}} outs(%[[H1:.*]] : memref<8x4xf32>) {epsilon
// CHECK: plan.kernel "activation" ins(%[[H1]] : {{.*}} {activation = "relu"}
// CHECK: plan.kernel "add" ins(%[[H1]],
// CHECK: plan.kernel "batch_norm_train" {{.*}} outs(%[[H2:.*]] : memref<8x4xf32>) {epsilon
// CHECK: plan.kernel "activation" ins(%[[H2]] : {{.*}} {activation = "sigmoid"}
// CHECK: plan.kernel "batch_norm_train" {{.*}} outs(%[[H3:.*]] : memref<8x4xf32>) {epsilon
// CHECK: plan.kernel "activation" ins(%[[H3]] : {{.*}} {activation = "relu"}
// CHECK: plan.output "h" as loss, %[[H3]]
// CHECK: plan.kernel "activation" ins(%{{.*}} : memref<4xf32>) {{.*}} {activation = "relu"}
// CHECK: plan.kernel "batch_norm_train" {{.*}} outs(%[[H4:.*]] : memref<8x4xf32>) {epsilon
// CHECK: plan.kernel "activation" ins(%[[H4]] : memref<8x4xf32>) outs(%{{.*}} : memref<32xf32>) {activation = "relu"}
plan.program "kept" attributes {batch = 8 : i64} {
  %x = plan.input "x" as samples : memref<8x4xf32>
  %g = plan.param "g" {init = #plan.init<kind = "ones">} : memref<4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "train" {
    %s = plan.alloc : memref<2x4xf32>
    plan.kernel "batch_moments" ins(%x : memref<8x4xf32>) outs(%s : memref<2x4xf32>)
    %h1 = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_train" ins(%x, %s, %g, %b : memref<8x4xf32>, memref<2x4xf32>, memref<4xf32>, memref<4xf32>) outs(%h1 : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a1 = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%h1 : memref<8x4xf32>) outs(%a1 : memref<8x4xf32>) {activation = "relu"}
    %r = plan.alloc : memref<8x4xf32>
    plan.kernel "add" ins(%h1, %a1 : memref<8x4xf32>, memref<8x4xf32>) outs(%r : memref<8x4xf32>)
    %h2 = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_train" ins(%r, %s, %g, %b : memref<8x4xf32>, memref<2x4xf32>, memref<4xf32>, memref<4xf32>) outs(%h2 : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a2 = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%h2 : memref<8x4xf32>) outs(%a2 : memref<8x4xf32>) {activation = "sigmoid"}
    %h3 = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_train" ins(%a2, %s, %g, %b : memref<8x4xf32>, memref<2x4xf32>, memref<4xf32>, memref<4xf32>) outs(%h3 : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a3 = plan.alloc : memref<8x4xf32>
    plan.kernel "activation" ins(%h3 : memref<8x4xf32>) outs(%a3 : memref<8x4xf32>) {activation = "relu"}
    plan.output "h" as loss, %h3 : memref<8x4xf32>
    %p = plan.alloc : memref<4xf32>
    plan.kernel "activation" ins(%g : memref<4xf32>) outs(%p : memref<4xf32>) {activation = "relu"}
    %h4 = plan.alloc : memref<8x4xf32>
    plan.kernel "batch_norm_train" ins(%x, %s, %g, %b : memref<8x4xf32>, memref<2x4xf32>, memref<4xf32>, memref<4xf32>) outs(%h4 : memref<8x4xf32>) {epsilon = 1.000000e-03 : f64}
    %a4 = plan.alloc : memref<32xf32>
    plan.kernel "activation" ins(%h4 : memref<8x4xf32>) outs(%a4 : memref<32xf32>) {activation = "relu"}
  }
  plan.step "eval" {
  }
}

// -----

// A vector added to every row of a dense product (ONNX's MatMul then Add, the add_rows reading
// the product through a view of the tokens' shape or directly) becomes the product's bias: the
// product writes the sum's buffer (through a view of the product's shape when the sum's differs,
// its alloc moved before the product), and the add_rows, the view and the product's former
// buffer go. The activation attribute stays.
// CHECK-LABEL: plan.program "bias"
// CHECK: plan.step "train" {
// CHECK-NEXT: %[[Z:.*]] = plan.alloc : memref<2x3x4xf32>
// CHECK-NEXT: %[[ZV:.*]] = plan.view %[[Z]] : memref<2x3x4xf32> to memref<6x4xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X:.*]], %[[W:.*]], %[[B:.*]] : memref<6x5xf32>, memref<5x4xf32>, memref<4xf32>) outs(%[[ZV]] : memref<6x4xf32>) {activation = "none"}
// CHECK-NEXT: %[[Z2:.*]] = plan.alloc : memref<6x4xf32>
// CHECK-NEXT: plan.kernel "dense" ins(%[[X]], %[[W]], %[[B]] : memref<6x5xf32>, memref<5x4xf32>, memref<4xf32>) outs(%[[Z2]] : memref<6x4xf32>) {activation = "none"}
// CHECK-NEXT: plan.output "z" as loss, %[[Z]] : memref<2x3x4xf32>
// CHECK-NEXT: plan.output "z2" as correct, %[[Z2]] : memref<6x4xf32>
// CHECK-NEXT: }
plan.program "bias" attributes {batch = 6 : i64} {
  %x = plan.input "x" as samples : memref<6x5xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<5x4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "train" {
    %y = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y : memref<6x4xf32>) {activation = "none"}
    %v = plan.view %y : memref<6x4xf32> to memref<2x3x4xf32>
    %z = plan.alloc : memref<2x3x4xf32>
    plan.kernel "add_rows" ins(%v, %b : memref<2x3x4xf32>, memref<4xf32>) outs(%z : memref<2x3x4xf32>)
    %y2 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y2 : memref<6x4xf32>) {activation = "none"}
    %z2 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y2, %b : memref<6x4xf32>, memref<4xf32>) outs(%z2 : memref<6x4xf32>)
    plan.output "z" as loss, %z : memref<2x3x4xf32>
    plan.output "z2" as correct, %z2 : memref<6x4xf32>
  }
  plan.step "eval" {
  }
}

// -----

// Left alone: a product with an activation (the sum would follow it), a product that has a
// bias, a vector of another shape (a position embedding: [tokens, width]), a product also read
// elsewhere (through its view, or directly), a sum whose vector is written between the two
// (as itself, or through a view of it), a sum whose buffer is read before it, a vector
// viewed only after the product (the product could not name it).
// CHECK-LABEL: plan.program "bias_kept"
// CHECK-COUNT-9: plan.kernel "add_rows"
// CHECK-NOT: plan.kernel "add_rows"
plan.program "bias_kept" attributes {batch = 6 : i64} {
  %x = plan.input "x" as samples : memref<6x5xf32>
  %w = plan.param "w" {init = #plan.init<kind = "ones">} : memref<5x4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %p = plan.param "p" {init = #plan.init<kind = "zeros">} : memref<3x4xf32>
  %q = plan.param "q" {init = #plan.init<kind = "zeros">} : memref<2x2xf32>
  plan.step "train" {
    %y1 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y1 : memref<6x4xf32>) {activation = "relu"}
    %z1 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y1, %b : memref<6x4xf32>, memref<4xf32>) outs(%z1 : memref<6x4xf32>)
    %y2 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w, %b : memref<6x5xf32>, memref<5x4xf32>, memref<4xf32>) outs(%y2 : memref<6x4xf32>) {activation = "none"}
    %z2 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y2, %b : memref<6x4xf32>, memref<4xf32>) outs(%z2 : memref<6x4xf32>)
    %y3 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y3 : memref<6x4xf32>) {activation = "none"}
    %v3 = plan.view %y3 : memref<6x4xf32> to memref<2x3x4xf32>
    %z3 = plan.alloc : memref<2x3x4xf32>
    plan.kernel "add_rows" ins(%v3, %p : memref<2x3x4xf32>, memref<3x4xf32>) outs(%z3 : memref<2x3x4xf32>)
    %y4 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y4 : memref<6x4xf32>) {activation = "none"}
    %v4 = plan.view %y4 : memref<6x4xf32> to memref<2x3x4xf32>
    %z4 = plan.alloc : memref<2x3x4xf32>
    plan.kernel "add_rows" ins(%v4, %b : memref<2x3x4xf32>, memref<4xf32>) outs(%z4 : memref<2x3x4xf32>)
    plan.output "v4" as loss, %v4 : memref<2x3x4xf32>
    %y5 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y5 : memref<6x4xf32>) {activation = "none"}
    plan.kernel "fill" outs(%b : memref<4xf32>) {value = 1.000000e+00 : f64}
    %z5 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y5, %b : memref<6x4xf32>, memref<4xf32>) outs(%z5 : memref<6x4xf32>)
    %y6 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y6 : memref<6x4xf32>) {activation = "none"}
    %z6 = plan.alloc : memref<6x4xf32>
    plan.kernel "copy" ins(%z6 : memref<6x4xf32>) outs(%z1 : memref<6x4xf32>)
    plan.kernel "add_rows" ins(%y6, %b : memref<6x4xf32>, memref<4xf32>) outs(%z6 : memref<6x4xf32>)
    %y7 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y7 : memref<6x4xf32>) {activation = "none"}
    %c7 = plan.view %q : memref<2x2xf32> to memref<4xf32>
    %z7 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y7, %c7 : memref<6x4xf32>, memref<4xf32>) outs(%z7 : memref<6x4xf32>)
    %y8 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y8 : memref<6x4xf32>) {activation = "none"}
    %z8 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y8, %b : memref<6x4xf32>, memref<4xf32>) outs(%z8 : memref<6x4xf32>)
    %e8 = plan.alloc : memref<6x4xf32>
    plan.kernel "add" ins(%y8, %z8 : memref<6x4xf32>, memref<6x4xf32>) outs(%e8 : memref<6x4xf32>)
    %y9 = plan.alloc : memref<6x4xf32>
    plan.kernel "dense" ins(%x, %w : memref<6x5xf32>, memref<5x4xf32>) outs(%y9 : memref<6x4xf32>) {activation = "none"}
    %bv = plan.view %b : memref<4xf32> to memref<2x2xf32>
    plan.kernel "fill" outs(%bv : memref<2x2xf32>) {value = 2.000000e+00 : f64}
    %z9 = plan.alloc : memref<6x4xf32>
    plan.kernel "add_rows" ins(%y9, %b : memref<6x4xf32>, memref<4xf32>) outs(%z9 : memref<6x4xf32>)
  }
  plan.step "eval" {
  }
}

// -----

// A layer normalisation, a transpose or an activation gradient whose f32 result only a cast to
// bf16 reads (directly, or through a chain of views: attention's heads put back together, then
// flattened into rows) writes the cast's bf16 buffer itself (through a view of its result's shape when the copy's
// differs, its alloc moved before it), and the cast, the views and the f32 buffer go: mixed
// precision's copies for the products.
// CHECK-LABEL: plan.program "cast"
// CHECK: plan.step "train" {
// CHECK-NEXT: %[[N:.*]] = plan.alloc : memref<6x4xbf16>
// CHECK-NEXT: plan.kernel "layer_norm" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%[[N]] : memref<6x4xbf16>) {epsilon = 1.000000e-05 : f64}
// CHECK-NEXT: %[[T:.*]] = plan.alloc : memref<6x4xbf16>
// CHECK-NEXT: %[[TV:.*]] = plan.view %[[T]] : memref<6x4xbf16> to memref<2x3x2x2xbf16>
// CHECK-NEXT: plan.kernel "transpose" ins(%{{.*}} : memref<2x2x3x2xf32>) outs(%[[TV]] : memref<2x3x2x2xbf16>) {axis_a = 1 : i64, axis_b = 2 : i64}
// CHECK-NEXT: %[[D:.*]] = plan.alloc : memref<6x4xbf16>
// CHECK-NEXT: plan.kernel "activation_grad" ins(%{{.*}}, %{{.*}} : memref<6x4xf32>, memref<6x4xf32>) outs(%[[D]] : memref<6x4xbf16>) {activation = "softmax"}
// CHECK-NEXT: plan.output "n" as loss, %[[N]] : memref<6x4xbf16>
// CHECK-NEXT: plan.output "t" as correct, %[[T]] : memref<6x4xbf16>
// CHECK-NEXT: plan.output "d" as logits, %[[D]] : memref<6x4xbf16>
// CHECK-NEXT: }
plan.program "cast" attributes {batch = 6 : i64} {
  %x = plan.input "x" as samples : memref<6x4xf32>
  %h = plan.input "h" as targets : memref<2x2x3x2xf32>
  %g = plan.param "g" {init = #plan.init<kind = "ones">} : memref<4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  plan.step "train" {
    %y = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %n = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%y : memref<6x4xf32>) outs(%n : memref<6x4xbf16>)
    %t = plan.alloc : memref<2x3x2x2xf32>
    plan.kernel "transpose" ins(%h : memref<2x2x3x2xf32>) outs(%t : memref<2x3x2x2xf32>) {axis_a = 1 : i64, axis_b = 2 : i64}
    %tv = plan.view %t : memref<2x3x2x2xf32> to memref<2x3x4xf32>
    %tr = plan.view %tv : memref<2x3x4xf32> to memref<6x4xf32>
    %tb = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%tr : memref<6x4xf32>) outs(%tb : memref<6x4xbf16>)
    %d = plan.alloc : memref<6x4xf32>
    plan.kernel "activation_grad" ins(%x, %x : memref<6x4xf32>, memref<6x4xf32>) outs(%d : memref<6x4xf32>) {activation = "softmax"}
    %db = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%d : memref<6x4xf32>) outs(%db : memref<6x4xbf16>)
    plan.output "n" as loss, %n : memref<6x4xbf16>
    plan.output "t" as correct, %tb : memref<6x4xbf16>
    plan.output "d" as logits, %db : memref<6x4xbf16>
  }
  plan.step "eval" {
  }
}

// -----

// Left alone: a result also read elsewhere (by another kernel, or through a second view), a
// kind whose kernels write f32 only (gelu), a cast back to f32, a copy whose buffer is read
// before the producer or between the two, a result that is a step output (directly, or
// through a view that no kernel reads).
// CHECK-LABEL: plan.program "cast_kept"
// CHECK-COUNT-7: plan.kernel "cast"
// CHECK-NOT: plan.kernel "cast"
plan.program "cast_kept" attributes {batch = 6 : i64} {
  %x = plan.input "x" as samples : memref<6x4xf32>
  %g = plan.param "g" {init = #plan.init<kind = "ones">} : memref<4xf32>
  %b = plan.param "b" {init = #plan.init<kind = "zeros">} : memref<4xf32>
  %p = plan.param "p" {init = #plan.init<kind = "zeros">} : memref<6x4xbf16>
  plan.step "train" {
    %y1 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y1 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %c1 = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%y1 : memref<6x4xf32>) outs(%c1 : memref<6x4xbf16>)
    %r1 = plan.alloc : memref<4xf32>
    plan.kernel "reduce_rows" ins(%y1 : memref<6x4xf32>) outs(%r1 : memref<4xf32>)
    %y2 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y2 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %v2 = plan.view %y2 : memref<6x4xf32> to memref<24xf32>
    %w2 = plan.view %y2 : memref<6x4xf32> to memref<2x12xf32>
    %c2 = plan.alloc : memref<24xbf16>
    plan.kernel "cast" ins(%v2 : memref<24xf32>) outs(%c2 : memref<24xbf16>)
    %y3 = plan.alloc : memref<6x4xf32>
    plan.kernel "gelu" ins(%x : memref<6x4xf32>) outs(%y3 : memref<6x4xf32>)
    %c3 = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%y3 : memref<6x4xf32>) outs(%c3 : memref<6x4xbf16>)
    %t4 = plan.alloc : memref<4x6xbf16>
    plan.kernel "transpose" ins(%p : memref<6x4xbf16>) outs(%t4 : memref<4x6xbf16>) {axis_a = 0 : i64, axis_b = 1 : i64}
    %c4 = plan.alloc : memref<4x6xf32>
    plan.kernel "cast" ins(%t4 : memref<4x6xbf16>) outs(%c4 : memref<4x6xf32>)
    %c5 = plan.alloc : memref<6x4xbf16>
    plan.kernel "copy" ins(%c5 : memref<6x4xbf16>) outs(%c1 : memref<6x4xbf16>)
    %y5 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y5 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    plan.kernel "cast" ins(%y5 : memref<6x4xf32>) outs(%c5 : memref<6x4xbf16>)
    %y7 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y7 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %c7 = plan.alloc : memref<6x4xbf16>
    plan.kernel "copy" ins(%c7 : memref<6x4xbf16>) outs(%c1 : memref<6x4xbf16>)
    plan.kernel "cast" ins(%y7 : memref<6x4xf32>) outs(%c7 : memref<6x4xbf16>)
    %y6 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y6 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %c6 = plan.alloc : memref<6x4xbf16>
    plan.kernel "cast" ins(%y6 : memref<6x4xf32>) outs(%c6 : memref<6x4xbf16>)
    plan.output "y6" as loss, %y6 : memref<6x4xf32>
    %y8 = plan.alloc : memref<6x4xf32>
    plan.kernel "layer_norm" ins(%x, %g, %b : memref<6x4xf32>, memref<4xf32>, memref<4xf32>) outs(%y8 : memref<6x4xf32>) {epsilon = 1.000000e-05 : f64}
    %v8 = plan.view %y8 : memref<6x4xf32> to memref<24xf32>
    plan.output "v8" as correct, %v8 : memref<24xf32>
  }
  plan.step "eval" {
  }
}
