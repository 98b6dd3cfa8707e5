// The CUDA backend's kernels: each plan kernel checked by the kernel contract (the same checks
// and messages as every backend), then bound at load to its buffers and launch parameters.
// run() only enqueues: on the stream being launched, or being captured into a step's graph.
// Products go to cuBLAS (Blas.h), convolutions and the LSTM to cuDNN (Conv.h, Rnn.h);
// everything else is an own kernel (OwnKernels.h).
//
// NEVER RUN ON A GPU: compiled and linked here; the own kernels' source and the cuBLAS
// and cuDNN translations are tested on the host (docs/cuda.md).
#include "runtime/backends/cuda/Blas.h"
#include "runtime/backends/cuda/Conv.h"
#include "runtime/backends/cuda/Internal.h"
#include "runtime/backends/cuda/Libraries.h"
#include "runtime/backends/cuda/OwnKernels.h"
#include "runtime/backends/cuda/Rnn.h"
#include "runtime/kernels/Contract.h"

#include <algorithm>
#include <functional>
#include <vector>

// cuDNN's convolution API is deprecated in cuDNN 9 (Libraries.h).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace dp::rt::cuda {
namespace {

using contract::Rows;

/// A kernel that is one enqueue function of the stream, bound at load.
class LaunchKernel final : public Kernel {
public:
  using Enqueue = std::function<cudaError_t(cudaStream_t)>;
  LaunchKernel(std::string where, Enqueue enqueue)
      : where_(std::move(where)), enqueue_(std::move(enqueue)) {}
  void run(const StepContext &) override { check(enqueue_(launchStream()), where_); }

private:
  std::string where_;
  Enqueue enqueue_;
};

std::unique_ptr<Kernel> launching(const KernelSite &site, LaunchKernel::Enqueue enqueue) {
  return std::make_unique<LaunchKernel>(site.where(), std::move(enqueue));
}

/// The enqueue of a device-to-device copy of `bytes` (nothing when the bytes are the same).
LaunchKernel::Enqueue copying(const void *from, void *to, size_t bytes) {
  return [=](cudaStream_t stream) {
    return from == to ? cudaSuccess
                      : cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, stream);
  };
}

/// Throws Error(Runtime) naming the kernel, the call and the device unless `status` is
/// CUDNN_STATUS_SUCCESS.
void checkDnn(cudnnStatus_t status, const std::string &where, const char *call,
              const KernelEnvironment &env) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(ErrorKind::Runtime,
                where + ": " + call + " on " + env.describe() + ": " + cudnn().errorString(status));
}

/// A dense layer's or convolution's epilogue on y[rows, cols]: the bias and an element-wise
/// activation in one pass, or a row-wise softmax after the bias.
void enqueueEpilogue(cudaStream_t stream, float *y, const float *bias, int64_t rows, int64_t cols,
                     Activation act, const std::string &where) {
  if (bias || (act != Activation::None && act != Activation::Softmax))
    check(launchBiasActivation(stream, y, bias, rows, cols,
                               act == Activation::Softmax ? Activation::None : act),
          where);
  if (act == Activation::Softmax)
    check(launchSoftmax(stream, y, y, rows, cols), where);
}

/// C = op(a) . op(b) through cuBLAS, then an optional bias and activation on C's rows.
class GemmKernel final : public Kernel {
public:
  GemmKernel(KernelEnvironment &env, const KernelSite &site, const float *a, const float *b,
             float *c, int64_t m, int64_t k, int64_t n, bool ta, bool tb, const float *bias,
             Activation act, int64_t batch = 1, float alpha = 1.0f)
      : env_(env), where_(site.where()), operands_{a, b}, c_(c), rows_(m), cols_(n), bias_(bias),
        act_(act), alpha_(alpha), gemm_(rowMajorGemm(m, k, n, ta, tb, batch)) {
    const std::string problem = gemmProblem(gemm_);
    if (!problem.empty())
      site.fail("cuBLAS cannot compute this product: " + problem);
    env_.blas(nullptr); // the library and the handle at load, not while capturing
  }

  void run(const StepContext &) override {
    const CublasApi &api = cublas();
    const cudaStream_t stream = launchStream();
    cublasHandle_t handle = env_.blas(stream);
    const float zero = 0.0f;
    const cublasOperation_t opA = gemm_.transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                            opB = gemm_.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (gemm_.batch == 1)
      checkBlas(api,
                api.sgemm(handle, opA, opB, int(gemm_.m), int(gemm_.n), int(gemm_.k), &alpha_,
                          operands_[gemm_.first], int(gemm_.lda), operands_[gemm_.second],
                          int(gemm_.ldb), &zero, c_, int(gemm_.ldc)),
                "cublasSgemm");
    else
      checkBlas(api,
                api.sgemmStridedBatched(handle, opA, opB, int(gemm_.m), int(gemm_.n), int(gemm_.k),
                                        &alpha_, operands_[gemm_.first], int(gemm_.lda),
                                        gemm_.strideA, operands_[gemm_.second], int(gemm_.ldb),
                                        gemm_.strideB, &zero, c_, int(gemm_.ldc), gemm_.strideC,
                                        int(gemm_.batch)),
                "cublasSgemmStridedBatched");
    enqueueEpilogue(stream, c_, bias_, rows_, cols_, act_, where_);
  }

private:
  void checkBlas(const CublasApi &api, cublasStatus_t status, const char *call) const {
    if (status != CUBLAS_STATUS_SUCCESS)
      throw Error(ErrorKind::Runtime, where_ + ": " + call + " on " + env_.describe() + ": " +
                                          api.statusString(status));
  }

  KernelEnvironment &env_;
  std::string where_;
  const float *operands_[2];
  float *c_;
  int64_t rows_, cols_;
  const float *bias_;
  Activation act_;
  float alpha_;
  GemmArgs gemm_;
};

/// The most workspace one convolution's cuDNN algorithm may use (device scratch, shared by
/// the kernels of a stream in turn).
constexpr size_t kConvWorkspaceLimit = size_t(256) << 20;

/// Bytes rounded up to 256, the alignment of what follows in scratch.
size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// A convolution on cuDNN: descriptors made and the algorithm chosen at load, the filter
/// transposed HWIO <-> KRSC (and, for asymmetric padding, the image padded) through scratch
/// around each call. Scratch: [KRSC filter | padded image | cuDNN workspace].
class ConvKernel final : public Kernel {
public:
  enum class Pass { Forward, GradInput, GradFilter };

  ConvKernel(KernelEnvironment &env, const KernelSite &site, Pass pass,
             const contract::ConvShape &shape, Activation act)
      : env_(env), api_(cudnn()), where_(site.where()), pass_(pass), plan_(convPlan(shape)),
        act_(act) {
    const std::string problem = convProblem(plan_);
    if (!problem.empty())
      site.fail("cuDNN cannot compute this convolution: " + problem);
    switch (pass) {
    case Pass::Forward:
      x_ = site.input(0).f32(), w_ = site.input(1).f32(), y_ = site.output(0).f32();
      bias_ = shape.bias ? site.input(2).f32() : nullptr;
      break;
    case Pass::GradInput:
      y_ = const_cast<float *>(site.input(0).f32()), w_ = site.input(1).f32();
      dx_ = site.output(0).f32();
      break;
    case Pass::GradFilter:
      x_ = site.input(0).f32(), y_ = const_cast<float *>(site.input(1).f32());
      dw_ = site.output(0).f32();
      break;
    }
    describe();
    chooseAlgorithm(site);
    filterOffset_ = 0;
    paddedOffset_ = aligned(plan_.filterBytes());
    workspaceOffset_ = paddedOffset_ + aligned(plan_.paddedBytes());
    env_.reserveScratch(workspaceOffset_ + workspace_);
  }

  ~ConvKernel() override {
    if (x_desc_)
      api_.destroyTensor(x_desc_);
    if (y_desc_)
      api_.destroyTensor(y_desc_);
    if (w_desc_)
      api_.destroyFilter(w_desc_);
    if (conv_)
      api_.destroyConvolution(conv_);
  }

  void run(const StepContext &) override {
    const cudaStream_t stream = launchStream();
    cudnnHandle_t handle = env_.dnn(stream);
    char *scratch = static_cast<char *>(env_.scratch());
    float *filter = reinterpret_cast<float *>(scratch + filterOffset_);
    float *padded = reinterpret_cast<float *>(scratch + paddedOffset_);
    void *workspace = scratch + workspaceOffset_;
    const int64_t rsc = plan_.kh * plan_.kw * plan_.groupChannels();
    const float one = 1.0f, zero = 0.0f;
    switch (pass_) {
    case Pass::Forward: {
      check(launchHwioToKrsc(stream, w_, filter, plan_.f, rsc), where_);
      const float *image = padImage(stream, padded);
      checkDnn(api_.forward(handle, &one, x_desc_, image, w_desc_, filter, conv_,
                            cudnnConvolutionFwdAlgo_t(algo_), workspace, workspace_, &zero, y_desc_,
                            y_),
               "cudnnConvolutionForward");
      enqueueEpilogue(stream, y_, bias_, plan_.n * plan_.outH * plan_.outW, plan_.f, act_, where_);
      break;
    }
    case Pass::GradInput: {
      check(launchHwioToKrsc(stream, w_, filter, plan_.f, rsc), where_);
      float *target = plan_.explicitPad ? padded : dx_;
      checkDnn(api_.backwardData(handle, &one, w_desc_, filter, y_desc_, y_, conv_,
                                 cudnnConvolutionBwdDataAlgo_t(algo_), workspace, workspace_, &zero,
                                 x_desc_, target),
               "cudnnConvolutionBackwardData");
      if (plan_.explicitPad)
        check(launchZeroPadGrad(stream, padded, dx_, plan_.pad), where_);
      break;
    }
    case Pass::GradFilter: {
      const float *image = padImage(stream, padded);
      checkDnn(api_.backwardFilter(handle, &one, x_desc_, image, y_desc_, y_, conv_,
                                   cudnnConvolutionBwdFilterAlgo_t(algo_), workspace, workspace_,
                                   &zero, w_desc_, filter),
               "cudnnConvolutionBackwardFilter");
      check(launchKrscToHwio(stream, filter, dw_, plan_.f, rsc), where_);
      break;
    }
    }
  }

private:
  /// x, or its explicitly padded copy in scratch.
  const float *padImage(cudaStream_t stream, float *padded) const {
    if (!plan_.explicitPad)
      return x_;
    check(launchZeroPad(stream, x_, padded, plan_.pad), where_);
    return padded;
  }

  void checkDnn(cudnnStatus_t status, const char *call) const {
    cuda::checkDnn(status, where_, call, env_);
  }

  /// The descriptors of the plan (NHWC images, KRSC filter, cross-correlation in f32).
  void describe() {
    const ConvPlan &p = plan_;
    checkDnn(api_.createTensor(&x_desc_), "cudnnCreateTensorDescriptor");
    checkDnn(api_.setTensor4d(x_desc_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, int(p.n), int(p.c),
                              int(p.inH), int(p.inW)),
             "cudnnSetTensor4dDescriptor (image)");
    checkDnn(api_.createTensor(&y_desc_), "cudnnCreateTensorDescriptor");
    checkDnn(api_.setTensor4d(y_desc_, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, int(p.n), int(p.f),
                              int(p.outH), int(p.outW)),
             "cudnnSetTensor4dDescriptor (output)");
    checkDnn(api_.createFilter(&w_desc_), "cudnnCreateFilterDescriptor");
    checkDnn(api_.setFilter4d(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, int(p.f),
                              int(p.groupChannels()), int(p.kh), int(p.kw)),
             "cudnnSetFilter4dDescriptor");
    checkDnn(api_.createConvolution(&conv_), "cudnnCreateConvolutionDescriptor");
    checkDnn(api_.setConvolution2d(conv_, int(p.padH), int(p.padW), int(p.strideH), int(p.strideW),
                                   int(p.dilationH), int(p.dilationW), CUDNN_CROSS_CORRELATION,
                                   CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor");
    if (p.groups != 1)
      checkDnn(api_.setConvolutionGroupCount(conv_, int(p.groups)),
               "cudnnSetConvolutionGroupCount");
    // Default math lets cuDNN use TF32 tensor cores; FMA math keeps full f32.
    checkDnn(api_.setConvolutionMathType(conv_, env_.tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
             "cudnnSetConvolutionMathType");
  }

  /// The algorithm, once: cuDNN's ranked list for this pass, then chooseAlgorithm.
  void chooseAlgorithm(const KernelSite &site) {
    cudnnHandle_t handle = env_.dnn(nullptr);
    std::vector<AlgoCandidate> ranked;
    int count = 0;
    auto collect = [&](const auto *perf) {
      for (int i = 0; i < count; ++i)
        ranked.push_back({int(perf[i].algo), perf[i].status == CUDNN_STATUS_SUCCESS, perf[i].memory,
                          perf[i].determinism == CUDNN_DETERMINISTIC});
    };
    constexpr int kMax = 16;
    switch (pass_) {
    case Pass::Forward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      checkDnn(api_.forwardAlgorithms(handle, x_desc_, w_desc_, conv_, y_desc_, kMax, &count, perf),
               "cudnnGetConvolutionForwardAlgorithm_v7");
      collect(perf);
      break;
    }
    case Pass::GradInput: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      checkDnn(
          api_.backwardDataAlgorithms(handle, w_desc_, y_desc_, conv_, x_desc_, kMax, &count, perf),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      collect(perf);
      break;
    }
    case Pass::GradFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      checkDnn(api_.backwardFilterAlgorithms(handle, x_desc_, y_desc_, conv_, w_desc_, kMax, &count,
                                             perf),
               "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      collect(perf);
      break;
    }
    }
    const AlgoChoice choice = cuda::chooseAlgorithm(ranked, kConvWorkspaceLimit);
    if (choice.index < 0)
      site.fail("cuDNN offers no algorithm for this convolution: " + choice.why);
    algo_ = ranked[choice.index].algo;
    // The workspace the chosen algorithm needs, as cuDNN sizes it for these descriptors (the
    // heuristic's figure is an estimate).
    size_t exact = 0;
    switch (pass_) {
    case Pass::Forward:
      checkDnn(api_.forwardWorkspace(handle, x_desc_, w_desc_, conv_, y_desc_,
                                     cudnnConvolutionFwdAlgo_t(algo_), &exact),
               "cudnnGetConvolutionForwardWorkspaceSize");
      break;
    case Pass::GradInput:
      checkDnn(api_.backwardDataWorkspace(handle, w_desc_, y_desc_, conv_, x_desc_,
                                          cudnnConvolutionBwdDataAlgo_t(algo_), &exact),
               "cudnnGetConvolutionBackwardDataWorkspaceSize");
      break;
    case Pass::GradFilter:
      checkDnn(api_.backwardFilterWorkspace(handle, x_desc_, y_desc_, conv_, w_desc_,
                                            cudnnConvolutionBwdFilterAlgo_t(algo_), &exact),
               "cudnnGetConvolutionBackwardFilterWorkspaceSize");
      break;
    }
    workspace_ = std::max(exact, ranked[choice.index].workspace);
  }

  KernelEnvironment &env_;
  const CudnnApi &api_;
  std::string where_;
  Pass pass_;
  ConvPlan plan_;
  Activation act_;
  const float *x_ = nullptr, *w_ = nullptr, *bias_ = nullptr;
  float *y_ = nullptr, *dx_ = nullptr, *dw_ = nullptr;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  int algo_ = 0;
  size_t workspace_ = 0, filterOffset_ = 0, paddedOffset_ = 0, workspaceOffset_ = 0;
};

/// One LSTM layer's cuDNN descriptors and device memory, made by its lstm at load and shared
/// with its lstm_grad (KernelSite::sharedState under y's id).
struct CudaLstm final : contract::LstmForward {
  CudaLstm(KernelEnvironment &env, const CudnnApi &api) : env(env), api(api) {}
  ~CudaLstm() override {
    if (rnn)
      api.destroyRnn(rnn);
    for (cudnnRNNDataDescriptor_t d : {xDesc, yDesc})
      if (d)
        api.destroyRnnData(d);
    if (hDesc)
      api.destroyTensor(hDesc);
  }
  void checkDnn(cudnnStatus_t status, const std::string &where, const char *call) const {
    cuda::checkDnn(status, where, call, env);
  }

  KernelEnvironment &env;
  const CudnnApi &api;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnRNNDataDescriptor_t xDesc = nullptr, yDesc = nullptr;
  cudnnTensorDescriptor_t hDesc = nullptr; // also the cell state's: [1, N, U]
  bool training = false;
  int32_t *seqLengths = nullptr; // N times T, on the device
  float *weights = nullptr;      // the weight space, packed from w, r, b by the forward
  size_t weightBytes = 0;
  RnnWeightLayout layout{};
  void *reserve = nullptr; // what the training forward keeps for the backward
  size_t reserveBytes = 0;
  size_t forwardWork = 0;    // the workspace, in scratch (cuDNN sizes the training forward's
                             // for the backward too)
  float *sequence = nullptr; // h of every step when y is only the last one's
};

/// The descriptors, weight space and reserve of one layer (at load: needs the device).
std::shared_ptr<CudaLstm> describeLstm(KernelEnvironment &env, const KernelSite &site,
                                       const contract::LstmShape &s, bool training) {
  const std::string problem = rnnProblem(s);
  if (!problem.empty())
    site.fail("cuDNN cannot compute this LSTM: " + problem);
  auto l = std::make_shared<CudaLstm>(env, cudnn());
  const CudnnApi &api = l->api;
  const std::string &where = site.where();
  cudnnHandle_t handle = env.dnn(nullptr);
  l->training = training;
  l->checkDnn(api.createRnn(&l->rnn), where, "cudnnCreateRNNDescriptor");
  // Keras's LSTM: one input bias per gate, full f32 unless TF32 was asked for. Batch-major
  // (unpacked) sequences need cuDNN's padded I/O mode, whatever the lengths.
  l->checkDnn(api.setRnn(l->rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                         CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                         CUDNN_DATA_FLOAT, env.tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH,
                         int32_t(s.f), int32_t(s.u), int32_t(s.u), 1, nullptr,
                         CUDNN_RNN_PADDED_IO_ENABLED),
              where, "cudnnSetRNNDescriptor_v8");
  const std::vector<int> lengths(static_cast<size_t>(s.n), int(s.t));
  for (auto [desc, width] : {std::pair{&l->xDesc, s.f}, {&l->yDesc, s.u}}) {
    l->checkDnn(api.createRnnData(desc), where, "cudnnCreateRNNDataDescriptor");
    float fill = 0;
    l->checkDnn(api.setRnnData(*desc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
                               int(s.t), int(s.n), int(width), lengths.data(), &fill),
                where, "cudnnSetRNNDataDescriptor");
  }
  l->checkDnn(api.createTensor(&l->hDesc), where, "cudnnCreateTensorDescriptor");
  const int dims[3] = {1, int(s.n), int(s.u)}, strides[3] = {int(s.n * s.u), int(s.u), 1};
  l->checkDnn(api.setTensorNd(l->hDesc, CUDNN_DATA_FLOAT, 3, dims, strides), where,
              "cudnnSetTensorNdDescriptor");
  l->seqLengths = static_cast<int32_t *>(env.upload(lengths.data(), lengths.size() * sizeof(int)));

  l->checkDnn(api.rnnWeightSpaceSize(handle, l->rnn, &l->weightBytes), where,
              "cudnnGetRNNWeightSpaceSize");
  l->weights = static_cast<float *>(env.persistent(l->weightBytes));
  // Where each gate's matrices and bias lie: linear layers 0-3 are the input matrices (with
  // the biases), 4-7 the recurrent ones, gates i, f, g, o.
  cudnnTensorDescriptor_t m = nullptr, bias = nullptr;
  l->checkDnn(api.createTensor(&m), where, "cudnnCreateTensorDescriptor");
  l->checkDnn(api.createTensor(&bias), where, "cudnnCreateTensorDescriptor");
  std::string failure;
  for (int id = 0; id < 8 && failure.empty(); ++id) {
    void *matrixAt = nullptr, *biasAt = nullptr;
    const cudnnStatus_t status = api.rnnWeightParams(handle, l->rnn, 0, l->weightBytes, l->weights,
                                                     id, m, &matrixAt, bias, &biasAt);
    if (status != CUDNN_STATUS_SUCCESS) {
      failure = std::string("cudnnGetRNNWeightParams: ") + api.errorString(status);
      break;
    }
    const int64_t at = static_cast<float *>(matrixAt) - l->weights;
    (id < 4 ? l->layout.input[id] : l->layout.recurrent[id - 4]) = at;
    if (id < 4) {
      if (!biasAt)
        failure = "cuDNN reports no input bias for gate " + std::to_string(id);
      else
        l->layout.bias[id] = static_cast<float *>(biasAt) - l->weights;
    }
  }
  api.destroyTensor(m);
  api.destroyTensor(bias);
  if (failure.empty())
    failure =
        rnnLayoutProblem(l->layout, s.f, s.u, static_cast<int64_t>(l->weightBytes / sizeof(float)));
  if (!failure.empty())
    site.fail("cuDNN's LSTM weights: " + failure);

  l->checkDnn(api.rnnTempSpaceSizes(handle, l->rnn,
                                    training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                    l->xDesc, &l->forwardWork, &l->reserveBytes),
              where, "cudnnGetRNNTempSpaceSizes");
  env.reserveScratch(l->forwardWork);
  if (l->reserveBytes)
    l->reserve = env.persistent(l->reserveBytes);
  if (!s.returnSequences)
    l->sequence = static_cast<float *>(env.persistent(size_t(s.n * s.t * s.u) * sizeof(float)));
  return l;
}

/// lstm: dp's weights packed into cuDNN's weight space, then cudnnRNNForward; with
/// return_sequences = 0 the layer's y is cuDNN's hy (the last h) and every step's h goes to
/// the layer's own sequence buffer (the backward reads it).
class LstmKernel final : public Kernel {
public:
  LstmKernel(std::shared_ptr<CudaLstm> l, const KernelSite &site)
      : l_(std::move(l)), where_(site.where()) {}
  void run(const StepContext &) override {
    const CudaLstm &l = *l_;
    const contract::LstmShape &s = l.shape;
    const cudaStream_t stream = launchStream();
    cudnnHandle_t handle = l.env.dnn(stream);
    check(launchPackLstmWeights(stream, l.w.f32(), l.r.f32(), l.b.f32(), l.weights, l.layout, s.f,
                                s.u),
          where_);
    float *y = l.y.f32();
    l.checkDnn(l.api.rnnForward(
                   handle, l.rnn, l.training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                   l.seqLengths, l.xDesc, l.x.f32(), l.yDesc, s.returnSequences ? y : l.sequence,
                   l.hDesc, nullptr, s.returnSequences ? nullptr : y, l.hDesc, nullptr, nullptr,
                   l.weightBytes, l.weights, l.forwardWork, l.env.scratch(), l.reserveBytes,
                   l.reserve),
               where_, "cudnnRNNForward");
  }

private:
  std::shared_ptr<CudaLstm> l_;
  std::string where_;
};

/// lstm_grad: cudnnRNNBackwardData_v8 (dx; with return_sequences = 0, dy is the gradient of
/// hy and the steps' gradients are zeros), then cudnnRNNBackwardWeights_v8 into the zeroed
/// gradient of the weight space, unpacked into dw, dr, db.
class LstmGradKernel final : public Kernel {
public:
  LstmGradKernel(std::shared_ptr<CudaLstm> l, const KernelSite &site)
      : l_(std::move(l)), where_(site.where()), dx_(site.output(0).f32()),
        dw_(site.output(1).f32()), dr_(site.output(2).f32()), db_(site.output(3).f32()),
        dy_(site.input(5).f32()) {
    const contract::LstmShape &s = l_->shape;
    grads_ = static_cast<float *>(l_->env.persistent(l_->weightBytes));
    if (!s.returnSequences) // zeros, never written
      zeroSteps_ =
          static_cast<float *>(l_->env.persistent(size_t(s.n * s.t * s.u) * sizeof(float)));
  }
  void run(const StepContext &) override {
    const CudaLstm &l = *l_;
    const contract::LstmShape &s = l.shape;
    const cudaStream_t stream = launchStream();
    cudnnHandle_t handle = l.env.dnn(stream);
    const float *sequence = s.returnSequences ? l.y.f32() : l.sequence;
    l.checkDnn(l.api.rnnBackwardData(handle, l.rnn, l.seqLengths, l.yDesc, sequence,
                                     s.returnSequences ? dy_ : zeroSteps_, l.xDesc, dx_, l.hDesc,
                                     nullptr, s.returnSequences ? nullptr : dy_, nullptr, l.hDesc,
                                     nullptr, nullptr, nullptr, l.weightBytes, l.weights,
                                     l.forwardWork, l.env.scratch(), l.reserveBytes, l.reserve),
               where_, "cudnnRNNBackwardData_v8");
    check(cudaMemsetAsync(grads_, 0, l.weightBytes, stream), where_);
    l.checkDnn(l.api.rnnBackwardWeights(handle, l.rnn, CUDNN_WGRAD_MODE_ADD, l.seqLengths, l.xDesc,
                                        l.x.f32(), l.hDesc, nullptr, l.yDesc, sequence,
                                        l.weightBytes, grads_, l.forwardWork, l.env.scratch(),
                                        l.reserveBytes, l.reserve),
               where_, "cudnnRNNBackwardWeights_v8");
    check(launchUnpackLstmGrads(stream, grads_, l.layout, dw_, dr_, db_, s.f, s.u), where_);
  }

private:
  std::shared_ptr<CudaLstm> l_;
  std::string where_;
  float *dx_, *dw_, *dr_, *db_;
  const float *dy_;
  float *grads_ = nullptr, *zeroSteps_ = nullptr;
};

std::unique_ptr<Kernel> makeLstm(KernelEnvironment &env, const KernelSite &site,
                                 const LstmAttrs &attrs, contract::LstmShape s) {
  std::shared_ptr<CudaLstm> l = describeLstm(env, site, s, attrs.training);
  l->shape = s;
  l->x = site.input(0), l->w = site.input(1), l->r = site.input(2), l->b = site.input(3);
  l->y = site.output(0);
  if (attrs.training) // replaces the contract's plain LstmForward for this backend's lstm_grad
    site.sharedState(l->y.id) = std::shared_ptr<contract::LstmForward>(l);
  return std::make_unique<LstmKernel>(std::move(l), site);
}

std::unique_ptr<Kernel> makeLstmGrad(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                     std::shared_ptr<contract::LstmForward> forward) {
  return std::make_unique<LstmGradKernel>(std::static_pointer_cast<CudaLstm>(forward), site);
}

UpdateRule sgdRule(const SgdAttrs &a) {
  UpdateRule r;
  r.kind = UpdateRule::Kind::Sgd;
  r.lr = a.lr;
  r.weightDecay = a.weight_decay;
  return r;
}
UpdateRule momentumRule(const MomentumAttrs &a) {
  UpdateRule r;
  r.kind = UpdateRule::Kind::Momentum;
  r.lr = a.lr;
  r.momentum = a.momentum;
  r.nesterov = a.nesterov;
  r.weightDecay = a.weight_decay;
  return r;
}
UpdateRule adamRule(const AdamAttrs &a) {
  UpdateRule r;
  r.kind = UpdateRule::Kind::Adam;
  r.lr = a.lr;
  r.beta1 = a.beta1;
  r.beta2 = a.beta2;
  r.epsilon = a.epsilon;
  r.torchEpsilon = a.torch_epsilon;
  r.weightDecay = a.weight_decay;
  return r;
}

std::unique_ptr<Kernel> update(KernelEnvironment &env, const KernelSite &site, int64_t n,
                               const UpdateRule &rule) {
  TensorSegment t{site.output(0).f32(), site.input(0).f32(), nullptr, nullptr, n};
  if (site.numInputs() > 1)
    t.scale = site.input(1).f32();
  if (site.numOutputs() > 1)
    t.state0 = site.output(1).f32();
  if (site.numOutputs() > 2)
    t.state1 = site.output(2).f32();
  const StepContext *ctx = env.deviceContext();
  return launching(site, [=](cudaStream_t s) { return launchUpdate(s, t, rule, ctx); });
}

Pool devicePool(const contract::PoolShape &p) {
  return {p.n, p.h, p.w, p.c, p.kh, p.kw, p.sh, p.sw, p.oh, p.ow};
}
Pad devicePad(const contract::PadShape &p) {
  return {p.n, p.h, p.w, p.c, p.pt, p.pl, p.ph, p.pw, p.value};
}

/// The scratch of a sum over rows, as the enqueue reads it at run time.
double *partials(KernelEnvironment &env) { return static_cast<double *>(env.scratch()); }

std::unique_ptr<Kernel> makeDense(KernelEnvironment &env, const KernelSite &site,
                                  const FusedActivationAttrs &attrs, contract::DenseShape s) {
  return std::make_unique<GemmKernel>(env, site, site.input(0).f32(), site.input(1).f32(),
                                      site.output(0).f32(), s.n, s.k, s.m, false, false,
                                      s.bias ? site.input(2).f32() : nullptr, attrs.activation);
}

std::unique_ptr<Kernel> makeMatMul(KernelEnvironment &env, const KernelSite &site,
                                   const MatMulAttrs &attrs, contract::MatMulShape s) {
  return std::make_unique<GemmKernel>(env, site, site.input(0).f32(), site.input(1).f32(),
                                      site.output(0).f32(), s.m, s.k, s.n, s.ta, s.tb, nullptr,
                                      Activation::None);
}

std::unique_ptr<Kernel> makeBatchMatMul(KernelEnvironment &env, const KernelSite &site,
                                        const BatchMatMulAttrs &, contract::MatMulShape s) {
  return std::make_unique<GemmKernel>(env, site, site.input(0).f32(), site.input(1).f32(),
                                      site.output(0).f32(), s.m, s.k, s.n, s.ta, s.tb, nullptr,
                                      Activation::None, s.batch, static_cast<float>(s.alpha));
}

std::unique_ptr<Kernel> makeActivation(KernelEnvironment &env, const KernelSite &site,
                                       const ActivationAttrs &attrs,
                                       contract::Geometry<KernelKind::Activation> geometry) {
  const Activation act = attrs.activation;
  const Rows r = geometry;
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32();
  if (act == Activation::None)
    return launching(site, copying(x, y, site.input(0).bytes()));
  if (act == Activation::Softmax)
    return launching(site, [=](cudaStream_t s) { return launchSoftmax(s, x, y, r.rows, r.cols); });
  return launching(site,
                   [=](cudaStream_t s) { return launchActivation(s, x, y, r.elements(), act); });
}

std::unique_ptr<Kernel>
makeActivationGrad(KernelEnvironment &env, const KernelSite &site, const ActivationAttrs &attrs,
                   contract::Geometry<KernelKind::ActivationGrad> geometry) {
  const Activation act = attrs.activation;
  const Rows r = geometry;
  const float *y = site.input(0).f32(), *dy = site.input(1).f32();
  float *dx = site.output(0).f32();
  if (act == Activation::None)
    return launching(site, copying(dy, dx, site.input(1).bytes()));
  if (act == Activation::Softmax)
    return launching(
        site, [=](cudaStream_t s) { return launchSoftmaxGrad(s, y, dy, dx, r.rows, r.cols); });
  return launching(
      site, [=](cudaStream_t s) { return launchActivationGrad(s, y, dy, dx, r.elements(), act); });
}

std::unique_ptr<Kernel> makeReduceRows(KernelEnvironment &env, const KernelSite &site,
                                       const NoAttrs &, Rows r) {
  env.reserveScratch(columnPartialsBytes(r.rows, r.cols, 1));
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32();
  KernelEnvironment *e = &env;
  return launching(site, [=](cudaStream_t s) {
    return launchReduceRows(s, x, y, r.rows, r.cols, partials(*e));
  });
}

std::unique_ptr<Kernel> makeAdd(KernelEnvironment &env, const KernelSite &site, const NoAttrs &,
                                int64_t n) {
  const float *a = site.input(0).f32(), *b = site.input(1).f32();
  float *c = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchAdd(s, a, b, c, n); });
}

std::unique_ptr<Kernel> makeAddRows(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                    Rows r) {
  const float *x = site.input(0).f32(), *b = site.input(1).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchAddRows(s, x, b, y, r.rows, r.cols); });
}

std::unique_ptr<Kernel> makeMul(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                BroadcastShape s) {
  const float *a = site.input(0).f32(), *b = site.input(1).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t st) { return launchMulBroadcast(st, a, b, y, s); });
}

std::unique_ptr<Kernel> makeMulReduce(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                      BroadcastShape s) {
  const float *dy = site.input(0).f32(), *a = site.input(1).f32();
  float *db = site.output(0).f32();
  return launching(site, [=](cudaStream_t st) { return launchMulReduce(st, dy, a, db, s); });
}

std::unique_ptr<Kernel> makeCopy(KernelEnvironment &env, const KernelSite &site, const NoAttrs &,
                                 int64_t) {
  return launching(site, copying(site.input(0).data, site.output(0).data, site.output(0).bytes()));
}

std::unique_ptr<Kernel> makeFill(KernelEnvironment &env, const KernelSite &site,
                                 const FillAttrs &attrs, uint32_t pattern) {
  uint32_t *out = static_cast<uint32_t *>(site.output(0).data);
  const int64_t n = site.output(0).numel;
  return launching(site, [=](cudaStream_t s) { return launchFill(s, out, pattern, n); });
}

std::unique_ptr<Kernel> makeSoftmaxXent(KernelEnvironment &env, const KernelSite &site,
                                        const XentAttrs &attrs,
                                        contract::Geometry<KernelKind::SoftmaxXent> geometry) {
  const StepContext *ctx = env.deviceContext();
  const contract::XentShape x = geometry;
  const float *logits = site.input(0).f32();
  const int32_t *labels = site.input(1).i32();
  float *loss = site.output(0).f32();
  const float smoothing = static_cast<float>(attrs.label_smoothing);
  return launching(site, [=](cudaStream_t s) {
    return launchSoftmaxXent(s, logits, labels, loss, x.rows, x.classes, ctx, smoothing);
  });
}

std::unique_ptr<Kernel>
makeSoftmaxXentGrad(KernelEnvironment &env, const KernelSite &site, const XentAttrs &attrs,
                    contract::Geometry<KernelKind::SoftmaxXentGrad> geometry) {
  const StepContext *ctx = env.deviceContext();
  const contract::XentShape x = geometry;
  const float *logits = site.input(0).f32(), *dloss = site.input(2).f32();
  const int32_t *labels = site.input(1).i32();
  float *dlogits = site.output(0).f32();
  const float smoothing = static_cast<float>(attrs.label_smoothing);
  return launching(site, [=](cudaStream_t s) {
    return launchSoftmaxXentGrad(s, logits, labels, dloss, dlogits, x.rows, x.classes, ctx,
                                 smoothing);
  });
}

/// A sum over the valid rows' elements of values and targets (ins 0 and 1) into output 0.
std::unique_ptr<Kernel> elementSum(KernelEnvironment &env, const KernelSite &site, contract::Rows x,
                                   ElementSum kind) {
  const StepContext *ctx = env.deviceContext();
  const float *values = site.input(0).f32(), *target = site.input(1).f32();
  float *out = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchElementSum(s, kind, values, target, out, x.rows, x.cols, ctx);
  });
}

/// The gradient of an element loss: ins (values, targets, dloss), out dvalues.
std::unique_ptr<Kernel> elementLossGrad(KernelEnvironment &env, const KernelSite &site,
                                        contract::Rows x, ElementSum kind) {
  const StepContext *ctx = env.deviceContext();
  const float *values = site.input(0).f32(), *target = site.input(1).f32();
  const float *dloss = site.input(2).f32();
  float *dvalues = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchElementLossGrad(s, kind, values, target, dloss, dvalues, x.rows, x.cols, ctx);
  });
}

std::unique_ptr<Kernel> makeSquaredError(KernelEnvironment &env, const KernelSite &site,
                                         const NoAttrs &, contract::Rows geometry) {
  return elementSum(env, site, geometry, ElementSum::SquaredError);
}

std::unique_ptr<Kernel> makeSquaredErrorGrad(KernelEnvironment &env, const KernelSite &site,
                                             const NoAttrs &, contract::Rows geometry) {
  return elementLossGrad(env, site, geometry, ElementSum::SquaredError);
}

std::unique_ptr<Kernel> makeSigmoidXent(KernelEnvironment &env, const KernelSite &site,
                                        const NoAttrs &, contract::Rows geometry) {
  return elementSum(env, site, geometry, ElementSum::SigmoidXent);
}

std::unique_ptr<Kernel> makeSigmoidXentGrad(KernelEnvironment &env, const KernelSite &site,
                                            const NoAttrs &, contract::Rows geometry) {
  return elementLossGrad(env, site, geometry, ElementSum::SigmoidXent);
}

std::unique_ptr<Kernel> makeCountBinaryCorrect(KernelEnvironment &env, const KernelSite &site,
                                               const NoAttrs &, contract::Rows geometry) {
  return elementSum(env, site, geometry, ElementSum::BinaryCorrect);
}

std::unique_ptr<Kernel> makeGather(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                   GatherShape s) {
  const float *table = site.input(0).f32();
  const int32_t *indices = site.input(1).i32();
  float *out = site.output(0).f32();
  return launching(site, [=](cudaStream_t st) { return launchGather(st, table, indices, out, s); });
}

std::unique_ptr<Kernel> makeGatherGrad(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                       GatherShape s) {
  const float *dy = site.input(0).f32();
  const int32_t *indices = site.input(1).i32();
  float *dtable = site.output(0).f32();
  return launching(site,
                   [=](cudaStream_t st) { return launchGatherGrad(st, dy, indices, dtable, s); });
}

std::unique_ptr<Kernel> makeCountCorrect(KernelEnvironment &env, const KernelSite &site,
                                         const NoAttrs &,
                                         contract::Geometry<KernelKind::CountCorrect> geometry) {
  const StepContext *ctx = env.deviceContext();
  const contract::XentShape x = geometry;
  const float *logits = site.input(0).f32();
  const int32_t *labels = site.input(1).i32();
  float *out = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchCountCorrect(s, logits, labels, out, x.rows, x.classes, ctx);
  });
}

std::unique_ptr<Kernel> makeSgdUpdate(KernelEnvironment &env, const KernelSite &site,
                                      const SgdAttrs &attrs,
                                      contract::Geometry<KernelKind::SgdUpdate> geometry) {
  return update(env, site, geometry, sgdRule(attrs));
}

std::unique_ptr<Kernel>
makeMomentumUpdate(KernelEnvironment &env, const KernelSite &site, const MomentumAttrs &attrs,
                   contract::Geometry<KernelKind::MomentumUpdate> geometry) {
  return update(env, site, geometry, momentumRule(attrs));
}

std::unique_ptr<Kernel> makeAdamUpdate(KernelEnvironment &env, const KernelSite &site,
                                       const AdamAttrs &attrs,
                                       contract::Geometry<KernelKind::AdamUpdate> geometry) {
  return update(env, site, geometry, adamRule(attrs));
}

std::unique_ptr<Kernel> makeClipFactor(KernelEnvironment &env, const KernelSite &site,
                                       const ClipAttrs &attrs, int64_t) {
  env.reserveScratch((1 + kClipPartials) * sizeof(double));
  std::vector<const float *> gradients;
  std::vector<int64_t> sizes;
  for (int i = 0; i < site.numInputs(); ++i) {
    gradients.push_back(site.input(i).f32());
    sizes.push_back(site.input(i).numel);
  }
  float *factor = site.output(0).f32();
  const double maxNorm = attrs.max_norm;
  KernelEnvironment *e = &env;
  return launching(site, [=](cudaStream_t s) {
    return launchClipFactor(s, gradients.data(), sizes.data(), static_cast<int>(gradients.size()),
                            partials(*e), factor, maxNorm);
  });
}

std::unique_ptr<Kernel> makeAccumulate(KernelEnvironment &env, const KernelSite &site,
                                       const AccumulateAttrs &attrs, int64_t n) {
  const float *g = site.input(0).f32();
  float *sum = site.output(0).f32();
  float *partials = site.numOutputs() > 1 ? site.output(1).f32() : nullptr;
  const int64_t count = attrs.count;
  const StepContext *ctx = env.deviceContext();
  return launching(
      site, [=](cudaStream_t s) { return launchAccumulate(s, g, sum, partials, n, count, ctx); });
}

std::unique_ptr<Kernel> makeMaxPool2d(KernelEnvironment &env, const KernelSite &site,
                                      const PoolAttrs &attrs,
                                      contract::Geometry<KernelKind::MaxPool2d> geometry) {
  const Pool p = devicePool(geometry);
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchMaxPool(s, x, y, p); });
}

std::unique_ptr<Kernel> makeMaxPool2dGrad(KernelEnvironment &env, const KernelSite &site,
                                          const PoolAttrs &attrs,
                                          contract::Geometry<KernelKind::MaxPool2dGrad> geometry) {
  const Pool p = devicePool(geometry);
  const float *x = site.input(0).f32(), *dy = site.input(1).f32();
  float *dx = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchMaxPoolGrad(s, x, dy, dx, p); });
}

std::unique_ptr<Kernel> makeAvgPool2d(KernelEnvironment &env, const KernelSite &site,
                                      const PoolAttrs &attrs,
                                      contract::Geometry<KernelKind::AvgPool2d> geometry) {
  const Pool p = devicePool(geometry);
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchAvgPool(s, x, y, p); });
}

std::unique_ptr<Kernel> makeAvgPool2dGrad(KernelEnvironment &env, const KernelSite &site,
                                          const PoolAttrs &attrs,
                                          contract::Geometry<KernelKind::AvgPool2dGrad> geometry) {
  const Pool p = devicePool(geometry);
  const float *dy = site.input(0).f32();
  float *dx = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchAvgPoolGrad(s, dy, dx, p); });
}

std::unique_ptr<Kernel> makeZeroPad2d(KernelEnvironment &env, const KernelSite &site,
                                      const PadAttrs &attrs,
                                      contract::Geometry<KernelKind::ZeroPad2d> geometry) {
  const Pad p = devicePad(geometry);
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchZeroPad(s, x, y, p); });
}

std::unique_ptr<Kernel> makeZeroPad2dGrad(KernelEnvironment &env, const KernelSite &site,
                                          const PadAttrs &attrs,
                                          contract::Geometry<KernelKind::ZeroPad2dGrad> geometry) {
  const Pad p = devicePad(geometry);
  const float *dy = site.input(0).f32();
  float *dx = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchZeroPadGrad(s, dy, dx, p); });
}

std::unique_ptr<Kernel> makeDropout(KernelEnvironment &env, const KernelSite &site,
                                    const DropoutAttrs &attrs,
                                    contract::Geometry<KernelKind::Dropout> geometry) {
  const StepContext *ctx = env.deviceContext();
  const Rows r = geometry;
  const float *x = site.input(0).f32();
  float *y = site.output(0).f32(), *mask = site.output(1).f32();
  const double rate = attrs.rate;
  const int64_t stream = attrs.stream;
  return launching(site, [=](cudaStream_t s) {
    return launchDropout(s, x, y, mask, r.rows, r.cols, rate, stream, ctx);
  });
}

std::unique_ptr<Kernel> makeDropoutGrad(KernelEnvironment &env, const KernelSite &site,
                                        const NoAttrs &, int64_t n) {
  const float *mask = site.input(0).f32(), *dy = site.input(1).f32();
  float *dx = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) { return launchMultiply(s, dy, mask, dx, n); });
}

std::unique_ptr<Kernel> makeBatchMoments(KernelEnvironment &env, const KernelSite &site,
                                         const NoAttrs &, contract::NormShape n) {
  env.reserveScratch(columnPartialsBytes(n.rows, n.c, 2));
  const float *x = site.input(0).f32();
  float *stats = site.output(0).f32();
  KernelEnvironment *e = &env;
  return launching(site, [=](cudaStream_t s) {
    return launchBatchMoments(s, x, stats, n.rows, n.c, partials(*e));
  });
}

std::unique_ptr<Kernel> makeBatchNormTrain(KernelEnvironment &env, const KernelSite &site,
                                           const NormAttrs &attrs, contract::NormShape n) {
  const float *x = site.input(0).f32(), *stats = site.input(1).f32(), *gamma = site.input(2).f32(),
              *beta = site.input(3).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchBatchNormTrain(s, x, stats, gamma, beta, y, n.rows * n.c, n.c, n.epsilon, n.relu);
  });
}

std::unique_ptr<Kernel> makeBatchNormInfer(KernelEnvironment &env, const KernelSite &site,
                                           const NormAttrs &attrs, contract::NormShape n) {
  const float *x = site.input(0).f32(), *gamma = site.input(1).f32(), *beta = site.input(2).f32(),
              *mean = site.input(3).f32(), *var = site.input(4).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchBatchNormInfer(s, x, gamma, beta, mean, var, y, n.rows * n.c, n.c, n.epsilon,
                                n.relu);
  });
}

std::unique_ptr<Kernel> makeBatchNormGradParams(KernelEnvironment &env, const KernelSite &site,
                                                const EpsilonAttrs &attrs, contract::NormShape n) {
  env.reserveScratch(columnPartialsBytes(n.rows, n.c, 2));
  const float *x = site.input(0).f32(), *stats = site.input(1).f32(), *dy = site.input(2).f32();
  float *dgamma = site.output(0).f32(), *dbeta = site.output(1).f32();
  KernelEnvironment *e = &env;
  return launching(site, [=](cudaStream_t s) {
    return launchBatchNormGradParams(s, x, stats, dy, dgamma, dbeta, n.rows, n.c, n.epsilon,
                                     partials(*e));
  });
}

std::unique_ptr<Kernel> makeBatchNormGradInput(KernelEnvironment &env, const KernelSite &site,
                                               const EpsilonAttrs &attrs, contract::NormShape n) {
  const float *x = site.input(0).f32(), *stats = site.input(1).f32(), *gamma = site.input(2).f32(),
              *dgamma = site.input(3).f32(), *dbeta = site.input(4).f32(),
              *dy = site.input(5).f32();
  float *dx = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchBatchNormGradInput(s, x, stats, gamma, dgamma, dbeta, dy, dx, n.rows, n.c,
                                    n.epsilon);
  });
}

std::unique_ptr<Kernel> makeMovingStatsUpdate(KernelEnvironment &env, const KernelSite &site,
                                              const MovingStatsAttrs &attrs, int64_t c) {
  const float *stats = site.input(0).f32();
  float *mean = site.output(0).f32(), *var = site.output(1).f32();
  const double momentum = attrs.momentum;
  return launching(
      site, [=](cudaStream_t s) { return launchMovingStats(s, stats, mean, var, c, momentum); });
}

std::unique_ptr<Kernel> makeLayerNorm(KernelEnvironment &env, const KernelSite &site,
                                      const EpsilonAttrs &attrs, contract::NormShape n) {
  const float *x = site.input(0).f32(), *gamma = site.input(1).f32(), *beta = site.input(2).f32();
  float *y = site.output(0).f32();
  return launching(site, [=](cudaStream_t s) {
    return launchLayerNorm(s, x, gamma, beta, y, n.rows, n.c, n.epsilon);
  });
}

std::unique_ptr<Kernel> makeLayerNormGrad(KernelEnvironment &env, const KernelSite &site,
                                          const EpsilonAttrs &attrs, contract::NormShape n) {
  // The rows' statistics first in scratch, the column sums' partials after them.
  const size_t statsBytes = aligned(static_cast<size_t>(n.rows) * sizeof(RowStats));
  env.reserveScratch(statsBytes + columnPartialsBytes(n.rows, n.c, 2));
  const float *x = site.input(0).f32(), *gamma = site.input(1).f32(), *dy = site.input(2).f32();
  float *dx = site.output(0).f32(), *dgamma = site.output(1).f32(), *dbeta = site.output(2).f32();
  KernelEnvironment *e = &env;
  return launching(site, [=](cudaStream_t s) {
    char *scratch = static_cast<char *>(e->scratch());
    return launchLayerNormGrad(s, x, gamma, dy, dx, dgamma, dbeta, n.rows, n.c, n.epsilon,
                               reinterpret_cast<RowStats *>(scratch),
                               reinterpret_cast<double *>(scratch + statsBytes));
  });
}

std::unique_ptr<Kernel> makeConcat(KernelEnvironment &env, const KernelSite &site,
                                   const AxisAttrs &attrs, contract::ConcatShape c) {
  // The parts' addresses, first words and words per block, in device memory for the kernel.
  const int count = site.numInputs();
  std::vector<const uint32_t *> parts;
  std::vector<int64_t> starts, words;
  int64_t start = 0;
  for (int i = 0; i < count; ++i) {
    parts.push_back(static_cast<const uint32_t *>(site.input(i).data));
    starts.push_back(start);
    words.push_back(c.partBytes[i] / 4);
    start += c.partBytes[i] / 4;
  }
  auto *deviceParts = static_cast<const uint32_t *const *>(
      env.upload(parts.data(), parts.size() * sizeof(parts[0])));
  auto *deviceStarts = static_cast<const int64_t *>(env.upload(starts.data(), count * 8));
  auto *deviceWords = static_cast<const int64_t *>(env.upload(words.data(), count * 8));
  uint32_t *out = static_cast<uint32_t *>(site.output(0).data);
  const int64_t outWords = c.outBytes / 4, total = site.output(0).numel;
  return launching(site, [=](cudaStream_t s) {
    return launchConcat(s, deviceParts, deviceStarts, deviceWords, count, out, outWords, total);
  });
}

std::unique_ptr<Kernel> makeSlice(KernelEnvironment &env, const KernelSite &site,
                                  const SliceAttrs &attrs, contract::SliceShape c) {
  const uint32_t *x = static_cast<const uint32_t *>(site.input(0).data);
  uint32_t *out = static_cast<uint32_t *>(site.output(0).data);
  const int64_t total = site.output(0).numel;
  return launching(site, [=](cudaStream_t s) {
    return launchSlice(s, x, c.inBytes / 4, c.offsetBytes / 4, out, c.outBytes / 4, total);
  });
}

std::unique_ptr<Kernel> makeTranspose(KernelEnvironment &, const KernelSite &site,
                                      const TransposeAttrs &, contract::TransposeShape t) {
  const void *x = site.input(0).data;
  void *y = site.output(0).data;
  return launching(site, [=](cudaStream_t s) {
    return launchTranspose(s, x, y, t.elementBytes, t.da, t.middle, t.db, t.inner, t.elements());
  });
}

std::unique_ptr<Kernel> makeConv2d(KernelEnvironment &env, const KernelSite &site,
                                   const Conv2dAttrs &attrs,
                                   contract::Geometry<KernelKind::Conv2d> geometry) {
  return std::make_unique<ConvKernel>(env, site, ConvKernel::Pass::Forward, geometry,
                                      attrs.activation);
}

std::unique_ptr<Kernel>
makeConv2dGradInput(KernelEnvironment &env, const KernelSite &site, const ConvAttrs &attrs,
                    contract::Geometry<KernelKind::Conv2dGradInput> geometry) {
  return std::make_unique<ConvKernel>(env, site, ConvKernel::Pass::GradInput, geometry,
                                      Activation::None);
}

std::unique_ptr<Kernel>
makeConv2dGradFilter(KernelEnvironment &env, const KernelSite &site, const ConvAttrs &attrs,
                     contract::Geometry<KernelKind::Conv2dGradFilter> geometry) {
  return std::make_unique<ConvKernel>(env, site, ConvKernel::Pass::GradFilter, geometry,
                                      Activation::None);
}

// The pointwise kinds: one generic launch each (Pointwise.h), generated from Kernels.def.
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_POINTWISE_KERNEL(Enum, Name, Fn)                                                      \
  std::unique_ptr<Kernel> make##Enum(KernelEnvironment &, const KernelSite &site, const NoAttrs &, \
                                     int64_t n) {                                                \
    const float *x = site.input(0).f32();                                                        \
    float *y = site.output(0).f32();                                                             \
    return launching(site, [=](cudaStream_t s) {                                                 \
      return launchPointwise<pointwise::Fn>(s, x, y, n);                                         \
    });                                                                                          \
  }
#define DP_POINTWISE_GRAD_KERNEL(Enum, Name, Fn)                                                 \
  std::unique_ptr<Kernel> make##Enum(KernelEnvironment &, const KernelSite &site, const NoAttrs &, \
                                     int64_t n) {                                                \
    const float *x = site.input(0).f32(), *dy = site.input(1).f32();                             \
    float *dx = site.output(0).f32();                                                            \
    return launching(site, [=](cudaStream_t s) {                                                 \
      return launchPointwiseGrad<pointwise::Fn>(s, x, dy, dx, n);                                \
    });                                                                                          \
  }
#include "runtime/format/Kernels.def"

std::unique_ptr<Kernel> makeCast(KernelEnvironment &, const KernelSite &site, const NoAttrs &,
                                 int64_t) {
  site.fail("casts between f32 and bf16: the CUDA backend has no mixed precision yet (compile "
            "without --precision bf16)");
}

/// The kind's factory, given the attributes and the contract's geometry (generated from
/// Kernels.def: a kind without a factory here fails to link).
std::unique_ptr<Kernel> build(KernelEnvironment &env, const KernelSite &site) {
  switch (site.kind()) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                         \
  case KernelKind::Enum: {                                                                         \
    const Attrs &attrs = site.attrs<Attrs>();                                                      \
    return make##Enum(env, site, attrs, contract::check##Enum(site, attrs));                       \
  }
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                              \
  case KernelKind::Enum:                                                                           \
    break;
#include "runtime/format/Kernels.def"
  case KernelKind::NumKinds:
    break;
  }
  site.fail("kernel kind " + std::to_string(static_cast<unsigned>(site.kind())) +
            " has no CUDA implementation");
}

} // namespace

std::unique_ptr<Kernel> makeCudaKernel(KernelEnvironment &env, const KernelSite &site) {
  contract::checkOverlaps(site);
  // Mixed precision (bf16 buffers) is built for the CPU backend only so far.
  if (site.touches(DType::BF16))
    site.fail("reads or writes bf16: the CUDA backend has no mixed precision yet (compile "
              "without --precision bf16)");
  return build(env, site);
}

} // namespace dp::rt::cuda
