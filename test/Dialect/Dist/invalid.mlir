// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of dialect/Dist/IR/DistDialect.cpp, then the generated (ODS)
// constraint failures that matter.

// Tests that a mesh needs at least one device per process.
// expected-error @+1 {{devices_per_process and processes must be at least 1, got 0 and 2}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 0, processes = 2, device = "cpu">} {
  return
}

// -----

// Tests that a mesh needs at least one process.
// expected-error @+1 {{devices_per_process and processes must be at least 1, got 2 and -1}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = -1, device = "cpu">} {
  return
}

// -----

// Tests that a mesh's device kind is cpu or cuda.
// expected-error @+1 {{unknown device kind 'tpu' (expected cpu or cuda)}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "tpu">} {
  return
}

// -----

// Tests that a mesh's nodes divide its processes evenly.
// expected-error @+1 {{nodes must be at least 1 and divide the 4 processes evenly, got 3}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 4, device = "cpu", nodes = 3>} {
  return
}

// -----

// Tests that a mesh spells out its three required parameters (ODS struct syntax; nodes may
// be left out).
// expected-error @+1 {{struct is missing required parameter: processes}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 1, device = "cpu">} {
  return
}

// -----

// Tests that a shard's replica is below the number of shards.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.shard' op needs 0 <= replica < shards, got replica 4 of 4}}
  %0 = dist.shard %x {replica = 4 : i64, shards = 4 : i64} : tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that a shard's replica is not negative.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.shard' op needs 0 <= replica < shards, got replica -1 of 4}}
  %0 = dist.shard %x {replica = -1 : i64, shards = 4 : i64} : tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

// Tests that there is at least one shard.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.shard' op needs 0 <= replica < shards, got replica 0 of 0}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 0 : i64} : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that the shards are equal: 10 rows do not split into 4.
func.func @f(%x: tensor<10x4xf32>) {
  // expected-error @+1 {{'dist.shard' op splits 10 rows into 4 shards, so each has 2 rows, not 3 (and rows are left over)}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 4 : i64} : tensor<10x4xf32> -> tensor<3x4xf32>
  return
}

// -----

// Tests that a shard has the rows of its share, no more.
func.func @f(%x: tensor<8xi32>) {
  // expected-error @+1 {{'dist.shard' op splits 8 rows into 4 shards, so each has 2 rows, not 4}}
  %0 = dist.shard %x {replica = 1 : i64, shards = 4 : i64} : tensor<8xi32> -> tensor<4xi32>
  return
}

// -----

// Tests that a shard keeps the other dimensions.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.shard' op result must be the input with fewer rows, got 'tensor<8x4xf32>' -> 'tensor<2x16xf32>'}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 4 : i64} : tensor<8x4xf32> -> tensor<2x16xf32>
  return
}

// -----

// Tests that a shard keeps the rank.
func.func @f(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.shard' op result must be the input with fewer rows, got 'tensor<8x4xf32>' -> 'tensor<2x4x1xf32>'}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 4 : i64} : tensor<8x4xf32> -> tensor<2x4x1xf32>
  return
}

// -----

// Tests that a shard keeps the element type.
func.func @f(%x: tensor<8xi32>) {
  // expected-error @+1 {{'dist.shard' op result must be the input with fewer rows, got 'tensor<8xi32>' -> 'tensor<2xf32>'}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 4 : i64} : tensor<8xi32> -> tensor<2xf32>
  return
}

// -----

// Tests that a scalar has no rows to shard.
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'dist.shard' op result must be the input with fewer rows, got 'tensor<f32>' -> 'tensor<f32>'}}
  %0 = dist.shard %x {replica = 0 : i64, shards = 1 : i64} : tensor<f32> -> tensor<f32>
  return
}

// -----

// Tests that an allreduce takes the same number of tensors from every replica.
func.func @f(%w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'dist.allreduce' op needs a positive multiple of replicas (2) tensors, got 3}}
  %0:3 = dist.allreduce %w, %b, %w {replicas = 2 : i64} : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>
  return
}

// -----

// Tests that an allreduce needs at least one replica.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce' op needs a positive multiple of replicas (0) tensors, got 1}}
  %0 = dist.allreduce %w {replicas = 0 : i64} : tensor<4x3xf32>
  return
}

// -----

// Tests that an allreduce needs at least one tensor.
func.func @f() {
  // expected-error @+1 {{'dist.allreduce' op needs a positive multiple of replicas (1) tensors, got 0}}
  "dist.allreduce"() {replicas = 1 : i64} : () -> ()
  return
}

// -----

// Tests that every replica's group has replica 0's types, tensor by tensor.
func.func @f(%w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'dist.allreduce' op tensor 1 of replica 1 has type 'tensor<4x3xf32>', replica 0's has 'tensor<3xf32>'}}
  %0:4 = dist.allreduce %w, %b, %w, %w {replicas = 2 : i64} : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

// Tests that the means have the types of the gradients (generic form: the custom form infers
// them).
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce' op results must have the types of the gradients}}
  %0 = "dist.allreduce"(%w) {replicas = 1 : i64} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Tests that a bucket index is not negative.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce' op bucket must be non-negative}}
  %0 = dist.allreduce %w {replicas = 1 : i64, bucket = -1 : i64} : tensor<4x3xf32>
  return
}

// -----

// Tests that only f32 tensors are averaged (ODS).
func.func @f(%l: tensor<8xi32>) {
  // expected-error @+1 {{'dist.allreduce' op operand #0 must be variadic of ranked tensor of 32-bit float values, but got 'tensor<8xi32>'}}
  %0 = dist.allreduce %l {replicas = 1 : i64} : tensor<8xi32>
  return
}

// -----

// Tests that a started allreduce takes the same number of tensors from every replica, even
// before anything waits for it.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op needs a positive multiple of replicas (2) tensors, got 3}}
  %p = dist.allreduce_start %w, %w, %w {replicas = 2 : i64, bucket = 0 : i64} : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  return
}

// -----

// Tests that every replica's group of a started allreduce has replica 0's types.
func.func @f(%w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op tensor 0 of replica 1 has type 'tensor<3xf32>', replica 0's has 'tensor<4x3xf32>'}}
  %p = dist.allreduce_start %w, %b {replicas = 2 : i64, bucket = 0 : i64} : tensor<4x3xf32>, tensor<3xf32>
  %0:2 = dist.allreduce_wait %p : tensor<4x3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a started allreduce's bucket is not negative.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op bucket must be non-negative}}
  %p = dist.allreduce_start %w {replicas = 1 : i64, bucket = -2 : i64} : tensor<4x3xf32>
  return
}

// -----

// Tests that a started allreduce has a bucket (ODS): the schedule only splits bucketed ones.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op requires attribute 'bucket'}}
  %p = dist.allreduce_start %w {replicas = 1 : i64} : tensor<4x3xf32>
  return
}

// -----

// Tests that a wait is fed by a start, not by any pending value.
func.func @f(%p: !dist.pending) {
  // expected-error @+1 {{'dist.allreduce_wait' op expects the result of a dist.allreduce_start}}
  %0 = dist.allreduce_wait %p : tensor<4x3xf32>
  return
}

// -----

// Tests that a wait yields the types of the started gradients.
func.func @f(%w: tensor<4x3xf32>) {
  %p = dist.allreduce_start %w {replicas = 1 : i64, bucket = 0 : i64} : tensor<4x3xf32>
  // expected-error @+1 {{'dist.allreduce_wait' op results must have the types of the started gradients}}
  %0 = dist.allreduce_wait %p : tensor<3x4xf32>
  return
}

// -----

// Tests that a wait yields one mean per started gradient.
func.func @f(%w0: tensor<4x3xf32>, %w1: tensor<4x3xf32>) {
  %p = dist.allreduce_start %w0, %w1 {replicas = 2 : i64, bucket = 0 : i64} : tensor<4x3xf32>, tensor<4x3xf32>
  // expected-error @+1 {{'dist.allreduce_wait' op results must have the types of the started gradients}}
  %0 = dist.allreduce_wait %p : tensor<4x3xf32>
  return
}

// -----

// Tests that a mesh's accumulation is at least 1 micro-shard per device and step.
// expected-error @+1 {{accumulation must be at least 1, got 0}}
func.func @f() attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 0>} {
  return
}

// -----

// Tests that a sum over micro-shards covers at least 2.
func.func @f(%g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'dist.accumulate' op sums at least 2 micro-shards, got 1}}
  %a = dist.accumulate %g {count = 1 : i64} : tensor<3xf32>
  return %a : tensor<3xf32>
}

// -----

// Tests that a broadcast within a process copies between at least 2 replicas.
func.func @f(%w: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op copies parameters between replicas: it needs at least 2 replica(s), found 1}}
  %p = dist.broadcast_start %w {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>
  return
}

// -----

// Tests that a broadcast over the processes names a process that exists.
func.func @f(%w: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op process -1 is negative}}
  %p = dist.broadcast_start %w {bucket = 1 : i64, process = -1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>
  return
}

// -----

// Tests that a broadcast's operands are, replica by replica, copies of its parameters.
func.func @f(%w: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op operand 1 must be a copy of parameter 0 (one type in every replica's group)}}
  %p = dist.broadcast_start %w, %v {bucket = 1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<4xf32>
  return
}

// -----

// Tests that a broadcast has one group of copies per replica.
func.func @f(%w: tensor<3xf32>, %v: tensor<4xf32>, %u: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op has 3 operand(s) for 2 parameter(s): one group of the parameters' copies per replica}}
  %p = dist.broadcast_start %w, %v, %u {bucket = 1 : i64, root = 0 : i64, tensors = ["w", "v"]} : tensor<3xf32>, tensor<4xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a broadcast's root is one of its replicas.
func.func @f(%w0: tensor<3xf32>, %w1: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op root 2 is not one of the 2 replicas}}
  %p = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 2 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a broadcast's bucket is not negative.
func.func @f(%w0: tensor<3xf32>, %w1: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op bucket must be non-negative}}
  %p = dist.broadcast_start %w0, %w1 {bucket = -1 : i64, root = 0 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a broadcast names its parameters.
func.func @f(%w0: tensor<3xf32>, %w1: tensor<3xf32>) {
  // expected-error @+1 {{'dist.broadcast_start' op names no parameter in `tensors`}}
  %p = dist.broadcast_start %w0, %w1 {bucket = 1 : i64, root = 0 : i64, tensors = []} : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a broadcast's wait waits for a broadcast.
func.func @f(%g0: tensor<3xf32>, %g1: tensor<3xf32>) {
  %p = dist.allreduce_start %g0, %g1 {bucket = 0 : i64, replicas = 2 : i64} : tensor<3xf32>, tensor<3xf32>
  // expected-error @+1 {{'dist.broadcast_wait' op expects the result of a dist.broadcast_start}}
  dist.broadcast_wait %p
  return
}

// -----

// Tests that a reduce-scattered allreduce names one owner a tensor of a replica.
func.func @f(%w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op names 1 owner(s) for 2 tensor(s) a replica}}
  %p = dist.allreduce_start %w, %b {replicas = 1 : i64, bucket = 0 : i64, owners = array<i64: 0>} : tensor<4x3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a reduce-scattered allreduce orders its tensors by owner (each owner's means are
// one segment of the bucket).
func.func @f(%w: tensor<4x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op orders its tensors by owner, but tensor 1's (0) comes after tensor 0's (1)}}
  %p = dist.allreduce_start %w, %b {replicas = 1 : i64, bucket = 0 : i64, owners = array<i64: 1, 0>} : tensor<4x3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that an owner is a replica.
func.func @f(%w: tensor<4x3xf32>) {
  // expected-error @+1 {{'dist.allreduce_start' op owner -1 of tensor 0 is not a replica}}
  %p = dist.allreduce_start %w {replicas = 1 : i64, bucket = 0 : i64, owners = array<i64: -1>} : tensor<4x3xf32>
  return
}
