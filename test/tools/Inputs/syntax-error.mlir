func.func @m(%x: tensor<4x8xf32> {graph.input = "image"}) -> tensor<f32> {
  %w = graph.param "w" {init = #graph.zeros} : tensor<8x2xf32>
  %y = graph.dense %x %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
}
