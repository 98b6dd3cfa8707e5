// Initial values in the text IR's resource section, as an importer writes large weights
// (hex: a 4-byte alignment, then the f32 values little-endian): 1 to 10.
func.func @data_init_resource(%image: tensor<8x784xf32> {graph.input = "image"},
                              %label: tensor<8xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.sgd<lr = 1.0e-30>} {
  %w = graph.param "dense.kernel" {init = #graph.glorot_uniform} : tensor<784x10xf32>
  %b = graph.param "dense.bias" {init = dense_resource<bias_values> : tensor<10xf32>} : tensor<10xf32>
  %logits = graph.dense %image, %w, %b
      : (tensor<8x784xf32>, tensor<784x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %loss = graph.softmax_cross_entropy %logits, %label
      : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

{-#
  dialect_resources: {
    builtin: {
      bias_values: "0x040000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041"
    }
  }
#-}
