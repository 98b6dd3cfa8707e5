// mnist_cnn: the three-convolution network of seed 001. 690,590 parameters.
//
// conv 3x3x32 relu -> max-pool 2x2 -> conv 3x3x128 relu -> max-pool 2x2 -> conv 3x3x256 relu
// -> max-pool 2x2 -> flatten (256) -> dropout 0.5 -> dense 1000 relu -> dense 100 relu ->
// dense 10; Adam (Keras defaults), sparse categorical cross-entropy, batch 128. Images are
// NHWC: the 784 pixels of each sample are viewed as 28x28x1. The softmax of the output layer
// is folded into the loss (softmax cross-entropy on the logits).
func.func @mnist_cnn(%image: tensor<128x784xf32> {graph.input = "image"},
                     %label: tensor<128xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 1.0e-03, beta1 = 9.0e-01, beta2 = 9.990e-01, epsilon = 1.0e-07>} {
  %x = graph.reshape %image : tensor<128x784xf32> -> tensor<128x28x28x1xf32>
  %conv1_w = graph.param "conv1.kernel" {init = #graph.glorot_uniform} : tensor<3x3x1x32xf32>
  %conv1_b = graph.param "conv1.bias" {init = #graph.zeros} : tensor<32xf32>
  %conv1 = graph.conv2d %x, %conv1_w, %conv1_b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<128x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<32xf32>) -> tensor<128x26x26x32xf32>
  %pool1 = graph.max_pool2d %conv1 {window = [2, 2], strides = [2, 2]}
      : tensor<128x26x26x32xf32> -> tensor<128x13x13x32xf32>
  %conv2_w = graph.param "conv2.kernel" {init = #graph.glorot_uniform} : tensor<3x3x32x128xf32>
  %conv2_b = graph.param "conv2.bias" {init = #graph.zeros} : tensor<128xf32>
  %conv2 = graph.conv2d %pool1, %conv2_w, %conv2_b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<128x13x13x32xf32>, tensor<3x3x32x128xf32>, tensor<128xf32>) -> tensor<128x11x11x128xf32>
  %pool2 = graph.max_pool2d %conv2 {window = [2, 2], strides = [2, 2]}
      : tensor<128x11x11x128xf32> -> tensor<128x5x5x128xf32>
  %conv3_w = graph.param "conv3.kernel" {init = #graph.glorot_uniform} : tensor<3x3x128x256xf32>
  %conv3_b = graph.param "conv3.bias" {init = #graph.zeros} : tensor<256xf32>
  %conv3 = graph.conv2d %pool2, %conv3_w, %conv3_b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<128x5x5x128xf32>, tensor<3x3x128x256xf32>, tensor<256xf32>) -> tensor<128x3x3x256xf32>
  %pool3 = graph.max_pool2d %conv3 {window = [2, 2], strides = [2, 2]}
      : tensor<128x3x3x256xf32> -> tensor<128x1x1x256xf32>
  %flat = graph.flatten %pool3 : tensor<128x1x1x256xf32> -> tensor<128x256xf32>
  %drop = graph.dropout %flat {rate = 5.0e-01} : tensor<128x256xf32>
  %dense1_w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<256x1000xf32>
  %dense1_b = graph.param "dense1.bias" {init = #graph.zeros} : tensor<1000xf32>
  %dense1 = graph.dense %drop, %dense1_w, %dense1_b {activation = #graph.act<relu>}
      : (tensor<128x256xf32>, tensor<256x1000xf32>, tensor<1000xf32>) -> tensor<128x1000xf32>
  %dense2_w = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<1000x100xf32>
  %dense2_b = graph.param "dense2.bias" {init = #graph.zeros} : tensor<100xf32>
  %dense2 = graph.dense %dense1, %dense2_w, %dense2_b {activation = #graph.act<relu>}
      : (tensor<128x1000xf32>, tensor<1000x100xf32>, tensor<100xf32>) -> tensor<128x100xf32>
  %dense3_w = graph.param "dense3.kernel" {init = #graph.glorot_uniform} : tensor<100x10xf32>
  %dense3_b = graph.param "dense3.bias" {init = #graph.zeros} : tensor<10xf32>
  %logits = graph.dense %dense2, %dense3_w, %dense3_b
      : (tensor<128x100xf32>, tensor<100x10xf32>, tensor<10xf32>) -> tensor<128x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label
      : (tensor<128x10xf32>, tensor<128xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
