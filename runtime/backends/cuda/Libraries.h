// The CUDA math and communication libraries, loaded when a cuda plan first needs them rather
// than linked: dprun starts, and refuses a cuda plan with a clear message, on a machine that
// lacks them. Each library is a table of the few entry points the backend calls, resolved by
// name from the soname its headers were built against.
//
// cuDNN's convolution entry points are its legacy API, deprecated (not removed) in cuDNN 9:
// docs/cuda.md says why dp uses them for now.
#pragma once

#include <cublas_v2.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>
#include <nccl.h>

#include <string>

namespace dp::rt::cuda {

/// The cuBLAS entry points the backend calls.
struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) setStream;
  decltype(&cublasSetWorkspace_v2) setWorkspace;
  decltype(&cublasSetMathMode) setMathMode;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasSgemmStridedBatched) sgemmStridedBatched;
  decltype(&cublasGetStatusString) statusString;
};

/// The cuDNN entry points the backend calls.
struct CudnnApi {
  decltype(&cudnnGetVersion) version;
  decltype(&cudnnGetErrorString) errorString;
  decltype(&cudnnCreate) create;
  decltype(&cudnnDestroy) destroy;
  decltype(&cudnnSetStream) setStream;
  decltype(&cudnnCreateTensorDescriptor) createTensor;
  decltype(&cudnnSetTensor4dDescriptor) setTensor4d;
  decltype(&cudnnDestroyTensorDescriptor) destroyTensor;
  decltype(&cudnnCreateFilterDescriptor) createFilter;
  decltype(&cudnnSetFilter4dDescriptor) setFilter4d;
  decltype(&cudnnDestroyFilterDescriptor) destroyFilter;
  decltype(&cudnnCreateConvolutionDescriptor) createConvolution;
  decltype(&cudnnSetConvolution2dDescriptor) setConvolution2d;
  decltype(&cudnnSetConvolutionMathType) setConvolutionMathType;
  decltype(&cudnnSetConvolutionGroupCount) setConvolutionGroupCount;
  decltype(&cudnnDestroyConvolutionDescriptor) destroyConvolution;
  decltype(&cudnnGetConvolution2dForwardOutputDim) forwardOutputDim;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forwardAlgorithms;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) backwardDataAlgorithms;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) backwardFilterAlgorithms;
  decltype(&cudnnConvolutionForward) forward;
  decltype(&cudnnConvolutionBackwardData) backwardData;
  decltype(&cudnnConvolutionBackwardFilter) backwardFilter;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) forwardWorkspace;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) backwardDataWorkspace;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) backwardFilterWorkspace;
  // The LSTM (cuDNN's RNN API, v8).
  decltype(&cudnnCreateRNNDescriptor) createRnn;
  decltype(&cudnnSetRNNDescriptor_v8) setRnn;
  decltype(&cudnnDestroyRNNDescriptor) destroyRnn;
  decltype(&cudnnCreateRNNDataDescriptor) createRnnData;
  decltype(&cudnnSetRNNDataDescriptor) setRnnData;
  decltype(&cudnnDestroyRNNDataDescriptor) destroyRnnData;
  decltype(&cudnnSetTensorNdDescriptor) setTensorNd;
  decltype(&cudnnGetRNNWeightSpaceSize) rnnWeightSpaceSize;
  decltype(&cudnnGetRNNTempSpaceSizes) rnnTempSpaceSizes;
  decltype(&cudnnGetRNNWeightParams) rnnWeightParams;
  decltype(&cudnnRNNForward) rnnForward;
  decltype(&cudnnRNNBackwardData_v8) rnnBackwardData;
  decltype(&cudnnRNNBackwardWeights_v8) rnnBackwardWeights;
};

#pragma GCC diagnostic pop

/// The NCCL entry points the collectives engine calls.
struct NcclApi {
  decltype(&ncclGetVersion) version;
  decltype(&ncclGetErrorString) errorString;
  decltype(&ncclGetUniqueId) uniqueId;
  decltype(&ncclCommInitRank) initRank;
  decltype(&ncclGroupStart) groupStart;
  decltype(&ncclGroupEnd) groupEnd;
  decltype(&ncclAllReduce) allReduce;
  decltype(&ncclReduce) reduce;
  decltype(&ncclReduceScatter) reduceScatter;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclCommGetAsyncError) asyncError;
  decltype(&ncclCommAbort) abort;
  decltype(&ncclCommDestroy) destroy;
};

/// The sonames the libraries are loaded from ("libcublas.so.13", "libcudnn.so.9",
/// "libnccl.so.2": the major versions of the headers).
std::string cublasLibraryName();
std::string cudnnLibraryName();
std::string ncclLibraryName();
/// The library, loaded on the first call; throws Error(Launch) naming the library, the symbol
/// and the loader's reason when it cannot be loaded.
const CublasApi &cublas();
const CudnnApi &cudnn();
/// NCCL also fails to load when older than 2.10, which added the averaging reduction.
const NcclApi &nccl();

} // namespace dp::rt::cuda
