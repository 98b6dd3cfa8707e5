// A small MLP with GELU hidden layers, for the data-parallel equivalence of pointwise ops.
func.func @gelu_mlp(%x: tensor<16x784xf32> {graph.input = "image"}, %l: tensor<16xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.momentum<lr = 0.05, momentum = 0.9>} {
  %w1 = graph.param "h1.kernel" {init = #graph.glorot_uniform} : tensor<784x32xf32>
  %b1 = graph.param "h1.bias" {init = #graph.zeros} : tensor<32xf32>
  %z1 = graph.dense %x, %w1, %b1 : (tensor<16x784xf32>, tensor<784x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %h1 = graph.gelu %z1 : tensor<16x32xf32>
  %w2 = graph.param "h2.kernel" {init = #graph.glorot_uniform} : tensor<32x16xf32>
  %b2 = graph.param "h2.bias" {init = #graph.zeros} : tensor<16xf32>
  %z2 = graph.dense %h1, %w2, %b2 : (tensor<16x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %h2 = graph.gelu %z2 : tensor<16x16xf32>
  %w3 = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<16x10xf32>
  %y = graph.dense %h2, %w3 : (tensor<16x16xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<16x10xf32>, tensor<16xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
