// Naive reference implementations of every kernel kind, written for obviousness rather than
// speed: the oracles that the CPU backend is tested against. Templated on the element type so
// that tests can also evaluate forward passes in double for finite differences.
#pragma once

#include "runtime/format/Enums.h"

#include <cstdint>
#include <vector>

namespace dp::rt::ref {

/// y[n,m] = act(x[n,k] . w[k,m] + b[m]); b may be null.
template <typename T>
void dense(const T *x, const T *w, const T *b, T *y, int64_t n, int64_t k, int64_t m,
           Activation act);
/// y = act(x) on `rows` rows of `cols`; softmax is per row.
template <typename T> void activation(const T *x, T *y, int64_t rows, int64_t cols, Activation act);
/// dx = dy * act'(x), with act' expressed through y = act(x); softmax is per row.
template <typename T>
void activationGrad(const T *y, const T *dy, T *dx, int64_t rows, int64_t cols, Activation act);
/// c[m,n] = op(a) . op(b) where op(a) is [m,k] and op(b) is [k,n]; a stored transposed
/// ([k,m]) when `ta`, b stored transposed ([n,k]) when `tb`.
template <typename T>
void matmul(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n, bool ta, bool tb);
/// `batch` products one after another in memory (a's, b's and c's matrices consecutive), each
/// matmul's times alpha.
template <typename T>
void batchMatMul(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t k, int64_t n,
                 bool ta, bool tb, T alpha);
/// y[cols] = sum over rows of x[rows, cols].
template <typename T> void reduceRows(const T *x, T *y, int64_t rows, int64_t cols);
/// c = a + b over n elements.
template <typename T> void add(const T *a, const T *b, T *c, int64_t n);
/// y[r, j] = x[r, j] + b[j] over `rows` rows of `cols`.
template <typename T> void addRows(const T *x, const T *b, T *y, int64_t rows, int64_t cols);
/// y = a * b with b (of a's rank, each axis a's or 1) repeated along its axes of size 1.
template <typename T>
void mul(const T *a, const T *b, T *y, const std::vector<int64_t> &aShape,
         const std::vector<int64_t> &bShape);
/// db = the sum of dy * a over the axes where db's shape has size 1 (mul's gradient for b).
template <typename T>
void mulReduce(const T *dy, const T *a, T *db, const std::vector<int64_t> &aShape,
               const std::vector<int64_t> &bShape);
/// Mean over the first `validRows` rows of the cross-entropy of softmax(logits) against the
/// target (1 - smoothing) onehot(label) + smoothing / classes, written as the sum over the
/// classes of -target log p; NaN for a bad label.
template <typename T>
T softmaxXent(const T *logits, const int32_t *labels, int64_t rows, int64_t classes,
              int64_t validRows, T smoothing = 0);
/// (softmax - target) * dloss / validRows for rows < validRows, zero after (target as above).
template <typename T>
void softmaxXentGrad(const T *logits, const int32_t *labels, T dloss, T *dlogits, int64_t rows,
                     int64_t classes, int64_t validRows, T smoothing = 0);
/// Mean over the first `validRows` rows' elements of the binary cross-entropy of sigmoid(logits)
/// against targets, -(t log s + (1 - t) log(1 - s)) as written ([rows, cols]).
template <typename T>
T sigmoidXent(const T *logits, const T *target, int64_t rows, int64_t cols, int64_t validRows);
/// (sigmoid(logits) - targets) * dloss / (validRows * cols) for rows < validRows, zero after.
template <typename T>
void sigmoidXentGrad(const T *logits, const T *target, T dloss, T *dlogits, int64_t rows,
                     int64_t cols, int64_t validRows);
/// Over the first `validRows` rows, the sum of the fraction of each row's outputs whose
/// prediction (logit > 0) is its target's (target > 0.5).
double countBinaryCorrect(const float *logits, const float *target, int64_t rows, int64_t cols,
                          int64_t validRows);
/// Mean over the first `validRows` rows' elements of (prediction - target)^2 ([rows, cols]).
template <typename T>
T squaredError(const T *prediction, const T *target, int64_t rows, int64_t cols, int64_t validRows);
/// 2 (prediction - target) dloss / (validRows cols) for rows < validRows, zero after.
template <typename T>
void squaredErrorGrad(const T *prediction, const T *target, T dloss, T *dprediction, int64_t rows,
                      int64_t cols, int64_t validRows);
/// out[r, k] = table[indices[r], k] for n indices into a [vocab, width] table (NaN outside it).
void gather(const float *table, const int32_t *indices, float *out, int64_t n, int64_t vocab,
            int64_t width);
/// dtable[v, k] = the sum of dy[r, k] over the indices r equal to v (in double).
void gatherGrad(const float *dy, const int32_t *indices, float *dtable, int64_t n, int64_t vocab,
                int64_t width);
/// Number of rows < validRows whose first argmax equals the label.
float countCorrect(const float *logits, const int32_t *labels, int64_t rows, int64_t classes,
                   int64_t validRows);
/// Geometry of a 2-D convolution on NHWC images with an HWIO kernel: x[n,h,w,c] *
/// w[kh,kw,c/groups,f] -> y[n,oh,ow,f], strides (sh, sw), zero padding top/left (pt, pl),
/// `groups` (filter group g reads channel group g) and dilations (dh, dw); oh and ow are given
/// (they fix the bottom/right padding).
struct ConvGeometry {
  int64_t n, h, w, c, kh, kw, f, oh, ow, sh, sw, pt, pl;
  int64_t groups = 1, dh = 1, dw = 1;
};
/// y = act(conv(x, w) + b); b may be null.
template <typename T>
void conv2d(const T *x, const T *w, const T *b, T *y, const ConvGeometry &g, Activation act);
/// dx of conv2d (without activation) from dy.
template <typename T> void conv2dGradInput(const T *dy, const T *w, T *dx, const ConvGeometry &g);
/// dw of conv2d (without activation), summed over the batch.
template <typename T> void conv2dGradFilter(const T *x, const T *dy, T *dw, const ConvGeometry &g);
/// Valid max pooling of x[n,h,w,c] with a kh x kw window and strides (sh, sw).
template <typename T>
void maxPool2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
               int64_t kw, int64_t sh, int64_t sw);
/// Its gradient: dy added at the first largest element of each window.
template <typename T>
void maxPool2dGrad(const T *x, const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c,
                   int64_t kh, int64_t kw, int64_t sh, int64_t sw);

/// param -= lr * grad.
void sgdUpdate(float *param, const float *grad, int64_t n, float lr);
/// Decoupled weight decay, before an update: param *= 1 - lr * weightDecay (in double, as
/// PyTorch's AdamW writes it).
void decoupledDecay(float *param, int64_t n, double lr, double weightDecay);
/// The factor that clips gradients to the global norm maxNorm: min(1, maxNorm / (norm + 1e-6)),
/// the norm over every element of every gradient, summed in double in plain order.
float clipFactor(const std::vector<const float *> &gradients, const std::vector<int64_t> &sizes,
                 double maxNorm);
/// Keras 2 momentum SGD.
void momentumUpdate(float *param, float *velocity, const float *grad, int64_t n, float lr,
                    float momentum, bool nesterov);
/// Keras 2 Adam at 1-based step `t`; with `torchEpsilon`, PyTorch's (epsilon added to the
/// bias-corrected sqrt(v_hat)), computed as PyTorch writes it.
void adamUpdate(float *param, float *m, float *v, const float *grad, int64_t n, double lr,
                double beta1, double beta2, double epsilon, int64_t t, bool torchEpsilon = false);

} // namespace dp::rt::ref
