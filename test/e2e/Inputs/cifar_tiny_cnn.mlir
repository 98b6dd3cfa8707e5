// A tiny CNN on 16x16x3 NHWC images for the CIFAR-10 end-to-end test: dprun resizes the 32x32
// CIFAR images to 16x16 at load.
func.func @cifar_tiny_cnn(%image: tensor<8x16x16x3xf32> {graph.input = "image"},
                          %label: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 0.05>} {
  %w = graph.param "conv.kernel" {init = #graph.glorot_uniform} : tensor<3x3x3x4xf32>
  %b = graph.param "conv.bias" {init = #graph.zeros} : tensor<4xf32>
  %c = graph.conv2d %image, %w, %b {strides = [1, 1], padding = "valid", activation = #graph.act<relu>}
      : (tensor<8x16x16x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<8x14x14x4xf32>
  %p = graph.max_pool2d %c {window = [2, 2], strides = [2, 2]} : tensor<8x14x14x4xf32> -> tensor<8x7x7x4xf32>
  %f = graph.flatten %p : tensor<8x7x7x4xf32> -> tensor<8x196xf32>
  %dw = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<196x10xf32>
  %db = graph.param "dense.bias" {init = #graph.zeros} : tensor<10xf32>
  %logits = graph.dense %f, %dw, %db : (tensor<8x196xf32>, tensor<196x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
