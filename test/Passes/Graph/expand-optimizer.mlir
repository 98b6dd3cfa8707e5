// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer | FileCheck %s
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer=lr-scale=2 | FileCheck %s --check-prefix=SCALE
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate=devices-per-process=2 -graph-expand-optimizer | FileCheck %s --check-prefix=REPL
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer="lr-schedule=warmup-linear:epochs=2+cosine:epochs=10" | FileCheck %s --check-prefix=SCHED
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer=lr-schedule=constant | FileCheck %s --check-prefix=CONST
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer | FileCheck %s --check-prefix=TORCH
// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -graph-expand-optimizer | FileCheck %s --check-prefix=DECAY

// With lr-schedule, the train step records the schedule's canonical text (the warmup's start
// filled in) and the updates keep the compiled rate, which the runtime scales per step; a
// constant schedule records nothing.
// SCHED-LABEL: func.func @train(
// SCHED-SAME: graph.lr_schedule = "warmup-linear:epochs=2,start=0+cosine:epochs=10,min=0"
// SCHED: graph.sgd_update %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64}
// CONST-NOT: graph.lr_schedule

// Tests that SGD turns each apply_gradient into an sgd_update with the optimizer's learning rate
// (times lr-scale), in place, and adds no optimizer state.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
// CHECK-NOT: optimizer_state
// CHECK: %[[DW:.*]] = graph.matmul
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_rows
// CHECK-NEXT: graph.sgd_update %[[W]], %[[DW]] {lr = 1.000000e-01 : f64} : tensor<4x3xf32>
// CHECK-NEXT: graph.sgd_update %[[B]], %[[DB]] {lr = 1.000000e-01 : f64} : tensor<3xf32>
// CHECK-NOT: graph.apply_gradient
// CHECK: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: _update
// CHECK: return
// SCALE-LABEL: func.func @train(
// SCALE: graph.sgd_update %{{.*}}, %{{.*}} {lr = 2.000000e-01 : f64} : tensor<4x3xf32>
// SCALE-NEXT: graph.sgd_update %{{.*}}, %{{.*}} {lr = 2.000000e-01 : f64} : tensor<3xf32>
// With replicas, each update keeps the replica tag of the apply_gradient it replaces.
// REPL-LABEL: func.func @train(
// REPL: %[[W0:.*]] = graph.param "w" {dist.replica = 0 : i64
// REPL-NEXT: %[[W1:.*]] = graph.param "w" {dist.replica = 1 : i64
// REPL: graph.sgd_update %[[W0]], %{{.*}} {dist.replica = 0 : i64, lr = 1.000000e-01 : f64} : tensor<4x3xf32>
// REPL-NEXT: graph.sgd_update %[[W1]], %{{.*}} {dist.replica = 1 : i64, lr = 1.000000e-01 : f64} : tensor<4x3xf32>
func.func @sgd(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %x, %w, %b {activation = #graph.act<sigmoid>} : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that momentum adds a zero-initialised, non-trainable velocity parameter "<name>/velocity"
// after each parameter and turns apply_gradient into momentum_update (Keras defaults).
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
// CHECK-NEXT: %[[VW:.*]] = graph.param "w/velocity" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
// CHECK-NEXT: %[[VB:.*]] = graph.param "b/velocity" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
// CHECK: %[[DW:.*]] = graph.matmul
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_rows
// CHECK-NEXT: graph.momentum_update %[[W]], %[[VW]], %[[DW]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
// CHECK-NEXT: graph.momentum_update %[[B]], %[[VB]], %[[DB]] {lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<3xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: velocity
// CHECK: return
// SCALE-LABEL: func.func @train(
// SCALE: graph.momentum_update {{.*}} {lr = 2.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
// With replicas, each replica's parameter gets its own velocity, on the same replica (the
// state is mirrored like the parameter), and each update stays on its replica.
// REPL-LABEL: func.func @train(
// REPL: %[[W0:.*]] = graph.param "w" {dist.replica = 0 : i64, init = #graph.glorot_uniform} : tensor<4x3xf32>
// REPL-NEXT: %[[V0:.*]] = graph.param "w/velocity" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL-NEXT: %[[W1:.*]] = graph.param "w" {dist.replica = 1 : i64, init = #graph.glorot_uniform} : tensor<4x3xf32>
// REPL-NEXT: %[[V1:.*]] = graph.param "w/velocity" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL: graph.momentum_update %[[W0]], %[[V0]], %{{.*}} {dist.replica = 0 : i64, lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
// REPL-NEXT: graph.momentum_update %[[W1]], %[[V1]], %{{.*}} {dist.replica = 1 : i64, lr = 1.000000e-02 : f64, momentum = 9.000000e-01 : f64} : tensor<4x3xf32>
func.func @momentum(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that Nesterov momentum sets the nesterov flag and carries explicit hyperparameters.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w"
// CHECK-NEXT: %[[VW:.*]] = graph.param "w/velocity"
// CHECK: graph.momentum_update %[[W]], %[[VW]], %{{.*}} {lr = 5.000000e-02 : f64, momentum = 5.000000e-01 : f64, nesterov} : tensor<4x3xf32>
// SCALE-LABEL: func.func @train(
// SCALE: graph.momentum_update {{.*}} {lr = 1.000000e-01 : f64, momentum = 5.000000e-01 : f64, nesterov} : tensor<4x3xf32>
func.func @nesterov(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<lr = 0.05, momentum = 0.5, nesterov = true>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that Adam adds the moments "<name>/m" and "<name>/v" (zero-initialised, non-trainable
// optimizer state) next to each parameter and turns apply_gradient into adam_update; lr-scale
// scales only the learning rate.
// CHECK-LABEL: func.func @train(
// CHECK: %[[W:.*]] = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
// CHECK-DAG: %[[MW:.*]] = graph.param "w/m" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// CHECK-DAG: %[[VW:.*]] = graph.param "w/v" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// CHECK: %[[B:.*]] = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
// CHECK-DAG: %[[MB:.*]] = graph.param "b/m" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
// CHECK-DAG: %[[VB:.*]] = graph.param "b/v" {init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
// CHECK: %[[DW:.*]] = graph.matmul
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_rows
// CHECK-NEXT: graph.adam_update %[[W]], %[[MW]], %[[VW]], %[[DW]] {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.250000e-01 : f64, lr = 2.000000e-03 : f64} : tensor<4x3xf32>
// CHECK-NEXT: graph.adam_update %[[B]], %[[MB]], %[[VB]], %[[DB]] {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.250000e-01 : f64, lr = 2.000000e-03 : f64} : tensor<3xf32>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @eval(
// CHECK-NOT: optimizer_state
// CHECK: return
// SCALE-LABEL: func.func @train(
// SCALE: graph.adam_update {{.*}} {beta1 = 8.000000e-01 : f64, beta2 = 5.000000e-01 : f64, epsilon = 1.250000e-01 : f64, lr = 4.000000e-03 : f64} : tensor<4x3xf32>
// With replicas, both moments of each replica's parameter are on that replica.
// REPL-LABEL: func.func @train(
// REPL: %[[W0:.*]] = graph.param "w" {dist.replica = 0 : i64
// REPL-DAG: %[[M0:.*]] = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL-DAG: %[[V0:.*]] = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL: %[[W1:.*]] = graph.param "w" {dist.replica = 1 : i64
// REPL-DAG: %[[M1:.*]] = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL-DAG: %[[V1:.*]] = graph.param "w/v" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<4x3xf32>
// REPL: graph.adam_update %[[W0]], %[[M0]], %[[V0]], %{{.*}} {beta1 = {{.*}}, dist.replica = 0 : i64
// REPL-NEXT: graph.adam_update %[[W1]], %[[M1]], %[[V1]], %{{.*}} {beta1 = {{.*}}, dist.replica = 1 : i64
func.func @adam(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.002, beta1 = 0.8, beta2 = 0.5, epsilon = 0.125>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %y = graph.dense %x, %w, %b : (tensor<8x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that adam's torch_epsilon (PyTorch's epsilon, on the corrected sqrt(v_hat)) reaches
// the update.
// TORCH-LABEL: func.func @train(
// TORCH: graph.adam_update {{.*}} {beta1 = {{.*}}, epsilon = 1.000000e-08 : f64, lr = {{.*}}, torch_epsilon} : tensor<4x3xf32>
func.func @adam_torch(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.001, epsilon = 1.0e-8, torch_epsilon = true>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an optimizer's weight_decay (AdamW's, decoupled) reaches each update, and that a
// zero one writes nothing (the update keeps its attributes, and its plan its bytes).
// DECAY: graph.model = "adamw"
// DECAY: graph.adam_update {{.*}} {beta1 = {{.*}}, lr = {{.*}}, weight_decay = 4.000000e-03 : f64} : tensor<4x3xf32>
// DECAY: graph.model = "momentum_decay"
// DECAY: graph.momentum_update {{.*}} {lr = {{.*}}, momentum = {{.*}}, nesterov, weight_decay = 1.000000e-04 : f64} : tensor<4x3xf32>
// DECAY: graph.model = "sgd_no_decay"
// DECAY: graph.sgd_update {{[^{]*}} {lr = 1.000000e-01 : f64} : tensor<4x3xf32>
func.func @adamw(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<weight_decay = 0.004>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @momentum_decay(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<lr = 0.1, nesterov = true, weight_decay = 1.0e-4>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @sgd_no_decay(%x: tensor<8x4xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1, weight_decay = 0.0>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3xf32>
  %y = graph.dense %x, %w : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
