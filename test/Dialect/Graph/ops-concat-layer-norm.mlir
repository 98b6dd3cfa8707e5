// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of concat, split, layer_norm and layer_norm_grad: printing and parsing again gives
// the same IR.

// Tests that concat joins f32 along any axis and i32 (labels) too, and split cuts back.
// CHECK-LABEL: func.func @concat_split
func.func @concat_split(%a: tensor<8x3xf32>, %b: tensor<8x5xf32>, %l: tensor<8xi32>) {
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<8x8xf32>
  %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<8x8xf32>
  // CHECK: graph.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<24x3xf32>
  %z = graph.concat %a, %a, %a {axis = 0 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<24x3xf32>
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<8xi32>, tensor<8xi32>) -> tensor<16xi32>
  %ll = graph.concat %l, %l {axis = 0 : i64} : (tensor<8xi32>, tensor<8xi32>) -> tensor<16xi32>
  // CHECK: graph.split %{{.*}} {axis = 1 : i64} : (tensor<8x8xf32>) -> (tensor<8x3xf32>, tensor<8x5xf32>)
  %p:2 = graph.split %y {axis = 1 : i64} : (tensor<8x8xf32>) -> (tensor<8x3xf32>, tensor<8x5xf32>)
  // CHECK: graph.split %{{.*}} {axis = 0 : i64, stacked} : (tensor<24x3xf32>) -> (tensor<8x3xf32>, tensor<16x3xf32>)
  %q:2 = graph.split %z {axis = 0 : i64, stacked} : (tensor<24x3xf32>) -> (tensor<8x3xf32>, tensor<16x3xf32>)
  return
}

// Tests that layer_norm prints its epsilon only when it is not the default (1e-3).
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<8x4x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) {
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x4x16xf32>
  %y = graph.layer_norm %x, %g, %b : (tensor<8x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x4x16xf32>
  // CHECK: graph.layer_norm {{.*}} {epsilon = 1.000000e-05 : f64}
  %z = graph.layer_norm %x, %g, %b {epsilon = 1.0e-5} : (tensor<8x4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x4x16xf32>
  // CHECK: graph.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64} : (tensor<8x4x16xf32>, tensor<16xf32>, tensor<8x4x16xf32>) -> (tensor<8x4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %dx, %dg, %db = graph.layer_norm_grad %x, %g, %y {epsilon = 1.0e-3} : (tensor<8x4x16xf32>, tensor<16xf32>, tensor<8x4x16xf32>) -> (tensor<8x4x16xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}
