// A small MLP with batch normalisation, for the data-parallel equivalence of batch statistics.
func.func @bnmlp(%x: tensor<8x32x32x3xf32> {graph.input = "image"}, %l: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %f = graph.flatten %x : tensor<8x32x32x3xf32> -> tensor<8x3072xf32>
  %w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<3072x16xf32>
  %h = graph.dense %f, %w : (tensor<8x3072xf32>, tensor<3072x16xf32>) -> tensor<8x16xf32>
  %g = graph.param "bn.gamma" {init = #graph.ones} : tensor<16xf32>
  %b = graph.param "bn.beta" {init = #graph.zeros} : tensor<16xf32>
  %m = graph.param "bn.moving_mean" {init = #graph.zeros, trainable = false} : tensor<16xf32>
  %v = graph.param "bn.moving_variance" {init = #graph.ones, trainable = false} : tensor<16xf32>
  %y = graph.batch_norm %h, %g, %b, %m, %v : (tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %r = graph.relu %y : tensor<8x16xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<16x10xf32>
  %o = graph.dense %r, %w2 : (tensor<8x16xf32>, tensor<16x10xf32>) -> tensor<8x10xf32>
  %loss = graph.softmax_cross_entropy %o, %l : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
