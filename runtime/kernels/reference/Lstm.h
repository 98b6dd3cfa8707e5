// Naive reference of the LSTM layer (Keras semantics) and of its gradients by hand-written
// backpropagation through time: the oracles of the CPU lstm and lstm_grad kernels. Templated
// on the element type so that tests can evaluate the forward pass in double for finite
// differences.
#pragma once

#include <cstdint>

namespace dp::rt::ref {

/// Sizes of one LSTM layer: batch n, steps t, input features f, units u. The output holds h
/// of every step ([n,t,u]) when `returnSequences`, else h of the last step ([n,u]).
struct LstmShape {
  int64_t n, t, f, u;
  bool returnSequences;

  /// Elements of the output y (and of its gradient dy).
  int64_t outputSize() const { return returnSequences ? n * t * u : n * u; }
};

/// y from x[n,t,f], kernel w[f,4u], recurrent kernel r[u,4u] and bias b[4u]; the four column
/// blocks of w, r and b are the gates i, f, c (candidate), o in that order. Per step:
/// z = x_t . w + h_{t-1} . r + b, i, f, o = sigmoid, c~ = tanh, c_t = f * c_{t-1} + i * c~,
/// h_t = o * tanh(c_t), from h_0 = c_0 = 0.
template <typename T>
void lstm(const T *x, const T *w, const T *r, const T *b, T *y, const LstmShape &s);

/// Gradients of sum(dy * y) for the y of lstm(): dx[n,t,f], dw[f,4u], dr[u,4u], db[4u]
/// (all overwritten); dy is shaped as y.
template <typename T>
void lstmGrad(const T *x, const T *w, const T *r, const T *b, const T *dy, T *dx, T *dw, T *dr,
              T *db, const LstmShape &s);

} // namespace dp::rt::ref
