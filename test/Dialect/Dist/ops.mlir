// RUN: dp-opt %s | dp-opt | FileCheck %s
// RUN: dp-opt %s --mlir-print-op-generic | dp-opt | FileCheck %s
// RUN: dp-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every dist op, of #dist.mesh and of !dist.pending, in the custom form and
// through the generic form.

// Tests that the mesh round-trips on a function, with both device kinds, and that the
// replica tags on ops, on results and on dist ops survive.
// CHECK-LABEL: func.func @mesh(
// CHECK-SAME: -> (tensor<f32> {dist.replica = 0 : i64}, tensor<f32> {dist.replica = 1 : i64})
// CHECK-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = 4, device = "cpu">}
// CHECK-NEXT: %[[A:.*]] = graph.fill 1.000000e+00 {dist.replica = 0 : i64} : tensor<f32>
// CHECK-NEXT: %[[B:.*]] = graph.fill 2.000000e+00 {dist.replica = 1 : i64} : tensor<f32>
// CHECK-NEXT: return %[[A]], %[[B]] : tensor<f32>, tensor<f32>
// GENERIC-LABEL: sym_name = "mesh"
// GENERIC: dist.mesh = #dist.mesh<devices_per_process = 2, processes = 4, device = "cpu">
func.func @mesh() -> (tensor<f32> {dist.replica = 0 : i64}, tensor<f32> {dist.replica = 1 : i64})
    attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = 4, device = "cpu">} {
  %a = graph.fill 1.0 {dist.replica = 0 : i64} : tensor<f32>
  %b = graph.fill 2.0 {dist.replica = 1 : i64} : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}

// CHECK-LABEL: func.func @cuda()
// CHECK-SAME: attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cuda">}
func.func @cuda() attributes {dist.mesh = #dist.mesh<devices_per_process = 1, processes = 1, device = "cuda">} {
  return
}

// Tests that the mesh round-trips as an attribute anywhere (not only on functions).
// CHECK-LABEL: func.func @mesh_as_value()
// CHECK-SAME: attributes {some.attr = [#dist.mesh<devices_per_process = 8, processes = 16, device = "cuda">]}
func.func @mesh_as_value() attributes {some.attr = [#dist.mesh<devices_per_process = 8, processes = 16, device = "cuda">]} {
  return
}

// Tests that shards of f32 and i32 batches of any rank round-trip, for each replica.
// CHECK-LABEL: func.func @shard(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x2x3xf32>, %[[L:[^:]*]]: tensor<8xi32>)
// CHECK-NEXT: %{{.*}} = dist.shard %[[X]] {replica = 0 : i64, shards = 4 : i64} : tensor<8x2x3xf32> -> tensor<2x2x3xf32>
// CHECK-NEXT: %{{.*}} = dist.shard %[[X]] {dist.replica = 1 : i64, replica = 3 : i64, shards = 4 : i64} : tensor<8x2x3xf32> -> tensor<2x2x3xf32>
// CHECK-NEXT: %{{.*}} = dist.shard %[[L]] {replica = 0 : i64, shards = 1 : i64} : tensor<8xi32> -> tensor<8xi32>
// CHECK-NEXT: %{{.*}} = dist.shard %[[L]] {replica = 7 : i64, shards = 8 : i64} : tensor<8xi32> -> tensor<1xi32>
// CHECK-NEXT: return
// GENERIC-LABEL: sym_name = "shard"
// GENERIC: "dist.shard"(%{{.*}}) <{replica = 0 : i64, shards = 4 : i64}> : (tensor<8x2x3xf32>) -> tensor<2x2x3xf32>
func.func @shard(%x: tensor<8x2x3xf32>, %l: tensor<8xi32>) {
  %0 = dist.shard %x {replica = 0 : i64, shards = 4 : i64} : tensor<8x2x3xf32> -> tensor<2x2x3xf32>
  %1 = dist.shard %x {replica = 3 : i64, shards = 4 : i64, dist.replica = 1 : i64} : tensor<8x2x3xf32> -> tensor<2x2x3xf32>
  %2 = dist.shard %l {replica = 0 : i64, shards = 1 : i64} : tensor<8xi32> -> tensor<8xi32>
  %3 = dist.shard %l {replica = 7 : i64, shards = 8 : i64} : tensor<8xi32> -> tensor<1xi32>
  return
}

// Tests that an allreduce round-trips: one replica's tensor alone, two replicas' groups of two
// tensors (results take the operands' types), with a bucket and the parameter names.
// CHECK-LABEL: func.func @allreduce(
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x3xf32>, %[[B0:[^:]*]]: tensor<3xf32>, %[[W1:[^:]*]]: tensor<4x3xf32>, %[[B1:[^:]*]]: tensor<3xf32>)
// CHECK-NEXT: %[[M:.*]] = dist.allreduce %[[W0]] {replicas = 1 : i64} : tensor<4x3xf32>
// CHECK-NEXT: %[[R:.*]]:4 = dist.allreduce %[[W0]], %[[B0]], %[[W1]], %[[B1]] {bucket = 3 : i64, replicas = 2 : i64, tensors = ["w", "b"]} : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT: return %[[M]], %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
// GENERIC-LABEL: sym_name = "allreduce"
// GENERIC: "dist.allreduce"(%{{.*}}) <{replicas = 1 : i64}> : (tensor<4x3xf32>) -> tensor<4x3xf32>
// GENERIC: "dist.allreduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{bucket = 3 : i64, replicas = 2 : i64, tensors = ["w", "b"]}> : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>)
func.func @allreduce(%w0: tensor<4x3xf32>, %b0: tensor<3xf32>, %w1: tensor<4x3xf32>, %b1: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  %m = dist.allreduce %w0 {replicas = 1 : i64} : tensor<4x3xf32>
  %r:4 = dist.allreduce %w0, %b0, %w1, %b1 {replicas = 2 : i64, bucket = 3 : i64, tensors = ["w", "b"]}
      : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
  return %m, %r#0, %r#1, %r#2, %r#3 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>
}

// Tests that a scheduled allreduce (start, other ops in between, wait) round-trips, with the
// !dist.pending that links the two halves, and that a start without tensors names is fine.
// CHECK-LABEL: func.func @scheduled(
// CHECK-SAME: %[[W0:[^:]*]]: tensor<4x3xf32>, %[[W1:[^:]*]]: tensor<4x3xf32>)
// CHECK-NEXT: %[[P:.*]] = dist.allreduce_start %[[W0]], %[[W1]] {bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]} : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT: %[[F:.*]] = graph.fill 0.000000e+00 : tensor<f32>
// CHECK-NEXT: %[[M:.*]]:2 = dist.allreduce_wait %[[P]] : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NEXT: %[[Q:.*]] = dist.allreduce_start %[[W0]] {bucket = 1 : i64, replicas = 1 : i64} : tensor<4x3xf32>
// CHECK-NEXT: %[[N:.*]] = dist.allreduce_wait %[[Q]] : tensor<4x3xf32>
// CHECK-NEXT: return %[[M]]#0, %[[M]]#1, %[[N]], %[[F]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>
// GENERIC-LABEL: sym_name = "scheduled"
// GENERIC: %[[P:.*]] = "dist.allreduce_start"(%{{.*}}, %{{.*}}) <{bucket = 0 : i64, replicas = 2 : i64, tensors = ["w"]}> : (tensor<4x3xf32>, tensor<4x3xf32>) -> !dist.pending
// GENERIC: "dist.allreduce_wait"(%[[P]]) : (!dist.pending) -> (tensor<4x3xf32>, tensor<4x3xf32>)
func.func @scheduled(%w0: tensor<4x3xf32>, %w1: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>) {
  %p = dist.allreduce_start %w0, %w1 {replicas = 2 : i64, bucket = 0 : i64, tensors = ["w"]} : tensor<4x3xf32>, tensor<4x3xf32>
  %f = graph.fill 0.0 : tensor<f32>
  %m:2 = dist.allreduce_wait %p : tensor<4x3xf32>, tensor<4x3xf32>
  %q = dist.allreduce_start %w0 {replicas = 1 : i64, bucket = 1 : i64} : tensor<4x3xf32>
  %n = dist.allreduce_wait %q : tensor<4x3xf32>
  return %m#0, %m#1, %n, %f : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>
}

// Tests that !dist.pending round-trips as a type of its own.
// CHECK-LABEL: func.func @pending(
// CHECK-SAME: %[[P:[^:]*]]: !dist.pending) -> !dist.pending
// CHECK-NEXT: return %[[P]] : !dist.pending
// GENERIC-LABEL: sym_name = "pending"
func.func @pending(%p: !dist.pending) -> !dist.pending {
  return %p : !dist.pending
}

// -----

// Tests that a mesh with gradient accumulation round-trips (accumulation printed when it is not
// 1), and a sum over micro-shards.
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu", accumulation = 4>
// CHECK: %{{.*}} = dist.accumulate %{{.*}} {count = 4 : i64} : tensor<3x2xf32>
func.func @accumulate(%g: tensor<3x2xf32>) -> tensor<3x2xf32> attributes {dist.mesh = #dist.mesh<devices_per_process = 2, processes = 1, device = "cpu", accumulation = 4>} {
  %a = dist.accumulate %g {count = 4 : i64} : tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}

// -----

// Tests that a parameter's broadcast from the replica that updated it round-trips.
// CHECK-LABEL: func.func @broadcast
// CHECK: %[[P:.*]] = dist.broadcast_start %{{.*}}, %{{.*}} {bucket = 3 : i64, root = 1 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: dist.broadcast_wait %[[P]]
// CHECK-NEXT: %[[Q:.*]] = dist.broadcast_start %{{.*}} {bucket = 4 : i64, process = 1 : i64, root = 0 : i64, tensors = ["v"]} : tensor<3xf32>
// CHECK-NEXT: dist.broadcast_wait %[[Q]]
// CHECK-NEXT: %[[R:.*]] = dist.broadcast_start %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {bucket = 5 : i64, root = 0 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>
// CHECK-NEXT: dist.broadcast_wait %[[R]]
func.func @broadcast(%w0: tensor<3xf32>, %w1: tensor<3xf32>, %v: tensor<3xf32>, %b0: tensor<2xf32>, %b1: tensor<2xf32>) {
  %p = dist.broadcast_start %w0, %w1 {bucket = 3 : i64, root = 1 : i64, tensors = ["w"]} : tensor<3xf32>, tensor<3xf32>
  dist.broadcast_wait %p
  %q = dist.broadcast_start %v {bucket = 4 : i64, process = 1 : i64, root = 0 : i64, tensors = ["v"]} : tensor<3xf32>
  dist.broadcast_wait %q
  %r = dist.broadcast_start %w0, %b0, %w1, %b1 {bucket = 5 : i64, root = 0 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>
  dist.broadcast_wait %r
  return
}
