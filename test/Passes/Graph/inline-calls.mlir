// RUN: dp-opt %s -graph-inline-calls | FileCheck %s
// RUN: dp-opt %s -graph-inline-calls | FileCheck %s --check-prefix=ERASED

// Tests that every inlined private function is erased, also one only called from another.
// ERASED-NOT: func.func private
// RUN: dp-opt %s -graph-inline-calls | FileCheck %s --check-prefix=FUNCS
// RUN: dp-opt %s -graph-inline-calls -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// graph-inline-calls on hand-written blocks: each call becomes the callee's body, and each
// graph.param of the copy is named `<scope>_<name>`.

// Tests that no call is left and that inlined private callees are erased (checked over the
// whole output: FUNCS has no positive match); the public callee is kept (@public_block below).
// FUNCS-NOT: func.call
// FUNCS-NOT: func.func private @block(
// FUNCS-NOT: func.func private @other(
// FUNCS-NOT: func.func private @outer(
// FUNCS-NOT: func.func private @two(
// FUNCS-NOT: func.func private @located(

func.func private @block(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.param "1_conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3xf32>
  %b = graph.param "1_bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
  %y = graph.dense %x, %w, %b : (tensor<4x3xf32>, tensor<3x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func private @other(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.param "w" {init = #graph.orthogonal} : tensor<3x3xf32>
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// Tests that a call's graph.scope prefixes the copy's parameter names (keeping their init and
// trainable flags), that two calls with the same scope name the same parameters, and that
// the body's operands are the call's (the second block reads the first block's result).
// CHECK-LABEL: func.func @scoped(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>
// CHECK-NEXT: %[[W1:.*]] = graph.param "conv2_block1_1_conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3xf32>
// CHECK-NEXT: %[[B1:.*]] = graph.param "conv2_block1_1_bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
// CHECK-NEXT: %[[Y1:.*]] = graph.dense %[[X]], %[[W1]], %[[B1]]
// CHECK-NEXT: %[[W2:.*]] = graph.param "conv2_block2_1_conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3xf32>
// CHECK-NEXT: %[[B2:.*]] = graph.param "conv2_block2_1_bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
// CHECK-NEXT: %[[Y2:.*]] = graph.dense %[[Y1]], %[[W2]], %[[B2]]
// CHECK-NEXT: %[[W3:.*]] = graph.param "conv2_block1_1_conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3xf32>
// CHECK-NEXT: %[[B3:.*]] = graph.param "conv2_block1_1_bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<3xf32>
// CHECK-NEXT: %[[Y3:.*]] = graph.dense %[[Y2]], %[[W3]], %[[B3]]
// CHECK-NEXT: return %[[Y3]] : tensor<4x3xf32>
func.func @scoped(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @block(%x) {graph.scope = "conv2_block1"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = func.call @block(%0) {graph.scope = "conv2_block2"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = func.call @block(%1) {graph.scope = "conv2_block1"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

// Tests the default scopes `<callee>_<n>`: n counts the calls of each callee in its caller
// from 1 (a scoped call in between does not count), separately per callee.
// CHECK-LABEL: func.func @defaults(
// CHECK-NEXT: graph.param "block_1_1_conv.kernel"
// CHECK-NEXT: graph.param "block_1_1_bn.moving_mean"
// CHECK-NEXT: graph.dense
// CHECK-NEXT: graph.param "other_1_w" {init = #graph.orthogonal} : tensor<3x3xf32>
// CHECK-NEXT: graph.dense
// CHECK-NEXT: graph.param "mine_1_conv.kernel"
// CHECK-NEXT: graph.param "mine_1_bn.moving_mean"
// CHECK-NEXT: graph.dense
// CHECK-NEXT: graph.param "block_2_1_conv.kernel"
// CHECK-NEXT: graph.param "block_2_1_bn.moving_mean"
// CHECK-NEXT: graph.dense
// CHECK-NEXT: graph.param "other_2_w"
// CHECK-NEXT: graph.dense
// CHECK-NEXT: return
func.func @defaults(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @block(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = func.call @other(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = func.call @block(%1) {graph.scope = "mine"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %3 = func.call @block(%2) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %4 = func.call @other(%3) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %4 : tensor<4x3xf32>
}

func.func private @inner(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<3x3xf32>
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func private @outer(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %a = func.call @inner(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = func.call @inner(%a) {graph.scope = "second"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = func.call @inner(%b) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// Tests that nested calls compose their prefixes, the outer scope first: the callee's own
// calls are inlined (with their scopes, explicit or default) before the callee is.
// CHECK-LABEL: func.func @nested(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>
// CHECK-NEXT: %[[W1:.*]] = graph.param "stack1_inner_1_w"
// CHECK-NEXT: %[[Y1:.*]] = graph.dense %[[X]], %[[W1]]
// CHECK-NEXT: %[[W2:.*]] = graph.param "stack1_second_w"
// CHECK-NEXT: %[[Y2:.*]] = graph.dense %[[Y1]], %[[W2]]
// CHECK-NEXT: %[[W3:.*]] = graph.param "stack1_inner_2_w"
// CHECK-NEXT: %[[Y3:.*]] = graph.dense %[[Y2]], %[[W3]]
// CHECK-NEXT: %[[W4:.*]] = graph.param "outer_1_inner_1_w"
// CHECK-NEXT: %[[Y4:.*]] = graph.dense %[[Y3]], %[[W4]]
// CHECK-NEXT: %[[W5:.*]] = graph.param "outer_1_second_w"
// CHECK-NEXT: %[[Y5:.*]] = graph.dense %[[Y4]], %[[W5]]
// CHECK-NEXT: %[[W6:.*]] = graph.param "outer_1_inner_2_w"
// CHECK-NEXT: %[[Y6:.*]] = graph.dense %[[Y5]], %[[W6]]
// CHECK-NEXT: return %[[Y6]] : tensor<4x3xf32>
func.func @nested(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @outer(%x) {graph.scope = "stack1"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = func.call @outer(%0) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

func.func private @two(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %r = graph.relu %x : tensor<4x3xf32>
  %s = graph.sigmoid %x : tensor<4x3xf32>
  return %s, %r : tensor<4x3xf32>, tensor<4x3xf32>
}

// Tests that each result of a call with several results is replaced by the matching returned
// value (here in the opposite order of definition), and that a callee without parameters
// inlines unchanged.
// CHECK-LABEL: func.func @multiple_results(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[X]] : tensor<4x3xf32>
// CHECK-NEXT: %[[S:.*]] = graph.sigmoid %[[X]] : tensor<4x3xf32>
// CHECK-NEXT: %[[A:.*]] = graph.add %[[S]], %[[R]] : tensor<4x3xf32>
// CHECK-NEXT: return %[[A]], %[[R]] : tensor<4x3xf32>, tensor<4x3xf32>
func.func @multiple_results(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0:2 = func.call @two(%x) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  %1 = graph.add %0#0, %0#1 : tensor<4x3xf32>
  return %1, %0#1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// Tests that a public callee is inlined like a private one but not erased.
// CHECK-LABEL: func.func @public_block(
// CHECK-NEXT: graph.param "w"
// CHECK-LABEL: func.func @calls_public(
// CHECK-NEXT: graph.param "pub_w" {init = #graph.glorot_uniform} : tensor<3x3xf32>
// CHECK-NEXT: graph.dense
// CHECK-NEXT: return
func.func @public_block(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<3x3xf32>
  %y = graph.dense %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

func.func @calls_public(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @public_block(%x) {graph.scope = "pub"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

func.func private @located(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %r = graph.relu %x : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// Tests that inlined ops keep their location wrapped in the call site's, innermost first for
// nested calls.
// LOC-LABEL: func.func @locations(
// LOC-NEXT: graph.relu {{.*}} loc(callsite("{{.*}}inline-calls.mlir":[[# @LINE - 7]]:8 at "{{.*}}inline-calls.mlir":[[# @LINE + 5]]:8))
// LOC-NEXT: graph.param "stack_inner_1_w" {{.*}} loc(callsite(callsite("{{.*}}inline-calls.mlir":[[# @LINE - 83]]:8 at "{{.*}}inline-calls.mlir":[[# @LINE - 77]]:8) at "{{.*}}inline-calls.mlir":[[# @LINE + 5]]:8))
// LOC-NEXT: graph.dense
// LOC-NEXT: graph.param "stack_second_w"
func.func @locations(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = func.call @located(%x) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = func.call @outer(%0) {graph.scope = "stack"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}
