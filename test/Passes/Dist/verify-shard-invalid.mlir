// RUN: dp-opt %s -split-input-file -dist-verify -verify-diagnostics

// Tests that a step whose optimizer state is not sharded broadcasts nothing.
func.func @train() attributes {graph.step = "train",  dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %m1 = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v1 = graph.param "w/v" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  graph.adam_update %w1, %m1, %v1, %a#1 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 1 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op broadcasts a parameter in a step whose optimizer state is not sharded}}
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that under sharding only the owner updates a parameter.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %m1 = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v1 = graph.param "w/v" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'graph.adam_update' op updates 'w' on replica 1 as well as on replica 0: under sharded optimizer state only its owner updates it}}
  graph.adam_update %w1, %m1, %v1, %a#1 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 1 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that the broadcast comes from the replica that updates the parameter.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op broadcasts 'w' from replica 1, but replica 0 updates it}}
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 1 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that the broadcast takes the copies in replica order.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op operand 0 must be replica 0's copy of 'w'}}
  %b = dist.broadcast_start %w1, %w0 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that the broadcast comes after its update (a bucket of two parameters, started
// between their updates).
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %u0 = graph.param "u" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %u1 = graph.param "u" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %n0 = graph.param "u/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %s0 = graph.param "u/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op of 'u' must come after its update}}
  %b = dist.broadcast_start %w0, %u0, %w1, %u1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w", "u"]} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  graph.adam_update %u0, %n0, %s0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that a bucket's operands are its parameters' copies, replica by replica.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %u0 = graph.param "u" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %u1 = graph.param "u" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %n0 = graph.param "u/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %s0 = graph.param "u/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  graph.adam_update %u0, %n0, %s0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op operand 2 must be replica 1's copy of 'w'}}
  %b = dist.broadcast_start %w0, %w1, %u0, %u1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w", "u"]} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that an updated parameter is broadcast.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'graph.adam_update' op updates 'w' on its owner, but no dist.broadcast_start copies it to the other replicas}}
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that nothing uses a parameter while its broadcast copies it (after the wait it may).
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'graph.add' op uses 'w' while its broadcast copies it (between the start and the wait)}}
  %y = graph.add %w1, %w1 {dist.replica = 1 : i64} : tensor<3xf32>
  dist.broadcast_wait %b
  %z = graph.add %w1, %w1 {dist.replica = 1 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that optimizer state lives on its owner only.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  // expected-error @+1 {{'graph.param' op keeps optimizer state 'w/m' on replica 1, where no update reads it}}
  %m1 = graph.param "w/m" {dist.replica = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that a broadcast has a bucket of its own.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op reuses bucket 0}}
  %b = dist.broadcast_start %w0, %w1 {bucket = 0 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that with several processes a broadcast names the process that holds the state.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 2, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op broadcasts from process -1, but the mesh has 2 process(es): one of them must hold its parameters' state}}
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that the broadcast comes from the process whose update runs.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "w/m" {dist.process = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v = graph.param "w/v" {dist.process = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g = graph.fill 1.0 : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %a = dist.allreduce_wait %p : tensor<3xf32>
  graph.adam_update %w, %m, %v, %a {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.process = 1 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op broadcasts 'w' from process 0, but its update runs on process 1}}
  %b = dist.broadcast_start %w {bucket = 1 : i64, process = 0 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that with one process a broadcast names none (every process holds the state).
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_start' op broadcasts from process 0, but the mesh has 1 process(es): every process holds the state}}
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, process = 0 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that a process's state is read by that process's update only.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'graph.param' op keeps optimizer state 'w/m' on replica 0 of process 0, where no update reads it}}
  %m = graph.param "w/m" {dist.process = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v = graph.param "w/v" {dist.process = 1 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g = graph.fill 1.0 : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %a = dist.allreduce_wait %p : tensor<3xf32>
  graph.adam_update %w, %m, %v, %a {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.process = 1 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w {bucket = 1 : i64, process = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that only a step of sharded optimizer state scatters its means to owners.
func.func @train() attributes {graph.step = "train", dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op scatters its means to owners in a step whose optimizer state is not sharded}}
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, owners = array<i64: 0>, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  return
}

// -----

// Tests that a reduce-scattered mean is read by its owner only: replica 0's copy of a mean
// that replica 1 owns is not averaged.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, owners = array<i64: 1>, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'graph.adam_update' op reads replica 0's mean of tensor 0 of a reduce-scattered bucket, which only its owner (replica 1) receives: only the owner's update may read it}}
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that the owners are replicas of the mesh.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu">} {
  %w0 = graph.param "w" {dist.replica = 0 : i64, init = #graph.zeros} : tensor<3xf32>
  %w1 = graph.param "w" {dist.replica = 1 : i64, init = #graph.zeros} : tensor<3xf32>
  %g0 = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<3xf32>
  %g1 = graph.fill 1.0 {dist.replica = 1 : i64} : tensor<3xf32>
  %m0 = graph.param "w/m" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v0 = graph.param "w/v" {dist.replica = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  // expected-error @+1 {{'dist.allreduce_start' op scatters tensor 0 to replica 2, but the mesh has 2 replica(s)}}
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, owners = array<i64: 2>, replicas = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  %a:2 = dist.allreduce_wait %p : tensor<3xf32>, tensor<3xf32>
  graph.adam_update %w0, %m0, %v0, %a#0 {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.replica = 0 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %b
  return
}

// -----

// Tests that over the processes an owner counts the job's replicas: replica 0 of process 1
// is owner 1, so process 0's update may not read the mean.
func.func @train() attributes {graph.step = "train", dist.shard_optimizer = 1 : i64, dist.mesh = #dist.mesh<devices_per_process = 1, processes = 2, device = "cpu">} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %m = graph.param "w/m" {dist.process = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %v = graph.param "w/v" {dist.process = 0 : i64, init = #graph.zeros, optimizer_state, trainable = false} : tensor<3xf32>
  %g = graph.fill 1.0 : tensor<3xf32>
  %p = dist.allreduce_start %g {bucket = 0 : i64, owners = array<i64: 1>, replicas = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  %a = dist.allreduce_wait %p : tensor<3xf32>
  // expected-error @+1 {{'graph.adam_update' op reads replica 0's mean of tensor 0 of a reduce-scattered bucket, which only its owner (replica 0 of process 1, the job's replica 1) receives}}
  graph.adam_update %w, %m, %v, %a {beta1 = 0.9, beta2 = 0.999, epsilon = 1.0e-7, lr = 0.01, dist.process = 0 : i64} : tensor<3xf32>
  %b = dist.broadcast_start %w {bucket = 1 : i64, process = 0 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>
  dist.broadcast_wait %b
  return
}
