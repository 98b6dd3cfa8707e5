// RUN: dp-opt %s -split-input-file -allow-unregistered-dialect -verify-diagnostics

// One case per verifier message of the padding, average pooling, batch normalisation and LSTM
// ops (dialect/Graph/IR/GraphOps.cpp) and of the parameter checks of the LSTM initialisers,
// and a few generated (ODS) type constraints of the new ops. Unregistered ops are allowed for
// the one case that needs a graph region (lstm_grad's return_sequences check).

// Tests that #graph.unit_forget_bias needs a vector (an LSTM bias [4U]).
func.func @f() {
  // expected-error @+1 {{'graph.param' op #graph.unit_forget_bias initialises an LSTM bias of shape [4U], found 'tensor<2x4xf32>'}}
  %0 = graph.param "b" {init = #graph.unit_forget_bias} : tensor<2x4xf32>
  return
}

// -----

// Tests that #graph.unit_forget_bias needs a length divisible by 4 (the four gates).
func.func @f() {
  // expected-error @+1 {{'graph.param' op #graph.unit_forget_bias initialises an LSTM bias of shape [4U], found 'tensor<6xf32>'}}
  %0 = graph.param "b" {init = #graph.unit_forget_bias} : tensor<6xf32>
  return
}

// -----

// Tests that #graph.orthogonal needs a matrix or more.
func.func @f() {
  // expected-error @+1 {{'graph.param' op #graph.orthogonal needs a tensor of rank 2 or more, found 'tensor<8xf32>'}}
  %0 = graph.param "r" {init = #graph.orthogonal<gain = 2.0>} : tensor<8xf32>
  return
}

// -----

// Tests that #graph.orthogonal rejects a scalar.
func.func @f() {
  // expected-error @+1 {{'graph.param' op #graph.orthogonal needs a tensor of rank 2 or more, found 'tensor<f32>'}}
  %0 = graph.param "r" {init = #graph.orthogonal} : tensor<f32>
  return
}

// -----

// Tests that zero_pad2d takes NHWC images.
func.func @f(%x: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d' op expects input of rank 4, found 'tensor<2x4x3xf32>'}}
  %0 = graph.zero_pad2d %x {padding = [1, 1, 1, 1]} : tensor<2x4x3xf32> -> tensor<2x6x3xf32>
  return
}

// -----

// Tests that zero_pad2d's padding has four elements.
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d' op expects 'padding' to be [top, bottom, left, right], found [1, 1]}}
  %0 = graph.zero_pad2d %x {padding = [1, 1]} : tensor<2x4x4x3xf32> -> tensor<2x6x6x3xf32>
  return
}

// -----

// Tests that zero_pad2d's padding is not negative (no cropping).
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d' op expects 'padding' to hold non-negative integers, found [1, -1, 0, 0]}}
  %0 = graph.zero_pad2d %x {padding = [1, -1, 0, 0]} : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that zero_pad2d's result is the padded shape (top + bottom rows, left + right columns).
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d' op result type should be 'tensor<2x7x5x3xf32>', found 'tensor<2x5x7x3xf32>'}}
  %0 = graph.zero_pad2d %x {padding = [1, 2, 0, 1]} : tensor<2x4x4x3xf32> -> tensor<2x5x7x3xf32>
  return
}

// -----

// Tests that zero_pad2d_grad's result (the forward input) is an NHWC image.
func.func @f(%dp: tensor<2x6x6x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d_grad' op expects result of rank 4, found 'tensor<2x4x3xf32>'}}
  %0 = graph.zero_pad2d_grad %dp {padding = [1, 1, 1, 1]} : tensor<2x6x6x3xf32> -> tensor<2x4x3xf32>
  return
}

// -----

// Tests that zero_pad2d_grad's padding has four elements.
func.func @f(%dp: tensor<2x6x6x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d_grad' op expects 'padding' to be [top, bottom, left, right], found [1, 1, 1, 1, 0]}}
  %0 = graph.zero_pad2d_grad %dp {padding = [1, 1, 1, 1, 0]} : tensor<2x6x6x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that zero_pad2d_grad's padding is not negative.
func.func @f(%dp: tensor<2x6x6x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d_grad' op expects 'padding' to hold non-negative integers, found [0, 0, -2, 0]}}
  %0 = graph.zero_pad2d_grad %dp {padding = [0, 0, -2, 0]} : tensor<2x6x6x3xf32> -> tensor<2x6x8x3xf32>
  return
}

// -----

// Tests that zero_pad2d_grad's incoming gradient has the padded shape of its result.
func.func @f(%dp: tensor<2x6x6x3xf32>) {
  // expected-error @+1 {{'graph.zero_pad2d_grad' op grad should be 'tensor<2x7x5x3xf32>' (the padded shape), found 'tensor<2x6x6x3xf32>'}}
  %0 = graph.zero_pad2d_grad %dp {padding = [1, 2, 0, 1]} : tensor<2x6x6x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that avg_pool2d takes NHWC images.
func.func @f(%x: tensor<2x4x4xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op expects input of rank 4, found 'tensor<2x4x4xf32>'}}
  %0 = graph.avg_pool2d %x : tensor<2x4x4xf32> -> tensor<2x2x2xf32>
  return
}

// -----

// Tests that avg_pool2d's window has two elements.
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op expects 'window' to have 2 elements, found 3}}
  %0 = graph.avg_pool2d %x {window = [2, 2, 2]} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return
}

// -----

// Tests that avg_pool2d's strides are positive.
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op expects 'strides' to hold positive integers, found [2, 0]}}
  %0 = graph.avg_pool2d %x {strides = [2, 0]} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return
}

// -----

// Tests that avg_pool2d's window fits the image (valid padding).
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op window of 2x5 does not fit an input of 4x4}}
  %0 = graph.avg_pool2d %x {window = [2, 5]} : tensor<2x4x4x3xf32> -> tensor<2x2x1x3xf32>
  return
}

// -----

// Tests that avg_pool2d's result shape is floor((H - window) / stride) + 1 per axis.
func.func @f(%x: tensor<2x5x5x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op result type should be 'tensor<2x3x2x3xf32>', found 'tensor<2x2x2x3xf32>'}}
  %0 = graph.avg_pool2d %x {window = [3, 2], strides = [1, 2]} : tensor<2x5x5x3xf32> -> tensor<2x2x2x3xf32>
  return
}

// -----

// Tests that avg_pool2d_grad's result (the forward input) is an NHWC image; the message names
// it "input", as the forward op's.
func.func @f(%dp: tensor<2x2x2x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op expects input of rank 4, found 'tensor<2x4x4xf32>'}}
  %0 = graph.avg_pool2d_grad %dp : tensor<2x2x2x3xf32> -> tensor<2x4x4xf32>
  return
}

// -----

// Tests that avg_pool2d_grad's strides have two elements.
func.func @f(%dp: tensor<2x2x2x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op expects 'strides' to have 2 elements, found 1}}
  %0 = graph.avg_pool2d_grad %dp {strides = [2]} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that avg_pool2d_grad's window is positive.
func.func @f(%dp: tensor<2x2x2x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op expects 'window' to hold positive integers, found [-1, 2]}}
  %0 = graph.avg_pool2d_grad %dp {window = [-1, 2]} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that avg_pool2d_grad's window fits its result.
func.func @f(%dp: tensor<2x1x1x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op window of 5x5 does not fit an input of 4x4}}
  %0 = graph.avg_pool2d_grad %dp {window = [5, 5], strides = [5, 5]} : tensor<2x1x1x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that avg_pool2d_grad's incoming gradient has the pooled shape of its result.
func.func @f(%dp: tensor<2x2x2x3xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op grad should be 'tensor<2x3x3x3xf32>' (the pooled shape), found 'tensor<2x2x2x3xf32>'}}
  %0 = graph.avg_pool2d_grad %dp {strides = [1, 1]} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that global_avg_pool2d takes NHWC images.
func.func @f(%x: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'graph.global_avg_pool2d' op expects input of rank 4, found 'tensor<2x16x3xf32>'}}
  %0 = graph.global_avg_pool2d %x : tensor<2x16x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that global_avg_pool2d's result is [N, C] (not the [N, 1, 1, C] of an average pool).
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.global_avg_pool2d' op result type should be 'tensor<2x3xf32>', found 'tensor<2x1x1x3xf32>'}}
  %0 = graph.global_avg_pool2d %x : tensor<2x4x4x3xf32> -> tensor<2x1x1x3xf32>
  return
}

// -----

// Tests that batch_norm needs a batch axis and a channel axis.
func.func @f(%x: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects an input with a batch axis and a channel axis, found 'tensor<3xf32>'}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that batch_norm's gamma has one element per channel (the last axis, not the first).
func.func @f(%x: tensor<2x4x4x3xf32>, %g: tensor<2xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects gamma of shape [3] (one per channel), found 'tensor<2xf32>'}}
  %0 = graph.batch_norm %x, %g, %c, %c, %c : (tensor<2x4x4x3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's beta has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %b: tensor<4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects beta of shape [3] (one per channel), found 'tensor<4xf32>'}}
  %0 = graph.batch_norm %x, %c, %b, %c, %c : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's moving mean is a vector of one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %m: tensor<1x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects moving_mean of shape [3] (one per channel), found 'tensor<1x3xf32>'}}
  %0 = graph.batch_norm %x, %c, %c, %m, %c : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's moving variance has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %v: tensor<5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects moving_var of shape [3] (one per channel), found 'tensor<5xf32>'}}
  %0 = graph.batch_norm %x, %c, %c, %c, %v : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<5xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's epsilon is positive (zero is rejected: no division by zero).
func.func @f(%x: tensor<2x4x4x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects a positive epsilon, found 0.000000e+00}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's momentum is in [0, 1].
func.func @f(%x: tensor<2x4x4x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects a momentum in [0, 1], found 1.500000e+00}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c {momentum = 1.5} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm's result has its input's shape.
func.func @f(%x: tensor<6x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op result type should be 'tensor<6x3xf32>', found 'tensor<3x6xf32>'}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<6x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3x6xf32>
  return
}

// -----

// Tests that batch_moments needs a batch axis and a channel axis.
func.func @f(%x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_moments' op expects an input with a batch axis and a channel axis, found 'tensor<3xf32>'}}
  %0 = graph.batch_moments %x : tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that batch_moments gives [2, C]: the mean and the mean of squares of each channel.
func.func @f(%x: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.batch_moments' op result type should be 'tensor<2x3xf32>', found 'tensor<3x2xf32>'}}
  %0 = graph.batch_moments %x : tensor<2x4x4x3xf32> -> tensor<3x2xf32>
  return
}

// -----

// Tests that batch_norm_train needs a batch axis and a channel axis.
func.func @f(%x: tensor<3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op expects an input with a batch axis and a channel axis, found 'tensor<3xf32>'}}
  %0 = graph.batch_norm_train %x, %s, %c, %c {epsilon = 1.0e-3} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that batch_norm_train's statistics are [2, C].
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op expects stats of shape [2, 3] (mean and mean of squares), found 'tensor<3xf32>'}}
  %0 = graph.batch_norm_train %x, %s, %c, %c {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_train's gamma has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %g: tensor<4xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op expects gamma of shape [3] (one per channel), found 'tensor<4xf32>'}}
  %0 = graph.batch_norm_train %x, %s, %g, %c {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_train's beta has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %b: tensor<2xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op expects beta of shape [3] (one per channel), found 'tensor<2xf32>'}}
  %0 = graph.batch_norm_train %x, %s, %c, %b {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_train's epsilon is positive.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op expects a positive epsilon, found -1.000000e-03}}
  %0 = graph.batch_norm_train %x, %s, %c, %c {epsilon = -1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_train's result has its input's type (ODS).
func.func @f(%x: tensor<6x3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_train' op failed to verify that all of {input, result} have same type}}
  %0 = graph.batch_norm_train %x, %s, %c, %c {epsilon = 1.0e-3} : (tensor<6x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3x6xf32>
  return
}

// -----

// Tests that moving_stats_update's moving statistics are vectors.
func.func @f(%m: tensor<1x3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.moving_stats_update' op expects moving_mean of shape [3] (one per channel), found 'tensor<1x3xf32>'}}
  graph.moving_stats_update %m, %m, %s {momentum = 0.99} : tensor<1x3xf32>, tensor<2x3xf32>
  return
}

// -----

// Tests that moving_stats_update's statistics are [2, C] for C channels of moving statistics.
func.func @f(%m: tensor<3xf32>, %s: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.moving_stats_update' op expects stats of shape [2, 3] (mean and mean of squares), found 'tensor<2x4xf32>'}}
  graph.moving_stats_update %m, %m, %s {momentum = 0.99} : tensor<3xf32>, tensor<2x4xf32>
  return
}

// -----

// Tests that moving_stats_update's momentum is in [0, 1].
func.func @f(%m: tensor<3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.moving_stats_update' op expects a momentum in [0, 1], found -5.000000e-01}}
  graph.moving_stats_update %m, %m, %s {momentum = -0.5} : tensor<3xf32>, tensor<2x3xf32>
  return
}

// -----

// Tests that moving_stats_update's mean and variance have the same type (ODS, generic form).
func.func @f(%m: tensor<3xf32>, %v: tensor<4xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.moving_stats_update' op failed to verify that all of {moving_mean, moving_var} have same type}}
  "graph.moving_stats_update"(%m, %v, %s) <{momentum = 0.99 : f64}> : (tensor<3xf32>, tensor<4xf32>, tensor<2x3xf32>) -> ()
  return
}

// -----

// Tests that batch_norm_grad_params needs a batch axis and a channel axis.
func.func @f(%x: tensor<3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects an input with a batch axis and a channel axis, found 'tensor<3xf32>'}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %x {epsilon = 1.0e-3} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_params's statistics are [2, C].
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects stats of shape [2, 3] (mean and mean of squares), found 'tensor<2x4xf32>'}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x4xf32>, tensor<2x4x4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_params's gamma gradient has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects gamma_grad of shape [3] (one per channel), found 'tensor<4xf32>'}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x4x3xf32>) -> (tensor<4xf32>, tensor<3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_params's beta gradient has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects beta_grad of shape [3] (one per channel), found 'tensor<2x4x4x3xf32>'}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x4x3xf32>) -> (tensor<3xf32>, tensor<2x4x4x3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_params's incoming gradient has the input's type.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %dy: tensor<2x4x2x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects grad of the input's type 'tensor<2x4x4x3xf32>', found 'tensor<2x4x2x3xf32>'}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %dy {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_params's epsilon is positive.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_params' op expects a positive epsilon, found 0.000000e+00}}
  %0:2 = graph.batch_norm_grad_params %x, %s, %x {epsilon = 0.0} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2x4x4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// Tests that batch_norm_grad_input needs a batch axis and a channel axis.
func.func @f(%x: tensor<3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects an input with a batch axis and a channel axis, found 'tensor<3xf32>'}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %c, %c, %x {epsilon = 1.0e-3} : (tensor<3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's statistics are [2, C].
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<3x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects stats of shape [2, 3] (mean and mean of squares), found 'tensor<3x3xf32>'}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %c, %c, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's gamma has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %g: tensor<2xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects gamma of shape [3] (one per channel), found 'tensor<2xf32>'}}
  %0 = graph.batch_norm_grad_input %x, %s, %g, %c, %c, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's gamma gradient has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %dg: tensor<6xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects gamma_grad of shape [3] (one per channel), found 'tensor<6xf32>'}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %dg, %c, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<6xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's beta gradient has one element per channel.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %db: tensor<1xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects beta_grad of shape [3] (one per channel), found 'tensor<1xf32>'}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %c, %db, %x {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's epsilon is positive.
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op expects a positive epsilon, found -2.000000e+00}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %c, %c, %x {epsilon = -2.0} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that batch_norm_grad_input's input, grad and result have one type (ODS).
func.func @f(%x: tensor<2x4x4x3xf32>, %s: tensor<2x3xf32>, %c: tensor<3xf32>, %dy: tensor<4x2x4x3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad_input' op failed to verify that all of {input, grad, result} have same type}}
  %0 = graph.batch_norm_grad_input %x, %s, %c, %c, %c, %dy {epsilon = 1.0e-3} : (tensor<2x4x4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x2x4x3xf32>) -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that lstm's input is [N, T, F].
func.func @f(%x: tensor<2x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects input of rank 3, found 'tensor<2x6xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's kernel is a matrix.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x4x3xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects kernel of rank 2, found 'tensor<6x4x3xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x4x3xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's recurrent kernel is a matrix.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<36xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects recurrent_kernel of rank 2, found 'tensor<36xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<36xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's recurrent kernel is [U, 4U] (four gates).
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<12x3xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects recurrent_kernel of shape [U, 4U], found 'tensor<12x3xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<12x3xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's kernel has one row per input feature.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<5x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects kernel of shape [6, 12] (input features, 4 x units), found 'tensor<5x12xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<5x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's kernel has 4U columns, U from the recurrent kernel.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x16xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects kernel of shape [6, 12] (input features, 4 x units), found 'tensor<6x16xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x16xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm's bias is [4U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.lstm' op expects bias of shape [12] (one per channel), found 'tensor<3xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm without return_sequences gives the last step's [N, U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op result type should be 'tensor<2x3xf32>', found 'tensor<2x5x3xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
  return
}

// -----

// Tests that lstm with return_sequences gives every step's [N, T, U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'graph.lstm' op result type should be 'tensor<2x5x3xf32>', found 'tensor<2x3xf32>'}}
  %0 = graph.lstm %x, %w, %r, %b {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that lstm_grad checks the operands as lstm does (here the input's rank).
func.func @f(%x: tensor<10x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects input of rank 3, found 'tensor<10x6xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<10x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<10x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's kernel is a matrix.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<72xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects kernel of rank 2, found 'tensor<72xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<72xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<72xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's recurrent kernel is a matrix.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<1x3x12xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects recurrent_kernel of rank 2, found 'tensor<1x3x12xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<1x3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<1x3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's recurrent kernel is [U, 4U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x3xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects recurrent_kernel of shape [U, 4U], found 'tensor<3x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x3xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's kernel is [F, 4U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<12x6xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects kernel of shape [6, 12] (input features, 4 x units), found 'tensor<12x6xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<12x6xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<12x6xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's bias is [4U].
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<4x3xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects bias of shape [12] (one per channel), found 'tensor<4x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<4x3xf32>)
  return
}

// -----

// Tests that lstm_grad's output has the LSTM's output shape ([N, T, U] with return_sequences).
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %dh: tensor<2x5x3xf32>) {
  %h = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'graph.lstm_grad' op expects output of shape 'tensor<2x5x3xf32>', found 'tensor<2x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's incoming gradient has the LSTM's output shape.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %dh: tensor<2x5x3xf32>) {
  %h = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'graph.lstm_grad' op expects grad of shape 'tensor<2x3xf32>', found 'tensor<2x5x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's output must come from a graph.lstm (here it is a function argument).
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %h: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.lstm_grad' op expects output to be the result of a graph.lstm of the same operands}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's output must come from a graph.lstm of the same operands (here another
// bias of the same type).
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %b2: tensor<12xf32>) {
  %h = graph.lstm %x, %w, %r, %b2 : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'graph.lstm_grad' op expects output to be the result of a graph.lstm of the same operands}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %h : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's return_sequences must be its graph.lstm's. A valid graph.lstm's output
// shape already fixes return_sequences, so the check only fires before the forward op is
// itself verified: here it follows the lstm_grad in a graph region (an unregistered op's, no
// dominance), claims a [N, U] result with return_sequences and is never verified.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %dh: tensor<2x3xf32>) {
  "test.graph_region"() ({
    // expected-error @+1 {{'graph.lstm_grad' op expects return_sequences as in its graph.lstm}}
    %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
    %h = graph.lstm %x, %w, %r, %b {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
    "test.terminator"() : () -> ()
  }) : () -> ()
  return
}

// -----

// Tests that lstm_grad's results have the types of the input, kernel, recurrent kernel and bias
// (here the recurrent kernel's gradient, result #2).
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %dh: tensor<2x3xf32>) {
  %h = graph.lstm %x, %w, %r, %b : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{'graph.lstm_grad' op result #2 should have type 'tensor<3x12xf32>', found 'tensor<12x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<12x3xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that lstm_grad's input gradient (result #0) has the input's type.
func.func @f(%x: tensor<2x5x6xf32>, %w: tensor<6x12xf32>, %r: tensor<3x12xf32>, %b: tensor<12xf32>, %dh: tensor<2x5x3xf32>) {
  %h = graph.lstm %x, %w, %r, %b {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>) -> tensor<2x5x3xf32>
  // expected-error @+1 {{'graph.lstm_grad' op result #0 should have type 'tensor<2x5x6xf32>', found 'tensor<2x5x3xf32>'}}
  %0:4 = graph.lstm_grad %x, %w, %r, %b, %h, %dh {return_sequences} : (tensor<2x5x6xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>, tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<6x12xf32>, tensor<3x12xf32>, tensor<12xf32>)
  return
}

// -----

// Tests that an LSTM's input, kernels and output share their element type.
func.func @f(%x: tensor<2x3x4xbf16>, %w: tensor<4x20xf32>, %r: tensor<5x20xbf16>, %b: tensor<20xf32>) {
  // expected-error @+1 {{'graph.lstm' op multiplies input of 'bf16' by kernel of 'f32': the factors must share an element type}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x3x4xbf16>, tensor<4x20xf32>, tensor<5x20xbf16>, tensor<20xf32>) -> tensor<2x5xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x3x4xbf16>, %w: tensor<4x20xbf16>, %r: tensor<5x20xbf16>, %b: tensor<20xf32>) {
  // expected-error @+1 {{'graph.lstm' op multiplies input of 'bf16' by output of 'f32'}}
  %0 = graph.lstm %x, %w, %r, %b : (tensor<2x3x4xbf16>, tensor<4x20xbf16>, tensor<5x20xbf16>, tensor<20xf32>) -> tensor<2x5xf32>
  return
}

// -----

// Tests that an lstm_grad of a bf16 LSTM returns f32 gradients (the results' constraint).
func.func @f(%x: tensor<2x3x4xbf16>, %w: tensor<4x20xbf16>, %r: tensor<5x20xbf16>, %b: tensor<20xf32>, %dy: tensor<2x5xf32>) {
  %y = graph.lstm %x, %w, %r, %b : (tensor<2x3x4xbf16>, tensor<4x20xbf16>, tensor<5x20xbf16>, tensor<20xf32>) -> tensor<2x5xbf16>
  // expected-error @+1 {{'graph.lstm_grad' op result #0 must be statically shaped tensor of 32-bit float, but got 'tensor<2x3x4xbf16>'}}
  %dx, %dw, %dr, %db = graph.lstm_grad %x, %w, %r, %b, %y, %dy : (tensor<2x3x4xbf16>, tensor<4x20xbf16>, tensor<5x20xbf16>, tensor<20xf32>, tensor<2x5xbf16>, tensor<2x5xf32>) -> (tensor<2x3x4xbf16>, tensor<4x20xf32>, tensor<5x20xf32>, tensor<20xf32>)
  return
}
