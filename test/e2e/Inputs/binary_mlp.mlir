// Two yes/no outputs per Fashion-MNIST image (test/e2e/binary_targets.py: footwear, upper-body
// garment) from a 784-64-2 ReLU MLP, trained with binary cross-entropy on the logits.
func.func @binary_mlp(%image: tensor<100x784xf32> {graph.input = "image"},
                      %target: tensor<100x2xf32> {graph.input = "target"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.001>} {
  %w1 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<784x64xf32>
  %b1 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<64xf32>
  %h = graph.dense %image, %w1, %b1 {activation = #graph.act<relu>}
      : (tensor<100x784xf32>, tensor<784x64xf32>, tensor<64xf32>) -> tensor<100x64xf32>
  %w2 = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<64x2xf32>
  %b2 = graph.param "dense2.bias" {init = #graph.zeros} : tensor<2xf32>
  %logits = graph.dense %h, %w2, %b2
      : (tensor<100x64xf32>, tensor<64x2xf32>, tensor<2xf32>) -> tensor<100x2xf32>
  %loss = graph.sigmoid_cross_entropy %logits, %target
      : (tensor<100x2xf32>, tensor<100x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
