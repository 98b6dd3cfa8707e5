// The reference kernels; see Reference.h. Straight loops in textbook order, no blocking, no
// threads, no vector tricks.
#include "runtime/kernels/reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace dp::rt::ref {

template <typename T>
void activation(const T *x, T *y, int64_t rows, int64_t cols, Activation act) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * cols;
    T *yr = y + r * cols;
    if (act == Activation::Softmax) {
      T m = xr[0];
      for (int64_t j = 1; j < cols; ++j)
        m = std::max(m, xr[j]);
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j)
        sum += std::exp(xr[j] - m);
      for (int64_t j = 0; j < cols; ++j)
        yr[j] = std::exp(xr[j] - m) / sum;
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      const T v = xr[j];
      switch (act) {
      case Activation::None:
        yr[j] = v;
        break;
      case Activation::Relu:
        yr[j] = v > 0 ? v : 0;
        break;
      case Activation::Sigmoid:
        yr[j] = 1 / (1 + std::exp(-v));
        break;
      case Activation::Tanh:
        yr[j] = std::tanh(v);
        break;
      case Activation::Softmax:
        break;
      }
    }
  }
}

template <typename T>
void activationGrad(const T *y, const T *dy, T *dx, int64_t rows, int64_t cols, Activation act) {
  for (int64_t r = 0; r < rows; ++r) {
    const T *yr = y + r * cols, *dyr = dy + r * cols;
    T *dxr = dx + r * cols;
    if (act == Activation::Softmax) {
      // Jacobian of softmax: dy_i/dx_j = y_i (delta_ij - y_j).
      for (int64_t j = 0; j < cols; ++j) {
        T sum = 0;
        for (int64_t i = 0; i < cols; ++i)
          sum += dyr[i] * yr[i] * ((i == j ? 1 : 0) - yr[j]);
        dxr[j] = sum;
      }
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      T d = 0;
      switch (act) {
      case Activation::None:
        d = 1;
        break;
      case Activation::Relu:
        d = yr[j] > 0 ? 1 : 0;
        break;
      case Activation::Sigmoid:
        d = yr[j] * (1 - yr[j]);
        break;
      case Activation::Tanh:
        d = 1 - yr[j] * yr[j];
        break;
      case Activation::Softmax:
        break;
      }
      dxr[j] = dyr[j] * d;
    }
  }
}

template <typename T>
void matmul(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * m + i] : a[i * k + p];
        const T bv = tb ? b[j * k + p] : b[p * n + j];
        sum += av * bv;
      }
      c[i * n + j] = sum;
    }
}

template <typename T>
void batchMatMul(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t k, int64_t n,
                 bool ta, bool tb, T alpha) {
  for (int64_t i = 0; i < batch; ++i) {
    T *ci = c + i * m * n;
    matmul(a + i * m * k, b + i * k * n, ci, m, k, n, ta, tb);
    for (int64_t j = 0; j < m * n; ++j)
      ci[j] *= alpha;
  }
}

template <typename T>
void dense(const T *x, const T *w, const T *b, T *y, int64_t n, int64_t k, int64_t m,
           Activation act) {
  std::vector<T> z(n * m);
  matmul(x, w, z.data(), n, k, m, false, false);
  if (b)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < m; ++j)
        z[r * m + j] += b[j];
  activation(z.data(), y, n, m, act);
}

template <typename T> void reduceRows(const T *x, T *y, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    T sum = 0;
    for (int64_t r = 0; r < rows; ++r)
      sum += x[r * cols + j];
    y[j] = sum;
  }
}

template <typename T> void addRows(const T *x, const T *b, T *y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = x[r * cols + j] + b[j];
}

namespace {

/// The index into a tensor of shape `small` (a's rank, each axis a's or 1) of a's element at
/// flat index `i`: the coordinates along axes of size 1 dropped.
int64_t broadcastIndex(int64_t i, const std::vector<int64_t> &full,
                       const std::vector<int64_t> &small) {
  std::vector<int64_t> coord(full.size());
  for (size_t k = full.size(); k-- > 0;) {
    coord[k] = i % full[k];
    i /= full[k];
  }
  int64_t j = 0;
  for (size_t k = 0; k < full.size(); ++k)
    j = j * small[k] + (small[k] == 1 ? 0 : coord[k]);
  return j;
}

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

template <typename T>
void mul(const T *a, const T *b, T *y, const std::vector<int64_t> &aShape,
         const std::vector<int64_t> &bShape) {
  for (int64_t i = 0; i < count(aShape); ++i)
    y[i] = a[i] * b[broadcastIndex(i, aShape, bShape)];
}

template <typename T>
void mulReduce(const T *dy, const T *a, T *db, const std::vector<int64_t> &aShape,
               const std::vector<int64_t> &bShape) {
  std::fill(db, db + count(bShape), T(0));
  for (int64_t i = 0; i < count(aShape); ++i)
    db[broadcastIndex(i, aShape, bShape)] += dy[i] * a[i];
}

template <typename T> void add(const T *a, const T *b, T *c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    c[i] = a[i] + b[i];
}

template <typename T>
T softmaxXent(const T *logits, const int32_t *labels, int64_t rows, int64_t classes,
              int64_t validRows, T smoothing) {
  std::vector<T> p(classes);
  T total = 0;
  for (int64_t r = 0; r < validRows; ++r) {
    if (labels[r] < 0 || labels[r] >= classes)
      return std::numeric_limits<T>::quiet_NaN();
    activation(logits + r * classes, p.data(), 1, classes, Activation::Softmax);
    for (int64_t j = 0; j < classes; ++j) {
      const T target = (j == labels[r] ? 1 - smoothing : 0) + smoothing / classes;
      if (target != 0)
        total -= target * std::log(p[j]);
    }
  }
  return validRows > 0 ? total / validRows : 0;
}

template <typename T>
void softmaxXentGrad(const T *logits, const int32_t *labels, T dloss, T *dlogits, int64_t rows,
                     int64_t classes, int64_t validRows, T smoothing) {
  for (int64_t r = 0; r < rows; ++r) {
    T *g = dlogits + r * classes;
    if (r >= validRows) {
      for (int64_t j = 0; j < classes; ++j)
        g[j] = 0;
      continue;
    }
    const bool badLabel = labels[r] < 0 || labels[r] >= classes;
    activation(logits + r * classes, g, 1, classes, Activation::Softmax);
    for (int64_t j = 0; j < classes; ++j)
      g[j] = badLabel ? std::numeric_limits<T>::quiet_NaN()
                      : (g[j] - ((j == labels[r] ? 1 - smoothing : 0) + smoothing / classes)) *
                            dloss / validRows;
  }
}

template <typename T>
T sigmoidXent(const T *logits, const T *target, int64_t rows, int64_t cols, int64_t validRows) {
  T total = 0;
  for (int64_t i = 0; i < validRows * cols; ++i) {
    const T s = 1 / (1 + std::exp(-logits[i]));
    total -= target[i] * std::log(s) + (1 - target[i]) * std::log(1 - s);
  }
  return validRows > 0 ? total / T(validRows * cols) : 0;
}

template <typename T>
void sigmoidXentGrad(const T *logits, const T *target, T dloss, T *dlogits, int64_t rows,
                     int64_t cols, int64_t validRows) {
  for (int64_t i = 0; i < rows * cols; ++i)
    dlogits[i] = i < validRows * cols
                     ? (1 / (1 + std::exp(-logits[i])) - target[i]) * dloss / T(validRows * cols)
                     : 0;
}

double countBinaryCorrect(const float *logits, const float *target, int64_t rows, int64_t cols,
                          int64_t validRows) {
  double count = 0;
  for (int64_t r = 0; r < validRows; ++r) {
    int64_t right = 0;
    for (int64_t k = 0; k < cols; ++k)
      right += (logits[r * cols + k] > 0) == (target[r * cols + k] > 0.5f);
    count += double(right) / cols;
  }
  return count;
}

template <typename T>
T squaredError(const T *prediction, const T *target, int64_t rows, int64_t cols,
               int64_t validRows) {
  T total = 0;
  for (int64_t i = 0; i < validRows * cols; ++i)
    total += (prediction[i] - target[i]) * (prediction[i] - target[i]);
  return validRows > 0 ? total / T(validRows * cols) : 0;
}

template <typename T>
void squaredErrorGrad(const T *prediction, const T *target, T dloss, T *dprediction, int64_t rows,
                      int64_t cols, int64_t validRows) {
  for (int64_t i = 0; i < rows * cols; ++i)
    dprediction[i] =
        i < validRows * cols ? 2 * (prediction[i] - target[i]) * dloss / T(validRows * cols) : 0;
}

void gather(const float *table, const int32_t *indices, float *out, int64_t n, int64_t vocab,
            int64_t width) {
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < width; ++k)
      out[r * width + k] = indices[r] >= 0 && indices[r] < vocab
                               ? table[indices[r] * width + k]
                               : std::numeric_limits<float>::quiet_NaN();
}

void gatherGrad(const float *dy, const int32_t *indices, float *dtable, int64_t n, int64_t vocab,
                int64_t width) {
  std::vector<double> sums(static_cast<size_t>(vocab * width), 0.0);
  for (int64_t r = 0; r < n; ++r)
    if (indices[r] >= 0 && indices[r] < vocab)
      for (int64_t k = 0; k < width; ++k)
        sums[indices[r] * width + k] += dy[r * width + k];
  for (int64_t i = 0; i < vocab * width; ++i)
    dtable[i] = static_cast<float>(sums[i]);
}

float countCorrect(const float *logits, const int32_t *labels, int64_t rows, int64_t classes,
                   int64_t validRows) {
  float correct = 0;
  for (int64_t r = 0; r < validRows; ++r) {
    if (labels[r] < 0 || labels[r] >= classes)
      return std::numeric_limits<float>::quiet_NaN();
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (logits[r * classes + j] > logits[r * classes + best])
        best = j;
    if (best == labels[r])
      correct += 1;
  }
  return correct;
}

void sgdUpdate(float *param, const float *grad, int64_t n, float lr) {
  for (int64_t i = 0; i < n; ++i)
    param[i] = param[i] - lr * grad[i];
}

void decoupledDecay(float *param, int64_t n, double lr, double weightDecay) {
  for (int64_t i = 0; i < n; ++i)
    param[i] = static_cast<float>(double(param[i]) * (1 - lr * weightDecay));
}

float clipFactor(const std::vector<const float *> &gradients, const std::vector<int64_t> &sizes,
                 double maxNorm) {
  double sum = 0;
  for (size_t t = 0; t < gradients.size(); ++t)
    for (int64_t i = 0; i < sizes[t]; ++i)
      sum += double(gradients[t][i]) * gradients[t][i];
  const double factor = maxNorm / (std::sqrt(sum) + 1e-6);
  return static_cast<float>(std::isnan(factor) ? factor : std::min(factor, 1.0));
}

void momentumUpdate(float *param, float *velocity, const float *grad, int64_t n, float lr,
                    float momentum, bool nesterov) {
  for (int64_t i = 0; i < n; ++i) {
    velocity[i] = momentum * velocity[i] - lr * grad[i];
    if (nesterov)
      param[i] = param[i] + momentum * velocity[i] - lr * grad[i];
    else
      param[i] = param[i] + velocity[i];
  }
}

void adamUpdate(float *param, float *m, float *v, const float *grad, int64_t n, double lr,
                double beta1, double beta2, double epsilon, int64_t t, bool torchEpsilon) {
  const double lrT = lr * std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t));
  const double c1 = 1 - std::pow(beta1, t), c2 = 1 - std::pow(beta2, t);
  for (int64_t i = 0; i < n; ++i) {
    m[i] = static_cast<float>(beta1 * m[i] + (1 - beta1) * grad[i]);
    v[i] = static_cast<float>(beta2 * v[i] + (1 - beta2) * double(grad[i]) * grad[i]);
    // PyTorch's form as PyTorch writes it: the moments corrected, epsilon on sqrt(v_hat).
    param[i] = static_cast<float>(
        torchEpsilon ? param[i] - lr * (m[i] / c1) / (std::sqrt(double(v[i]) / c2) + epsilon)
                     : param[i] - lrT * m[i] / (std::sqrt(double(v[i])) + epsilon));
  }
}

/// Calls tap(y, x, w) with the flat NHWC / NHWC / HWIO indices of every product a convolution
/// sums: for each output element in order, its window's in-bounds taps in (i, j, c) order.
template <typename Tap> void forEachConvTap(const ConvGeometry &g, Tap tap) {
  const int64_t cg = g.c / g.groups, fg = g.f / g.groups; // channels and filters per group
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        for (int64_t f = 0; f < g.f; ++f) {
          const int64_t yi = ((n * g.oh + oh) * g.ow + ow) * g.f + f;
          const int64_t c0 = f / fg * cg; // the first channel of the filter's group
          for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t ih = oh * g.sh - g.pt + i * g.dh, iw = ow * g.sw - g.pl + j * g.dw;
              if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
                continue;
              for (int64_t c = 0; c < cg; ++c)
                tap(yi, ((n * g.h + ih) * g.w + iw) * g.c + c0 + c,
                    ((i * g.kw + j) * cg + c) * g.f + f);
            }
        }
}

template <typename T>
void conv2d(const T *x, const T *w, const T *b, T *y, const ConvGeometry &g, Activation act) {
  const int64_t outputs = g.n * g.oh * g.ow * g.f;
  for (int64_t k = 0; k < outputs; ++k)
    y[k] = b ? b[k % g.f] : T(0);
  forEachConvTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  if (act != Activation::None) {
    const int64_t rows = g.n * g.oh * g.ow;
    std::vector<T> pre(y, y + rows * g.f);
    activation(pre.data(), y, act == Activation::Softmax ? rows : 1,
               act == Activation::Softmax ? g.f : rows * g.f, act);
  }
}

template <typename T> void conv2dGradInput(const T *dy, const T *w, T *dx, const ConvGeometry &g) {
  std::fill(dx, dx + g.n * g.h * g.w * g.c, T(0));
  forEachConvTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += dy[yi] * w[wi]; });
}

template <typename T> void conv2dGradFilter(const T *x, const T *dy, T *dw, const ConvGeometry &g) {
  std::fill(dw, dw + g.kh * g.kw * (g.c / g.groups) * g.f, T(0));
  forEachConvTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += x[xi] * dy[yi]; });
}

template <typename T>
void maxPool2d(const T *x, T *y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
               int64_t kw, int64_t sh, int64_t sw) {
  const int64_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < oh; ++p)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t k = 0; k < c; ++k) {
          T m = -std::numeric_limits<T>::infinity();
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              m = std::max(m, x[((b * h + p * sh + i) * w + q * sw + j) * c + k]);
          y[((b * oh + p) * ow + q) * c + k] = m;
        }
}

template <typename T>
void maxPool2dGrad(const T *x, const T *dy, T *dx, int64_t n, int64_t h, int64_t w, int64_t c,
                   int64_t kh, int64_t kw, int64_t sh, int64_t sw) {
  const int64_t oh = (h - kh) / sh + 1, ow = (w - kw) / sw + 1;
  std::fill(dx, dx + n * h * w * c, T(0));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < oh; ++p)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t k = 0; k < c; ++k) {
          int64_t best = -1;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t at = ((b * h + p * sh + i) * w + q * sw + j) * c + k;
              if (best < 0 || x[at] > x[best])
                best = at;
            }
          dx[best] += dy[((b * oh + p) * ow + q) * c + k];
        }
}

#define DP_REF_INSTANTIATE(T)                                                                      \
  template void dense<T>(const T *, const T *, const T *, T *, int64_t, int64_t, int64_t,          \
                         Activation);                                                              \
  template void activation<T>(const T *, T *, int64_t, int64_t, Activation);                       \
  template void activationGrad<T>(const T *, const T *, T *, int64_t, int64_t, Activation);        \
  template void matmul<T>(const T *, const T *, T *, int64_t, int64_t, int64_t, bool, bool);       \
  template void batchMatMul<T>(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t,      \
                               bool, bool, T);                                                     \
  template void reduceRows<T>(const T *, T *, int64_t, int64_t);                                   \
  template void addRows<T>(const T *, const T *, T *, int64_t, int64_t);                           \
  template void add<T>(const T *, const T *, T *, int64_t);                                        \
  template void mul<T>(const T *, const T *, T *, const std::vector<int64_t> &,                    \
                       const std::vector<int64_t> &);                                              \
  template void mulReduce<T>(const T *, const T *, T *, const std::vector<int64_t> &,              \
                             const std::vector<int64_t> &);                                        \
  template void conv2d<T>(const T *, const T *, const T *, T *, const ConvGeometry &, Activation); \
  template void conv2dGradInput<T>(const T *, const T *, T *, const ConvGeometry &);               \
  template void conv2dGradFilter<T>(const T *, const T *, T *, const ConvGeometry &);              \
  template void maxPool2d<T>(const T *, T *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, \
                             int64_t, int64_t);                                                    \
  template void maxPool2dGrad<T>(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t,    \
                                 int64_t, int64_t, int64_t, int64_t);                              \
  template T softmaxXent<T>(const T *, const int32_t *, int64_t, int64_t, int64_t, T);             \
  template void softmaxXentGrad<T>(const T *, const int32_t *, T, T *, int64_t, int64_t, int64_t,  \
                                   T);                                                             \
  template T squaredError<T>(const T *, const T *, int64_t, int64_t, int64_t);                     \
  template T sigmoidXent<T>(const T *, const T *, int64_t, int64_t, int64_t);                      \
  template void sigmoidXentGrad<T>(const T *, const T *, T, T *, int64_t, int64_t, int64_t);       \
  template void squaredErrorGrad<T>(const T *, const T *, T, T *, int64_t, int64_t, int64_t);
DP_REF_INSTANTIATE(float)
DP_REF_INSTANTIATE(double)
#undef DP_REF_INSTANTIATE

} // namespace dp::rt::ref
