// The CUDA backend; see CudaBackend.h. The device layer maps one to one onto the CUDA runtime:
// streams are cudaStreams, events cudaEvents, host functions cudaLaunchHostFunc, copies
// cudaMemcpyAsync, and a captured step a CUDA graph (the first stream captured, the others
// forked from it and joined back by events) replayed with cudaGraphLaunch; a launch's
// StepContext reaches the graph's kernels through a device buffer it is copied into first.
//
// NEVER RUN ON A GPU: this file is compiled and linked here, and only its refusal without a GPU
// and its device selection are tested (docs/cuda.md). Kernels are built by CudaKernels.cpp;
// convolutions and the LSTM are refused by name until their cuDNN adapters exist.
#include "runtime/backends/cuda/CudaBackend.h"

#include "runtime/backends/cuda/DeviceSelection.h"
#include "runtime/backends/cuda/Internal.h"
#include "runtime/backends/cuda/Libraries.h"
#include "runtime/backends/cuda/NcclEngine.h"
#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <exception>
#include <mutex>

namespace dp::rt::cuda {

void check(cudaError_t status, const std::string &what, ErrorKind kind) {
  if (status != cudaSuccess)
    throw Error(kind, what + ": " + cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

namespace {

/// cuBLAS's workspace per device: enough for its Hopper GEMM kernels, allocated once so that
/// a captured step allocates nothing.
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

/// What the memory check sets aside for convolution workspaces: the most CudaKernels.cpp lets
/// an algorithm take (kConvWorkspaceLimit there).
constexpr size_t kConvWorkspaceReserve = size_t(256) << 20;

/// TF32 products when DP_CUDA_TF32 is set to 1 (fp32 otherwise).
bool tf32Requested() {
  const char *value = std::getenv("DP_CUDA_TF32");
  return value && std::string(value) == "1";
}

/// This process's rank among the processes of its node, from the launcher's environment.
int localRankFromEnvironment() {
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoi(value);
  return 0;
}

std::string visibleDevicesEnvironment() {
  const char *value = std::getenv("CUDA_VISIBLE_DEVICES");
  return value ? value : "";
}

/// The GPUs the runtime sees; throws Error(Launch) when it sees none, saying why.
int visibleDevices() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw Error(ErrorKind::Launch,
                std::string("the plan was compiled for cuda devices and this machine has no "
                            "usable GPU (") +
                    (status != cudaSuccess
                         ? std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status)
                         : std::string("the CUDA runtime reports 0 devices")) +
                    (visibleDevicesEnvironment().empty()
                         ? std::string()
                         : ", CUDA_VISIBLE_DEVICES=" + visibleDevicesEnvironment()) +
                    "): run it on a GPU node, or recompile with --device cpu");
  return count;
}

class CudaDevice;

/// The stream a kernel launched through Stream::launch runs on (its run() enqueues there).
thread_local cudaStream_t currentStream = nullptr;

} // namespace

cudaStream_t launchStream() { return currentStream; }

namespace {

class CudaEvent final : public Event {
public:
  explicit CudaEvent(int ordinal) {
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CudaEvent() override { cudaEventDestroy(event_); }
  void synchronize() override { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }
  cudaEvent_t get() const { return event_; }

private:
  cudaEvent_t event_ = nullptr;
};

class CudaStream final : public Stream {
public:
  CudaStream(int ordinal, std::string name) : ordinal_(ordinal), name_(std::move(name)) {
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaStream() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  const std::string &name() const override { return name_; }
  cudaStream_t get() const { return stream_; }

  void launch(Kernel &kernel, const StepContext &ctx) override {
    check(cudaSetDevice(ordinal_), "cudaSetDevice");
    currentStream = stream_;
    kernel.run(ctx);
    currentStream = nullptr;
  }
  void host(std::function<void()> fn) override {
    // A captured host function runs at every replay of the graph: the graph owns it (see
    // takeCaptured). One enqueued directly runs once and deletes itself.
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream_, &capturing),
          "stream " + name_ + ": cudaStreamIsCapturing");
    const bool kept = capturing == cudaStreamCaptureStatusActive;
    auto *call = new HostCall{this, std::move(fn), kept};
    const cudaError_t status = cudaLaunchHostFunc(stream_, &HostCall::run, call);
    if (status != cudaSuccess) {
      delete call;
      check(status, "stream " + name_ + ": cudaLaunchHostFunc");
    }
    if (kept)
      captured_.emplace_back(call);
  }
  void copy(void *dst, const void *src, size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_),
          "stream " + name_ + ": cudaMemcpyAsync");
  }
  void record(Event &event) override {
    check(cudaEventRecord(static_cast<CudaEvent &>(event).get(), stream_),
          "stream " + name_ + ": cudaEventRecord");
  }
  void wait(Event &event) override {
    check(cudaStreamWaitEvent(stream_, static_cast<CudaEvent &>(event).get(), 0),
          "stream " + name_ + ": cudaStreamWaitEvent");
  }
  void synchronize() override {
    check(cudaStreamSynchronize(stream_), "stream " + name_ + ": cudaStreamSynchronize");
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_)
      std::rethrow_exception(failure_);
  }

private:
  /// A host function and the stream it failed on: the first failure is kept and rethrown by
  /// synchronize(); later host functions of the stream are skipped (sticky, as in Device.h).
  struct HostCall {
    CudaStream *stream;
    std::function<void()> fn;
    bool kept; // captured into a graph, which owns it
    static void CUDART_CB run(void *data) {
      auto *raw = static_cast<HostCall *>(data);
      std::unique_ptr<HostCall> owned(raw->kept ? nullptr : raw);
      HostCall *call = raw;
      {
        std::lock_guard<std::mutex> lock(call->stream->mutex_);
        if (call->stream->failure_)
          return;
      }
      try {
        call->fn();
      } catch (...) {
        std::lock_guard<std::mutex> lock(call->stream->mutex_);
        if (!call->stream->failure_)
          call->stream->failure_ = std::current_exception();
      }
    }
  };

  int ordinal_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::exception_ptr failure_;
  std::vector<std::unique_ptr<HostCall>> captured_; // host functions of the capture under way

public:
  /// The host functions captured since the last call, for the graph that replays them.
  std::vector<std::shared_ptr<void>> takeCaptured() {
    std::vector<std::shared_ptr<void>> calls;
    for (auto &call : captured_)
      calls.emplace_back(std::shared_ptr<HostCall>(std::move(call)));
    captured_.clear();
    return calls;
  }
  /// Records or waits for an event, returning CUDA's status instead of throwing (ending a
  /// capture must reach cudaStreamEndCapture whatever happened before).
  cudaError_t tryRecord(cudaEvent_t event) { return cudaEventRecord(event, stream_); }
  cudaError_t tryWait(cudaEvent_t event) { return cudaStreamWaitEvent(stream_, event, 0); }
};

class CudaGraph final : public Graph {
public:
  CudaGraph(cudaGraph_t graph, cudaGraphExec_t exec, CudaStream *origin,
            std::vector<std::shared_ptr<void>> hostCalls)
      : graph_(graph), exec_(exec), origin_(origin), hostCalls_(std::move(hostCalls)) {}
  ~CudaGraph() override {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  size_t size() const override {
    size_t nodes = 0;
    cudaGraphGetNodes(graph_, nullptr, &nodes);
    return nodes;
  }
  cudaGraphExec_t exec() const { return exec_; }
  CudaStream *origin() const { return origin_; }

private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  CudaStream *origin_;
  std::vector<std::shared_ptr<void>> hostCalls_; // the captured host functions' payloads
};

class CudaDevice final : public Device, public KernelEnvironment {
public:
  CudaDevice(int ordinal, int cudaOrdinal) : ordinal_(ordinal), cuda_(cudaOrdinal) {
    check(cudaSetDevice(cuda_), "cudaSetDevice(" + std::to_string(cuda_) + ")", ErrorKind::Launch);
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, cuda_), "cudaGetDeviceProperties", ErrorKind::Launch);
    name_ = prop.name;
    memory_ = prop.totalGlobalMem;
    // The context of the step being launched, where its captured kernels read it, and a ring
    // of pinned slots it is copied from (a slot is reused once its copy is done).
    context_ = allocate(sizeof(StepContext));
    staged_ = allocateHost(kContextSlots * sizeof(StepContext));
    for (auto &event : slotDone_)
      event = std::make_unique<CudaEvent>(cuda_);
  }

  ~CudaDevice() override {
    if (blas_)
      cublas().destroy(blas_);
    if (dnn_)
      cudnn().destroy(dnn_);
  }

  // KernelEnvironment
  const StepContext *deviceContext() const override {
    return static_cast<const StepContext *>(context_.data());
  }
  cublasHandle_t blas(cudaStream_t stream) override {
    cublasHandle_t handle = blasHandle();
    if (stream) {
      // cublasSetStream puts back cuBLAS's default workspace pool: the device's own is set
      // again, so that a captured product allocates nothing.
      const CublasApi &api = cublas();
      cublasStatus_t status = api.setStream(handle, stream);
      if (status == CUBLAS_STATUS_SUCCESS)
        status = api.setWorkspace(handle, blasWorkspace_.data(), kBlasWorkspaceBytes);
      if (status != CUBLAS_STATUS_SUCCESS)
        throw Error(ErrorKind::Runtime,
                    describe() + ": binding cuBLAS to a stream: " + api.statusString(status));
    }
    return handle;
  }
  cublasHandle_t blasHandle() {
    if (blas_)
      return blas_;
    const CublasApi &api = cublas();
    check(cudaSetDevice(cuda_), "cudaSetDevice");
    cublasHandle_t handle = nullptr;
    cublasStatus_t status = api.create(&handle);
    if (status != CUBLAS_STATUS_SUCCESS)
      throw Error(ErrorKind::Runtime, describe() + ": cublasCreate: " + api.statusString(status));
    blas_ = handle;
    blasWorkspace_ = allocate(kBlasWorkspaceBytes);
    status = api.setWorkspace(handle, blasWorkspace_.data(), kBlasWorkspaceBytes);
    if (status == CUBLAS_STATUS_SUCCESS)
      status = api.setMathMode(handle, tf32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (status != CUBLAS_STATUS_SUCCESS)
      throw Error(ErrorKind::Runtime,
                  describe() + ": setting up cuBLAS: " + api.statusString(status));
    return blas_;
  }
  cudnnHandle_t dnn(cudaStream_t stream) override {
    const CudnnApi &api = cudnn();
    if (!dnn_) {
      check(cudaSetDevice(cuda_), "cudaSetDevice");
      const cudnnStatus_t status = api.create(&dnn_);
      if (status != CUDNN_STATUS_SUCCESS)
        throw Error(ErrorKind::Runtime, describe() + ": cudnnCreate: " + api.errorString(status));
    }
    if (stream) {
      const cudnnStatus_t status = api.setStream(dnn_, stream);
      if (status != CUDNN_STATUS_SUCCESS)
        throw Error(ErrorKind::Runtime,
                    describe() + ": cudnnSetStream: " + api.errorString(status));
    }
    return dnn_;
  }
  bool tf32() const override { return tf32_; }
  void reserveScratch(size_t bytes) override {
    if (scratch_.data() && bytes > scratch_.bytes())
      throw Error(ErrorKind::Runtime, describe() + ": a kernel asked for " + bytesText(bytes) +
                                          " of scratch after the steps were captured with " +
                                          bytesText(scratch_.bytes()));
    scratchBytes_ = bytes > scratchBytes_ ? bytes : scratchBytes_;
  }
  void *scratch() override {
    if (!scratch_.data())
      scratch_ = allocate(scratchBytes_);
    return scratch_.data();
  }
  void *persistent(size_t bytes) override {
    uploads_.push_back(allocate(bytes)); // zeroed
    return uploads_.back().data();
  }
  void *upload(const void *data, size_t bytes) override {
    uploads_.push_back(allocate(bytes));
    check(cudaMemcpy(uploads_.back().data(), data, bytes, cudaMemcpyHostToDevice),
          describe() + ": cudaMemcpy");
    return uploads_.back().data();
  }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  int ordinal() const override { return ordinal_; }
  int cudaOrdinal() const { return cuda_; }
  std::string describe() const override {
    return "cuda:" + std::to_string(cuda_) + " (" + name_ + ", " + bytesText(memory_) + ")";
  }
  bool hostAccessible() const override { return false; }

  DeviceMemory allocate(size_t bytes) override {
    check(cudaSetDevice(cuda_), "cudaSetDevice");
    void *data = nullptr;
    check(cudaMalloc(&data, bytes ? bytes : 64),
          describe() + ": cannot allocate " + bytesText(bytes), ErrorKind::Memory);
    // Zeroed before any stream's work can touch it (cudaMemset is asynchronous to the host
    // and the non-blocking streams do not wait for it).
    cudaError_t status = cudaMemset(data, 0, bytes ? bytes : 64);
    if (status == cudaSuccess)
      status = cudaDeviceSynchronize();
    if (status != cudaSuccess)
      cudaFree(data);
    check(status, describe() + ": zeroing new memory");
    return DeviceMemory(data, bytes, [](void *p) { cudaFree(p); });
  }
  DeviceMemory allocateHost(size_t bytes) override {
    void *data = nullptr;
    check(cudaMallocHost(&data, bytes ? bytes : 64),
          describe() + ": cannot allocate " + bytesText(bytes) + " of pinned host memory",
          ErrorKind::Memory);
    return DeviceMemory(data, bytes, [](void *p) { cudaFreeHost(p); });
  }

  std::unique_ptr<Stream> createStream(const std::string &name) override {
    return std::make_unique<CudaStream>(cuda_, name);
  }
  std::unique_ptr<Event> createEvent() override { return std::make_unique<CudaEvent>(cuda_); }

  void beginCapture(const std::vector<Stream *> &streams) override {
    if (!captured_.empty())
      throw Error(ErrorKind::Runtime, describe() + ": a capture is already in progress");
    if (streams.empty())
      throw Error(ErrorKind::Runtime, describe() + ": nothing to capture");
    // Nothing may be allocated while a stream captures: the kernels' scratch is made now.
    if (!scratch_.data())
      scratch_ = allocate(scratchBytes_);
    std::vector<CudaStream *> lanes;
    for (Stream *s : streams)
      lanes.push_back(static_cast<CudaStream *>(s));
    fork_ = std::make_unique<CudaEvent>(cuda_);
    check(cudaStreamBeginCapture(lanes[0]->get(), cudaStreamCaptureModeThreadLocal),
          describe() + ": cudaStreamBeginCapture");
    // The other streams join the capture by waiting for the first.
    cudaError_t status = lanes[0]->tryRecord(fork_->get());
    for (size_t i = 1; i < lanes.size() && status == cudaSuccess; ++i)
      status = lanes[i]->tryWait(fork_->get());
    captured_ = lanes;
    if (status != cudaSuccess) {
      abandonCapture();
      check(status, describe() + ": joining the streams to the capture");
    }
  }
  std::unique_ptr<Graph> endCapture() override {
    if (captured_.empty())
      throw Error(ErrorKind::Runtime, describe() + ": no capture is in progress");
    std::vector<CudaStream *> lanes = std::move(captured_);
    captured_.clear();
    // The others join back into the first before the capture ends; whatever fails, the
    // capture is ended (a stream left capturing refuses all later work).
    joins_.clear();
    cudaError_t status = cudaSuccess;
    for (size_t i = 1; i < lanes.size() && status == cudaSuccess; ++i) {
      joins_.push_back(std::make_unique<CudaEvent>(cuda_));
      status = lanes[i]->tryRecord(joins_.back()->get());
      if (status == cudaSuccess)
        status = lanes[0]->tryWait(joins_.back()->get());
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(lanes[0]->get(), &graph);
    std::vector<std::shared_ptr<void>> hostCalls;
    for (CudaStream *lane : lanes)
      for (auto &call : lane->takeCaptured())
        hostCalls.push_back(std::move(call));
    if (status == cudaSuccess)
      status = ended;
    cudaGraphExec_t exec = nullptr;
    if (status == cudaSuccess)
      status = cudaGraphInstantiate(&exec, graph, 0);
    if (status != cudaSuccess) {
      if (graph)
        cudaGraphDestroy(graph);
      cudaGetLastError(); // the capture's error is reported here, not at the next call
      check(status, describe() + ": capturing a step");
    }
    return std::make_unique<CudaGraph>(graph, exec, lanes[0], std::move(hostCalls));
  }
  void launch(Graph &g, const StepContext &ctx) override {
    auto &graph = static_cast<CudaGraph &>(g);
    // The graph's kernels were captured with the device context's address: the launch's
    // context is copied there first, in the graph's stream order.
    const int slot = static_cast<int>(launches_++ % kContextSlots);
    CudaEvent &done = *slotDone_[slot];
    if (launches_ > kContextSlots)
      done.synchronize(); // the slot's previous copy has read it
    StepContext *host = static_cast<StepContext *>(staged_.data()) + slot;
    *host = ctx;
    CudaStream &origin = *graph.origin();
    origin.copy(context_.data(), host, sizeof(StepContext));
    origin.record(done);
    check(cudaGraphLaunch(graph.exec(), origin.get()), describe() + ": cudaGraphLaunch");
  }
  void setFailureHandler(std::function<void(const std::string &)> handler) override {
    onFailure_ = std::move(handler);
  }

private:
  /// Ends a capture that cannot go on, dropping what it recorded.
  void abandonCapture() {
    std::vector<CudaStream *> lanes = std::move(captured_);
    captured_.clear();
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(lanes[0]->get(), &graph) == cudaSuccess && graph)
      cudaGraphDestroy(graph);
    for (CudaStream *lane : lanes)
      lane->takeCaptured();
    cudaGetLastError();
  }

  static constexpr int kContextSlots = 8;
  int ordinal_, cuda_;
  std::string name_;
  size_t memory_ = 0;
  DeviceMemory context_, staged_;
  std::unique_ptr<CudaEvent> slotDone_[kContextSlots];
  uint64_t launches_ = 0;
  std::vector<CudaStream *> captured_;
  std::unique_ptr<CudaEvent> fork_;
  std::vector<std::unique_ptr<CudaEvent>> joins_;
  std::function<void(const std::string &)> onFailure_;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  const bool tf32_ = tf32Requested();
  DeviceMemory blasWorkspace_, scratch_;
  size_t scratchBytes_ = 0;
  std::vector<DeviceMemory> uploads_;
};

class CudaBackend final : public Backend {
public:
  DeviceKind kind() const override { return DeviceKind::Cuda; }
  std::string describe() const override {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    return "cuda (CUDA runtime " + std::to_string(runtime / 1000) + "." +
           std::to_string(runtime % 1000 / 10) + ")";
  }

  std::vector<std::unique_ptr<Device>> openDevices(int count) override {
    std::vector<std::unique_ptr<Device>> devices;
    int ordinal = 0;
    for (int cuda : chosen(count))
      devices.push_back(std::make_unique<CudaDevice>(ordinal++, cuda));
    return devices;
  }

  void checkMemory(uint64_t bytes, int count, const std::string &what) override {
    for (int cuda : chosen(count)) {
      check(cudaSetDevice(cuda), "cudaSetDevice(" + std::to_string(cuda) + ")", ErrorKind::Launch);
      size_t free = 0, total = 0;
      check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", ErrorKind::Launch);
      // Besides the arena, each device holds the libraries' workspaces: cuBLAS's and, at
      // most, the largest convolution workspace dp lets cuDNN choose (kernels' scratch).
      const uint64_t reserve = kBlasWorkspaceBytes + kConvWorkspaceReserve;
      if (bytes + reserve > free)
        throw Error(ErrorKind::Memory,
                    "not enough memory on cuda:" + std::to_string(cuda) + " for " + what +
                        ": it needs " + bytesText(bytes) + " plus " + bytesText(reserve) +
                        " for cuBLAS's and cuDNN's workspaces, but the GPU has " + bytesText(free) +
                        " free of " + bytesText(total));
    }
  }

  std::unique_ptr<Kernel> makeKernel(Device &device, const KernelSite &site) override {
    return makeCudaKernel(static_cast<CudaDevice &>(device), site);
  }

  /// GPUs average their buckets with NCCL, on the devices.
  std::unique_ptr<CollectiveEngine> makeCollectives(const CollectivesSetup &setup) override {
    return makeNcclEngine(setup);
  }

private:
  /// The CUDA ordinals of this process's `count` devices.
  std::vector<int> chosen(int count) {
    return selectDevices(localRankFromEnvironment(), count, visibleDevices(),
                         visibleDevicesEnvironment());
  }
};

} // namespace

cudaStream_t nativeStream(Stream &stream) {
  auto *cuda = dynamic_cast<CudaStream *>(&stream);
  if (!cuda)
    throw Error(ErrorKind::Runtime, "stream '" + stream.name() + "' is not a CUDA stream");
  return cuda->get();
}

int nativeOrdinal(Device &device) {
  auto *cuda = dynamic_cast<CudaDevice *>(&device);
  if (!cuda)
    throw Error(ErrorKind::Runtime, device.describe() + " is not a CUDA device");
  return cuda->cudaOrdinal();
}

std::unique_ptr<Backend> makeCudaBackend() { return std::make_unique<CudaBackend>(); }

void registerCudaBackend() { BackendRegistry::add(makeCudaBackend()); }

} // namespace dp::rt::cuda
