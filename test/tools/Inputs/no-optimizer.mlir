func.func @m(%x: tensor<4x8xf32> {graph.input = "image"}, %l: tensor<4xi32> {graph.input = "label"}) -> tensor<f32> {
  %w = graph.param "w" {init = #graph.glorot_uniform} : tensor<8x2xf32>
  %y = graph.dense %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = graph.softmax_cross_entropy %y, %l : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
