// The CUDA libraries as the backend loads them, checked without a GPU: every entry point the
// backend calls resolves from the library its headers name, and cuDNN's own arithmetic (its
// descriptors and output dimensions, which need no device) agrees with the convolution plans.
// Skipped, with a message, where the toolkit's libraries are not installed.
#include "runtime/backends/cuda/Libraries.h"
#include "runtime/backends/cuda/Conv.h"
#include "runtime/base/Error.h"

#include "test/unit/cuda/HostTestUtil.h"

#include <gtest/gtest.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <vector>

namespace dp::rt::cuda {
namespace {

using namespace testing;

/// The library's table, or a skip naming why it could not be loaded.
#define DP_LOAD_OR_SKIP(api, loader)                                                               \
  const auto *api = [&]() -> decltype(&loader()) {                                                 \
    try {                                                                                          \
      return &loader();                                                                            \
    } catch (const Error &e) {                                                                     \
      return nullptr;                                                                              \
    }                                                                                              \
  }();                                                                                             \
  if (!api)                                                                                        \
    GTEST_SKIP() << "the CUDA libraries are not installed here";

TEST(Libraries, NamesFollowTheHeaders) {
  EXPECT_EQ(cublasLibraryName(), "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
  EXPECT_EQ(cudnnLibraryName(), "libcudnn.so." + std::to_string(CUDNN_MAJOR));
  EXPECT_EQ(ncclLibraryName(), "libnccl.so." + std::to_string(NCCL_MAJOR));
}

TEST(Libraries, NcclResolvesEveryEntryPointAndMakesAUniqueIdWithoutAGpu) {
  DP_LOAD_OR_SKIP(api, nccl);
  int version = 0;
  ASSERT_EQ(api->version(&version), ncclSuccess);
  EXPECT_GE(version, NCCL_VERSION(2, 10, 0));
  // The id rank 0 broadcasts: made on the host (a bootstrap address), never all zero.
  ncclUniqueId id{};
  ASSERT_EQ(api->uniqueId(&id), ncclSuccess) << api->errorString(ncclSystemError);
  bool nonZero = false;
  for (char c : id.internal)
    nonZero = nonZero || c != 0;
  EXPECT_TRUE(nonZero);
  EXPECT_STREQ(api->errorString(ncclSuccess), "no error");
}

TEST(Libraries, CublasResolvesEveryEntryPoint) {
  DP_LOAD_OR_SKIP(api, cublas);
  EXPECT_NE(api->sgemm, nullptr);
  EXPECT_NE(api->sgemmStridedBatched, nullptr);
  EXPECT_STREQ(api->statusString(CUBLAS_STATUS_SUCCESS), "success");
}

TEST(Libraries, CudnnResolvesEveryEntryPointAndIsTheHeadersMajorVersion) {
  DP_LOAD_OR_SKIP(api, cudnn);
  EXPECT_EQ(api->version() / 10000, size_t(CUDNN_MAJOR));
  EXPECT_STREQ(api->errorString(CUDNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
}

TEST(Libraries, CudnnComputesThePlansOutputDimensions) {
  DP_LOAD_OR_SKIP(api, cudnn);
  std::vector<contract::ConvShape> shapes = convGeometries();
  shapes.push_back(convShape(128, 32, 32, 64, 3, 3, 64, 1, 1, 1, 1, 1, 1));
  for (const contract::ConvShape &s : shapes) {
    const ConvPlan p = convPlan(s);
    cudnnTensorDescriptor_t x = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    ASSERT_EQ(api->createTensor(&x), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(api->createFilter(&w), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(api->createConvolution(&conv), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(api->setTensor4d(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, int(p.n), int(p.c),
                               int(p.inH), int(p.inW)),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(api->setFilter4d(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, int(p.f),
                               int(p.groupChannels()), int(p.kh), int(p.kw)),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(api->setConvolution2d(conv, int(p.padH), int(p.padW), int(p.strideH), int(p.strideW),
                                    int(p.dilationH), int(p.dilationW), CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(api->setConvolutionGroupCount(conv, int(p.groups)), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(api->setConvolutionMathType(conv, CUDNN_FMA_MATH), CUDNN_STATUS_SUCCESS);
    int n = 0, f = 0, oh = 0, ow = 0;
    ASSERT_EQ(api->forwardOutputDim(conv, x, w, &n, &f, &oh, &ow), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(n, s.n);
    EXPECT_EQ(f, s.f);
    EXPECT_EQ(oh, s.oh) << "image " << s.h << "x" << s.w << " padding " << s.pt << "," << s.pb;
    EXPECT_EQ(ow, s.ow) << "image " << s.h << "x" << s.w << " padding " << s.pl << "," << s.pr;
    api->destroyConvolution(conv);
    api->destroyFilter(w);
    api->destroyTensor(x);
  }
}

TEST(Libraries, CudnnTakesTheLstmsDescriptorsWithoutAGpu) {
  DP_LOAD_OR_SKIP(api, cudnn);
  // The seed LSTM's first layer as describeLstm (CudaKernels.cpp) sets it up.
  const int n = 128, t = 28, f = 28, u = 256;
  cudnnRNNDescriptor_t rnn = nullptr;
  ASSERT_EQ(api->createRnn(&rnn), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(api->setRnn(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_SINGLE_INP_BIAS,
                        CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                        CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, f, u, u, 1, nullptr,
                        CUDNN_RNN_PADDED_IO_ENABLED),
            CUDNN_STATUS_SUCCESS);
  cudnnRNNDataDescriptor_t x = nullptr;
  ASSERT_EQ(api->createRnnData(&x), CUDNN_STATUS_SUCCESS);
  const std::vector<int> lengths(n, t);
  float fill = 0;
  EXPECT_EQ(api->setRnnData(x, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, t, n,
                            f, lengths.data(), &fill),
            CUDNN_STATUS_SUCCESS);
  cudnnTensorDescriptor_t h = nullptr;
  ASSERT_EQ(api->createTensor(&h), CUDNN_STATUS_SUCCESS);
  const int dims[3] = {1, n, u}, strides[3] = {n * u, u, 1};
  EXPECT_EQ(api->setTensorNd(h, CUDNN_DATA_FLOAT, 3, dims, strides), CUDNN_STATUS_SUCCESS);
  api->destroyTensor(h);
  api->destroyRnnData(x);
  api->destroyRnn(rnn);
}

} // namespace
} // namespace dp::rt::cuda
