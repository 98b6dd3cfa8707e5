// A model whose parameters start from given values (as an imported model's weights do): the
// kernel all 0.25 (a splat), the bias ten distinct values. Plain SGD at lr 1e-30: one step
// leaves every value as it was, in f32.
func.func @data_init(%image: tensor<8x784xf32> {graph.input = "image"},
                     %label: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 1.0e-30>} {
  %w = graph.param "dense.kernel" {init = dense<0.25> : tensor<784x10xf32>} : tensor<784x10xf32>
  %b = graph.param "dense.bias" {init = dense<[0.5, -1.5, 2.25, -3.0, 4.5, -0.125, 6.0, -7.5, 8.0, -9.25]> : tensor<10xf32>} : tensor<10xf32>
  %logits = graph.dense %image, %w, %b
      : (tensor<8x784xf32>, tensor<784x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label
      : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
