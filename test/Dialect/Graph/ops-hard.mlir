// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of the pointwise ops relu6, hard_sigmoid and hard_swish and their gradient ops.

// CHECK-LABEL: func.func @hard
func.func @hard(%x: tensor<8x3xf32>, %img: tensor<2x4x4x3xf32>) {
  // CHECK: %[[A:.*]] = graph.relu6 %{{.*}} : tensor<8x3xf32>
  %a = graph.relu6 %x : tensor<8x3xf32>
  // CHECK: graph.relu6_grad %{{.*}}, %[[A]] : tensor<8x3xf32>
  %da = graph.relu6_grad %x, %a : tensor<8x3xf32>
  // CHECK: %[[B:.*]] = graph.hard_sigmoid %{{.*}} : tensor<2x4x4x3xf32>
  %b = graph.hard_sigmoid %img : tensor<2x4x4x3xf32>
  // CHECK: graph.hard_sigmoid_grad %{{.*}}, %[[B]] : tensor<2x4x4x3xf32>
  %db = graph.hard_sigmoid_grad %img, %b : tensor<2x4x4x3xf32>
  // CHECK: %[[C:.*]] = graph.hard_swish %{{.*}} : tensor<8x3xf32>
  %c = graph.hard_swish %x : tensor<8x3xf32>
  // CHECK: graph.hard_swish_grad %{{.*}}, %[[C]] : tensor<8x3xf32>
  %dc = graph.hard_swish_grad %x, %c : tensor<8x3xf32>
  return
}
