// A small MLP with both kinds of concatenation and layer normalisation, for the data-parallel
// equivalence of the new ops: two branches joined along the features, layer-normalised, two
// heads stacked along the batch with the labels stacked alike.
func.func @concat_ln(%x: tensor<16x784xf32> {graph.input = "image"}, %l: tensor<16xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<lr = 0.05, momentum = 0.9>} {
  %w1 = graph.param "a.kernel" {init = #graph.glorot_uniform} : tensor<784x12xf32>
  %b1 = graph.param "a.bias" {init = #graph.zeros} : tensor<12xf32>
  %w2 = graph.param "b.kernel" {init = #graph.glorot_uniform} : tensor<784x4xf32>
  %a = graph.dense %x, %w1, %b1 {activation = #graph.act<relu>} : (tensor<16x784xf32>, tensor<784x12xf32>, tensor<12xf32>) -> tensor<16x12xf32>
  %b = graph.dense %x, %w2 {activation = #graph.act<tanh>} : (tensor<16x784xf32>, tensor<784x4xf32>) -> tensor<16x4xf32>
  %h = graph.concat %a, %b {axis = 1 : i64} : (tensor<16x12xf32>, tensor<16x4xf32>) -> tensor<16x16xf32>
  %g = graph.param "ln.gamma" {init = #graph.ones} : tensor<16xf32>
  %be = graph.param "ln.beta" {init = #graph.zeros} : tensor<16xf32>
  %n = graph.layer_norm %h, %g, %be : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %w3 = graph.param "head1.kernel" {init = #graph.glorot_uniform} : tensor<16x10xf32>
  %w4 = graph.param "head2.kernel" {init = #graph.glorot_uniform} : tensor<16x10xf32>
  %z1 = graph.dense %n, %w3 : (tensor<16x16xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
  %z2 = graph.dense %h, %w4 : (tensor<16x16xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
  %z = graph.concat %z1, %z2 {axis = 0 : i64} : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<32x10xf32>
  %ll = graph.concat %l, %l {axis = 0 : i64} : (tensor<16xi32>, tensor<16xi32>) -> tensor<32xi32>
  %loss = graph.softmax_cross_entropy %z, %ll : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
