// RUN: dp-opt %s -split-input-file -dist-verify -verify-diagnostics

// The contract of the parameter-server strategy (passes/Dist/Verify.cpp): one case per message.

// Tests that the workers run one device each, as many as the strategy says.
// expected-error @+1 {{a parameter-server train step runs on one device in each of 2 worker(s), but the mesh has 1 x 3}}
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 3, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that no update is left on a worker.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op is left in a parameter-server train step: updates run on the servers (run dist-split-parameter-server)}}
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a bucket is pushed once.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  // expected-error @+1 {{'dist.push' op pushes bucket 0 a second time}}
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a push goes to a server of the strategy.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  // expected-error @+1 {{'dist.push' op pushes to server 1 of 1}}
  dist.push %g {bucket = 0 : i64, server = 1 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a push leaves right after its last gradient.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  %h = graph.add %x, %x : tensor<4xf32>
  // expected-error @+1 {{'dist.push' op of bucket 0 waits behind 'graph.add', which none of its gradients needs; it should leave right after its last gradient is computed}}
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a bucket is pushed before it is pulled.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  // expected-error @+1 {{'dist.pull' op pulls bucket 0 before the step pushes it}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a bucket is pulled once.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  // expected-error @+1 {{'dist.pull' op pulls bucket 0 a second time}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a pull takes what its push sent, from the same server.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["v"]} : tensor<4xf32>
  // expected-error @+1 {{'dist.pull' op of bucket 0 names other tensors or another server than its push}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that every pushed bucket is pulled.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  // expected-error @+1 {{'dist.push' op of bucket 0 is never pulled}}
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a pull comes after the step's last read of its parameters.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  // expected-error @+1 {{'dist.pull' op writes 'w' before the step's last read of it ('graph.add')}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %late = graph.add %w, %w : tensor<4xf32>
  return
}

// -----

// Tests that every server has its function.
// expected-error @+1 {{the strategy has 1 server(s) but the module has 0 server function(s)}}
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that the server functions are numbered from 0.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
// expected-error @+1 {{is server 1; the server functions must be 0 to 0}}
func.func private @server1() attributes {dist.server = 1 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a server function has the train step's strategy.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
// expected-error @+1 {{has another parameter-server strategy than the train step}}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = 3, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a server receives only what a worker pushes to it.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  // expected-error @+1 {{'dist.receive' op receives bucket 1, which no worker pushes to server 0 with these tensors}}
  %g = dist.receive {bucket = 1 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that a server's update reads the received gradient.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  %h = graph.add %g, %g : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates 'w' from a gradient that is not the received bucket's}}
  graph.sgd_update %w, %h {lr = 0.1 : f64} : tensor<4xf32>
  return
}

// -----

// Tests that a server updates a parameter once.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates 'w' a second time}}
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  return
}

// -----

// Tests that a reply answers with the bucket's updated parameters.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  // expected-error @+1 {{'dist.reply' op of bucket 0 does not answer the received bucket with its updated parameters}}
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}

// -----

// Tests that every received bucket gets a reply.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  // expected-error @+1 {{'dist.receive' op of bucket 0 has no reply}}
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  return
}

// -----

// Tests that every pushed bucket is received.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  // expected-error @+1 {{'dist.push' op sends bucket 0 to server 0, which never receives it}}
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {

  return
}

// -----

// Tests that every trainable parameter is updated by a server.
func.func @train(%x: tensor<4xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 0 : i64} : tensor<4xf32>
  %g = graph.add %x, %w : tensor<4xf32>
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  // expected-error @+1 {{'graph.param' op is trainable but no server updates it}}
  %u = graph.param "u" {init = #graph.zeros} : tensor<4xf32>
  return
}
func.func private @server0() attributes {dist.server = 0 : i64, dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>} {
  %g = dist.receive {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<4xf32>
  graph.sgd_update %w, %g {lr = 0.1 : f64} : tensor<4xf32>
  dist.reply %w {bucket = 0 : i64, tensors = ["w"]} : tensor<4xf32>
  return
}
