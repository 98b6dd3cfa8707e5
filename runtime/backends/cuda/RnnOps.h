// The LSTM's weights between dp's layout and cuDNN's, written once as host-and-device code.
// dp (Keras) keeps a layer's input kernel w[F,4U] and recurrent kernel r[U,4U] with the gates
// i, f, c~, o as column blocks, and one bias b[4U]. cuDNN keeps each gate's input matrix
// ([U,F], row-major), recurrent matrix ([U,U]) and bias ([U]) at offsets of its weight space
// that it reports at run time (RnnWeightLayout); its gate order i, f, g (= c~), o is Keras's.
// OwnKernels.cu packs dp's three tensors into the weight space before each call and unpacks
// the weight space's gradient after the backward; the host tests run the same functions.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cstdint>

namespace dp::rt::cuda {

/// Offsets (elements) of each gate's matrices and bias in cuDNN's weight space: input[g] is
/// [U,F], recurrent[g] is [U,U], bias[g] is [U]; gates i, f, c~, o.
struct RnnWeightLayout {
  int64_t input[4], recurrent[4], bias[4];
};

/// offsets[gate], selected without indexing: a kernel parameter indexed at run time would be
/// copied to the stack first.
DP_HOST_DEVICE inline int64_t gateOffset(const int64_t *offsets, int64_t gate) {
  return gate == 0 ? offsets[0] : gate == 1 ? offsets[1] : gate == 2 ? offsets[2] : offsets[3];
}

/// Element e of cuDNN's gate matrix `gate` ([u, in] row-major) from dp's kernel k[in, 4u].
DP_HOST_DEVICE inline float gateMatrixElement(const float *k, int64_t in, int64_t u, int gate,
                                              int64_t e) {
  const int64_t j = e / in, i = e % in;
  return k[i * 4 * u + gate * u + j];
}

/// Element e of dp's kernel k[in, 4u] from the weight space's gate matrices at `offsets`.
DP_HOST_DEVICE inline float kernelElement(const float *space, const int64_t *offsets, int64_t in,
                                          int64_t u, int64_t e) {
  const int64_t i = e / (4 * u), column = e % (4 * u), gate = column / u, j = column % u;
  return space[gateOffset(offsets, gate) + j * in + i];
}

/// Element e of the 4 gate matrices of a kernel k[in, 4u], in gate order: where it goes in
/// the weight space (`offsets`) and its value.
DP_HOST_DEVICE inline void packKernelElement(const float *k, float *space, const int64_t *offsets,
                                             int64_t in, int64_t u, int64_t e) {
  const int64_t per = u * in, gate = e / per, within = e % per;
  space[gateOffset(offsets, gate) + within] =
      gateMatrixElement(k, in, u, static_cast<int>(gate), within);
}

/// Element e of dp's bias b[4u] into, or out of, the weight space's gate biases.
DP_HOST_DEVICE inline int64_t biasOffset(const int64_t *offsets, int64_t u, int64_t e) {
  return gateOffset(offsets, e / u) + e % u;
}

/// The layout cuDNN uses for one unidirectional layer with one input bias, as documented:
/// the four input matrices, the four recurrent matrices, then the biases, each gate after the
/// other. The backend reads the real offsets from cuDNN; tests and the plan's memory estimate
/// use this one.
inline RnnWeightLayout canonicalLayout(int64_t f, int64_t u) {
  RnnWeightLayout l{};
  int64_t at = 0;
  for (int g = 0; g < 4; ++g, at += u * f)
    l.input[g] = at;
  for (int g = 0; g < 4; ++g, at += u * u)
    l.recurrent[g] = at;
  for (int g = 0; g < 4; ++g, at += u)
    l.bias[g] = at;
  return l;
}

} // namespace dp::rt::cuda
