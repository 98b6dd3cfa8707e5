// RUN: dp-opt %s | dp-opt | FileCheck %s

// Tests that graph.gather (an embedding lookup) and its table's gradient print and parse back
// unchanged.
// CHECK-LABEL: func.func @f
// CHECK: graph.gather %{{.*}}, %{{.*}} : (tensor<256x8xf32>, tensor<4x28x28xi32>) -> tensor<4x28x28x8xf32>
// CHECK: graph.gather_grad %{{.*}}, %{{.*}} : (tensor<4x28x28x8xf32>, tensor<4x28x28xi32>) -> tensor<256x8xf32>
func.func @f(%table: tensor<256x8xf32>, %ids: tensor<4x28x28xi32>) {
  %e = graph.gather %table, %ids : (tensor<256x8xf32>, tensor<4x28x28xi32>) -> tensor<4x28x28x8xf32>
  %dt = graph.gather_grad %e, %ids : (tensor<4x28x28x8xf32>, tensor<4x28x28xi32>) -> tensor<256x8xf32>
  return
}
