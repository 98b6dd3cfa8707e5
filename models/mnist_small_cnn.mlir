// mnist_small_cnn: the small convolutional network of seed 003. 121,930 parameters.
//
// conv 3x3x32 relu -> max-pool 2x2 -> conv 3x3x64 relu -> max-pool 2x2 -> flatten (1600) ->
// dense 64 relu -> dense 10; Adam (Keras defaults), sparse categorical cross-entropy, batch 64.
// Images are NHWC: the 784 pixels of each sample are viewed as 28x28x1. The softmax of the
// output layer is folded into the loss (softmax cross-entropy on the logits).
func.func @mnist_small_cnn(%image: tensor<64x784xf32> {graph.input = "image"},
                     %label: tensor<64xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 1.0e-03, beta1 = 9.0e-01, beta2 = 9.990e-01, epsilon = 1.0e-07>} {
  %x = graph.reshape %image : tensor<64x784xf32> -> tensor<64x28x28x1xf32>
  %conv1_w = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x32xf32>
  %conv1_b = graph.param "conv1.bias" {init = #graph.zeros} : tensor<32xf32>
  %conv1 = graph.conv2d %x, %conv1_w, %conv1_b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<64x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<32xf32>) -> tensor<64x26x26x32xf32>
  %pool1 = graph.max_pool2d %conv1 {window = [2, 2], strides = [2, 2]}
      : tensor<64x26x26x32xf32> -> tensor<64x13x13x32xf32>
  %conv2_w = graph.param "conv2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x32x64xf32>
  %conv2_b = graph.param "conv2.bias" {init = #graph.zeros} : tensor<64xf32>
  %conv2 = graph.conv2d %pool1, %conv2_w, %conv2_b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<64x13x13x32xf32>, tensor<3x3x32x64xf32>, tensor<64xf32>) -> tensor<64x11x11x64xf32>
  %pool2 = graph.max_pool2d %conv2 {window = [2, 2], strides = [2, 2]}
      : tensor<64x11x11x64xf32> -> tensor<64x5x5x64xf32>
  %flat = graph.flatten %pool2 : tensor<64x5x5x64xf32> -> tensor<64x1600xf32>
  %dense1_w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<1600x64xf32>
  %dense1_b = graph.param "dense1.bias" {init = #graph.zeros} : tensor<64xf32>
  %dense1 = graph.dense %flat, %dense1_w, %dense1_b {activation = #graph.act<relu>}
      : (tensor<64x1600xf32>, tensor<1600x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %dense2_w = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<64x10xf32>
  %dense2_b = graph.param "dense2.bias" {init = #graph.zeros} : tensor<10xf32>
  %logits = graph.dense %dense1, %dense2_w, %dense2_b
      : (tensor<64x64xf32>, tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label
      : (tensor<64x10xf32>, tensor<64xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
