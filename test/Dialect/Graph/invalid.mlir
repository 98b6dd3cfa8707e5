// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of dialect/Graph/IR/GraphOps.cpp and GraphAttrs.cpp, then the
// generated (ODS) constraint failures and parse errors that matter.

// Tests that a parameter needs a name.
func.func @f() {
  // expected-error @+1 {{'graph.param' op needs a non-empty name}}
  %0 = graph.param "" {init = #graph.zeros} : tensor<4xf32>
  return
}

// -----

// Tests that a parameter's init must be an initialiser attribute.
func.func @f() {
  // expected-error @+1 {{'graph.param' op 'init' must be an initialiser such as #graph.glorot_uniform, found #graph.sgd<>}}
  %0 = graph.param "w" {init = #graph.sgd<>} : tensor<4xf32>
  return
}

// -----

// Tests that initial values given as data have the parameter's type.
func.func @f() {
  // expected-error @+1 {{'graph.param' op is 'tensor<4xf32>' but its initial data is 'tensor<3xf32>'}}
  %0 = graph.param "w" {init = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : tensor<4xf32>
  return
}

// -----

// Tests that a parameter needs a static shape.
func.func @f() {
  // expected-error @+1 {{'graph.param' op result #0 must be statically shaped tensor of 32-bit float, but got 'tensor<?x4xf32>'}}
  %0 = graph.param "w" {init = #graph.zeros} : tensor<?x4xf32>
  return
}

// -----

// Tests that optimizer state cannot be trainable (trainable defaults to true).
func.func @f() {
  // expected-error @+1 {{'graph.param' op optimizer state cannot be trainable}}
  %0 = graph.param "w/m" {init = #graph.zeros, optimizer_state} : tensor<4xf32>
  return
}

// -----

// Tests that a parameter needs an init attribute (ODS).
func.func @f() {
  // expected-error @+1 {{'graph.param' op requires attribute 'init'}}
  %0 = graph.param "w" : tensor<4xf32>
  return
}

// -----

// Tests that parameters are f32 tensors (ODS).
func.func @f() {
  // expected-error @+1 {{'graph.param' op result #0 must be statically shaped tensor of 32-bit float, but got 'tensor<4xi32>'}}
  %0 = graph.param "w" {init = #graph.zeros} : tensor<4xi32>
  return
}

// -----

// Tests that operands are checked for their rank (here the input of a dense layer).
func.func @f(%x: tensor<8x2x2xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.dense' op expects input of rank 2, found 'tensor<8x2x2xf32>'}}
  %0 = graph.dense %x, %w : (tensor<8x2x2xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that logits and labels must have the same number of rows (here in the loss).
func.func @f(%logits: tensor<8x3xf32>, %labels: tensor<7xi32>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy' op has 8 rows of logits but 7 labels}}
  %0 = graph.softmax_cross_entropy %logits, %labels : (tensor<8x3xf32>, tensor<7xi32>) -> tensor<f32>
  return
}

// -----

// Tests that the input's features must match the kernel's rows.
func.func @f(%x: tensor<8x5xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.dense' op input has 5 features but the kernel expects 4}}
  %0 = graph.dense %x, %w : (tensor<8x5xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that the bias must have one element per unit of the kernel.
func.func @f(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.dense' op bias has 4 elements but the kernel has 3 units}}
  %0 = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that dense only takes f32 tensors (ODS).
func.func @f(%x: tensor<8x4xi32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.dense' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type, but got 'tensor<8x4xi32>'}}
  %0 = graph.dense %x, %w : (tensor<8x4xi32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that an unknown activation is a parse error.
func.func @f(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+2 {{expected ::dp::graph::Activation to be one of: none, relu, sigmoid, tanh, softmax}}
  // expected-error @+1 {{failed to parse Graph_ActivationAttr parameter 'value'}}
  %0 = graph.dense %x, %w {activation = #graph.act<elu>} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that an activation's result has its operand's type (ODS, generic form).
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'graph.relu' op requires the same type for all operands and results}}
  %0 = "graph.relu"(%x) : (tensor<8x4xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests that a reshape keeps the element count.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape 'tensor<8x4xf32>' (32 elements) to 'tensor<8x3xf32>' (24 elements)}}
  %0 = graph.reshape %x : tensor<8x4xf32> -> tensor<8x3xf32>
  return
}

// -----

// Tests that a reshape needs static shapes (it has no element count otherwise).
func.func @f(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'graph.reshape' op operand #0 must be statically shaped tensor of 32-bit float, but got 'tensor<?x4xf32>'}}
  %0 = graph.reshape %x : tensor<?x4xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that flatten needs a batch axis.
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.flatten' op expects an input with a batch axis}}
  %0 = graph.flatten %x : tensor<f32> -> tensor<1xf32>
  return
}

// -----

// Tests that the result shape is checked exactly (here of a flatten: [N, d1 * d2]), also for an
// empty batch (no division by the batch size).
func.func @f(%x: tensor<0x2x2xf32>) {
  // expected-error @+1 {{'graph.flatten' op result type should be 'tensor<0x4xf32>', found 'tensor<0x3xf32>'}}
  %0 = graph.flatten %x : tensor<0x2x2xf32> -> tensor<0x3xf32>
  return
}

// -----

// Tests that the labels of the loss are i32 (ODS).
func.func @f(%logits: tensor<8x3xf32>, %labels: tensor<8xf32>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer, but got 'tensor<8xf32>'}}
  %0 = graph.softmax_cross_entropy %logits, %labels : (tensor<8x3xf32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

// Tests that the loss is a scalar (ODS).
func.func @f(%logits: tensor<8x3xf32>, %labels: tensor<8xi32>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = graph.softmax_cross_entropy %logits, %labels : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<1xf32>
  return
}

// -----

// Tests that matmul contracts matching dimensions (here with the lhs transposed).
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.matmul' op contracts 8 columns of lhs with 4 rows of rhs}}
  %0 = graph.matmul %a, %b {transpose_lhs} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that reduce_rows needs a batch axis.
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.reduce_rows' op expects an input with a batch axis}}
  %0 = graph.reduce_rows %x : tensor<f32> -> tensor<f32>
  return
}

// -----

// Tests that activation_grad needs a real activation.
func.func @f(%y: tensor<8x3xf32>, %dy: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.activation_grad' op needs an activation other than none}}
  %0 = graph.activation_grad %y, %dy {activation = #graph.act<none>} : tensor<8x3xf32>
  return
}

// -----

// Tests that activation_grad's operands and result have one type (ODS, generic form).
func.func @f(%y: tensor<8x3xf32>, %dy: tensor<8x3xf32>) {
  // expected-error @+1 {{'graph.activation_grad' op failed to verify that all of {output, grad, result} have same type}}
  %0 = "graph.activation_grad"(%y, %dy) {activation = #graph.act<relu>} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that the gradient of the loss has the logits' type.
func.func @f(%logits: tensor<8x3xf32>, %labels: tensor<8xi32>, %dl: tensor<f32>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_grad' op result type should be 'tensor<8x3xf32>', found 'tensor<8x4xf32>'}}
  %0 = graph.softmax_cross_entropy_grad %logits, %labels, %dl : (tensor<8x3xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x4xf32>
  return
}

// -----

// Tests that an updated value must be a graph.param.
func.func @f(%w: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.apply_gradient' op expects the updated value to be a graph.param}}
  graph.apply_gradient %w, %g : tensor<4xf32>
  return
}

// -----

// Tests that an updated parameter must be trainable.
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "frozen" {init = #graph.zeros, trainable = false} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op expects the updated value to be trainable, found parameter 'frozen'}}
  graph.sgd_update %w, %g {lr = 0.1} : tensor<4xf32>
  return
}

// -----

// Tests that the state of an update must be optimizer state (here Adam's second moment).
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  %m = graph.param "w/m" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<4xf32>
  %v = graph.param "w/v" {init = #graph.zeros, trainable = false} : tensor<4xf32>
  // expected-error @+1 {{'graph.adam_update' op expects the optimizer state to be optimizer state, found parameter 'w/v'}}
  graph.adam_update %w, %m, %v, %g {lr = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7} : tensor<4xf32>
  return
}

// -----

// Tests that a gradient has its parameter's type (ODS, generic form).
func.func @f(%g: tensor<4x2xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op failed to verify that all of {param, gradient} have same type}}
  "graph.apply_gradient"(%w, %g) : (tensor<4x3xf32>, tensor<4x2xf32>) -> ()
  return
}

// -----

// Tests that a velocity has its parameter's type (ODS, generic form).
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  %v = graph.param "w/velocity" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<5xf32>
  // expected-error @+1 {{'graph.momentum_update' op failed to verify that all of {param, velocity, gradient} have same type}}
  "graph.momentum_update"(%w, %v, %g) {lr = 0.1 : f64, momentum = 0.9 : f64} : (tensor<4xf32>, tensor<5xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// Tests that an update carries its hyperparameters (ODS).
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op requires attribute 'lr'}}
  graph.sgd_update %w, %g : tensor<4xf32>
  return
}

// -----

// Tests that a uniform initialiser needs low < high.
func.func @f() {
  // expected-error @+1 {{uniform initialiser needs low < high, found low 1.000000e+00 and high 1.000000e+00}}
  %0 = graph.param "w" {init = #graph.uniform<low = 1.0, high = 1.0>} : tensor<4xf32>
  return
}

// -----

// Tests that a normal initialiser needs a positive stddev.
func.func @f() {
  // expected-error @+1 {{normal initialiser needs a finite stddev > 0, found 0.000000e+00}}
  %0 = graph.param "w" {init = #graph.normal<stddev = 0.0>} : tensor<4xf32>
  return
}

// -----

// Tests that the learning rate must be positive (the check shared by all optimizers).
// expected-error @+1 {{learning rate must be positive, found -1.000000e-01}}
func.func @f() attributes {graph.optimizer = #graph.sgd<lr = -0.1>} {
  return
}

// -----

// Tests that the learning rate must be finite: an infinite one makes every parameter inf or
// NaN at the first step (dpc wrote such plans).
// expected-error @+1 {{learning rate must be finite, found}}
func.func @f() attributes {graph.optimizer = #graph.sgd<lr = 0x7FF0000000000000>} {
  return
}

// -----

// Tests that momentum must be in [0, 1).
// expected-error @+1 {{momentum must be in [0, 1), found 1.000000e+00}}
func.func @f() attributes {graph.optimizer = #graph.momentum<momentum = 1.0>} {
  return
}

// -----

// Tests that an optimizer's weight decay must be finite and at least 0.
// expected-error @+1 {{weight_decay must be finite and >= 0, found -1.000000e-02}}
func.func @f() attributes {graph.optimizer = #graph.adam<weight_decay = -0.01>} {
  return
}

// -----

// Tests that an update's weight decay must be finite and at least 0.
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op weight_decay must be finite and >= 0, found -5.000000e-01}}
  graph.sgd_update %w, %g {lr = 0.1, weight_decay = -0.5} : tensor<4xf32>
  return
}

// -----

// Tests that an update's scale is one element (a clip factor), not a tensor of the gradient's
// shape.
func.func @f(%g: tensor<4xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op expects the scale to be a tensor<f32>, found 'tensor<4xf32>'}}
  graph.sgd_update %w, %g scale(%g : tensor<4xf32>) {lr = 0.1} : tensor<4xf32>
  return
}

// -----

// Tests that label smoothing lies in [0, 1].
func.func @f(%z: tensor<4x3xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy' op label_smoothing must lie in [0, 1], found -1.000000e-01}}
  %l = graph.softmax_cross_entropy %z, %y {label_smoothing = -0.1} : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

// Tests that each logit of a binary cross-entropy has its target.
func.func @f(%z: tensor<4x3xf32>, %t: tensor<4x2xf32>) {
  // expected-error @+1 {{'graph.sigmoid_cross_entropy' op has predictions 'tensor<4x3xf32>' but targets 'tensor<4x2xf32>': each prediction needs its target}}
  %l = graph.sigmoid_cross_entropy %z, %t : (tensor<4x3xf32>, tensor<4x2xf32>) -> tensor<f32>
  return
}

// -----

// Tests that a clip factor's max_norm must be positive.
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.clip_factor' op max_norm must be finite and > 0, found 0.000000e+00}}
  %f = graph.clip_factor %g {max_norm = 0.0} : tensor<4xf32> -> tensor<f32>
  return
}

// -----

// Tests that a clip factor needs gradients.
func.func @f() {
  // expected-error @+1 {{'graph.clip_factor' op expects at least one gradient}}
  %f = "graph.clip_factor"() {max_norm = 1.0 : f64} : () -> tensor<f32>
  return
}

// -----

// Tests that beta1 must be in [0, 1).
// expected-error @+1 {{beta1 must be in [0, 1), found -5.000000e-01}}
func.func @f() attributes {graph.optimizer = #graph.adam<beta1 = -0.5>} {
  return
}

// -----

// Tests that beta2 must be in [0, 1).
// expected-error @+1 {{beta2 must be in [0, 1), found 1.000000e+00}}
func.func @f() attributes {graph.optimizer = #graph.adam<beta2 = 1.0>} {
  return
}

// -----

// Tests that epsilon must be positive.
// expected-error @+1 {{epsilon must be positive and finite, found 0.000000e+00}}
func.func @f() attributes {graph.optimizer = #graph.adam<epsilon = 0.0>} {
  return
}

// -----

// Tests that boolean attribute parameters are written true or false.
// expected-error @+2 {{expected 'true' or 'false'}}
// expected-error @+1 {{failed to parse Graph_MomentumAttr parameter 'nesterov'}}
func.func @f() attributes {graph.optimizer = #graph.momentum<nesterov = 1>} {
  return
}

// -----

// Tests that conv2d needs an NHWC image.
func.func @f(%x: tensor<2x8x8xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op expects input of rank 4, found 'tensor<2x8x8xf32>'}}
  %0 = graph.conv2d %x, %w : (tensor<2x8x8xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that the kernel's input channels must match the image's.
func.func @f(%x: tensor<2x8x8x2xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op input has 2 channels but the kernel expects 3}}
  %0 = graph.conv2d %x, %w : (tensor<2x8x8x2xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that padding is "valid" or "same".
func.func @f(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op expects padding "valid" or "same", found "full"}}
  %0 = graph.conv2d %x, %w {padding = "full"} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that strides are two positive integers.
func.func @f(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op expects 'strides' to hold positive integers, found [0, 1]}}
  %0 = graph.conv2d %x, %w {strides = [0, 1]} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that the result shape follows from the input, kernel, strides and padding.
func.func @f(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op result type should be 'tensor<2x8x8x4xf32>', found 'tensor<2x6x6x4xf32>'}}
  %0 = graph.conv2d %x, %w {padding = "same"} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that a kernel larger than the unpadded image is an error.
func.func @f(%x: tensor<2x2x2x3xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d' op kernel of 3x3 does not fit an input of 2x2 without padding}}
  %0 = graph.conv2d %x, %w : (tensor<2x2x2x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x1x1x4xf32>
  return
}

// -----

// Tests that the bias has one element per filter.
func.func @f(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op bias has 3 elements but the kernel has 4 filters}}
  %0 = graph.conv2d %x, %w, %b : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<3xf32>) -> tensor<2x6x6x4xf32>
  return
}

// -----

// Tests that conv2d_grad_input's gradient must have the forward output's shape.
func.func @f(%dy: tensor<2x5x5x4xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+1 {{'graph.conv2d_grad_input' op grad should be 'tensor<2x6x6x4xf32>' for a result of 'tensor<2x8x8x3xf32>', found 'tensor<2x5x5x4xf32>'}}
  %0 = graph.conv2d_grad_input %dy, %w : (tensor<2x5x5x4xf32>, tensor<3x3x3x4xf32>) -> tensor<2x8x8x3xf32>
  return
}

// -----

// Tests that conv2d_grad_filter's gradient must have the forward output's shape.
func.func @f(%x: tensor<2x8x8x3xf32>, %dy: tensor<2x6x6x5xf32>) {
  // expected-error @+1 {{'graph.conv2d_grad_filter' op grad should be 'tensor<2x6x6x4xf32>' for a result of 'tensor<3x3x3x4xf32>', found 'tensor<2x6x6x5xf32>'}}
  %0 = graph.conv2d_grad_filter %x, %dy : (tensor<2x8x8x3xf32>, tensor<2x6x6x5xf32>) -> tensor<3x3x3x4xf32>
  return
}

// -----

// Tests that max_pool2d's result is the floored pooled shape.
func.func @f(%x: tensor<2x7x7x3xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op result type should be 'tensor<2x3x3x3xf32>', found 'tensor<2x4x4x3xf32>'}}
  %0 = graph.max_pool2d %x : tensor<2x7x7x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that the pooling window has two elements.
func.func @f(%x: tensor<2x8x8x3xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op expects 'window' to have 2 elements, found 3}}
  %0 = graph.max_pool2d %x {window = [2, 2, 2]} : tensor<2x8x8x3xf32> -> tensor<2x4x4x3xf32>
  return
}

// -----

// Tests that the pooling window must fit the image.
func.func @f(%x: tensor<2x1x8x3xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op window of 2x2 does not fit an input of 1x8}}
  %0 = graph.max_pool2d %x : tensor<2x1x8x3xf32> -> tensor<2x1x4x3xf32>
  return
}

// -----

// Tests that max_pool2d_grad's gradient has the pooled shape.
func.func @f(%x: tensor<2x8x8x3xf32>, %dy: tensor<2x8x8x3xf32>) {
  // expected-error @+1 {{'graph.max_pool2d_grad' op grad should be 'tensor<2x4x4x3xf32>' (the pooled shape), found 'tensor<2x8x8x3xf32>'}}
  %0 = graph.max_pool2d_grad %x, %dy : (tensor<2x8x8x3xf32>, tensor<2x8x8x3xf32>) -> tensor<2x8x8x3xf32>
  return
}

// -----

// Tests that dropout's rate is a probability below 1.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.dropout' op expects a rate in [0, 1), found 1}}
  %0 = graph.dropout %x {rate = 1.0} : tensor<2x4xf32>
  return
}

// -----

// Tests that dropout_grad names the graph.dropout whose mask it applies.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.dropout_grad' op expects output to be the result of a graph.dropout}}
  %0 = graph.dropout_grad %x, %x {rate = 0.5} : tensor<2x4xf32>
  return
}

// -----

// Tests that dropout_grad's rate is its dropout's.
func.func @f(%x: tensor<2x4xf32>) {
  %0 = graph.dropout %x {rate = 0.5} : tensor<2x4xf32>
  // expected-error @+1 {{'graph.dropout_grad' op has rate 2.500000e-01 but its graph.dropout has 5.000000e-01}}
  %1 = graph.dropout_grad %0, %x {rate = 0.25} : tensor<2x4xf32>
  return
}

// -----

// Tests that dropout needs a batch axis (its masks are drawn per sample row).
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.dropout' op expects an input with a batch axis}}
  %0 = graph.dropout %x {rate = 0.5} : tensor<f32>
  return
}

// -----

// Tests that a cast keeps the shape.
func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.cast' op changes the shape 'tensor<4x3xf32>' to 'tensor<3x4xbf16>': a cast keeps it}}
  %0 = graph.cast %x : tensor<4x3xf32> to tensor<3x4xbf16>
  return
}

// -----

// Tests that a cast converts between f32 and bf16.
func.func @f(%x: tensor<4x3xbf16>) {
  // expected-error @+1 {{'graph.cast' op casts 'bf16' to itself: it must convert f32 to bf16 or back}}
  %0 = graph.cast %x : tensor<4x3xbf16> to tensor<4x3xbf16>
  return
}

// -----

// Tests that the factors of a dense share their element type.
func.func @f(%x: tensor<8x4xbf16>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.dense' op multiplies input of 'bf16' by kernel of 'f32': the factors must share an element type}}
  %0 = graph.dense %x, %w : (tensor<8x4xbf16>, tensor<4x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

// Tests the same for matmul.
func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x3xbf16>) {
  // expected-error @+1 {{'graph.matmul' op multiplies lhs of 'f32' by rhs of 'bf16': the factors must share an element type}}
  %0 = graph.matmul %a, %b : (tensor<8x4xf32>, tensor<4x3xbf16>) -> tensor<8x3xf32>
  return
}

// -----

// Tests the same for the convolution and its two gradients.
func.func @f(%x: tensor<2x6x6x1xbf16>, %w: tensor<3x3x1x4xf32>, %dy: tensor<2x4x4x4xbf16>) {
  // expected-error @+1 {{'graph.conv2d' op multiplies input of 'bf16' by kernel of 'f32'}}
  %0 = graph.conv2d %x, %w : (tensor<2x6x6x1xbf16>, tensor<3x3x1x4xf32>) -> tensor<2x4x4x4xf32>
  return
}

// -----

func.func @f(%w: tensor<3x3x1x4xf32>, %dy: tensor<2x4x4x4xbf16>) {
  // expected-error @+1 {{'graph.conv2d_grad_input' op multiplies grad of 'bf16' by kernel of 'f32'}}
  %0 = graph.conv2d_grad_input %dy, %w : (tensor<2x4x4x4xbf16>, tensor<3x3x1x4xf32>) -> tensor<2x6x6x1xf32>
  return
}

// -----

func.func @f(%x: tensor<2x6x6x1xf32>, %dy: tensor<2x4x4x4xbf16>) {
  // expected-error @+1 {{'graph.conv2d_grad_filter' op multiplies input of 'f32' by grad of 'bf16'}}
  %0 = graph.conv2d_grad_filter %x, %dy : (tensor<2x6x6x1xf32>, tensor<2x4x4x4xbf16>) -> tensor<3x3x1x4xf32>
  return
}

// -----

// Tests that a product's result stays f32 and other ops take no bf16.
func.func @f(%x: tensor<8x4xbf16>, %w: tensor<4x3xbf16>) {
  // expected-error @+1 {{'graph.dense' op result #0 must be statically shaped tensor of 32-bit float}}
  %0 = graph.dense %x, %w : (tensor<8x4xbf16>, tensor<4x3xbf16>) -> tensor<8x3xbf16>
  return
}

// -----

func.func @f(%x: tensor<8x4xbf16>) {
  // expected-error @+1 {{'graph.relu' op operand #0 must be statically shaped tensor of 32-bit float}}
  %0 = graph.relu %x : tensor<8x4xbf16>
  return
}
