// mnist_lstm: the stacked LSTM of seed 000 on MNIST / Fashion-MNIST. 1,476,618 parameters.
//
// Each 28x28 image is a sequence of 28 time steps of 28 features. LSTM 256 (all steps) ->
// dropout 0.2 -> LSTM 256 (all steps) -> dropout 0.2 -> LSTM 256 (last step) -> dense 256 relu
// -> dropout 0.2 -> dense 256 relu -> dropout 0.2 -> dense 10; SGD (Keras default lr 0.01),
// sparse categorical cross-entropy, batch 128. LSTMs as Keras builds them: gates i, f, c, o,
// glorot-uniform kernel, orthogonal recurrent kernel, zero bias but ones for the forget gate.
// The seed's `LSTM(..., dropout=0.2)` drops the layer's inputs with one mask for all time
// steps; here a graph.dropout before the layer draws the mask per element and time step. The
// softmax of the output layer is folded into the loss.
func.func @mnist_lstm(%image: tensor<128x784xf32> {graph.input = "image"},
                      %label: tensor<128xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 1.0e-02>} {
  %x = graph.reshape %image : tensor<128x784xf32> -> tensor<128x28x28xf32>
  %lstm1_w = graph.param "lstm1.kernel" {init = #graph.glorot_uniform} : tensor<28x1024xf32>
  %lstm1_r = graph.param "lstm1.recurrent_kernel" {init = #graph.orthogonal} : tensor<256x1024xf32>
  %lstm1_b = graph.param "lstm1.bias" {init = #graph.unit_forget_bias} : tensor<1024xf32>
  %lstm1 = graph.lstm %x, %lstm1_w, %lstm1_r, %lstm1_b {return_sequences}
      : (tensor<128x28x28xf32>, tensor<28x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>)
      -> tensor<128x28x256xf32>
  %drop1 = graph.dropout %lstm1 {rate = 2.0e-01} : tensor<128x28x256xf32>
  %lstm2_w = graph.param "lstm2.kernel" {init = #graph.glorot_uniform} : tensor<256x1024xf32>
  %lstm2_r = graph.param "lstm2.recurrent_kernel" {init = #graph.orthogonal} : tensor<256x1024xf32>
  %lstm2_b = graph.param "lstm2.bias" {init = #graph.unit_forget_bias} : tensor<1024xf32>
  %lstm2 = graph.lstm %drop1, %lstm2_w, %lstm2_r, %lstm2_b {return_sequences}
      : (tensor<128x28x256xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>)
      -> tensor<128x28x256xf32>
  %drop2 = graph.dropout %lstm2 {rate = 2.0e-01} : tensor<128x28x256xf32>
  %lstm3_w = graph.param "lstm3.kernel" {init = #graph.glorot_uniform} : tensor<256x1024xf32>
  %lstm3_r = graph.param "lstm3.recurrent_kernel" {init = #graph.orthogonal} : tensor<256x1024xf32>
  %lstm3_b = graph.param "lstm3.bias" {init = #graph.unit_forget_bias} : tensor<1024xf32>
  %lstm3 = graph.lstm %drop2, %lstm3_w, %lstm3_r, %lstm3_b
      : (tensor<128x28x256xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<1024xf32>)
      -> tensor<128x256xf32>
  %dense1_w = graph.param "dense1.kernel" {init = #graph.glorot_uniform} : tensor<256x256xf32>
  %dense1_b = graph.param "dense1.bias" {init = #graph.zeros} : tensor<256xf32>
  %dense1 = graph.dense %lstm3, %dense1_w, %dense1_b {activation = #graph.act<relu>}
      : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %drop3 = graph.dropout %dense1 {rate = 2.0e-01} : tensor<128x256xf32>
  %dense2_w = graph.param "dense2.kernel" {init = #graph.glorot_uniform} : tensor<256x256xf32>
  %dense2_b = graph.param "dense2.bias" {init = #graph.zeros} : tensor<256xf32>
  %dense2 = graph.dense %drop3, %dense2_w, %dense2_b {activation = #graph.act<relu>}
      : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %drop4 = graph.dropout %dense2 {rate = 2.0e-01} : tensor<128x256xf32>
  %dense3_w = graph.param "dense3.kernel" {init = #graph.glorot_uniform} : tensor<256x10xf32>
  %dense3_b = graph.param "dense3.bias" {init = #graph.zeros} : tensor<10xf32>
  %logits = graph.dense %drop4, %dense3_w, %dense3_b
      : (tensor<128x256xf32>, tensor<256x10xf32>, tensor<10xf32>) -> tensor<128x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label
      : (tensor<128x10xf32>, tensor<128xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
