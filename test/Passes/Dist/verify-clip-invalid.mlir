// RUN: dp-opt %s -split-input-file -dist-verify -verify-diagnostics

// Tests that when the step clips, no update reads its gradient unscaled.
func.func @train(%g: tensor<3xf32>, %h: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %v = graph.param "v" {init = #graph.zeros} : tensor<3xf32>
  %f = graph.clip_factor %g {max_norm = 1.0} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op of 'v' reads its gradient unscaled, but the step clips the gradients by their global norm}}
  graph.sgd_update %v, %h {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that a scale is a clip factor.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %f = graph.fill 0.5 : tensor<f32>
  // expected-error @+1 {{'graph.sgd_update' op of 'w' is scaled by something other than a graph.clip_factor}}
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that the norm covers every gradient the factor's updates read.
func.func @train(%g: tensor<3xf32>, %h: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %v = graph.param "v" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.clip_factor' op on replica 0 leaves out 1 of the gradients its updates read}}
  %f = graph.clip_factor %g {max_norm = 1.0} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  graph.sgd_update %v, %h scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that the norm covers only the gradients the factor's updates read.
func.func @train(%g: tensor<3xf32>, %h: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.clip_factor' op on replica 0 reads a value that is not the gradient of one of its updates, or reads one twice; the norm is that of the gradients the updates read}}
  %f = graph.clip_factor %g, %h {max_norm = 1.0} : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that a replica has one global norm.
func.func @train(%g: tensor<3xf32>, %h: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %v = graph.param "v" {init = #graph.zeros} : tensor<3xf32>
  %f = graph.clip_factor %g {max_norm = 1.0} : tensor<3xf32> -> tensor<f32>
  // expected-error @+1 {{'graph.clip_factor' op is a second clip factor on replica 0; a replica's gradients have one global norm}}
  %f2 = graph.clip_factor %h {max_norm = 1.0} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  graph.sgd_update %v, %h scale(%f2 : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that every replica clips to the same norm.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %f0 = graph.clip_factor %m#0 {max_norm = 1.0, dist.replica = 0 : i64} : tensor<3xf32> -> tensor<f32>
  // expected-error @+1 {{'graph.clip_factor' op clips to another max_norm than replica 0's factor}}
  %f1 = graph.clip_factor %m#1 {max_norm = 2.0, dist.replica = 1 : i64} : tensor<3xf32> -> tensor<f32>
  return
}

// -----

// Tests that a replica's updates read its own replica's factor.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {init = #graph.zeros, dist.replica = 0 : i64} : tensor<3xf32>
  %w1 = graph.param "w" {init = #graph.zeros, dist.replica = 1 : i64} : tensor<3xf32>
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %f0 = graph.clip_factor %m#0 {max_norm = 1.0, dist.replica = 0 : i64} : tensor<3xf32> -> tensor<f32>
  %f1 = graph.clip_factor %m#1 {max_norm = 1.0, dist.replica = 1 : i64} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w0, %m#0 scale(%f0 : tensor<f32>) {lr = 0.1, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op on replica 1 reads replica 0's clip factor}}
  graph.sgd_update %w1, %m#1 scale(%f0 : tensor<f32>) {lr = 0.1, dist.replica = 1 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that on more than one replica the norm is that of the allreduced means, which every
// replica holds alike, not of a replica's own gradient.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {init = #graph.zeros, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'graph.clip_factor' op on replica 0 reads a gradient that is not the allreduced mean: every replica must clip by the norm of the same averaged gradients}}
  %f0 = graph.clip_factor %g0 {max_norm = 1.0, dist.replica = 0 : i64} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w0, %g0 scale(%f0 : tensor<f32>) {lr = 0.1, dist.replica = 0 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that only the train step clips (a server's or the eval step's updates never do).
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  return
}
func.func @server0(%g: tensor<3xf32>) {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.clip_factor' op clips gradients in 'server0'; only the train step of an allreduce job clips}}
  %f = graph.clip_factor %g {max_norm = 1.0} : tensor<3xf32> -> tensor<f32>
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}
