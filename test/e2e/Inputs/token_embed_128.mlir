// Each pixel's byte a token id looked up in a table of 128 rows: Fashion-MNIST's bytes reach
// 255, which dprun refuses (onnx-embedding.test).
func.func @token_embed_128(%ids: tensor<32x28x28xi32> {graph.input = "tokens"}, %l: tensor<32xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.1>} {
  %t = graph.param "embed" {init = #graph.uniform<low = -0.1, high = 0.1>} : tensor<128x2xf32>
  %e = graph.gather %t, %ids : (tensor<128x2xf32>, tensor<32x28x28xi32>) -> tensor<32x28x28x2xf32>
  %f = graph.reshape %e : tensor<32x28x28x2xf32> -> tensor<32x1568xf32>
  %w = graph.param "out.kernel" {init = #graph.glorot_uniform} : tensor<1568x10xf32>
  %z = graph.dense %f, %w : (tensor<32x1568xf32>, tensor<1568x10xf32>) -> tensor<32x10xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
