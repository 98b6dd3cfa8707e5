// The reference LSTM; see Lstm.h. The forward pass records every gate and state; the backward
// pass walks the steps in reverse with the textbook chain rule, one batch row at a time.
#include "runtime/kernels/reference/Lstm.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dp::rt::ref {
namespace {

template <typename T> T sigmoid(T v) { return 1 / (1 + std::exp(-v)); }

/// Everything the forward pass computes, per batch row and step: the activated gates
/// (i, f, c~, o) and the states h and c, with index 0 of the states the zero initial state.
template <typename T> struct LstmTrace {
  std::vector<T> gates; // [n, t, 4u]
  std::vector<T> h, c;  // [n, t + 1, u]
};

template <typename T>
LstmTrace<T> trace(const T *x, const T *w, const T *r, const T *b, const LstmShape &s) {
  const int64_t g4 = 4 * s.u;
  LstmTrace<T> tr;
  tr.gates.assign(s.n * s.t * g4, T(0));
  tr.h.assign(s.n * (s.t + 1) * s.u, T(0));
  tr.c.assign(s.n * (s.t + 1) * s.u, T(0));
  std::vector<T> z(g4);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t t = 0; t < s.t; ++t) {
      const T *xt = x + (n * s.t + t) * s.f;
      const T *hPrev = &tr.h[(n * (s.t + 1) + t) * s.u];
      const T *cPrev = &tr.c[(n * (s.t + 1) + t) * s.u];
      T *h = &tr.h[(n * (s.t + 1) + t + 1) * s.u];
      T *c = &tr.c[(n * (s.t + 1) + t + 1) * s.u];
      T *gate = &tr.gates[(n * s.t + t) * g4];
      for (int64_t j = 0; j < g4; ++j) {
        T sum = b[j];
        for (int64_t k = 0; k < s.f; ++k)
          sum += xt[k] * w[k * g4 + j];
        for (int64_t k = 0; k < s.u; ++k)
          sum += hPrev[k] * r[k * g4 + j];
        z[j] = sum;
      }
      for (int64_t j = 0; j < s.u; ++j) {
        const T i = sigmoid(z[j]), f = sigmoid(z[s.u + j]), cand = std::tanh(z[2 * s.u + j]),
                o = sigmoid(z[3 * s.u + j]);
        gate[j] = i, gate[s.u + j] = f, gate[2 * s.u + j] = cand, gate[3 * s.u + j] = o;
        c[j] = f * cPrev[j] + i * cand;
        h[j] = o * std::tanh(c[j]);
      }
    }
  return tr;
}

} // namespace

template <typename T>
void lstm(const T *x, const T *w, const T *r, const T *b, T *y, const LstmShape &s) {
  const LstmTrace<T> tr = trace(x, w, r, b, s);
  for (int64_t n = 0; n < s.n; ++n) {
    const T *h = &tr.h[n * (s.t + 1) * s.u];
    if (s.returnSequences)
      std::copy(h + s.u, h + (s.t + 1) * s.u, y + n * s.t * s.u);
    else
      std::copy(h + s.t * s.u, h + (s.t + 1) * s.u, y + n * s.u);
  }
}

template <typename T>
void lstmGrad(const T *x, const T *w, const T *r, const T *b, const T *dy, T *dx, T *dw, T *dr,
              T *db, const LstmShape &s) {
  const int64_t g4 = 4 * s.u;
  const LstmTrace<T> tr = trace(x, w, r, b, s);
  std::fill(dx, dx + s.n * s.t * s.f, T(0));
  std::fill(dw, dw + s.f * g4, T(0));
  std::fill(dr, dr + s.u * g4, T(0));
  std::fill(db, db + g4, T(0));
  std::vector<T> dh(s.u), dc(s.u), dz(g4);
  for (int64_t n = 0; n < s.n; ++n) {
    // dh and dc carry d(loss)/d(h_t) and d(loss)/d(c_t) from step t + 1 back to step t.
    std::fill(dh.begin(), dh.end(), T(0));
    std::fill(dc.begin(), dc.end(), T(0));
    for (int64_t t = s.t - 1; t >= 0; --t) {
      if (s.returnSequences || t == s.t - 1) {
        const T *g = s.returnSequences ? dy + (n * s.t + t) * s.u : dy + n * s.u;
        for (int64_t j = 0; j < s.u; ++j)
          dh[j] += g[j];
      }
      const T *gate = &tr.gates[(n * s.t + t) * g4];
      const T *cPrev = &tr.c[(n * (s.t + 1) + t) * s.u];
      const T *c = &tr.c[(n * (s.t + 1) + t + 1) * s.u];
      const T *hPrev = &tr.h[(n * (s.t + 1) + t) * s.u];
      for (int64_t j = 0; j < s.u; ++j) {
        const T i = gate[j], f = gate[s.u + j], cand = gate[2 * s.u + j], o = gate[3 * s.u + j];
        const T tc = std::tanh(c[j]);
        const T dcj = dc[j] + dh[j] * o * (1 - tc * tc);
        // Gradients of the gate pre-activations z (sigmoid' = s (1 - s), tanh' = 1 - t^2).
        dz[j] = dcj * cand * i * (1 - i);
        dz[s.u + j] = dcj * cPrev[j] * f * (1 - f);
        dz[2 * s.u + j] = dcj * i * (1 - cand * cand);
        dz[3 * s.u + j] = dh[j] * tc * o * (1 - o);
        dc[j] = dcj * f;
      }
      const T *xt = x + (n * s.t + t) * s.f;
      T *dxt = dx + (n * s.t + t) * s.f;
      for (int64_t k = 0; k < s.f; ++k)
        for (int64_t j = 0; j < g4; ++j) {
          dw[k * g4 + j] += xt[k] * dz[j];
          dxt[k] += dz[j] * w[k * g4 + j];
        }
      for (int64_t k = 0; k < s.u; ++k) {
        T sum = 0;
        for (int64_t j = 0; j < g4; ++j) {
          dr[k * g4 + j] += hPrev[k] * dz[j];
          sum += dz[j] * r[k * g4 + j];
        }
        dh[k] = sum; // d(loss)/d(h_{t-1}) through the recurrence
      }
      for (int64_t j = 0; j < g4; ++j)
        db[j] += dz[j];
    }
  }
}

#define DP_REF_INSTANTIATE(T)                                                                      \
  template void lstm<T>(const T *, const T *, const T *, const T *, T *, const LstmShape &);       \
  template void lstmGrad<T>(const T *, const T *, const T *, const T *, const T *, T *, T *, T *,  \
                            T *, const LstmShape &);
DP_REF_INSTANTIATE(float)
DP_REF_INSTANTIATE(double)
#undef DP_REF_INSTANTIATE

} // namespace dp::rt::ref
