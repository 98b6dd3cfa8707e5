// Attribute grammars for the model fuzzer: dense elements, arrays, dictionaries, strides.
module {
  func.func @f() attributes {
      a = dense<[[1.0, -2.5e-3], [0x7FC00000, 4.0]]> : tensor<2x2xf32>,
      b = [1, [2, [3, [4]]], "s", unit, -0x10 : i8],
      c = {x = {y = {z = 1 : i64}}},
      d = array<i64: 1, -2, 3>,
      e = strided<[?, 1], offset: ?>,
      f = dense_resource<blob> : tensor<2xi32>,
      g = #graph.adam<>} {
    return
  }
}
