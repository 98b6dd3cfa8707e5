// A vision transformer of one block on Fashion-MNIST: 4x4 patches (a reshape, a transpose and a
// reshape) as 49 tokens of width 32 with a position embedding (bias_add), layer norms, two
// attention heads (dense products on the tokens' rows, transposes to [N, heads, T, d],
// batch_matmul with alpha, softmax over the last axis), residual adds, a GELU MLP, the mean over
// the tokens (global_avg_pool2d of [N, T, 1, D]) and a dense head. 10,954 parameters. The keys
// have no bias: it adds the same q . b to each of a query's scores, which softmax removes, so its
// gradient is rounding noise that Adam would magnify.
func.func @vit_tiny(%x: tensor<16x784xf32> {graph.input = "image"}, %l: tensor<16xi32> {graph.input = "label"}) -> tensor<f32>
    attributes {graph.optimizer = #graph.adam<lr = 0.002>} {
  %r = graph.reshape %x : tensor<16x784xf32> -> tensor<16x7x4x7x4xf32>
  %pt = graph.transpose %r [0, 1, 3, 2, 4] : tensor<16x7x4x7x4xf32> -> tensor<16x7x7x4x4xf32>
  %rows = graph.reshape %pt : tensor<16x7x7x4x4xf32> -> tensor<784x16xf32>
  %patch_w = graph.param "patch.kernel" {init = #graph.glorot_uniform} : tensor<16x32xf32>
  %patch_b = graph.param "patch.bias" {init = #graph.zeros} : tensor<32xf32>
  %e = graph.dense %rows, %patch_w, %patch_b : (tensor<784x16xf32>, tensor<16x32xf32>, tensor<32xf32>) -> tensor<784x32xf32>
  %e3 = graph.reshape %e : tensor<784x32xf32> -> tensor<16x49x32xf32>
  %pos = graph.param "pos" {init = #graph.uniform<low = -0.02, high = 0.02>} : tensor<49x32xf32>
  %h0 = graph.bias_add %e3, %pos : (tensor<16x49x32xf32>, tensor<49x32xf32>) -> tensor<16x49x32xf32>
  %ln1_g = graph.param "ln1.gamma" {init = #graph.ones} : tensor<32xf32>
  %ln1_b = graph.param "ln1.beta" {init = #graph.zeros} : tensor<32xf32>
  %n1 = graph.layer_norm %h0, %ln1_g, %ln1_b {epsilon = 1.0e-05} : (tensor<16x49x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x49x32xf32>
  %n1r = graph.reshape %n1 : tensor<16x49x32xf32> -> tensor<784x32xf32>
  %q_w = graph.param "q.kernel" {init = #graph.glorot_uniform} : tensor<32x32xf32>
  %q_b = graph.param "q.bias" {init = #graph.zeros} : tensor<32xf32>
  %qr = graph.dense %n1r, %q_w, %q_b : (tensor<784x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<784x32xf32>
  %q4 = graph.reshape %qr : tensor<784x32xf32> -> tensor<16x49x2x16xf32>
  %qh = graph.transpose %q4 [0, 2, 1, 3] : tensor<16x49x2x16xf32> -> tensor<16x2x49x16xf32>
  %k_w = graph.param "k.kernel" {init = #graph.glorot_uniform} : tensor<32x32xf32>
  %kr = graph.dense %n1r, %k_w : (tensor<784x32xf32>, tensor<32x32xf32>) -> tensor<784x32xf32>
  %k4 = graph.reshape %kr : tensor<784x32xf32> -> tensor<16x49x2x16xf32>
  %kh = graph.transpose %k4 [0, 2, 1, 3] : tensor<16x49x2x16xf32> -> tensor<16x2x49x16xf32>
  %v_w = graph.param "v.kernel" {init = #graph.glorot_uniform} : tensor<32x32xf32>
  %v_b = graph.param "v.bias" {init = #graph.zeros} : tensor<32xf32>
  %vr = graph.dense %n1r, %v_w, %v_b : (tensor<784x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<784x32xf32>
  %v4 = graph.reshape %vr : tensor<784x32xf32> -> tensor<16x49x2x16xf32>
  %vh = graph.transpose %v4 [0, 2, 1, 3] : tensor<16x49x2x16xf32> -> tensor<16x2x49x16xf32>
  %s = graph.batch_matmul %qh, %kh {transpose_rhs, alpha = 0.25 : f64} : (tensor<16x2x49x16xf32>, tensor<16x2x49x16xf32>) -> tensor<16x2x49x49xf32>
  %att = graph.softmax %s : tensor<16x2x49x49xf32>
  %o = graph.batch_matmul %att, %vh : (tensor<16x2x49x49xf32>, tensor<16x2x49x16xf32>) -> tensor<16x2x49x16xf32>
  %ot = graph.transpose %o [0, 2, 1, 3] : tensor<16x2x49x16xf32> -> tensor<16x49x2x16xf32>
  %or = graph.reshape %ot : tensor<16x49x2x16xf32> -> tensor<784x32xf32>
  %proj_w = graph.param "proj.kernel" {init = #graph.glorot_uniform} : tensor<32x32xf32>
  %proj_b = graph.param "proj.bias" {init = #graph.zeros} : tensor<32xf32>
  %pr = graph.dense %or, %proj_w, %proj_b : (tensor<784x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<784x32xf32>
  %p3 = graph.reshape %pr : tensor<784x32xf32> -> tensor<16x49x32xf32>
  %h1 = graph.add %h0, %p3 : tensor<16x49x32xf32>
  %ln2_g = graph.param "ln2.gamma" {init = #graph.ones} : tensor<32xf32>
  %ln2_b = graph.param "ln2.beta" {init = #graph.zeros} : tensor<32xf32>
  %n2 = graph.layer_norm %h1, %ln2_g, %ln2_b {epsilon = 1.0e-05} : (tensor<16x49x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<16x49x32xf32>
  %n2r = graph.reshape %n2 : tensor<16x49x32xf32> -> tensor<784x32xf32>
  %fc1_w = graph.param "fc1.kernel" {init = #graph.glorot_uniform} : tensor<32x64xf32>
  %fc1_b = graph.param "fc1.bias" {init = #graph.zeros} : tensor<64xf32>
  %f1 = graph.dense %n2r, %fc1_w, %fc1_b : (tensor<784x32xf32>, tensor<32x64xf32>, tensor<64xf32>) -> tensor<784x64xf32>
  %g = graph.gelu %f1 : tensor<784x64xf32>
  %fc2_w = graph.param "fc2.kernel" {init = #graph.glorot_uniform} : tensor<64x32xf32>
  %fc2_b = graph.param "fc2.bias" {init = #graph.zeros} : tensor<32xf32>
  %f2 = graph.dense %g, %fc2_w, %fc2_b : (tensor<784x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<784x32xf32>
  %f3 = graph.reshape %f2 : tensor<784x32xf32> -> tensor<16x49x32xf32>
  %h2 = graph.add %h1, %f3 : tensor<16x49x32xf32>
  %img = graph.reshape %h2 : tensor<16x49x32xf32> -> tensor<16x49x1x32xf32>
  %pool = graph.global_avg_pool2d %img : tensor<16x49x1x32xf32> -> tensor<16x32xf32>
  %head_w = graph.param "head.kernel" {init = #graph.glorot_uniform} : tensor<32x10xf32>
  %head_b = graph.param "head.bias" {init = #graph.zeros} : tensor<10xf32>
  %z = graph.dense %pool, %head_w, %head_b : (tensor<16x32xf32>, tensor<32x10xf32>, tensor<10xf32>) -> tensor<16x10xf32>
  %loss = graph.softmax_cross_entropy %z, %l : (tensor<16x10xf32>, tensor<16xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}
