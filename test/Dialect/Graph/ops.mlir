// RUN: dp-opt %s | dp-opt | FileCheck %s

// Round trip of every graph op and attribute: printing and parsing again gives the same IR.

// Tests that every initialiser round-trips, with and without explicit parameters, and that the
// trainable and optimizer_state flags survive (trainable = true is the default and not printed).
// CHECK-LABEL: func.func @initialisers
func.func @initialisers() {
  // CHECK: graph.param "z" {init = #graph.zeros} : tensor<4xf32>
  %0 = graph.param "z" {init = #graph.zeros} : tensor<4xf32>
  // Initial values given as data (an imported model's weights).
  // CHECK: graph.param "d" {init = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : tensor<2xf32>
  %d = graph.param "d" {init = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  // CHECK: graph.param "o" {init = #graph.ones} : tensor<4xf32>
  %1 = graph.param "o" {init = #graph.ones} : tensor<4xf32>
  // CHECK: graph.param "c" {init = #graph.constant<5.000000e-01>} : tensor<4xf32>
  %2 = graph.param "c" {init = #graph.constant<0.5>} : tensor<4xf32>
  // CHECK: graph.param "c.neg" {init = #graph.constant<-2.000000e+00>} : tensor<4xf32>
  %3 = graph.param "c.neg" {init = #graph.constant<-2.0>} : tensor<4xf32>
  // CHECK: graph.param "u" {init = #graph.uniform<>} : tensor<4xf32>
  %4 = graph.param "u" {init = #graph.uniform<>} : tensor<4xf32>
  // CHECK: graph.param "u.both" {init = #graph.uniform<low = -1.000000e+00, high = 2.000000e+00>} : tensor<4xf32>
  %5 = graph.param "u.both" {init = #graph.uniform<low = -1.0, high = 2.0>} : tensor<4xf32>
  // CHECK: graph.param "u.high" {init = #graph.uniform<high = 2.000000e+00>} : tensor<4xf32>
  %6 = graph.param "u.high" {init = #graph.uniform<high = 2.0>} : tensor<4xf32>
  // Explicit default values are not printed.
  // CHECK: graph.param "u.default" {init = #graph.uniform<>} : tensor<4xf32>
  %7 = graph.param "u.default" {init = #graph.uniform<low = -0.05, high = 0.05>} : tensor<4xf32>
  // CHECK: graph.param "n" {init = #graph.normal<>} : tensor<4xf32>
  %8 = graph.param "n" {init = #graph.normal<>} : tensor<4xf32>
  // CHECK: graph.param "n.both" {init = #graph.normal<mean = 1.000000e+00, stddev = 5.000000e-01>} : tensor<4xf32>
  %9 = graph.param "n.both" {init = #graph.normal<mean = 1.0, stddev = 0.5>} : tensor<4xf32>
  // CHECK: graph.param "n.stddev" {init = #graph.normal<stddev = 2.000000e+00>} : tensor<4xf32>
  %10 = graph.param "n.stddev" {init = #graph.normal<stddev = 2.0>} : tensor<4xf32>
  // CHECK: graph.param "gu" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %11 = graph.param "gu" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // CHECK: graph.param "gn" {init = #graph.glorot_normal} : tensor<4x3xf32>
  %12 = graph.param "gn" {init = #graph.glorot_normal} : tensor<4x3xf32>
  // CHECK: graph.param "hn" {init = #graph.he_normal} : tensor<4x3xf32>
  %13 = graph.param "hn" {init = #graph.he_normal} : tensor<4x3xf32>
  // CHECK: graph.param "hu" {init = #graph.he_uniform} : tensor<4x3xf32>
  %14 = graph.param "hu" {init = #graph.he_uniform} : tensor<4x3xf32>
  // CHECK: graph.param "frozen" {init = #graph.ones, trainable = false} : tensor<2x2x3xf32>
  %15 = graph.param "frozen" {init = #graph.ones, trainable = false} : tensor<2x2x3xf32>
  // CHECK: graph.param "state" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<4xf32>
  %16 = graph.param "state" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<4xf32>
  // CHECK: graph.param "scalar" {init = #graph.zeros} : tensor<f32>
  %17 = graph.param "scalar" {init = #graph.zeros, trainable = true} : tensor<f32>
  return
}

// Tests that the optimizer attributes round-trip with their defaults (printed as `<>`) and with
// explicit values (function attributes print sorted by name).
// CHECK-LABEL: func.func @optimizers
// CHECK-SAME: adam = #graph.adam<>
// CHECK-SAME: adam.all = #graph.adam<lr = 1.000000e-02, beta1 = 8.000000e-01, beta2 = 5.000000e-01, epsilon = 1.000000e-08>
// CHECK-SAME: adam.beta2 = #graph.adam<beta2 = 2.500000e-01>
// CHECK-SAME: momentum = #graph.momentum<>
// CHECK-SAME: momentum.all = #graph.momentum<lr = 1.000000e-01, momentum = 5.000000e-01, nesterov = true>
// CHECK-SAME: momentum.nesterov = #graph.momentum<nesterov = true>
// CHECK-SAME: sgd = #graph.sgd<>
// CHECK-SAME: sgd.lr = #graph.sgd<lr = 5.000000e-01>
func.func @optimizers() attributes {
    sgd = #graph.sgd<>,
    sgd.lr = #graph.sgd<lr = 0.5>,
    momentum = #graph.momentum<>,
    momentum.all = #graph.momentum<lr = 0.1, momentum = 0.5, nesterov = true>,
    momentum.nesterov = #graph.momentum<nesterov = true>,
    adam = #graph.adam<>,
    adam.all = #graph.adam<lr = 0.01, beta1 = 0.8, beta2 = 0.5, epsilon = 1.0e-8>,
    adam.beta2 = #graph.adam<beta2 = 0.25>} {
  return
}

// Tests that explicit default values of optimizer parameters are not printed.
// CHECK-LABEL: func.func @optimizer_defaults
// CHECK-SAME: a = #graph.sgd<>, b = #graph.momentum<>, c = #graph.adam<>
func.func @optimizer_defaults() attributes {
    a = #graph.sgd<lr = 0.01>,
    b = #graph.momentum<lr = 0.01, momentum = 0.9, nesterov = false>,
    c = #graph.adam<lr = 0.001, beta1 = 0.9>} {
  return
}

// Tests that the forward ops round-trip: dense with and without bias and with every
// activation, the elementwise activations, reshape, flatten, the loss and count_correct.
// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x4xf32>, %[[IMG:[^:]*]]: tensor<8x2x3xf32>, %[[LBL:[^:]*]]: tensor<8xi32>)
func.func @layers(%x: tensor<8x4xf32>, %img: tensor<8x2x3xf32>, %lbl: tensor<8xi32>) {
  // CHECK: %[[W:.*]] = graph.param "w"
  // CHECK: %[[B:.*]] = graph.param "b"
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  // CHECK: graph.dense %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %0 = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  // CHECK: graph.dense %[[X]], %[[W]], %[[B]] : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %1 = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  // The default activation (none) is not printed.
  // CHECK: graph.dense %[[X]], %[[W]], %[[B]] : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %2 = graph.dense %x, %w, %b {activation = #graph.act<none>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  // CHECK: graph.dense %[[X]], %[[W]], %[[B]] {activation = #graph.act<relu>}
  %3 = graph.dense %x, %w, %b {activation = #graph.act<relu>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  // CHECK: graph.dense %[[X]], %[[W]], %[[B]] {activation = #graph.act<sigmoid>}
  %4 = graph.dense %x, %w, %b {activation = #graph.act<sigmoid>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  // CHECK: graph.dense %[[X]], %[[W]], %[[B]] {activation = #graph.act<tanh>}
  %5 = graph.dense %x, %w, %b {activation = #graph.act<tanh>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  // CHECK: %[[D:.*]] = graph.dense %[[X]], %[[W]] {activation = #graph.act<softmax>} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %6 = graph.dense %x, %w {activation = #graph.act<softmax>} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  // CHECK: %[[R:.*]] = graph.relu %[[D]] : tensor<8x3xf32>
  %7 = graph.relu %6 : tensor<8x3xf32>
  // CHECK: %[[S:.*]] = graph.sigmoid %[[R]] : tensor<8x3xf32>
  %8 = graph.sigmoid %7 : tensor<8x3xf32>
  // CHECK: %[[T:.*]] = graph.tanh %[[S]] : tensor<8x3xf32>
  %9 = graph.tanh %8 : tensor<8x3xf32>
  // CHECK: %[[SM:.*]] = graph.softmax %[[T]] : tensor<8x3xf32>
  %10 = graph.softmax %9 : tensor<8x3xf32>
  // CHECK: graph.reshape %[[IMG]] : tensor<8x2x3xf32> -> tensor<48xf32>
  %11 = graph.reshape %img : tensor<8x2x3xf32> -> tensor<48xf32>
  // CHECK: graph.reshape %[[IMG]] : tensor<8x2x3xf32> -> tensor<8x3x2xf32>
  %12 = graph.reshape %img : tensor<8x2x3xf32> -> tensor<8x3x2xf32>
  // CHECK: graph.flatten %[[IMG]] : tensor<8x2x3xf32> -> tensor<8x6xf32>
  %13 = graph.flatten %img : tensor<8x2x3xf32> -> tensor<8x6xf32>
  // CHECK: graph.softmax_cross_entropy %[[SM]], %[[LBL]] : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  %14 = graph.softmax_cross_entropy %10, %lbl : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  // CHECK: graph.softmax_cross_entropy %[[SM]], %[[LBL]] {label_smoothing = 1.000000e-01 : f64}
  %s = graph.softmax_cross_entropy %10, %lbl {label_smoothing = 0.1} : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  // CHECK: graph.count_correct %[[SM]], %[[LBL]] : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  %15 = graph.count_correct %10, %lbl : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// Tests that the ops of the backward pass round-trip: add, fill, matmul with each combination
// of transposes, reduce_rows, activation_grad with each activation, softmax_cross_entropy_grad.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x4xf32>, %[[DY:[^:]*]]: tensor<8x3xf32>, %[[LBL:[^:]*]]: tensor<8xi32>)
func.func @backward(%x: tensor<8x4xf32>, %dy: tensor<8x3xf32>, %lbl: tensor<8xi32>) {
  // CHECK: %[[W:.*]] = graph.param "w"
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  // CHECK: graph.add %[[DY]], %[[DY]] : tensor<8x3xf32>
  %0 = graph.add %dy, %dy : tensor<8x3xf32>
  // CHECK: %[[ONE:.*]] = graph.fill 1.000000e+00 : tensor<f32>
  %1 = graph.fill 1.0 : tensor<f32>
  // CHECK: %[[Y:.*]] = graph.fill -2.500000e+00 : tensor<8x3xf32>
  %2 = graph.fill -2.5 : tensor<8x3xf32>
  // CHECK: graph.matmul %[[X]], %[[W]] : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %3 = graph.matmul %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  // CHECK: graph.matmul %[[X]], %[[DY]] {transpose_lhs} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %4 = graph.matmul %x, %dy {transpose_lhs} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.matmul %[[DY]], %[[W]] {transpose_rhs} : (tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<8x4xf32>
  %5 = graph.matmul %dy, %w {transpose_rhs} : (tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<8x4xf32>
  // CHECK: graph.matmul %[[W]], %[[X]] {transpose_lhs, transpose_rhs} : (tensor<4x3xf32>, tensor<8x4xf32>) -> tensor<3x8xf32>
  %6 = graph.matmul %w, %x {transpose_lhs, transpose_rhs} : (tensor<4x3xf32>, tensor<8x4xf32>) -> tensor<3x8xf32>
  // CHECK: graph.reduce_rows %[[DY]] : tensor<8x3xf32> -> tensor<3xf32>
  %7 = graph.reduce_rows %dy : tensor<8x3xf32> -> tensor<3xf32>
  // CHECK: graph.activation_grad %[[Y]], %[[DY]] {activation = #graph.act<relu>} : tensor<8x3xf32>
  %8 = graph.activation_grad %2, %dy {activation = #graph.act<relu>} : tensor<8x3xf32>
  // CHECK: graph.activation_grad %[[Y]], %[[DY]] {activation = #graph.act<sigmoid>} : tensor<8x3xf32>
  %9 = graph.activation_grad %2, %dy {activation = #graph.act<sigmoid>} : tensor<8x3xf32>
  // CHECK: graph.activation_grad %[[Y]], %[[DY]] {activation = #graph.act<tanh>} : tensor<8x3xf32>
  %10 = graph.activation_grad %2, %dy {activation = #graph.act<tanh>} : tensor<8x3xf32>
  // CHECK: graph.activation_grad %[[Y]], %[[DY]] {activation = #graph.act<softmax>} : tensor<8x3xf32>
  %11 = graph.activation_grad %2, %dy {activation = #graph.act<softmax>} : tensor<8x3xf32>
  // CHECK: graph.softmax_cross_entropy_grad %[[DY]], %[[LBL]], %[[ONE]] : (tensor<8x3xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x3xf32>
  %12 = graph.softmax_cross_entropy_grad %dy, %lbl, %1 : (tensor<8x3xf32>, tensor<8xi32>, tensor<f32>) -> tensor<8x3xf32>
  return
}

// Tests that the gradient and update ops round-trip: apply_gradient, sgd_update,
// momentum_update (plain and Nesterov) and adam_update on a parameter and its optimizer state.
// CHECK-LABEL: func.func @updates
// CHECK-SAME: (%[[G:[^:]*]]: tensor<4x3xf32>)
func.func @updates(%g: tensor<4x3xf32>) {
  // CHECK: %[[W:.*]] = graph.param "w" {init = #graph.glorot_uniform}
  // CHECK: %[[V:.*]] = graph.param "w/velocity" {init = #graph.zeros, optimizer_state, trainable = false}
  // CHECK: %[[M:.*]] = graph.param "w/m" {init = #graph.zeros, optimizer_state, trainable = false}
  // CHECK: %[[S:.*]] = graph.param "w/v" {init = #graph.zeros, optimizer_state, trainable = false}
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %v = graph.param "w/velocity" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<4x3xf32>
  %m = graph.param "w/m" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<4x3xf32>
  %s = graph.param "w/v" {init = #graph.zeros, trainable = false, optimizer_state} : tensor<4x3xf32>
  // CHECK: graph.apply_gradient %[[W]], %[[G]] : tensor<4x3xf32>
  graph.apply_gradient %w, %g : tensor<4x3xf32>
  // CHECK: graph.sgd_update %[[W]], %[[G]] {lr = 1.000000e-01 : f64} : tensor<4x3xf32>
  graph.sgd_update %w, %g {lr = 0.1} : tensor<4x3xf32>
  // CHECK: graph.momentum_update %[[W]], %[[V]], %[[G]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
  graph.momentum_update %w, %v, %g {lr = 0.01, momentum = 0.9} : tensor<4x3xf32>
  // CHECK: graph.momentum_update %[[W]], %[[V]], %[[G]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64, nesterov} : tensor<4x3xf32>
  graph.momentum_update %w, %v, %g {lr = 0.01, momentum = 0.9, nesterov} : tensor<4x3xf32>
  // CHECK: graph.adam_update %[[W]], %[[M]], %[[S]], %[[G]] {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.000000e-08 : f64, lr = 1.000000e-03 : f64} : tensor<4x3xf32>
  graph.adam_update %w, %m, %s, %g {lr = 0.001, beta1 = 0.8, beta2 = 0.5, epsilon = 1.0e-8} : tensor<4x3xf32>
  // CHECK: graph.adam_update %[[W]], %[[M]], %[[S]], %[[G]] {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64} : tensor<4x3xf32>
  graph.adam_update %w, %m, %s, %g {lr = 0.001, beta1 = 0.8, beta2 = 0.5, epsilon = 1.0e-8, weight_decay = 0.01} : tensor<4x3xf32>
  // CHECK: %[[F:.*]] = graph.clip_factor %[[G]], %[[G]] {max_norm = 1.000000e+00 : f64} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  %f = graph.clip_factor %g, %g {max_norm = 1.0} : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f32>
  // CHECK: graph.sgd_update %[[W]], %[[G]] scale(%[[F]] : tensor<f32>) {lr = 1.000000e-01 : f64} : tensor<4x3xf32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<4x3xf32>
  // CHECK: graph.momentum_update %[[W]], %[[V]], %[[G]] scale(%[[F]] : tensor<f32>) {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
  graph.momentum_update %w, %v, %g scale(%f : tensor<f32>) {lr = 0.01, momentum = 0.9} : tensor<4x3xf32>
  // CHECK: graph.adam_update %[[W]], %[[M]], %[[S]], %[[G]] scale(%[[F]] : tensor<f32>) {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.000000e-08 : f64, lr = 1.000000e-03 : f64} : tensor<4x3xf32>
  graph.adam_update %w, %m, %s, %g scale(%f : tensor<f32>) {lr = 0.001, beta1 = 0.8, beta2 = 0.5, epsilon = 1.0e-8} : tensor<4x3xf32>
  return
}

// Tests that the function attributes of a model (inputs, optimizer) round-trip.
// CHECK-LABEL: func.func @model
// CHECK-SAME: %{{[^:]*}}: tensor<8x4xf32> {graph.input = "x"}
// CHECK-SAME: attributes {graph.optimizer = #graph.adam<lr = 2.000000e-03>}
func.func @model(%x: tensor<8x4xf32> {graph.input = "x"}) attributes {graph.optimizer = #graph.adam<lr = 0.002>} {
  return
}

// Tests that the image ops round-trip: conv2d with and without bias, strides and padding (the
// defaults, strides [1, 1] and padding "valid", are not printed), max_pool2d, dropout, and
// the ops of their backward passes.
// CHECK-LABEL: func.func @images
func.func @images(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<4xf32>,
                  %dy: tensor<2x6x6x4xf32>, %h: tensor<2x16xf32>) {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {activation = #graph.act<relu>} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>
  %0 = graph.conv2d %x, %w, %b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<2x6x6x4xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {padding = "same", strides = [2, 2]} : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>
  %1 = graph.conv2d %x, %w {strides = [2, 2], padding = "same"}
      : (tensor<2x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x4x4x4xf32>
  // CHECK: graph.conv2d_grad_input %{{.*}}, %{{.*}} : (tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>) -> tensor<2x8x8x3xf32>
  %2 = graph.conv2d_grad_input %dy, %w : (tensor<2x6x6x4xf32>, tensor<3x3x3x4xf32>) -> tensor<2x8x8x3xf32>
  // CHECK: graph.conv2d_grad_filter %{{.*}}, %{{.*}} : (tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x3x4xf32>
  %3 = graph.conv2d_grad_filter %x, %dy : (tensor<2x8x8x3xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x3x4xf32>
  // CHECK: graph.max_pool2d %{{.*}} : tensor<2x6x6x4xf32> -> tensor<2x3x3x4xf32>
  %4 = graph.max_pool2d %0 {window = [2, 2], strides = [2, 2]} : tensor<2x6x6x4xf32> -> tensor<2x3x3x4xf32>
  // CHECK: graph.max_pool2d %{{.*}} {strides = [1, 1], window = [3, 3]} : tensor<2x6x6x4xf32> -> tensor<2x4x4x4xf32>
  %5 = graph.max_pool2d %0 {window = [3, 3], strides = [1, 1]} : tensor<2x6x6x4xf32> -> tensor<2x4x4x4xf32>
  // CHECK: graph.max_pool2d_grad %{{.*}}, %{{.*}} : (tensor<2x6x6x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  %6 = graph.max_pool2d_grad %0, %4 : (tensor<2x6x6x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x6x6x4xf32>
  // CHECK: %[[D:.*]] = graph.dropout %{{.*}} {rate = 5.000000e-01 : f64} : tensor<2x16xf32>
  %7 = graph.dropout %h {rate = 0.5} : tensor<2x16xf32>
  // CHECK: graph.dropout_grad %[[D]], %{{.*}} {rate = 5.000000e-01 : f64} : tensor<2x16xf32>
  %8 = graph.dropout_grad %7, %h {rate = 0.5} : tensor<2x16xf32>
  return
}

// Mixed precision: casts both ways, and products of bf16 factors with f32 results.
// CHECK-LABEL: func.func @mixed
// CHECK: graph.cast %arg0 : tensor<8x4xf32> to tensor<8x4xbf16>
// CHECK: graph.cast %{{.*}} : tensor<8x3xf32> to tensor<8x3xbf16>
// CHECK: graph.cast %{{.*}} : tensor<8x3xbf16> to tensor<8x3xf32>
// CHECK: graph.dense %{{.*}}, %{{.*}} : (tensor<8x4xbf16>, tensor<4x3xbf16>) -> tensor<8x3xf32>
// CHECK: graph.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<8x4xbf16>, tensor<8x3xbf16>) -> tensor<4x3xf32>
func.func @mixed(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %h: tensor<8x3xf32>) {
  %xb = graph.cast %x : tensor<8x4xf32> to tensor<8x4xbf16>
  %hb = graph.cast %h : tensor<8x3xf32> to tensor<8x3xbf16>
  %hf = graph.cast %hb : tensor<8x3xbf16> to tensor<8x3xf32>
  %wb = graph.cast %w : tensor<4x3xf32> to tensor<4x3xbf16>
  %y = graph.dense %xb, %wb : (tensor<8x4xbf16>, tensor<4x3xbf16>) -> tensor<8x3xf32>
  %dw = graph.matmul %xb, %hb {transpose_lhs} : (tensor<8x4xbf16>, tensor<8x3xbf16>) -> tensor<4x3xf32>
  return
}
