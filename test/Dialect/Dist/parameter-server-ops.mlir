// RUN: dp-opt %s | dp-opt | FileCheck %s
// RUN: dp-opt %s --mlir-print-op-generic | dp-opt | FileCheck %s

// Round trip of the parameter-server strategy attribute and ops, in the custom form and
// through the generic form.
// CHECK-LABEL: func.func @worker(
// CHECK-SAME: attributes {dist.parameter_server = #dist.parameter_server<servers = 2, workers = 3, staleness = 4, sync = false>}
// CHECK-NEXT: %[[W:.*]] = graph.param "w" {dist.server = 1 : i64, init = #graph.zeros} : tensor<3xf32>
// CHECK-NEXT: dist.push %arg0 {bucket = 0 : i64, server = 1 : i64, tensors = ["w"]} : tensor<3xf32>
// CHECK-NEXT: dist.pull %[[W]] {bucket = 0 : i64, server = 1 : i64, tensors = ["w"]} : tensor<3xf32>
func.func @worker(%g: tensor<3xf32>) attributes {dist.parameter_server = #dist.parameter_server<servers = 2, workers = 3, staleness = 4, sync = false>} {
  %w = graph.param "w" {init = #graph.zeros, dist.server = 1 : i64} : tensor<3xf32>
  dist.push %g {bucket = 0 : i64, server = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  dist.pull %w {bucket = 0 : i64, server = 1 : i64, tensors = ["w"]} : tensor<3xf32>
  return
}

// CHECK-LABEL: func.func @server(
// CHECK-SAME: attributes {dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = 0, sync = true>, dist.server = 0 : i64}
// CHECK-NEXT: %[[G:.*]]:2 = dist.receive {bucket = 3 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>
// CHECK-NEXT: %[[W:.*]] = graph.param "w"
// CHECK-NEXT: %[[B:.*]] = graph.param "b"
// CHECK-NEXT: graph.sgd_update %[[W]], %[[G]]#0
// CHECK-NEXT: graph.sgd_update %[[B]], %[[G]]#1
// CHECK-NEXT: dist.reply %[[W]], %[[B]] {bucket = 3 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>
func.func @server() attributes {dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = 0, sync = true>, dist.server = 0 : i64} {
  %g:2 = dist.receive {bucket = 3 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  %b = graph.param "b" {init = #graph.zeros} : tensor<2xf32>
  graph.sgd_update %w, %g#0 {lr = 0.1 : f64} : tensor<3xf32>
  graph.sgd_update %b, %g#1 {lr = 0.1 : f64} : tensor<2xf32>
  dist.reply %w, %b {bucket = 3 : i64, tensors = ["w", "b"]} : tensor<3xf32>, tensor<2xf32>
  return
}
