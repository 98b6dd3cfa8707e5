// RUN: dp-opt %s -split-input-file -dist-insert-allreduce -verify-diagnostics

// Hand-written train steps (what dist-replicate would not produce) that dist-insert-allreduce
// cannot average.

// Tests that a parameter is updated once per replica.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.apply_gradient %w, %g {dist.replica = 0 : i64} : tensor<3xf32>
  graph.apply_gradient %w, %g {dist.replica = 1 : i64} : tensor<3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op is the second update of 'w' on replica 0}}
  graph.apply_gradient %w, %g {dist.replica = 0 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that every replica updates every parameter: the mean needs all their gradients.
// expected-error @+1 {{parameter 'w' has no update on replica 1}}
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.apply_gradient %w, %g {dist.replica = 0 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that an update is on a device of the mesh.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op is on replica 2 but the mesh has 2 device(s) per process}}
  graph.apply_gradient %w, %g {dist.replica = 2 : i64} : tensor<3xf32>
  return
}

// -----

// Tests the same for a negative replica.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op is on replica -1 but the mesh has 2 device(s) per process}}
  graph.apply_gradient %w, %g {dist.replica = -1 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that a step without a mesh, or with a single replica, is left alone (no diagnostics,
// even for updates that would be wrong on a mesh).
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train"} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.apply_gradient %w, %g {dist.replica = 5 : i64} : tensor<3xf32>
  return
}

// -----

func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.apply_gradient %w, %g : tensor<3xf32>
  graph.apply_gradient %w, %g : tensor<3xf32>
  return
}
