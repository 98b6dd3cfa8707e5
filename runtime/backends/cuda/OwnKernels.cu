// The CUDA backend's own kernels: grid-stride loops over the per-element and per-row code of
// Ops.h, RowOps.h and ImageOps.h (the same source the host tests check against the reference
// kernels), a single-block sum for the scalar results, and two-pass column sums.
#include "runtime/backends/cuda/OwnKernels.h"
#include "runtime/kernels/Accumulate.h"

namespace dp::rt::cuda {
namespace {

/// The first element of this thread and the stride of the grid.
__device__ inline int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridStride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// op(i) for every i < n.
template <typename Op> __global__ void eachIndex(int64_t n, Op op) {
  for (int64_t i = firstIndex(); i < n; i += gridStride())
    op(i);
}

template <typename Op> cudaError_t launchEach(cudaStream_t stream, int64_t n, const Op &op) {
  if (n <= 0)
    return cudaSuccess;
  eachIndex<<<blocksFor(n), kThreadsPerBlock, 0, stream>>>(n, op);
  return cudaGetLastError();
}

/// The block's threads' values added in a fixed tree (the same order on every run); the sum
/// is valid on thread 0. Every thread of the block calls it.
__device__ double blockTotal(double value) {
  __shared__ double sums[kThreadsPerBlock];
  const int t = threadIdx.x;
  sums[t] = value;
  __syncthreads();
  for (int half = kThreadsPerBlock / 2; half > 0; half /= 2) {
    if (t < half)
      sums[t] += sums[t + half];
    __syncthreads();
  }
  return sums[0];
}

/// One block of kThreadsPerBlock threads: thread t's share(t, threads) added over the block in
/// a fixed tree, then finish(sum) on thread 0.
template <typename Share, typename Finish> __global__ void blockSum(Share share, Finish finish) {
  const double sum = blockTotal(share(threadIdx.x, kThreadsPerBlock));
  if (threadIdx.x == 0)
    finish(sum);
}

template <typename Share, typename Finish>
cudaError_t launchBlockSum(cudaStream_t stream, const Share &share, const Finish &finish) {
  blockSum<<<1, kThreadsPerBlock, 0, stream>>>(share, finish);
  return cudaGetLastError();
}

/// First pass of a sum over rows: block b sums chunk b's rows per column.
template <int K, typename Term>
__global__ void columnPartials(Term term, int64_t rows, int64_t cols, ColumnChunks split,
                               double *partials) {
  const int64_t chunk = blockIdx.x, begin = chunk * split.rowsPerChunk;
  const int64_t end = begin + split.rowsPerChunk < rows ? begin + split.rowsPerChunk : rows;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    double out[K];
    columnPartial<K>(term, begin, end, c, out);
    for (int k = 0; k < K; ++k)
      partials[(k * split.chunks + chunk) * cols + c] = out[k];
  }
}

/// Second pass: out_k[c] = scale * the chunks' partial sums of value k, in chunk order.
template <int K>
__global__ void columnTotals(const double *partials, int64_t cols, int64_t chunks, double scale,
                             float *out0, float *out1) {
  for (int64_t c = firstIndex(); c < cols; c += gridStride())
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int64_t b = 0; b < chunks; ++b)
        sum += partials[(k * chunks + b) * cols + c];
      (k == 0 ? out0 : out1)[c] = static_cast<float>(sum * scale);
    }
}

template <int K, typename Term>
cudaError_t launchColumnSums(cudaStream_t stream, const Term &term, int64_t rows, int64_t cols,
                             double scale, double *partials, float *out0, float *out1) {
  if (cols <= 0)
    return cudaSuccess;
  const ColumnChunks split = columnChunks(rows, cols);
  const int threads =
      cols < kThreadsPerBlock ? static_cast<int>((cols + 31) / 32 * 32) : kThreadsPerBlock;
  columnPartials<K><<<static_cast<unsigned>(split.chunks), threads, 0, stream>>>(term, rows, cols,
                                                                                 split, partials);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    return status;
  columnTotals<K><<<blocksFor(cols), kThreadsPerBlock, 0, stream>>>(partials, cols, split.chunks,
                                                                    scale, out0, out1);
  return cudaGetLastError();
}

// ---- the per-index operations ------------------------------------------------------------

struct ActivationOp {
  const float *x;
  float *y;
  Activation act;
  __device__ void operator()(int64_t i) const { y[i] = activate(act, x[i]); }
};
struct ActivationGradOp {
  const float *y, *dy;
  float *dx;
  Activation act;
  __device__ void operator()(int64_t i) const { dx[i] = activationGrad(act, y[i], dy[i]); }
};
struct BiasActivationOp {
  float *y;
  const float *b;
  int64_t cols;
  Activation act;
  __device__ void operator()(int64_t i) const { y[i] = biasActivationElement(y, b, cols, act, i); }
};
struct AddOp {
  const float *a, *b;
  float *c;
  __device__ void operator()(int64_t i) const { c[i] = a[i] + b[i]; }
};
struct AddRowsOp {
  const float *x, *b;
  float *y;
  int64_t cols;
  __device__ void operator()(int64_t i) const { y[i] = addRowsElement(x, b, cols, i); }
};
struct MulBroadcastOp {
  const float *a, *b;
  float *y;
  BroadcastShape s;
  __device__ void operator()(int64_t i) const { y[i] = broadcast::mulElement(s, a, b, i); }
};
struct MulReduceOp {
  const float *dy, *a;
  float *db;
  BroadcastShape s;
  __device__ void operator()(int64_t j) const {
    db[j] = broadcast::mulReduceElement(s, dy, a, j);
  }
};
struct MultiplyOp {
  const float *a, *b;
  float *c;
  __device__ void operator()(int64_t i) const { c[i] = a[i] * b[i]; }
};
struct FillOp {
  uint32_t *out;
  uint32_t pattern;
  __device__ void operator()(int64_t i) const { out[i] = pattern; }
};
struct SoftmaxOp {
  const float *x;
  float *y;
  int64_t cols;
  __device__ void operator()(int64_t r) const { softmaxRow(x + r * cols, y + r * cols, cols); }
};
struct SoftmaxGradOp {
  const float *y, *dy;
  float *dx;
  int64_t cols;
  __device__ void operator()(int64_t r) const {
    softmaxGradRow(y + r * cols, dy + r * cols, dx + r * cols, cols);
  }
};
struct XentGradOp {
  const float *logits;
  const int32_t *labels;
  const float *dloss;
  float *dlogits;
  int64_t rows, classes;
  const StepContext *ctx;
  float smoothing;
  __device__ void operator()(int64_t r) const {
    xentGradRow(logits + r * classes, labels[r], dloss[0], dlogits + r * classes, classes,
                ValidRows(*ctx, rows), rows, r, smoothing);
  }
};
/// Element i of the gradient of an element loss (Fns: runtime/kernels/SquaredError.h,
/// SigmoidXent.h).
template <typename Fns> struct ElementLossGradOp {
  const float *values, *target, *dloss;
  float *dvalues;
  int64_t rows, cols;
  const StepContext *ctx;
  __device__ void operator()(int64_t i) const {
    const ValidRows valid(*ctx, rows);
    Fns::gradElement(values, target, Fns::gradScale(dloss[0], valid, rows, cols), dvalues, cols,
                     valid, i);
  }
};
struct GatherOp {
  const float *table;
  const int32_t *indices;
  float *out;
  GatherShape s;
  __device__ void operator()(int64_t i) const { gatherElement(table, indices, out, s, i); }
};
// A thread per column: each sums its column's rows in the indices' order.
struct GatherGradOp {
  const float *dy;
  const int32_t *indices;
  float *dtable;
  GatherShape s;
  __device__ void operator()(int64_t k) const {
    gatherGradColumns(dy, indices, dtable, s, k, k + 1);
  }
};
struct DropoutOp {
  const float *x;
  float *y, *mask;
  int64_t cols;
  double rate;
  int64_t stream;
  const StepContext *ctx;
  __device__ void operator()(int64_t i) const {
    dropoutElement(x, y, mask, i, cols, rate, ctx->seed, ctx->step, stream, ctx->firstRow);
  }
};
struct LayerNormOp {
  const float *x, *gamma, *beta;
  float *y;
  int64_t c;
  double epsilon;
  __device__ void operator()(int64_t r) const {
    layerNormRow(x + r * c, gamma, beta, y + r * c, c, epsilon);
  }
};
struct LayerNormGradOp {
  const float *x, *gamma, *dy;
  float *dx;
  RowStats *rowStats;
  int64_t c;
  double epsilon;
  __device__ void operator()(int64_t r) const {
    rowStats[r] = layerNormGradRow(x + r * c, gamma, dy + r * c, dx + r * c, c, epsilon);
  }
};
struct BatchNormTrainOp {
  const float *x, *stats, *gamma, *beta;
  float *y;
  int64_t c;
  double epsilon;
  bool relu;
  __device__ void operator()(int64_t i) const {
    const float v = batchNormTrainElement(x, stats, gamma, beta, c, epsilon, i);
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
};
struct BatchNormInferOp {
  const float *x, *gamma, *beta, *mean, *var;
  float *y;
  int64_t c;
  double epsilon;
  bool relu;
  __device__ void operator()(int64_t i) const {
    const float v = batchNormInferElement(x, gamma, beta, mean, var, c, epsilon, i);
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
};
struct BatchNormGradInputOp {
  const float *x, *stats, *gamma, *dgamma, *dbeta, *dy;
  float *dx;
  int64_t rows, c;
  double epsilon;
  __device__ void operator()(int64_t i) const {
    dx[i] = batchNormGradInputElement(x, stats, gamma, dgamma, dbeta, dy, rows, c, epsilon, i);
  }
};
struct MovingStatsOp {
  const float *stats;
  float *mean, *var;
  int64_t c;
  double momentum;
  __device__ void operator()(int64_t k) const {
    movingStatsElement(stats, mean, var, c, momentum, k);
  }
};
struct ZeroPadOp {
  const float *x;
  float *y;
  Pad p;
  __device__ void operator()(int64_t i) const { y[i] = zeroPadElement(x, p, i); }
};
struct ZeroPadGradOp {
  const float *dy;
  float *dx;
  Pad p;
  __device__ void operator()(int64_t i) const { dx[i] = zeroPadGradElement(dy, p, i); }
};
struct MaxPoolOp {
  const float *x;
  float *y;
  Pool p;
  __device__ void operator()(int64_t i) const { y[i] = maxPoolElement(x, p, i); }
};
struct MaxPoolGradOp {
  const float *x, *dy;
  float *dx;
  Pool p;
  __device__ void operator()(int64_t i) const { dx[i] = maxPoolGradElement(x, dy, p, i); }
};
struct AvgPoolOp {
  const float *x;
  float *y;
  Pool p;
  __device__ void operator()(int64_t i) const { y[i] = avgPoolElement(x, p, i); }
};
struct AvgPoolGradOp {
  const float *dy;
  float *dx;
  Pool p;
  __device__ void operator()(int64_t i) const { dx[i] = avgPoolGradElement(dy, p, i); }
};
struct HwioToKrscOp {
  const float *w;
  float *k;
  int64_t f, rsc;
  __device__ void operator()(int64_t i) const { k[i] = hwioToKrscElement(w, f, rsc, i); }
};
struct KrscToHwioOp {
  const float *k;
  float *w;
  int64_t f, rsc;
  __device__ void operator()(int64_t i) const { w[i] = krscToHwioElement(k, f, rsc, i); }
};
struct PackKernelOp {
  const float *k;
  float *space;
  RnnWeightLayout layout;
  bool recurrent;
  int64_t in, u;
  __device__ void operator()(int64_t e) const {
    packKernelElement(k, space, recurrent ? layout.recurrent : layout.input, in, u, e);
  }
};
struct PackBiasOp {
  const float *b;
  float *space;
  RnnWeightLayout layout;
  int64_t u;
  __device__ void operator()(int64_t e) const { space[biasOffset(layout.bias, u, e)] = b[e]; }
};
struct UnpackKernelOp {
  const float *space;
  float *k;
  RnnWeightLayout layout;
  bool recurrent;
  int64_t in, u;
  __device__ void operator()(int64_t e) const {
    k[e] = kernelElement(space, recurrent ? layout.recurrent : layout.input, in, u, e);
  }
};
struct UnpackBiasOp {
  const float *space;
  float *b;
  RnnWeightLayout layout;
  int64_t u;
  __device__ void operator()(int64_t e) const { b[e] = space[biasOffset(layout.bias, u, e)]; }
};
struct ConcatOp {
  const uint32_t *const *parts;
  const int64_t *starts, *words;
  int count;
  uint32_t *out;
  int64_t outWords;
  __device__ void operator()(int64_t w) const {
    out[w] = concatWord(parts, starts, words, count, outWords, w);
  }
};
template <typename Element> struct TransposeOp {
  const Element *x;
  Element *y;
  int64_t da, middle, db, inner;
  __device__ void operator()(int64_t i) const {
    y[i] = x[transposeSource(da, middle, db, inner, i)];
  }
};
struct SliceOp {
  const uint32_t *x;
  int64_t inWords, offsetWords;
  uint32_t *out;
  int64_t outWords;
  __device__ void operator()(int64_t w) const {
    out[w] = sliceWord(x, inWords, offsetWords, outWords, w);
  }
};

// ---- single-block sums -------------------------------------------------------------------

struct XentShareOp {
  const float *logits;
  const int32_t *labels;
  int64_t rows, classes;
  const StepContext *ctx;
  float smoothing;
  __device__ double operator()(int t, int threads) const {
    return xentShare(logits, labels, rows, classes, ValidRows(*ctx, rows), t, threads, smoothing);
  }
};
struct XentFinishOp {
  float *loss;
  int64_t rows;
  const StepContext *ctx;
  __device__ void operator()(double sum) const {
    loss[0] = xentLoss(sum, ValidRows(*ctx, rows), rows);
  }
};
/// A thread's share of a sum over the valid rows' elements (Fns::share), and its output.
template <typename Fns> struct ElementShareOp {
  const float *values, *target;
  int64_t rows, cols;
  const StepContext *ctx;
  __device__ double operator()(int t, int threads) const {
    return Fns::share(values, target, rows, cols, ValidRows(*ctx, rows), t, threads);
  }
};
template <typename Fns> struct ElementFinishOp {
  float *out;
  int64_t rows, cols;
  const StepContext *ctx;
  __device__ void operator()(double sum) const {
    out[0] = Fns::finish(sum, ValidRows(*ctx, rows), rows, cols);
  }
};
template <typename Fns>
cudaError_t launchElementSumOf(cudaStream_t stream, const float *values, const float *target,
                               float *out, int64_t rows, int64_t cols, const StepContext *ctx) {
  return launchBlockSum(stream, ElementShareOp<Fns>{values, target, rows, cols, ctx},
                        ElementFinishOp<Fns>{out, rows, cols, ctx});
}
struct CorrectShareOp {
  const float *logits;
  const int32_t *labels;
  int64_t rows, classes;
  const StepContext *ctx;
  __device__ double operator()(int t, int threads) const {
    const ValidRows valid(*ctx, rows);
    double count = 0;
    for (int64_t r = t; r < rows; r += threads) {
      const int c = correctRow(logits + r * classes, labels[r], classes, valid, r);
      count += c < 0 ? NAN : c;
    }
    return count;
  }
};
struct CorrectFinishOp {
  float *out;
  int64_t rows;
  const StepContext *ctx;
  __device__ void operator()(double sum) const {
    out[0] = correctCount(isnan(sum) ? 0 : static_cast<int64_t>(sum), isnan(sum),
                          ValidRows(*ctx, rows), rows);
  }
};

// ---- updates -----------------------------------------------------------------------------

/// The first pass of a gradient's sum of squares: block b's threads take the elements of the
/// grid's stride from b * threads + t, and partials[b] gets the block's tree sum. The grid's
/// size is a function of n only (clipBlocks), so the order is fixed.
__global__ void squarePartials(const float *x, int64_t n, double *partials) {
  const double sum = blockTotal(sumOfSquares(x, firstIndex(), n, gridStride()));
  if (threadIdx.x == 0)
    partials[blockIdx.x] = sum;
}
/// The second pass: thread t's share of the partials.
struct PartialsShareOp {
  const double *partials;
  int count;
  __device__ double operator()(int t, int threads) const {
    double sum = 0;
    for (int b = t; b < count; b += threads)
      sum += partials[b];
    return sum;
  }
};
/// The block's sum into the running total: the first gradient's sets it.
struct AccumulateOp {
  double *total;
  bool first;
  __device__ void operator()(double sum) const { *total = first ? sum : *total + sum; }
};
struct ClipFactorOp {
  const double *total;
  float *factor;
  double maxNorm;
  __device__ void operator()(int64_t) const { factor[0] = clipFactor(*total, maxNorm); }
};

__global__ void updateKernel(TensorSegment tensor, UpdateRule compiled, const StepContext *ctx) {
  const UpdateRule rule = scheduled(compiled, ctx->lrScale);
  const AdamStep adam = stepOf(rule, ctx->step);
  for (int64_t i = firstIndex(); i < tensor.elements; i += gridStride())
    updateTensorElement(tensor, i, rule, adam);
}

} // namespace

int blocksFor(int64_t n) {
  // Enough blocks to fill an H100 several times over; the grid strides over the rest.
  const int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<int>(blocks < 1 ? 1 : blocks > 4096 ? 4096 : blocks);
}

namespace {
/// Kernels.def's accumulate: the micro-shard (StepContext::microShard, read on the device)
/// picks whether the gradient starts the sum, adds to it, or ends it as the mean.
struct MicroShardSumOp {
  const float *g;
  float *sum, *partials;
  int64_t n, count;
  const StepContext *ctx;
  __device__ void operator()(int64_t i) const {
    float *s = sum, *p = partials;
    const int64_t size = n;
    accumulateElement(g[i], ctx->microShard, count, [=](int l) -> float & {
      return l == 0 ? s[i] : p[(l - 1) * size + i];
    });
  }
};
} // namespace

cudaError_t launchAccumulate(cudaStream_t stream, const float *g, float *sum, float *partials,
                             int64_t n, int64_t count, const StepContext *ctx) {
  return launchEach(stream, n, MicroShardSumOp{g, sum, partials, n, count, ctx});
}

namespace {
template <typename Fn> struct PointwiseOp {
  const float *x;
  float *y;
  __device__ void operator()(int64_t i) const { y[i] = Fn::forward(x[i]); }
};
template <typename Fn> struct PointwiseGradOp {
  const float *x, *dy;
  float *dx;
  __device__ void operator()(int64_t i) const { dx[i] = Fn::backward(x[i], dy[i]); }
};
} // namespace

template <typename Fn>
cudaError_t launchPointwise(cudaStream_t stream, const float *x, float *y, int64_t n) {
  return launchEach(stream, n, PointwiseOp<Fn>{x, y});
}
template <typename Fn>
cudaError_t launchPointwiseGrad(cudaStream_t stream, const float *x, const float *dy, float *dx,
                                int64_t n) {
  return launchEach(stream, n, PointwiseGradOp<Fn>{x, dy, dx});
}
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_POINTWISE_KERNEL(Enum, Name, Fn)                                                      \
  template cudaError_t launchPointwise<pointwise::Fn>(cudaStream_t, const float *, float *,     \
                                                      int64_t);
#define DP_POINTWISE_GRAD_KERNEL(Enum, Name, Fn)                                                 \
  template cudaError_t launchPointwiseGrad<pointwise::Fn>(cudaStream_t, const float *,          \
                                                          const float *, float *, int64_t);
#include "runtime/format/Kernels.def"

cudaError_t launchActivation(cudaStream_t stream, const float *x, float *y, int64_t n,
                             Activation act) {
  return launchEach(stream, n, ActivationOp{x, y, act});
}
cudaError_t launchActivationGrad(cudaStream_t stream, const float *y, const float *dy, float *dx,
                                 int64_t n, Activation act) {
  return launchEach(stream, n, ActivationGradOp{y, dy, dx, act});
}
cudaError_t launchBiasActivation(cudaStream_t stream, float *y, const float *b, int64_t rows,
                                 int64_t cols, Activation act) {
  return launchEach(stream, rows * cols, BiasActivationOp{y, b, cols, act});
}
cudaError_t launchAdd(cudaStream_t stream, const float *a, const float *b, float *c, int64_t n) {
  return launchEach(stream, n, AddOp{a, b, c});
}
cudaError_t launchAddRows(cudaStream_t stream, const float *x, const float *b, float *y,
                          int64_t rows, int64_t cols) {
  return launchEach(stream, rows * cols, AddRowsOp{x, b, y, cols});
}
cudaError_t launchMulBroadcast(cudaStream_t stream, const float *a, const float *b, float *y,
                               const BroadcastShape &s) {
  return launchEach(stream, s.elements, MulBroadcastOp{a, b, y, s});
}
cudaError_t launchMulReduce(cudaStream_t stream, const float *dy, const float *a, float *db,
                            const BroadcastShape &s) {
  return launchEach(stream, s.bElements, MulReduceOp{dy, a, db, s});
}
cudaError_t launchMultiply(cudaStream_t stream, const float *a, const float *b, float *c,
                           int64_t n) {
  return launchEach(stream, n, MultiplyOp{a, b, c});
}
cudaError_t launchFill(cudaStream_t stream, uint32_t *out, uint32_t pattern, int64_t n) {
  return launchEach(stream, n, FillOp{out, pattern});
}

cudaError_t launchSoftmax(cudaStream_t stream, const float *x, float *y, int64_t rows,
                          int64_t cols) {
  return launchEach(stream, rows, SoftmaxOp{x, y, cols});
}
cudaError_t launchSoftmaxGrad(cudaStream_t stream, const float *y, const float *dy, float *dx,
                              int64_t rows, int64_t cols) {
  return launchEach(stream, rows, SoftmaxGradOp{y, dy, dx, cols});
}
cudaError_t launchSoftmaxXent(cudaStream_t stream, const float *logits, const int32_t *labels,
                              float *loss, int64_t rows, int64_t classes, const StepContext *ctx,
                              float smoothing) {
  return launchBlockSum(stream, XentShareOp{logits, labels, rows, classes, ctx, smoothing},
                        XentFinishOp{loss, rows, ctx});
}
cudaError_t launchSoftmaxXentGrad(cudaStream_t stream, const float *logits, const int32_t *labels,
                                  const float *dloss, float *dlogits, int64_t rows, int64_t classes,
                                  const StepContext *ctx, float smoothing) {
  return launchEach(stream, rows,
                    XentGradOp{logits, labels, dloss, dlogits, rows, classes, ctx, smoothing});
}
cudaError_t launchElementSum(cudaStream_t stream, ElementSum kind, const float *values,
                             const float *target, float *out, int64_t rows, int64_t cols,
                             const StepContext *ctx) {
  switch (kind) {
  case ElementSum::SquaredError:
    return launchElementSumOf<SquaredErrorFns>(stream, values, target, out, rows, cols, ctx);
  case ElementSum::SigmoidXent:
    return launchElementSumOf<SigmoidXentFns>(stream, values, target, out, rows, cols, ctx);
  case ElementSum::BinaryCorrect:
    return launchElementSumOf<BinaryCorrectFns>(stream, values, target, out, rows, cols, ctx);
  }
  return cudaErrorInvalidValue;
}
cudaError_t launchElementLossGrad(cudaStream_t stream, ElementSum kind, const float *values,
                                  const float *target, const float *dloss, float *dvalues,
                                  int64_t rows, int64_t cols, const StepContext *ctx) {
  switch (kind) {
  case ElementSum::SquaredError:
    return launchEach(stream, rows * cols,
                      ElementLossGradOp<SquaredErrorFns>{values, target, dloss, dvalues, rows, cols,
                                                         ctx});
  case ElementSum::SigmoidXent:
    return launchEach(stream, rows * cols,
                      ElementLossGradOp<SigmoidXentFns>{values, target, dloss, dvalues, rows, cols,
                                                        ctx});
  case ElementSum::BinaryCorrect:
    break; // a count has no gradient
  }
  return cudaErrorInvalidValue;
}
cudaError_t launchGather(cudaStream_t stream, const float *table, const int32_t *indices,
                         float *out, const GatherShape &s) {
  return launchEach(stream, s.n * s.width, GatherOp{table, indices, out, s});
}
cudaError_t launchGatherGrad(cudaStream_t stream, const float *dy, const int32_t *indices,
                             float *dtable, const GatherShape &s) {
  return launchEach(stream, s.width, GatherGradOp{dy, indices, dtable, s});
}
cudaError_t launchCountCorrect(cudaStream_t stream, const float *logits, const int32_t *labels,
                               float *correct, int64_t rows, int64_t classes,
                               const StepContext *ctx) {
  return launchBlockSum(stream, CorrectShareOp{logits, labels, rows, classes, ctx},
                        CorrectFinishOp{correct, rows, ctx});
}
cudaError_t launchDropout(cudaStream_t stream, const float *x, float *y, float *mask, int64_t rows,
                          int64_t cols, double rate, int64_t dropoutStream,
                          const StepContext *ctx) {
  return launchEach(stream, rows * cols, DropoutOp{x, y, mask, cols, rate, dropoutStream, ctx});
}
cudaError_t launchLayerNorm(cudaStream_t stream, const float *x, const float *gamma,
                            const float *beta, float *y, int64_t rows, int64_t c, double epsilon) {
  return launchEach(stream, rows, LayerNormOp{x, gamma, beta, y, c, epsilon});
}

size_t columnPartialsBytes(int64_t rows, int64_t cols, int values) {
  return static_cast<size_t>(columnChunks(rows, cols).chunks * cols * values) * sizeof(double);
}
cudaError_t launchReduceRows(cudaStream_t stream, const float *x, float *y, int64_t rows,
                             int64_t cols, double *partials) {
  return launchColumnSums<1>(stream, SumTerm{x, cols}, rows, cols, 1.0, partials, y, nullptr);
}
cudaError_t launchBatchMoments(cudaStream_t stream, const float *x, float *stats, int64_t rows,
                               int64_t c, double *partials) {
  return launchColumnSums<2>(stream, MomentsTerm{x, c}, rows, c, 1.0 / double(rows), partials,
                             stats, stats + c);
}
cudaError_t launchBatchNormGradParams(cudaStream_t stream, const float *x, const float *stats,
                                      const float *dy, float *dgamma, float *dbeta, int64_t rows,
                                      int64_t c, double epsilon, double *partials) {
  return launchColumnSums<2>(stream, BatchNormParamsTerm{x, stats, dy, c, epsilon}, rows, c, 1.0,
                             partials, dgamma, dbeta);
}
cudaError_t launchLayerNormGrad(cudaStream_t stream, const float *x, const float *gamma,
                                const float *dy, float *dx, float *dgamma, float *dbeta,
                                int64_t rows, int64_t c, double epsilon, RowStats *rowStats,
                                double *partials) {
  const cudaError_t status =
      launchEach(stream, rows, LayerNormGradOp{x, gamma, dy, dx, rowStats, c, epsilon});
  if (status != cudaSuccess)
    return status;
  return launchColumnSums<2>(stream, LayerNormParamsTerm{x, dy, rowStats, c}, rows, c, 1.0,
                             partials, dgamma, dbeta);
}

cudaError_t launchBatchNormTrain(cudaStream_t stream, const float *x, const float *stats,
                                 const float *gamma, const float *beta, float *y, int64_t n,
                                 int64_t c, double epsilon, bool relu) {
  return launchEach(stream, n, BatchNormTrainOp{x, stats, gamma, beta, y, c, epsilon, relu});
}
cudaError_t launchBatchNormInfer(cudaStream_t stream, const float *x, const float *gamma,
                                 const float *beta, const float *movingMean, const float *movingVar,
                                 float *y, int64_t n, int64_t c, double epsilon, bool relu) {
  return launchEach(stream, n,
                    BatchNormInferOp{x, gamma, beta, movingMean, movingVar, y, c, epsilon, relu});
}
cudaError_t launchBatchNormGradInput(cudaStream_t stream, const float *x, const float *stats,
                                     const float *gamma, const float *dgamma, const float *dbeta,
                                     const float *dy, float *dx, int64_t rows, int64_t c,
                                     double epsilon) {
  return launchEach(stream, rows * c,
                    BatchNormGradInputOp{x, stats, gamma, dgamma, dbeta, dy, dx, rows, c, epsilon});
}
cudaError_t launchMovingStats(cudaStream_t stream, const float *stats, float *movingMean,
                              float *movingVar, int64_t c, double momentum) {
  return launchEach(stream, c, MovingStatsOp{stats, movingMean, movingVar, c, momentum});
}

cudaError_t launchZeroPad(cudaStream_t stream, const float *x, float *y, const Pad &p) {
  return launchEach(stream, p.n * p.ph * p.pw * p.c, ZeroPadOp{x, y, p});
}
cudaError_t launchZeroPadGrad(cudaStream_t stream, const float *dy, float *dx, const Pad &p) {
  return launchEach(stream, p.n * p.h * p.w * p.c, ZeroPadGradOp{dy, dx, p});
}
cudaError_t launchMaxPool(cudaStream_t stream, const float *x, float *y, const Pool &p) {
  return launchEach(stream, p.n * p.oh * p.ow * p.c, MaxPoolOp{x, y, p});
}
cudaError_t launchMaxPoolGrad(cudaStream_t stream, const float *x, const float *dy, float *dx,
                              const Pool &p) {
  return launchEach(stream, p.n * p.h * p.w * p.c, MaxPoolGradOp{x, dy, dx, p});
}
cudaError_t launchAvgPool(cudaStream_t stream, const float *x, float *y, const Pool &p) {
  return launchEach(stream, p.n * p.oh * p.ow * p.c, AvgPoolOp{x, y, p});
}
cudaError_t launchAvgPoolGrad(cudaStream_t stream, const float *dy, float *dx, const Pool &p) {
  return launchEach(stream, p.n * p.h * p.w * p.c, AvgPoolGradOp{dy, dx, p});
}

cudaError_t launchHwioToKrsc(cudaStream_t stream, const float *w, float *k, int64_t f,
                             int64_t rsc) {
  return launchEach(stream, f * rsc, HwioToKrscOp{w, k, f, rsc});
}
cudaError_t launchKrscToHwio(cudaStream_t stream, const float *k, float *w, int64_t f,
                             int64_t rsc) {
  return launchEach(stream, f * rsc, KrscToHwioOp{k, w, f, rsc});
}
cudaError_t launchPackLstmWeights(cudaStream_t stream, const float *w, const float *r,
                                  const float *b, float *space, const RnnWeightLayout &layout,
                                  int64_t f, int64_t u) {
  cudaError_t status = launchEach(stream, 4 * u * f, PackKernelOp{w, space, layout, false, f, u});
  if (status == cudaSuccess)
    status = launchEach(stream, 4 * u * u, PackKernelOp{r, space, layout, true, u, u});
  if (status == cudaSuccess)
    status = launchEach(stream, 4 * u, PackBiasOp{b, space, layout, u});
  return status;
}
cudaError_t launchUnpackLstmGrads(cudaStream_t stream, const float *space,
                                  const RnnWeightLayout &layout, float *dw, float *dr, float *db,
                                  int64_t f, int64_t u) {
  cudaError_t status =
      launchEach(stream, 4 * u * f, UnpackKernelOp{space, dw, layout, false, f, u});
  if (status == cudaSuccess)
    status = launchEach(stream, 4 * u * u, UnpackKernelOp{space, dr, layout, true, u, u});
  if (status == cudaSuccess)
    status = launchEach(stream, 4 * u, UnpackBiasOp{space, db, layout, u});
  return status;
}
cudaError_t launchConcat(cudaStream_t stream, const uint32_t *const *parts,
                         const int64_t *partStarts, const int64_t *partWords, int count,
                         uint32_t *out, int64_t outWords, int64_t totalWords) {
  return launchEach(stream, totalWords,
                    ConcatOp{parts, partStarts, partWords, count, out, outWords});
}
cudaError_t launchSlice(cudaStream_t stream, const uint32_t *x, int64_t inWords,
                        int64_t offsetWords, uint32_t *out, int64_t outWords, int64_t totalWords) {
  return launchEach(stream, totalWords, SliceOp{x, inWords, offsetWords, out, outWords});
}

cudaError_t launchTranspose(cudaStream_t stream, const void *x, void *y, int64_t elementBytes,
                            int64_t da, int64_t middle, int64_t db, int64_t inner,
                            int64_t total) {
  if (elementBytes == 2)
    return launchEach(stream, total,
                      TransposeOp<uint16_t>{static_cast<const uint16_t *>(x),
                                            static_cast<uint16_t *>(y), da, middle, db, inner});
  return launchEach(stream, total,
                    TransposeOp<uint32_t>{static_cast<const uint32_t *>(x),
                                          static_cast<uint32_t *>(y), da, middle, db, inner});
}

cudaError_t launchClipFactor(cudaStream_t stream, const float *const *gradients,
                             const int64_t *sizes, int count, double *sum, float *factor,
                             double maxNorm) {
  double *partials = sum + 1;
  for (int i = 0; i < count; ++i) {
    const int blocks = clipBlocks(sizes[i]);
    squarePartials<<<blocks, kThreadsPerBlock, 0, stream>>>(gradients[i], sizes[i], partials);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      return e;
    if (cudaError_t e = launchBlockSum(stream, PartialsShareOp{partials, blocks},
                                       AccumulateOp{sum, i == 0});
        e != cudaSuccess)
      return e;
  }
  return launchEach(stream, 1, ClipFactorOp{sum, factor, maxNorm});
}

cudaError_t launchUpdate(cudaStream_t stream, const TensorSegment &tensor, const UpdateRule &rule,
                         const StepContext *ctx) {
  if (tensor.elements <= 0)
    return cudaSuccess;
  updateKernel<<<blocksFor(tensor.elements), kThreadsPerBlock, 0, stream>>>(tensor, rule, ctx);
  return cudaGetLastError();
}

} // namespace dp::rt::cuda
