// A tiny CNN whose `image` input is already NHWC (no reshape of the 784 pixels): dprun fills
// it the same way, as 784 floats per sample.
func.func @nhwc_cnn(%image: tensor<32x28x28x1xf32> {graph.input = "image"},
                    %label: tensor<32xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<>} {
  %w1 = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x8xf32>
  %b1 = graph.param "conv1.bias" {init = #graph.zeros} : tensor<8xf32>
  %c1 = graph.conv2d %image, %w1, %b1 {strides = [2, 2], activation = #graph.act<relu>}
      : (tensor<32x28x28x1xf32>, tensor<3x3x1x8xf32>, tensor<8xf32>) -> tensor<32x13x13x8xf32>
  %p1 = graph.max_pool2d %c1 {window = [2, 2], strides = [2, 2]} : tensor<32x13x13x8xf32> -> tensor<32x6x6x8xf32>
  %f = graph.flatten %p1 : tensor<32x6x6x8xf32> -> tensor<32x288xf32>
  %w2 = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<288x10xf32>
  %b2 = graph.param "dense1.bias" {init = #graph.zeros} : tensor<10xf32>
  %y = graph.dense %f, %w2, %b2 : (tensor<32x288xf32>, tensor<288x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  %loss = graph.softmax_cross_entropy %y, %label : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
