// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of graph.mul (equal shapes, and a channel weight broadcast over an image's H and
// W) and graph.mul_reduce.

// CHECK-LABEL: func.func @mul
func.func @mul(%x: tensor<8x4x4x16xf32>, %s: tensor<8x1x1x16xf32>) {
  // CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<8x4x4x16xf32>, tensor<8x1x1x16xf32>) -> tensor<8x4x4x16xf32>
  %0 = graph.mul %x, %s : (tensor<8x4x4x16xf32>, tensor<8x1x1x16xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x4x4x16xf32>
  %1 = graph.mul %0, %x : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x4x4x16xf32>
  // CHECK: graph.mul_reduce %{{.*}}, %{{.*}} : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x1x1x16xf32>
  %2 = graph.mul_reduce %1, %x : (tensor<8x4x4x16xf32>, tensor<8x4x4x16xf32>) -> tensor<8x1x1x16xf32>
  return
}
