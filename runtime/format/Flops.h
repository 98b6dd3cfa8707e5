// The floating-point operations that model FLOP utilization (MFU) counts: those of the products
// (matrix multiplications, convolutions and LSTM cells, forward and backward), 2 per
// multiply-add, from the kernels' shapes alone. One definition for the compiler (its compile
// report, from the plan IR) and the runtime (dprun's MFU, from the plan file). The other
// kernels' time goes to memory traffic, which is not what a peak of FLOP/s measures: they
// count 0, as PaLM's definition of MFU has it.
#pragma once

#include "runtime/format/Enums.h"

#include <cstdint>
#include <vector>

namespace dp::rt {

/// A buffer's shape (its dimensions; empty for a scalar).
using FlopShape = std::vector<int64_t>;

namespace detail {
inline double elements(const FlopShape &shape) {
  double n = 1;
  for (int64_t d : shape)
    n *= double(d);
  return n;
}
} // namespace detail

/// Whether MFU counts the FLOPs of `kind`: the products and their gradients.
inline bool isProduct(KernelKind kind) {
  switch (kind) {
  case KernelKind::Dense:
  case KernelKind::MatMul:
  case KernelKind::BatchMatMul:
  case KernelKind::Conv2d:
  case KernelKind::Conv2dGradInput:
  case KernelKind::Conv2dGradFilter:
  case KernelKind::Lstm:
  case KernelKind::LstmGrad:
    return true;
  default:
    return false;
  }
}

/// The FLOPs of one call of `kind`, given the shapes of its inputs and outputs in the kernel's
/// order and, for matmul and batch_matmul, whether op(a) transposes a. An lstm_grad counts
/// twice its lstm (the input and the weight gradients; the recomputed gates are not the
/// model's). 0 for every other kind, and for shapes that do not fit the kind's contract (the
/// verifiers refuse those).
inline double kernelFlops(KernelKind kind, const std::vector<FlopShape> &in,
                          const std::vector<FlopShape> &out, bool transposeA = false) {
  using detail::elements;
  auto has = [&](size_t ins, size_t outs) { return in.size() >= ins && out.size() >= outs; };
  switch (kind) {
  case KernelKind::Dense: // x[N,K] w[K,M] -> y[N,M]
    if (!has(2, 1) || in[1].size() != 2)
      return 0;
    return 2 * elements(in[0]) * double(in[1][1]);
  case KernelKind::MatMul:
  case KernelKind::BatchMatMul: { // op(a)[..,M,K] op(b)[..,K,N] -> c[..,M,N]
    if (!has(2, 1) || in[0].size() < 2)
      return 0;
    const FlopShape &a = in[0];
    return 2 * elements(out[0]) * double(transposeA ? a[a.size() - 2] : a.back());
  }
  case KernelKind::Conv2d: // x[N,H,W,C] w[KH,KW,C/G,F] -> y[N,OH,OW,F]
    if (!has(2, 1) || out[0].empty() || out[0].back() == 0)
      return 0;
    return 2 * elements(out[0]) * elements(in[1]) / double(out[0].back());
  case KernelKind::Conv2dGradInput: // dy[N,OH,OW,F] w -> dx
    if (!has(2, 1) || in[0].empty() || in[0].back() == 0)
      return 0;
    return 2 * elements(in[0]) * elements(in[1]) / double(in[0].back());
  case KernelKind::Conv2dGradFilter: // x dy[N,OH,OW,F] -> dw
    if (!has(2, 1) || in[1].empty() || in[1].back() == 0)
      return 0;
    return 2 * elements(in[1]) * elements(out[0]) / double(in[1].back());
  case KernelKind::Lstm:     // x[N,T,F] w[F,4U] r[U,4U] b -> y
  case KernelKind::LstmGrad: // x w r b y dy -> dx dw dr db
    if (!has(3, 1) || in[0].size() != 3)
      return 0;
    return (kind == KernelKind::LstmGrad ? 4 : 2) * double(in[0][0]) * double(in[0][1]) *
           (elements(in[1]) + elements(in[2]));
  default:
    return 0;
  }
}

} // namespace dp::rt
