// RUN: dp-opt %s -split-input-file "-dist-place-parameters=servers=2" -verify-diagnostics

// Tests that the train step needs a mesh.
// expected-error @+1 {{the train step has no mesh (run dist-replicate first)}}
func.func @train() attributes {graph.step = "train"} {
  return
}

// -----

// Tests that workers run one device each.
// expected-error @+1 {{parameter servers take one device per worker process, but the mesh has 2 per process}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  return
}

// -----

// Tests that one node layout is all the strategy is compiled for.
// expected-error @+1 {{parameter servers are compiled for one node layout only (nodes = 1)}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu", nodes = 2>} {
  return
}

// -----

// Tests that a step without updates has nothing for a server.
// expected-error @+1 {{the train step updates no parameter: nothing for a server to hold}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that every server gets a parameter.
// expected-error @+1 {{the model has 1 trainable parameter(s), fewer than the 2 servers: a server would hold nothing}}
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<3xf32>
  return
}

// -----

// Tests that a parameter is updated once.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<3xf32>
  %w2 = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op is the second update of 'w'}}
  graph.sgd_update %w2, %g {lr = 0.1 : f64} : tensor<3xf32>
  return
}
