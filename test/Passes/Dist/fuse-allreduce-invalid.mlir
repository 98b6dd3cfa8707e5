// RUN: dp-opt %s -split-input-file -dist-fuse-allreduce -verify-diagnostics

// Tests that only updates (ops without results) may use the means: fusing moves the users of
// earlier members after the bucket, which a value with users of its own could not follow.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) -> tensor<3xf32> attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'graph.add' op uses an allreduced gradient and has results; only updates may consume the means}}
  %s = graph.add %m#0, %m#1 : tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// Tests that allreduces are bucketed once.
func.func @train(%g0: tensor<3xf32>, %g1: tensor<3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  // expected-error @+1 {{'dist.allreduce' op is already bucketed (dist-fuse-allreduce runs once)}}
  %m:2 = dist.allreduce %g0, %g1 {replicas = 2 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  return
}
