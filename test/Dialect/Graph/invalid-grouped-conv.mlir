// RUN: dp-opt %s -split-input-file -verify-diagnostics

// Tests that groups are at least 1.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op expects groups of at least 1, found 0}}
  %0 = graph.conv2d %x, %w {groups = 0} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that the groups divide the channels and the filters.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x2x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op 2 groups do not divide the input's 4 channels and the kernel's 3 filters}}
  %0 = graph.conv2d %x, %w {groups = 2} : (tensor<2x8x8x4xf32>, tensor<3x3x2x3xf32>) -> tensor<2x6x6x3xf32>
  return
}

// -----

// Tests that the kernel holds the channels of one group.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input has 4 channels but the kernel expects 4 per group of 2}}
  %0 = graph.conv2d %x, %w {groups = 2} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that dilations are two positive integers.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op expects 'dilations' to hold positive integers, found [0, 1]}}
  %0 = graph.conv2d %x, %w {dilations = [0, 1]} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that a dilation may not spread the window beyond the image (nor overflow its extent).
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op dilation 9223372036854775807 spreads the kernel of 3x3 beyond an input of 8x8}}
  %0 = graph.conv2d %x, %w {dilations = [1, 9223372036854775807], padding = "same"} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x8x8x4xf32>
  return
}

// -----

// Tests that the dilated window must fit a valid convolution's image.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op kernel of 3x3 does not fit an input of 8x8 without padding}}
  %0 = graph.conv2d %x, %w {dilations = [4, 4]} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x1x1x4xf32>
  return
}

// -----

// Tests that the result has the dilated convolution's shape.
func.func @f(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op result type should be 'tensor<2x4x4x4xf32>', found 'tensor<2x6x6x4xf32>'}}
  %0 = graph.conv2d %x, %w {dilations = [2, 2]} : (tensor<2x8x8x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that the input gradient checks its groups too.
func.func @f(%dy: tensor<2x6x6x4xf32>, %w: tensor<3x3x1x4xf32>) {
  // expected-error @+1 {{'graph.conv2d_grad_input' op result has 4 channels but the kernel expects 1 per group of 2}}
  %0 = graph.conv2d_grad_input %dy, %w {groups = 2} : (tensor<2x6x6x4xf32>, tensor<3x3x1x4xf32>) -> tensor<2x8x8x4xf32>
  return
}
