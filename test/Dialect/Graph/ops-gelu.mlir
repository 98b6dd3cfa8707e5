// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of the pointwise op gelu and its gradient op: printing and parsing again gives the
// same IR, for any shape.

// CHECK-LABEL: func.func @gelu
func.func @gelu(%x: tensor<8x3xf32>, %img: tensor<2x4x4x3xf32>) {
  // CHECK: %[[Y:.*]] = graph.gelu %{{.*}} : tensor<8x3xf32>
  %y = graph.gelu %x : tensor<8x3xf32>
  // CHECK: graph.gelu_grad %{{.*}}, %[[Y]] : tensor<8x3xf32>
  %dx = graph.gelu_grad %x, %y : tensor<8x3xf32>
  // CHECK: graph.gelu %{{.*}} : tensor<2x4x4x3xf32>
  %z = graph.gelu %img : tensor<2x4x4x3xf32>
  return
}
