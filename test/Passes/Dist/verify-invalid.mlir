// RUN: dp-opt %s -split-input-file -dist-verify -verify-diagnostics

// Tests that the module needs a train step.
// expected-error @+1 {{no train step (run graph-derive-steps first)}}
module {
}

// -----

// Tests that the steps carry a mesh.
// expected-error @+1 {{the train step has no mesh (run dist-replicate first)}}
func.func @train() attributes {graph.step = "train"} {
  return
}
func.func @eval() attributes {graph.step = "eval"} {
  return
}

// -----

// Tests that no replica of a replicated step reads a whole input.
func.func @train(%x: tensor<4x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  // expected-error @+1 {{'graph.relu' op reads input #0 whole; a replicated step reads inputs through dist.shard (run dist-split-batch)}}
  %y = graph.relu %x {dist.replica = 0 : i64} : tensor<4x3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  return
}

// -----

// Tests that shards split the batch over every replica of the job.
func.func @train(%x: tensor<4x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 2, device = "cpu">} {
  // expected-error @+1 {{'dist.shard' op splits the batch into 2 shards but the mesh has 4 replicas}}
  %s = dist.shard %x {replica = 0 : i64, shards = 2 : i64, dist.replica = 0 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that an update reads an averaged gradient.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %g = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op updates 'w' from a gradient that is not averaged across replicas (run dist-insert-allreduce)}}
  graph.sgd_update %w, %g {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that the mean covers every device of the process.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %g = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros, dist.replica = 0 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op reads a mean over 1 device(s) per process, but the mesh has 2}}
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64, dist.replica = 0 : i64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  return
}

// -----

// Tests that a gradient is averaged once.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %g = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  %p2 = dist.allreduce_start %m {bucket = 1 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %m2 = dist.allreduce_wait %p2 : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op reads the gradient of 'w' averaged twice}}
  graph.sgd_update %w, %m2 {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that each replica reads the mean of its own gradient.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %a = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %b = graph.fill 2.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %w0 = graph.param "w" {init = #graph.zeros, dist.replica = 0 : i64} : tensor<3xf32>
  %w1 = graph.param "w" {init = #graph.zeros, dist.replica = 1 : i64} : tensor<3xf32>
  %g0 = graph.relu %a {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.relu %b {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %m:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.sgd_update %w0, %m#0 {lr = 1.0e-01 : f64, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'graph.sgd_update' op on replica 1 reads the mean of replica 0's gradient of 'w'}}
  graph.sgd_update %w1, %m#0 {lr = 1.0e-01 : f64, dist.replica = 1 : i64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  return
}

// -----

// Tests that a gradient travels in one bucket only.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %a = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.relu %a : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op averages a gradient that another allreduce already averages}}
  %p2 = dist.allreduce_start %g {bucket = 1 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  %m2 = dist.allreduce_wait %p2 : tensor<3xf32>
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that every allreduce is scheduled.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %a = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.relu %a : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce' op is not scheduled (run dist-fuse-allreduce and dist-schedule)}}
  %m = dist.allreduce %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that every bucket has an index of its own.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %a = graph.fill 1.0 : tensor<3xf32>
  %b = graph.fill 2.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %v = graph.param "v" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.relu %a : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %h = graph.relu %b : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op reuses bucket 0}}
  %q = dist.allreduce_start %h {bucket = 0 : i64, replicas = 1 : i64, tensors = ["v"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  %n = dist.allreduce_wait %q : tensor<3xf32>
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64} : tensor<3xf32>
  graph.sgd_update %v, %n {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that a bucket starts as soon as its last tensor is computed.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %a = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.relu %a : tensor<3xf32>
  %late = graph.tanh %a : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op of bucket 0 waits behind 'graph.tanh', which none of its tensors needs; it should start right after its last tensor is computed (or read)}}
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that nothing reads a bucket's tensor after its allreduce started (it is averaged in
// place), and that a start right after such a read is right after its tensors.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %a = graph.fill 1.0 : tensor<3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.relu %a : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  // expected-error @+1 {{'graph.tanh' op reads a tensor of bucket 0 after its allreduce started, which averages it in place; the start must come after the last read}}
  %late = graph.tanh %g : tensor<3xf32>
  %m = dist.allreduce_wait %p : tensor<3xf32>
  graph.sgd_update %w, %m {lr = 1.0e-01 : f64} : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that under gradient accumulation the shards are the micro-shards: R x P x M of them.
func.func @train(%x: tensor<8x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 4>} {
  // expected-error @+1 {{'dist.shard' op splits the batch into 2 shards but the mesh has 4 micro-shards (1 replicas x 4)}}
  %s = dist.shard %x {replica = 0 : i64, shards = 2 : i64} : tensor<8x3xf32> -> tensor<4x3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 4>} {
  return
}

// -----

// Tests that under gradient accumulation every update reads its gradient's sum over the
// micro-shards (dist-accumulate).
func.func @train(%x: tensor<8x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 2>} {
  %s = dist.shard %x {replica = 0 : i64, shards = 2 : i64} : tensor<8x3xf32> -> tensor<4x3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.reduce_rows %s : tensor<4x3xf32> -> tensor<3xf32>
  // expected-error @+1 {{'graph.apply_gradient' op reads a gradient that is not summed over its replica's micro-shards (run dist-accumulate)}}
  graph.apply_gradient %w, %g : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 2>} {
  return
}

// -----

// Tests that a sum covers the mesh's micro-shards.
func.func @train(%x: tensor<8x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 2>} {
  %s = dist.shard %x {replica = 0 : i64, shards = 2 : i64} : tensor<8x3xf32> -> tensor<4x3xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.reduce_rows %s : tensor<4x3xf32> -> tensor<3xf32>
  // expected-error @+1 {{'dist.accumulate' op sums 4 micro-shards in the train step of a mesh with accumulation 2}}
  %a = dist.accumulate %g {count = 4 : i64} : tensor<3xf32>
  graph.apply_gradient %w, %a : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 2>} {
  return
}

// -----

// Tests that a step without accumulation sums nothing.
func.func @train(%x: tensor<8x3xf32>) attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %g = graph.reduce_rows %x : tensor<8x3xf32> -> tensor<3xf32>
  // expected-error @+1 {{'dist.accumulate' op sums 2 micro-shards in the train step of a mesh with accumulation 1}}
  %a = dist.accumulate %g {count = 2 : i64} : tensor<3xf32>
  graph.apply_gradient %w, %a : tensor<3xf32>
  return
}
func.func @eval() attributes {graph.step = "eval", dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu">} {
  return
}
