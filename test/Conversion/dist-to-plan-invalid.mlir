// RUN: dp-opt %s -split-input-file -convert-dist-to-plan -verify-diagnostics

// The preconditions of convert-dist-to-plan, on hand-written steps.

// Tests that the conversion needs both a train and an eval step.
// expected-error @+1 {{expected a train and an eval step (run graph-derive-steps first)}}
module {
  func.func @train(%x: tensor<8x4xf32> {graph.input = "x", graph.role = "samples"}) attributes {graph.step = "train", graph.model = "m"} {
    return
  }
}

// -----

// Tests that an op without a kernel (an apply_gradient left by a pipeline without
// graph-expand-optimizer) is an error.
func.func @train(%x: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op has no kernel to lower to}}
  graph.apply_gradient %w, %x : tensor<4x3xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
func.func @eval(%x: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "eval", graph.model = "m"} {
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an allreduce needs a bucket of its own (a pipeline without dist-fuse-allreduce):
// the collective kernels name their buffers by the bucket index.
func.func @train(%g0: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<>,
                dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  // expected-error @+1 {{'dist.allreduce' op has no bucket (run dist-fuse-allreduce first)}}
  %m = dist.allreduce %g0 {replicas = 1 : i64, tensors = ["w"]} : tensor<4x3xf32>
  graph.sgd_update %w, %m {lr = 0.1 : f64} : tensor<4x3xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
func.func @eval(%x: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "eval", graph.model = "m", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that two allreduces cannot share a bucket index: one of them would average the
// other's buffer.
func.func @train(%g0: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}, %g1: tensor<3xf32> {graph.input = "h", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "train", graph.model = "m", graph.optimizer = #graph.sgd<>,
                dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<3xf32>
  %p = dist.allreduce_start %g0 {replicas = 1 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<4x3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op reuses bucket 0 of another allreduce}}
  %q = dist.allreduce_start %g1 {replicas = 1 : i64, bucket = 0 : i64, tensors = ["b"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<4x3xf32>
  graph.sgd_update %w, %m {lr = 0.1 : f64} : tensor<4x3xf32>
  %n = dist.allreduce_wait %q : tensor<3xf32>
  graph.sgd_update %b, %n {lr = 0.1 : f64} : tensor<3xf32>
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
func.func @eval(%x: tensor<4x3xf32> {graph.input = "g", graph.role = "samples"}) -> (tensor<f32> {graph.output = "loss", graph.role = "loss"})
    attributes {graph.step = "eval", graph.model = "m", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %loss = graph.fill 0.0 : tensor<f32>
  return %loss : tensor<f32>
}
