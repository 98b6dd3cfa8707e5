// Launches of the CUDA backend's own kernels (OwnKernels.cu) on a stream. Each returns the
// launch's cudaError_t (cudaSuccess when it was enqueued); errors of the kernel itself surface
// at the stream's next synchronisation, as CUDA reports them. Kernels that depend on the step
// (losses over the valid rows, Adam's step size, dropout's draws) read its StepContext from
// device memory, where a captured step's launch puts it.
#pragma once

#include "runtime/backends/cuda/ImageOps.h"
#include "runtime/backends/cuda/Ops.h"
#include "runtime/backends/cuda/RnnOps.h"
#include "runtime/backends/cuda/RowOps.h"
#include "runtime/device/StepContext.h"
#include "runtime/kernels/Broadcast.h"
#include "runtime/kernels/ClipNorm.h"
#include "runtime/kernels/Gather.h"
#include "runtime/kernels/Pointwise.h"
#include "runtime/kernels/SigmoidXent.h"
#include "runtime/kernels/SquaredError.h"

#include <cuda_runtime_api.h>

namespace dp::rt::cuda {

/// Threads per block of the grid-stride kernels, and the blocks for `n` elements (bounded:
/// the grid strides over the rest).
inline constexpr int kThreadsPerBlock = 256;
int blocksFor(int64_t n);

// ---- pointwise (runtime/kernels/Pointwise.h; instantiated for every pointwise kind of
// Kernels.def)
/// y = Fn::forward(x) over n elements.
template <typename Fn>
cudaError_t launchPointwise(cudaStream_t stream, const float *x, float *y, int64_t n);
/// dx = Fn::backward(x, dy) over n elements.
template <typename Fn>
cudaError_t launchPointwiseGrad(cudaStream_t stream, const float *x, const float *dy, float *dx,
                                int64_t n);

// ---- elementwise
/// y = act(x) over n elements (not softmax).
cudaError_t launchActivation(cudaStream_t stream, const float *x, float *y, int64_t n,
                             Activation act);
/// dx = dy * act'(.) through y, over n elements (not softmax).
cudaError_t launchActivationGrad(cudaStream_t stream, const float *y, const float *dy, float *dx,
                                 int64_t n, Activation act);
/// y[r, j] = act(y[r, j] + b[j]) in place over rows x cols (b may be null; not softmax).
cudaError_t launchBiasActivation(cudaStream_t stream, float *y, const float *b, int64_t rows,
                                 int64_t cols, Activation act);
/// c = a + b over n elements.
cudaError_t launchAdd(cudaStream_t stream, const float *a, const float *b, float *c, int64_t n);
/// y = x + b over `rows` rows of `cols` (addRowsElement).
cudaError_t launchAddRows(cudaStream_t stream, const float *x, const float *b, float *y,
                          int64_t rows, int64_t cols);
/// y = a * b with b broadcast (broadcast::mulElement), and db = mul_reduce(dy, a)
/// (broadcast::mulReduceElement): one thread per element of y or of db.
cudaError_t launchMulBroadcast(cudaStream_t stream, const float *a, const float *b, float *y,
                               const BroadcastShape &s);
cudaError_t launchMulReduce(cudaStream_t stream, const float *dy, const float *a, float *db,
                            const BroadcastShape &s);
/// c = a * b over n elements.
cudaError_t launchMultiply(cudaStream_t stream, const float *a, const float *b, float *c,
                           int64_t n);
/// out[i] = pattern for n 4-byte words.
cudaError_t launchFill(cudaStream_t stream, uint32_t *out, uint32_t pattern, int64_t n);

// ---- rows
/// y = softmax(x) per row of `cols`; y may be x.
cudaError_t launchSoftmax(cudaStream_t stream, const float *x, float *y, int64_t rows,
                          int64_t cols);
/// dx = softmax gradient through y per row.
cudaError_t launchSoftmaxGrad(cudaStream_t stream, const float *y, const float *dy, float *dx,
                              int64_t rows, int64_t cols);
cudaError_t launchSoftmaxXent(cudaStream_t stream, const float *logits, const int32_t *labels,
                              float *loss, int64_t rows, int64_t classes, const StepContext *ctx,
                              float smoothing);
cudaError_t launchSoftmaxXentGrad(cudaStream_t stream, const float *logits, const int32_t *labels,
                                  const float *dloss, float *dlogits, int64_t rows, int64_t classes,
                                  const StepContext *ctx, float smoothing);
/// The mean squared error of prediction against target [rows, cols] over the valid rows (one
/// block, summed in a fixed order), and its gradient (runtime/kernels/SquaredError.h).
/// The sums over the valid rows' elements of values and targets [rows, cols]: the mean squared
/// error, the binary cross-entropy of logits, the binary accuracy's count
/// (runtime/kernels/SquaredError.h, SigmoidXent.h).
enum class ElementSum { SquaredError, SigmoidXent, BinaryCorrect };
/// out[0] = the sum of `kind` in the single-block sum's fixed order.
cudaError_t launchElementSum(cudaStream_t stream, ElementSum kind, const float *values,
                             const float *target, float *out, int64_t rows, int64_t cols,
                             const StepContext *ctx);
/// The gradient of loss `kind` (not BinaryCorrect) with respect to the values, a thread per
/// element.
cudaError_t launchElementLossGrad(cudaStream_t stream, ElementSum kind, const float *values,
                                  const float *target, const float *dloss, float *dvalues,
                                  int64_t rows, int64_t cols, const StepContext *ctx);
/// An embedding lookup, and its table's gradient with a thread per column
/// (runtime/kernels/Gather.h).
cudaError_t launchGather(cudaStream_t stream, const float *table, const int32_t *indices,
                         float *out, const GatherShape &s);
cudaError_t launchGatherGrad(cudaStream_t stream, const float *dy, const int32_t *indices,
                             float *dtable, const GatherShape &s);
cudaError_t launchCountCorrect(cudaStream_t stream, const float *logits, const int32_t *labels,
                               float *correct, int64_t rows, int64_t classes,
                               const StepContext *ctx);
/// Dropout's mask (the CPU backend's draws) and y = x * mask, a thread per row.
cudaError_t launchDropout(cudaStream_t stream, const float *x, float *y, float *mask, int64_t rows,
                          int64_t cols, double rate, int64_t dropoutStream, const StepContext *ctx);
cudaError_t launchLayerNorm(cudaStream_t stream, const float *x, const float *gamma,
                            const float *beta, float *y, int64_t rows, int64_t c, double epsilon);

// ---- sums over rows (two passes through `partials`, columnPartialsBytes of them)
/// Bytes of the partial sums of K values per column of a [rows, cols] sum.
size_t columnPartialsBytes(int64_t rows, int64_t cols, int values);
/// y[cols] = sum over rows of x.
cudaError_t launchReduceRows(cudaStream_t stream, const float *x, float *y, int64_t rows,
                             int64_t cols, double *partials);
/// stats[2, c] = (mean, mean of squares) over rows.
cudaError_t launchBatchMoments(cudaStream_t stream, const float *x, float *stats, int64_t rows,
                               int64_t c, double *partials);
cudaError_t launchBatchNormGradParams(cudaStream_t stream, const float *x, const float *stats,
                                      const float *dy, float *dgamma, float *dbeta, int64_t rows,
                                      int64_t c, double epsilon, double *partials);
/// dx per row, then dgamma and dbeta over the rows (rowStats: `rows` RowStats of scratch).
cudaError_t launchLayerNormGrad(cudaStream_t stream, const float *x, const float *gamma,
                                const float *dy, float *dx, float *dgamma, float *dbeta,
                                int64_t rows, int64_t c, double epsilon, RowStats *rowStats,
                                double *partials);

// ---- batch normalisation
/// `relu`: y = max(0, ...), the fused activation (contract::NormShape::relu).
cudaError_t launchBatchNormTrain(cudaStream_t stream, const float *x, const float *stats,
                                 const float *gamma, const float *beta, float *y, int64_t n,
                                 int64_t c, double epsilon, bool relu);
cudaError_t launchBatchNormInfer(cudaStream_t stream, const float *x, const float *gamma,
                                 const float *beta, const float *movingMean, const float *movingVar,
                                 float *y, int64_t n, int64_t c, double epsilon, bool relu);
cudaError_t launchBatchNormGradInput(cudaStream_t stream, const float *x, const float *stats,
                                     const float *gamma, const float *dgamma, const float *dbeta,
                                     const float *dy, float *dx, int64_t rows, int64_t c,
                                     double epsilon);
cudaError_t launchMovingStats(cudaStream_t stream, const float *stats, float *movingMean,
                              float *movingVar, int64_t c, double momentum);

// ---- images
cudaError_t launchZeroPad(cudaStream_t stream, const float *x, float *y, const Pad &p);
cudaError_t launchZeroPadGrad(cudaStream_t stream, const float *dy, float *dx, const Pad &p);
cudaError_t launchMaxPool(cudaStream_t stream, const float *x, float *y, const Pool &p);
cudaError_t launchMaxPoolGrad(cudaStream_t stream, const float *x, const float *dy, float *dx,
                              const Pool &p);
cudaError_t launchAvgPool(cudaStream_t stream, const float *x, float *y, const Pool &p);
cudaError_t launchAvgPoolGrad(cudaStream_t stream, const float *dy, float *dx, const Pool &p);

// ---- convolution filters (f * rsc elements)
cudaError_t launchHwioToKrsc(cudaStream_t stream, const float *w, float *k, int64_t f, int64_t rsc);
cudaError_t launchKrscToHwio(cudaStream_t stream, const float *k, float *w, int64_t f, int64_t rsc);

// ---- the LSTM's weights (RnnOps.h)
/// dp's w[f,4u], r[u,4u], b[4u] into cuDNN's weight space at `layout`.
cudaError_t launchPackLstmWeights(cudaStream_t stream, const float *w, const float *r,
                                  const float *b, float *space, const RnnWeightLayout &layout,
                                  int64_t f, int64_t u);
/// The weight space's gradient at `layout` into dp's dw, dr, db.
cudaError_t launchUnpackLstmGrads(cudaStream_t stream, const float *space,
                                  const RnnWeightLayout &layout, float *dw, float *dr, float *db,
                                  int64_t f, int64_t u);

// ---- data movement (4-byte words)
/// `parts`, `partStarts` and `partWords`: `count` entries in device memory (see concatWord).
cudaError_t launchConcat(cudaStream_t stream, const uint32_t *const *parts,
                         const int64_t *partStarts, const int64_t *partWords, int count,
                         uint32_t *out, int64_t outWords, int64_t totalWords);
cudaError_t launchSlice(cudaStream_t stream, const uint32_t *x, int64_t inWords,
                        int64_t offsetWords, uint32_t *out, int64_t outWords, int64_t totalWords);
/// y = x [outer, da, middle, db, inner] with the axes da and db exchanged (transposeSource), of
/// `total` elements of 2 or 4 bytes.
cudaError_t launchTranspose(cudaStream_t stream, const void *x, void *y, int64_t elementBytes,
                            int64_t da, int64_t middle, int64_t db, int64_t inner, int64_t total);

// ---- optimizer updates
/// One tensor updated by `rule` (Adam's step from ctx).
cudaError_t launchUpdate(cudaStream_t stream, const TensorSegment &tensor, const UpdateRule &rule,
                         const StepContext *ctx);
/// The blocks of the first pass of a clip factor's sum over n elements (at most kClipPartials,
/// each thread taking 16 elements or more): a function of n only.
inline constexpr int kClipPartials = 1024;
inline int clipBlocks(int64_t n) {
  const int64_t blocks = (n + kThreadsPerBlock * 16 - 1) / (kThreadsPerBlock * 16);
  return static_cast<int>(blocks < 1 ? 1 : blocks > kClipPartials ? kClipPartials : blocks);
}
/// factor[0] = clipFactor of the sum of squares of `count` gradients (sizes[i] elements each):
/// each gradient's over clipBlocks blocks into partials (scratch after *sum), the partials in
/// a single block's fixed tree, added in turn into *sum (a double of scratch), then the factor
/// from it. The same order on every run and every replica. Scratch: 1 + kClipPartials doubles.
cudaError_t launchClipFactor(cudaStream_t stream, const float *const *gradients,
                             const int64_t *sizes, int count, double *sum, float *factor,
                             double maxNorm);

/// Kernels.def's accumulate of n elements over `count` micro-shards, on the micro-shard that
/// *ctx (device memory) names; `partials` the levels past 0 (null for count <= 2).
cudaError_t launchAccumulate(cudaStream_t stream, const float *g, float *sum, float *partials,
                             int64_t n, int64_t count, const StepContext *ctx);

} // namespace dp::rt::cuda
