// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of graph.bias_add: a bias of one sample's shape, and of its last axis.

// CHECK-LABEL: func.func @bias_add
func.func @bias_add(%x: tensor<8x49x128xf32>, %pos: tensor<49x128xf32>, %b: tensor<128xf32>) {
  // CHECK: graph.bias_add %{{.*}}, %{{.*}} : (tensor<8x49x128xf32>, tensor<49x128xf32>) -> tensor<8x49x128xf32>
  %0 = graph.bias_add %x, %pos : (tensor<8x49x128xf32>, tensor<49x128xf32>) -> tensor<8x49x128xf32>
  // CHECK: graph.bias_add %{{.*}}, %{{.*}} : (tensor<8x49x128xf32>, tensor<128xf32>) -> tensor<8x49x128xf32>
  %1 = graph.bias_add %0, %b : (tensor<8x49x128xf32>, tensor<128xf32>) -> tensor<8x49x128xf32>
  return
}
