// RUN: dp-opt %s -split-input-file -dist-clip-gradients=clip-norm=1.0 -verify-diagnostics

// Tests that the parameter-server strategy cannot clip: no process holds the whole gradient.
// expected-error @+1 {{gradients cannot be clipped by their global norm under the parameter-server strategy: each server updates its own parameters, and none sees the whole gradient}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  return
}

// -----

// Tests that the abstract apply_gradient is refused: the optimizer's updates carry the scale.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op is not an optimizer update (run graph-expand-optimizer first)}}
  graph.apply_gradient %w, %g : tensor<3xf32>
  return
}

// -----

// Tests that a step is clipped once.
func.func @train(%g: tensor<3xf32>, %f: tensor<f32>) attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op of 'w' already has a scale}}
  graph.sgd_update %w, %g scale(%f : tensor<f32>) {lr = 0.1} : tensor<3xf32>
  return
}

// -----

// Tests that an update is not moved past a later read of the parameter it writes (which would
// then read the old value).
func.func @train(%g: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op writes a value that 'graph.add' reads later in the step; the update cannot wait for the global norm}}
  graph.sgd_update %w, %g {lr = 0.1} : tensor<3xf32>
  %late = graph.add %w, %x : tensor<3xf32>
  %v = graph.param "v" {init = #graph.zeros} : tensor<3xf32>
  graph.sgd_update %v, %late {lr = 0.1} : tensor<3xf32>
  return %late : tensor<3xf32>
}
