// RUN: dp-opt %s -split-input-file -graph-derive-steps -graph-autodiff -dist-replicate="devices-per-process=2 processes=2" -dist-split-batch -verify-diagnostics

// Tests that a global batch that S = R x P replicas cannot share equally is rejected, naming
// the input and the mesh (at the model function, which the steps come from).
// expected-error @+1 {{the global batch of input 'x' (6 rows) cannot be split into 4 equal shards (2 per process x 2 processes)}}
func.func @odd(%x: tensor<6x6xf32> {graph.input = "x"}, %l: tensor<6xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %y = graph.dense %x, %w : (tensor<6x6xf32>, tensor<6x3xf32>) -> tensor<6x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<6x3xf32>, tensor<6xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that every input is checked, not only the first (here the labels).
// expected-error @+1 {{the global batch of input 'label' (2 rows) cannot be split into 4 equal shards (2 per process x 2 processes)}}
func.func @labels(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<2xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %r = graph.reshape %x : tensor<8x6xf32> -> tensor<2x24xf32>
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<24x3xf32>
  %y = graph.dense %r, %w : (tensor<2x24xf32>, tensor<24x3xf32>) -> tensor<2x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that an op reading the batch without a rule for it is rejected: x * x^T contracts the
// features and pairs every row with every other row, which no shard can compute alone.
func.func @gram(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  // expected-error @+1 {{'graph.matmul' op reads the batch but has no rule to split it across replicas}}
  %g = graph.matmul %x, %x {transpose_rhs} : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x8xf32>
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<8x3xf32>
  %y = graph.dense %g, %w : (tensor<8x8xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a row-wise op whose result cannot keep the batch in its rows is rejected: the
// 8 x 6 batch reshaped to 3 x 16 has rows that straddle shards.
func.func @straddle(%x: tensor<8x6xf32> {graph.input = "x"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  // expected-error @+1 {{'graph.reshape' op result 'tensor<3x16xf32>' should carry the batch in its rows}}
  %r = graph.reshape %x : tensor<8x6xf32> -> tensor<3x16xf32>
  %b = graph.reshape %r : tensor<3x16xf32> -> tensor<8x6xf32>
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<6x3xf32>
  %y = graph.dense %b, %w : (tensor<8x6xf32>, tensor<6x3xf32>) -> tensor<8x3xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<8x3xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a concatenation of a batched value and a whole one has no split: a replica holds
// only its rows of the first.
func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.zeros} : tensor<4x3xf32>
  // expected-error @+1 {{'graph.concat' op reads the batch but has no rule to split it across replicas}}
  %y = graph.concat %x, %w {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x6xf32>
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<6x2xf32>
  %z = graph.dense %y, %k : (tensor<4x6xf32>, tensor<6x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a split along the batch axis of one batch (not a stack of pieces, as a concat's
// gradient is) has no split across replicas: each replica would cut its own shard at the
// global sizes and hand rows to the wrong piece.
func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  // expected-error @+1 {{'graph.split' op reads the batch but has no rule to split it across replicas}}
  %p:2 = graph.split %x {axis = 0 : i64} : (tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %y = graph.concat %p#1, %p#0 {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<3x2xf32>
  %z = graph.dense %y, %k : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a transpose moving the batch axis has no split: a replica's rows would become
// columns of every sample.
func.func @m(%x: tensor<4x4xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  // expected-error @+1 {{'graph.transpose' op reads the batch but has no rule to split it across replicas}}
  %y = graph.transpose %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %z = graph.dense %y, %k : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a batch_matmul of a batch-carrying value by a parameter has no split: a replica
// would multiply its rows by the whole parameter's leading axis.
func.func @m(%x: tensor<4x2x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<4x3x2xf32>
  // expected-error @+1 {{'graph.batch_matmul' op reads the batch but has no rule to split it across replicas}}
  %y = graph.batch_matmul %x, %w : (tensor<4x2x3xf32>, tensor<4x3x2xf32>) -> tensor<4x2x2xf32>
  %f = graph.reshape %y : tensor<4x2x2xf32> -> tensor<4x4xf32>
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<4x2xf32>
  %z = graph.dense %f, %k : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a bias carrying the batch has no split: each replica would add its rows to its
// own samples only where they happen to align.
func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<3x12xf32>
  %h = graph.dense %x, %k : (tensor<4x3xf32>, tensor<3x12xf32>) -> tensor<4x12xf32>
  %r = graph.reshape %h : tensor<4x12xf32> -> tensor<4x4x3xf32>
  %w = graph.reshape %x : tensor<4x3xf32> -> tensor<4x3xf32>
  // expected-error @+1 {{'graph.bias_add' op reads the batch but has no rule to split it across replicas}}
  %y = graph.bias_add %r, %w : (tensor<4x4x3xf32>, tensor<4x3xf32>) -> tensor<4x4x3xf32>
  %f = graph.reshape %y : tensor<4x4x3xf32> -> tensor<4x12xf32>
  %k2 = graph.param "k2" {init = #graph.glorot_uniform} : tensor<12x2xf32>
  %z = graph.dense %f, %k2 : (tensor<4x12xf32>, tensor<12x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Tests that a product by a tensor of the batch's size that does not carry the batch (a
// parameter of N rows) has no split: each replica would scale its rows by the first rows.
func.func @m(%x: tensor<4x3xf32> {graph.input = "x"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %k = graph.param "k" {init = #graph.glorot_uniform} : tensor<3x2xf32>
  %h = graph.dense %x, %k : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %s = graph.param "s" {init = #graph.ones} : tensor<4x1xf32>
  // expected-error @+1 {{'graph.mul' op reads the batch but has no rule to split it across replicas}}
  %y = graph.mul %h, %s : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
