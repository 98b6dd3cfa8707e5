// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of grouped, depthwise and dilated convolutions and their gradients: groups and
// dilations print where they are not 1, and the kernel holds C / groups input channels.

// CHECK-LABEL: func.func @grouped
func.func @grouped(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x2x6xf32>, %dw: tensor<3x3x1x4xf32>,
                   %dy: tensor<2x8x8x6xf32>) {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {groups = 2 : i64, padding = "same"} : (tensor<2x8x8x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x8x8x6xf32>
  %0 = graph.conv2d %x, %w {groups = 2, padding = "same"}
      : (tensor<2x8x8x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x8x8x6xf32>
  // Depthwise at stride 2, one filter per channel.
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {groups = 4 : i64, padding = "same", strides = [2, 2]} : (tensor<2x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<2x4x4x4xf32>
  %1 = graph.conv2d %x, %dw {groups = 4, strides = [2, 2], padding = "same"}
      : (tensor<2x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<2x4x4x4xf32>
  // Dilated 2: the 3x3 window spans 5x5, so a valid convolution of 8x8 gives 4x4.
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {dilations = [2, 2], groups = 2 : i64} : (tensor<2x8x8x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x4x4x6xf32>
  %2 = graph.conv2d %x, %w {groups = 2, dilations = [2, 2]}
      : (tensor<2x8x8x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x4x4x6xf32>
  // CHECK: graph.conv2d_grad_input %{{.*}}, %{{.*}} {groups = 2 : i64, padding = "same"} : (tensor<2x8x8x6xf32>, tensor<3x3x2x6xf32>) -> tensor<2x8x8x4xf32>
  %3 = graph.conv2d_grad_input %dy, %w {groups = 2, padding = "same"}
      : (tensor<2x8x8x6xf32>, tensor<3x3x2x6xf32>) -> tensor<2x8x8x4xf32>
  // CHECK: graph.conv2d_grad_filter %{{.*}}, %{{.*}} {groups = 2 : i64, padding = "same"} : (tensor<2x8x8x4xf32>, tensor<2x8x8x6xf32>) -> tensor<3x3x2x6xf32>
  %4 = graph.conv2d_grad_filter %x, %dy {groups = 2, padding = "same"}
      : (tensor<2x8x8x4xf32>, tensor<2x8x8x6xf32>) -> tensor<3x3x2x6xf32>
  return
}
