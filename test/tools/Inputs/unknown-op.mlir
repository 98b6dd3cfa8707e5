func.func @m(%x: tensor<4x8xf32> {graph.input = "image"}) -> tensor<4x8xf32> {
  %y = graph.conv3d %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
