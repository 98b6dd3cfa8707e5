// The elementwise product with one-sided broadcasting (the mul and mul_reduce kernels of
// runtime/format/Kernels.def), written once for every backend: the geometry the contract
// computes from the buffers' shapes, and what one element of each kernel is. The CPU backend
// runs the element functions in threaded loops, the CUDA backend in grid-stride kernels (nvcc
// compiles the same source for the device), and the tests compare both with the reference.
//
// mul: y = a * b, where b has a's rank and each of its axes is a's or of size 1 (repeated
// along it). mul_reduce: db = the sum of dy * a over the axes where b has size 1 (the gradient
// of mul for b); each db element sums its terms in the order of a's elements, whatever the
// backend, so the result does not depend on threads.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cstdint>

namespace dp::rt {

/// a's shape with its runs of axes of one kind merged: each merged axis is kept by b or
/// broadcast (b has size 1 there), and kept and broadcast axes alternate.
struct BroadcastShape {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  /// Whether b is broadcast along merged axis k.
  bool broadcast[kMaxRank] = {};
  /// Elements of a (and y, dy), and of b (and db).
  int64_t elements = 0, bElements = 0;
};

namespace broadcast {

// The loops run over every possible merged axis, last first, and skip those past the rank:
// unrolled on the device (DP_UNROLL), every index into the arrays is a constant.

/// The element of b that a's element `i` is multiplied by.
DP_HOST_DEVICE inline int64_t bIndex(const BroadcastShape &s, int64_t i) {
  int64_t b = 0, bStride = 1;
  DP_UNROLL
  for (int j = 0; j < BroadcastShape::kMaxRank; ++j) {
    const int k = BroadcastShape::kMaxRank - 1 - j;
    if (k >= s.rank)
      continue;
    const int64_t at = i % s.dims[k];
    i /= s.dims[k];
    if (!s.broadcast[k]) {
      b += at * bStride;
      bStride *= s.dims[k];
    }
  }
  return b;
}

/// mul's element `i`: a[i] * b[bIndex(i)].
DP_HOST_DEVICE inline float mulElement(const BroadcastShape &s, const float *a, const float *b,
                                       int64_t i) {
  return a[i] * b[bIndex(s, i)];
}

/// mul_reduce's element `j` (of b's shape): the sum of dy * a over the positions of a that
/// b's element j is broadcast to, in the order of a's elements.
DP_HOST_DEVICE inline float mulReduceElement(const BroadcastShape &s, const float *dy,
                                             const float *a, int64_t j) {
  // j's coordinates along the kept axes, and how many positions the broadcast axes span.
  int64_t kept[BroadcastShape::kMaxRank] = {};
  int64_t spread = 1;
  DP_UNROLL
  for (int q = 0; q < BroadcastShape::kMaxRank; ++q) {
    const int k = BroadcastShape::kMaxRank - 1 - q;
    if (k >= s.rank)
      continue;
    if (s.broadcast[k]) {
      spread *= s.dims[k];
    } else {
      kept[k] = j % s.dims[k];
      j /= s.dims[k];
    }
  }
  float sum = 0.0f;
  for (int64_t r = 0; r < spread; ++r) {
    // The r-th position (in a's order) among those with j's kept coordinates.
    int64_t rest = r, index = 0, stride = 1;
    DP_UNROLL
    for (int q = 0; q < BroadcastShape::kMaxRank; ++q) {
      const int k = BroadcastShape::kMaxRank - 1 - q;
      if (k >= s.rank)
        continue;
      int64_t at = kept[k];
      if (s.broadcast[k]) {
        at = rest % s.dims[k];
        rest /= s.dims[k];
      }
      index += at * stride;
      stride *= s.dims[k];
    }
    sum += dy[index] * a[index];
  }
  return sum;
}

} // namespace broadcast
} // namespace dp::rt
