// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of graph.transpose: the permutation prints as a list after the operand.

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<8x49x4x32xf32>, %y: tensor<2x3xf32>) {
  // CHECK: graph.transpose %{{.*}} [0, 2, 1, 3] : tensor<8x49x4x32xf32> -> tensor<8x4x49x32xf32>
  %0 = graph.transpose %x [0, 2, 1, 3] : tensor<8x49x4x32xf32> -> tensor<8x4x49x32xf32>
  // CHECK: graph.transpose %{{.*}} [0, 2, 3, 1] : tensor<8x49x4x32xf32> -> tensor<8x4x32x49xf32>
  %1 = graph.transpose %x [0, 2, 3, 1] : tensor<8x49x4x32xf32> -> tensor<8x4x32x49xf32>
  // A tensor without a batch may move its leading axis.
  // CHECK: graph.transpose %{{.*}} [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %2 = graph.transpose %y [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}
