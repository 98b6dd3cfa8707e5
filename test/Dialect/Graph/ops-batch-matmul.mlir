// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of graph.batch_matmul: the transposes print as unit attributes, alpha where it is
// not 1.

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<8x4x49x32xf32>, %k: tensor<8x4x49x32xf32>, %v: tensor<8x4x49x32xf32>) {
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} {alpha = 1.250000e-01 : f64, transpose_rhs} : (tensor<8x4x49x32xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x49xf32>
  %s = graph.batch_matmul %q, %k {transpose_rhs, alpha = 0.125 : f64}
      : (tensor<8x4x49x32xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x49xf32>
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} : (tensor<8x4x49x49xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x32xf32>
  %o = graph.batch_matmul %s, %v : (tensor<8x4x49x49xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x32xf32>
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<8x4x49x49xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x32xf32>
  %d = graph.batch_matmul %s, %v {transpose_lhs} : (tensor<8x4x49x49xf32>, tensor<8x4x49x32xf32>) -> tensor<8x4x49x32xf32>
  return
}

// Mixed precision's form: bf16 factors, an f32 result.
// CHECK-LABEL: func.func @bf16
func.func @bf16(%q: tensor<8x4x49x32xbf16>, %k: tensor<8x4x49x32xbf16>) {
  // CHECK: graph.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<8x4x49x32xbf16>, tensor<8x4x49x32xbf16>) -> tensor<8x4x49x49xf32>
  %s = graph.batch_matmul %q, %k {transpose_rhs} : (tensor<8x4x49x32xbf16>, tensor<8x4x49x32xbf16>) -> tensor<8x4x49x49xf32>
  return
}
