// The embedding lookup and its table's gradient (the gather and gather_grad kernels of
// runtime/format/Kernels.def), written once for every backend: the CPU backend runs these
// functions in threaded loops, the CUDA backend in grid-stride kernels (nvcc compiles the same
// source for the device), and the tests compare both with the reference.
//
// gather: out[r, k] = table[indices[r], k] for the n indices r and the D columns k; an index
// outside [0, V) gives NaN. gather_grad: dtable[v, k] = the sum of dy[r, k] over the indices r
// equal to v, added in the order of r whatever the backend or its threads (each worker owns
// whole columns), so the result does not depend on them.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace dp::rt {

/// The geometry of a gather: n indices into a table of V rows of D values.
struct GatherShape {
  int64_t n = 0, vocab = 0, width = 0;
};

/// Element i of gather's [n, D] result.
DP_HOST_DEVICE inline void gatherElement(const float *table, const int32_t *indices, float *out,
                                         const GatherShape &s, int64_t i) {
  const int64_t r = i / s.width, k = i % s.width;
  const int32_t v = indices[r];
  out[i] = v >= 0 && v < s.vocab ? table[int64_t(v) * s.width + k] : NAN;
}

/// Columns [first, last) of gather_grad's [V, D] result: zeroed, then the rows of dy added in
/// the order of the indices (an index outside [0, V) adds nothing).
DP_HOST_DEVICE inline void gatherGradColumns(const float *dy, const int32_t *indices, float *dtable,
                                             const GatherShape &s, int64_t first, int64_t last) {
  for (int64_t v = 0; v < s.vocab; ++v)
    for (int64_t k = first; k < last; ++k)
      dtable[v * s.width + k] = 0.0f;
  for (int64_t r = 0; r < s.n; ++r) {
    const int32_t v = indices[r];
    if (v < 0 || v >= s.vocab)
      continue;
    float *row = dtable + int64_t(v) * s.width;
    const float *g = dy + r * s.width;
    for (int64_t k = first; k < last; ++k)
      row[k] += g[k];
  }
}

} // namespace dp::rt
