// Loading the CUDA libraries; see Libraries.h.
#include "runtime/backends/cuda/Libraries.h"

#include "runtime/base/Error.h"

#include <dlfcn.h>

#include <mutex>

namespace dp::rt::cuda {
namespace {

/// A library opened for the life of the process (its handle is never closed: kernels built
/// on it may run until exit).
class Library {
public:
  explicit Library(std::string name) : name_(std::move(name)) {
    handle_ = dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_)
      throw Error(ErrorKind::Launch, "cannot load " + name_ + " (" + lastError() +
                                         "): the CUDA backend needs it; install the CUDA " +
                                         "toolkit's libraries or add them to LD_LIBRARY_PATH");
  }
  const std::string &name() const { return name_; }
  template <typename F> void resolve(F &slot, const char *symbol) {
    void *address = dlsym(handle_, symbol);
    if (!address)
      throw Error(ErrorKind::Launch, name_ + " has no " + symbol + " (" + lastError() +
                                         "): it is older than the headers dp was built with");
    slot = reinterpret_cast<F>(address);
  }

private:
  static std::string lastError() {
    const char *e = dlerror();
    return e ? e : "unknown reason";
  }
  std::string name_;
  void *handle_ = nullptr;
};

/// The table of library `name`, filled by `resolveAll` on the first call (one table per Api);
/// a failed load is reported to every caller, not only the first.
template <typename Api, typename Resolve>
const Api &loaded(const std::string &name, const Resolve &resolveAll) {
  static std::once_flag once;
  static Api api;
  static std::string failure;
  std::call_once(once, [&] {
    try {
      Library lib(name);
      resolveAll(lib, api);
    } catch (const Error &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw Error(ErrorKind::Launch, failure);
  return api;
}

} // namespace

std::string cublasLibraryName() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }
std::string cudnnLibraryName() { return "libcudnn.so." + std::to_string(CUDNN_MAJOR); }
std::string ncclLibraryName() { return "libnccl.so." + std::to_string(NCCL_MAJOR); }

const CublasApi &cublas() {
  return loaded<CublasApi>(cublasLibraryName(), [](Library &lib, CublasApi &a) {
    lib.resolve(a.create, "cublasCreate_v2");
    lib.resolve(a.destroy, "cublasDestroy_v2");
    lib.resolve(a.setStream, "cublasSetStream_v2");
    lib.resolve(a.setWorkspace, "cublasSetWorkspace_v2");
    lib.resolve(a.setMathMode, "cublasSetMathMode");
    lib.resolve(a.sgemm, "cublasSgemm_v2");
    lib.resolve(a.sgemmStridedBatched, "cublasSgemmStridedBatched");
    lib.resolve(a.statusString, "cublasGetStatusString");
  });
}

const CudnnApi &cudnn() {
  return loaded<CudnnApi>(cudnnLibraryName(), [](Library &lib, CudnnApi &a) {
    lib.resolve(a.version, "cudnnGetVersion");
    lib.resolve(a.errorString, "cudnnGetErrorString");
    lib.resolve(a.create, "cudnnCreate");
    lib.resolve(a.destroy, "cudnnDestroy");
    lib.resolve(a.setStream, "cudnnSetStream");
    lib.resolve(a.createTensor, "cudnnCreateTensorDescriptor");
    lib.resolve(a.setTensor4d, "cudnnSetTensor4dDescriptor");
    lib.resolve(a.destroyTensor, "cudnnDestroyTensorDescriptor");
    lib.resolve(a.createFilter, "cudnnCreateFilterDescriptor");
    lib.resolve(a.setFilter4d, "cudnnSetFilter4dDescriptor");
    lib.resolve(a.destroyFilter, "cudnnDestroyFilterDescriptor");
    lib.resolve(a.createConvolution, "cudnnCreateConvolutionDescriptor");
    lib.resolve(a.setConvolution2d, "cudnnSetConvolution2dDescriptor");
    lib.resolve(a.setConvolutionMathType, "cudnnSetConvolutionMathType");
    lib.resolve(a.setConvolutionGroupCount, "cudnnSetConvolutionGroupCount");
    lib.resolve(a.destroyConvolution, "cudnnDestroyConvolutionDescriptor");
    lib.resolve(a.forwardOutputDim, "cudnnGetConvolution2dForwardOutputDim");
    lib.resolve(a.forwardAlgorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
    lib.resolve(a.backwardDataAlgorithms, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    lib.resolve(a.backwardFilterAlgorithms, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    lib.resolve(a.forward, "cudnnConvolutionForward");
    lib.resolve(a.backwardData, "cudnnConvolutionBackwardData");
    lib.resolve(a.backwardFilter, "cudnnConvolutionBackwardFilter");
    lib.resolve(a.forwardWorkspace, "cudnnGetConvolutionForwardWorkspaceSize");
    lib.resolve(a.backwardDataWorkspace, "cudnnGetConvolutionBackwardDataWorkspaceSize");
    lib.resolve(a.backwardFilterWorkspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    lib.resolve(a.createRnn, "cudnnCreateRNNDescriptor");
    lib.resolve(a.setRnn, "cudnnSetRNNDescriptor_v8");
    lib.resolve(a.destroyRnn, "cudnnDestroyRNNDescriptor");
    lib.resolve(a.createRnnData, "cudnnCreateRNNDataDescriptor");
    lib.resolve(a.setRnnData, "cudnnSetRNNDataDescriptor");
    lib.resolve(a.destroyRnnData, "cudnnDestroyRNNDataDescriptor");
    lib.resolve(a.setTensorNd, "cudnnSetTensorNdDescriptor");
    lib.resolve(a.rnnWeightSpaceSize, "cudnnGetRNNWeightSpaceSize");
    lib.resolve(a.rnnTempSpaceSizes, "cudnnGetRNNTempSpaceSizes");
    lib.resolve(a.rnnWeightParams, "cudnnGetRNNWeightParams");
    lib.resolve(a.rnnForward, "cudnnRNNForward");
    lib.resolve(a.rnnBackwardData, "cudnnRNNBackwardData_v8");
    lib.resolve(a.rnnBackwardWeights, "cudnnRNNBackwardWeights_v8");
  });
}

const NcclApi &nccl() {
  return loaded<NcclApi>(ncclLibraryName(), [](Library &lib, NcclApi &a) {
    lib.resolve(a.version, "ncclGetVersion");
    lib.resolve(a.errorString, "ncclGetErrorString");
    lib.resolve(a.uniqueId, "ncclGetUniqueId");
    lib.resolve(a.initRank, "ncclCommInitRank");
    lib.resolve(a.groupStart, "ncclGroupStart");
    lib.resolve(a.groupEnd, "ncclGroupEnd");
    lib.resolve(a.allReduce, "ncclAllReduce");
    lib.resolve(a.reduce, "ncclReduce");
    lib.resolve(a.reduceScatter, "ncclReduceScatter");
    lib.resolve(a.broadcast, "ncclBroadcast");
    lib.resolve(a.asyncError, "ncclCommGetAsyncError");
    lib.resolve(a.abort, "ncclCommAbort");
    lib.resolve(a.destroy, "ncclCommDestroy");
    int version = 0;
    if (a.version(&version) != ncclSuccess || version < NCCL_VERSION(2, 10, 0))
      throw Error(ErrorKind::Launch, lib.name() + " is NCCL " + std::to_string(version) +
                                         "; dp needs 2.10 or later (ncclAvg)");
  });
}

} // namespace dp::rt::cuda
