// The geometry of a convolution and the part of its window that reads the image: one definition
// for the compiler (plan-assign-layouts and the compile report decide and count from it, on the
// plan IR) and the runtime (the kernel contract checks a plan against it, the backends compute
// only the live taps).
#pragma once

#include <algorithm>
#include <cstdint>

namespace dp::rt {

/// x[N,H,W,C] * w[KH,KW,C/G,F] -> y[N,OH,OW,F] (NHWC images, HWIO kernels), strides (sh, sw),
/// zero padding top, left, bottom, right, G groups (filter group g reads channel group g) and
/// dilations (dh, dw) between a window's taps.
struct ConvGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0, kh = 0, kw = 0, f = 0, oh = 0, ow = 0;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t g = 1, dh = 1, dw = 1;
  /// Multiply-adds of one pass.
  double macs() const { return double(n) * oh * ow * f * kh * kw * (c / g); }
  /// Output rows: batch x height x width.
  int64_t rows() const { return n * oh * ow; }
};

/// The part of a convolution's kernel that ever reads the image: taps [row, row + shape.kh) x
/// [col, col + shape.kw) of the full kernelH x kernelW kernel, with the paddings trimmed so that
/// the output keeps its size. The taps outside it read only zero padding (a 3x3 "same"
/// convolution of a 1x1 image reads its centre alone), so they add exact zeros to the result
/// and have exact zero gradients: a kernel may skip them. The whole kernel when every tap
/// reads the image somewhere, or when trimming would need a negative padding.
struct LiveTaps {
  ConvGeometry shape;
  int64_t row = 0, col = 0, kernelH = 0, kernelW = 0;
  bool whole() const { return shape.kh == kernelH && shape.kw == kernelW; }
  /// Whether the live taps are one dense block of the HWIO kernel (its rows of taps are
  /// contiguous, and so are whole rows): the only windows a library reads as plain weights.
  bool denseWindow() const { return shape.kh == 1 || shape.kw == kernelW; }
  /// Whether a kernel may read its weights as stored (the attribute plain_weights): one group,
  /// a dense window.
  bool allowsPlainWeights() const { return shape.g == 1 && denseWindow(); }
  /// Whether the convolution is a product of matrices: a 1x1 live window at stride 1 without
  /// padding, in one group. The images are then [n*h*w, c] and [n*h*w, f] row-major matrices
  /// and the window a [c, f] one.
  bool isProduct() const {
    const ConvGeometry &s = shape;
    return s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pb == 0 &&
           s.pl == 0 && s.pr == 0 && s.g == 1;
  }
};

namespace detail {
/// One axis of liveTaps: the first and last of k taps (dilation d) that read a row of [0, in)
/// for some output o of [0, out) at stride st and padding p; first > last when none does.
inline void liveRange(int64_t in, int64_t out, int64_t k, int64_t st, int64_t d, int64_t p,
                      int64_t &first, int64_t &last) {
  first = k, last = -1;
  for (int64_t r = 0; r < k; ++r) {
    // The rows tap r reads: r*d - p + o*st for o in [0, out); one of them lies in [0, in)
    // when the first at or above 0 does.
    const int64_t base = r * d - p;
    const int64_t o = base >= 0 ? 0 : (-base + st - 1) / st;
    if (o < out && base + o * st < in)
      first = std::min(first, r), last = r;
  }
}
} // namespace detail

inline LiveTaps liveTaps(const ConvGeometry &s) {
  LiveTaps t{s, 0, 0, s.kh, s.kw};
  int64_t r0, r1, c0, c1;
  detail::liveRange(s.h, s.oh, s.kh, s.sh, s.dh, s.pt, r0, r1);
  detail::liveRange(s.w, s.ow, s.kw, s.sw, s.dw, s.pl, c0, c1);
  if (r0 > r1 || c0 > c1)
    return t;
  const int64_t pt = s.pt - r0 * s.dh, pb = s.pb - (s.kh - 1 - r1) * s.dh;
  const int64_t pl = s.pl - c0 * s.dw, pr = s.pr - (s.kw - 1 - c1) * s.dw;
  if (pt < 0 || pb < 0 || pl < 0 || pr < 0)
    return t;
  t.row = r0, t.col = c0;
  t.shape.kh = r1 - r0 + 1, t.shape.kw = c1 - c0 + 1;
  t.shape.pt = pt, t.shape.pb = pb, t.shape.pl = pl, t.shape.pr = pr;
  return t;
}

} // namespace dp::rt
