// RUN: dp-opt %s | dp-opt | FileCheck %s

// Tests that graph.mean_squared_error and its gradient print and parse back unchanged.
// CHECK-LABEL: func.func @f
// CHECK: graph.mean_squared_error %{{.*}}, %{{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<f32>
// CHECK: graph.mean_squared_error_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
func.func @f(%y: tensor<8x3xf32>, %t: tensor<8x3xf32>, %one: tensor<f32>) {
  %loss = graph.mean_squared_error %y, %t : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<f32>
  %dy = graph.mean_squared_error_grad %y, %t, %one : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
  return
}
