// Attribute grammars for the model fuzzer: affine maps and integer sets (the parts of MLIR's
// text grammar that recurse once per sign or term, without brackets).
module {
  func.func @f() attributes {
      a = affine_map<(d0, d1)[s0] -> (d0 + d1 * 2 - s0, -d0, - -d1, d0 floordiv 4 + d1 mod 3)>,
      b = affine_map<(d0) -> (d0 + d0 + d0 + d0 + d0 + d0 + d0 + d0 + d0 + d0)>,
      c = affine_map<(d0) -> (-(-(-(-(d0)))))>,
      d = affine_map<(d0) -> (d0 * 3 * 5 * 7 ceildiv 2)>,
      e = affine_set<(d0)[s0] : (d0 - s0 >= 0, -d0 + 10 == 0)>} {
    return
  }
}
