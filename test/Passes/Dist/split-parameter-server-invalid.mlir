// RUN: dp-opt %s -split-input-file -dist-split-parameter-server -verify-diagnostics

// Tests that the strategy comes first.
// expected-error @+1 {{the train step has no parameter-server strategy (run dist-place-parameters first)}}
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that every updated parameter has a server.
func.func @train(%g: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates a parameter that no server holds (run dist-place-parameters first)}}
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<3xf32>
  return
}
