// RUN: dp-opt %s -split-input-file -dist-schedule -verify-diagnostics

// Tests that only bucketed allreduces are scheduled (dist-fuse-allreduce runs first).
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {init = #graph.zeros, dist.replica = 0 : i64} : tensor<3xf32>
  %w1 = graph.param "w" {init = #graph.zeros, dist.replica = 1 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce' op has no bucket (run dist-fuse-allreduce first)}}
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  graph.apply_gradient %w0, %m#0 {dist.replica = 0 : i64} : tensor<3xf32>
  graph.apply_gradient %w1, %m#1 {dist.replica = 1 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that only updates (ops without results) may use the means: they are moved to the end
// of the step, where a value with users of its own could not go.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) -> tensor<3xf32> attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'graph.add' op uses an allreduced gradient and has results; only updates may consume the means}}
  %s = graph.add %m#0, %m#1 : tensor<3xf32>
  return %s : tensor<3xf32>
}
