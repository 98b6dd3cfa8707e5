// RUN: dp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the parameter-server attribute and ops
// (dialect/Dist/IR/DistDialect.cpp).

// Tests that the strategy needs a server.
// expected-error @+1 {{servers and workers must be at least 1, got 0 and 2}}
func.func @f() attributes {dist.parameter_server = #dist.parameter_server<servers = 0, workers = 2, staleness = -1, sync = false>} {
  return
}

// -----

// Tests that staleness is -1 or a number of steps.
// expected-error @+1 {{staleness must be -1 (unbounded) or at least 0, got -2}}
func.func @f() attributes {dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = -2, sync = false>} {
  return
}

// -----

// Tests that a synchronous strategy has staleness 0.
// expected-error @+1 {{a synchronous strategy has staleness 0, got 3}}
func.func @f() attributes {dist.parameter_server = #dist.parameter_server<servers = 1, workers = 2, staleness = 3, sync = true>} {
  return
}

// -----

// Tests that a push names each gradient.
func.func @f(%g: tensor<3xf32>) {
  // expected-error @+1 {{'dist.push' op needs one name in tensors per gradient, got 2 for 1}}
  dist.push %g {bucket = 0 : i64, server = 0 : i64, tensors = ["a", "b"]} : tensor<3xf32>
  return
}

// -----

// Tests that a bucket index is not negative.
func.func @f(%g: tensor<3xf32>) {
  // expected-error @+1 {{'dist.push' op bucket must be non-negative}}
  dist.push %g {bucket = -1 : i64, server = 0 : i64, tensors = ["a"]} : tensor<3xf32>
  return
}

// -----

// Tests that a server index is not negative.
func.func @f(%g: tensor<3xf32>) {
  // expected-error @+1 {{'dist.push' op server must be non-negative}}
  dist.push %g {bucket = 0 : i64, server = -1 : i64, tensors = ["a"]} : tensor<3xf32>
  return
}

// -----

// Tests that a pull writes parameters.
func.func @f(%g: tensor<3xf32>) {
  // expected-error @+1 {{'dist.pull' op operand 0 must be a graph.param}}
  dist.pull %g {bucket = 0 : i64, server = 0 : i64, tensors = ["a"]} : tensor<3xf32>
  return
}

// -----

// Tests that a pull writes the parameters it names.
func.func @f() {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'dist.pull' op operand 0 is parameter 'w' but tensors names 'v'}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = ["v"]} : tensor<3xf32>
  return
}

// -----

// Tests that a pull needs a name per parameter.
func.func @f() {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'dist.pull' op needs one name in tensors per parameter, got 0 for 1}}
  dist.pull %w {bucket = 0 : i64, server = 0 : i64, tensors = []} : tensor<3xf32>
  return
}

// -----

// Tests that a receive names each gradient.
func.func @f() {
  // expected-error @+1 {{'dist.receive' op needs one name in tensors per gradient, got 1 for 2}}
  %g:2 = dist.receive {bucket = 0 : i64, tensors = ["a"]} : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that a reply sends the parameters it names.
func.func @f() {
  %w = graph.param "w" {init = #graph.zeros} : tensor<3xf32>
  // expected-error @+1 {{'dist.reply' op operand 0 is parameter 'w' but tensors names 'x'}}
  dist.reply %w {bucket = 0 : i64, tensors = ["x"]} : tensor<3xf32>
  return
}

// -----

// Tests that a reply sends parameters.
func.func @f(%g: tensor<3xf32>) {
  // expected-error @+1 {{'dist.reply' op operand 0 must be a graph.param}}
  dist.reply %g {bucket = 0 : i64, tensors = ["a"]} : tensor<3xf32>
  return
}
