// oneDNN glue; see Dnnl.h. run() calls the C API with a prebuilt argument array because the C++
// execute() converts its std::unordered_map argument on every call.
#include "runtime/backends/cpu/Dnnl.h"

#include "runtime/backends/cpu/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>

namespace dp::rt::cpu {

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::desc f32Desc(const dnnl::memory::dims &dims, const dnnl::memory::dims &strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory::data_type dnnlType(DType t) {
  return t == DType::BF16  ? dnnl::memory::data_type::bf16
         : t == DType::I32 ? dnnl::memory::data_type::s32
                           : dnnl::memory::data_type::f32;
}

dnnl::memory::desc plainDesc(const dnnl::memory::dims &dims, const dnnl::memory::dims &strides,
                             DType t) {
  return dnnl::memory::desc(dims, dnnlType(t), strides);
}

dnnl::primitive_attr userScratchpad(Activation act) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (act == Activation::Relu)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  else if (act == Activation::Sigmoid)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_logistic, 0.0f, 0.0f);
  else if (act == Activation::Tanh)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  return attr;
}

DnnlCall::DnnlCall(const dnnl::primitive_desc_base &pd, dnnl::primitive prim,
                   std::vector<std::pair<int, dnnl::memory>> args, std::string where, int threads)
    : prim_(std::move(prim)), stream_(cpuEngine()), where_(std::move(where)), threads_(threads) {
  dnnl::memory::desc scratch = pd.scratchpad_desc();
  if (scratch.get_size() > 0)
    args.emplace_back(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratch, cpuEngine()));
  for (auto &[arg, memory] : args) {
    args_.push_back({arg, memory.get()});
    memories_.push_back(std::move(memory));
  }
}

void DnnlCall::run() {
  ThreadCap cap(threads_);
  dnnl_status_t status = dnnl_primitive_execute(prim_.get(), stream_.get(),
                                                static_cast<int>(args_.size()), args_.data());
  if (status == dnnl_success)
    status = dnnl_stream_wait(stream_.get());
  if (status != dnnl_success)
    throw Error(ErrorKind::Runtime,
                where_ + ": oneDNN execution failed with status " + std::to_string(int(status)));
}

void DnnlCall::rebind(int arg, void *data) {
  for (size_t i = 0; i < args_.size(); ++i)
    if (args_[i].arg == arg) {
      memories_[i].set_data_handle(data);
      return;
    }
  throw Error(ErrorKind::Runtime, where_ + ": internal: no argument " + std::to_string(arg));
}

namespace {
std::atomic<bool> fixedPartitions_{false};
} // namespace

bool fixedPartitions() { return fixedPartitions_.load(); }
void setFixedPartitions(bool on) { fixedPartitions_.store(on); }

std::vector<std::pair<int64_t, int64_t>> reduceChunks(int64_t rows) {
  const int64_t count = std::max<int64_t>(1, std::min(rows, kReduceChunks));
  std::vector<std::pair<int64_t, int64_t>> chunks;
  int64_t first = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = rows / count + (i < rows % count ? 1 : 0);
    chunks.emplace_back(first, n);
    first += n;
  }
  return chunks;
}

std::vector<std::pair<int64_t, int64_t>> columnChunks(int64_t columns) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  for (const auto &[first, units] : reduceChunks((columns + 15) / 16))
    chunks.emplace_back(first * 16, std::min(columns, (first + units) * 16) - first * 16);
  return chunks;
}

std::shared_ptr<float> alignedFloats(int64_t n) {
  const size_t bytes = (size_t(std::max<int64_t>(n, 1)) * sizeof(float) + 63) / 64 * 64;
  float *p = static_cast<float *>(std::aligned_alloc(64, bytes));
  if (!p)
    throw std::bad_alloc();
  return std::shared_ptr<float>(p, &std::free);
}

ChunkedSum::ChunkedSum(std::vector<DnnlCall> chunks, std::vector<Output> outputs)
    : ChunkedSum(
          [&] {
            std::vector<std::vector<DnnlCall>> calls;
            for (DnnlCall &c : chunks) {
              calls.emplace_back();
              calls.back().push_back(std::move(c));
            }
            return calls;
          }(),
          std::move(outputs)) {}

ChunkedSum::ChunkedSum(std::vector<std::vector<DnnlCall>> chunks, std::vector<Output> outputs)
    : chunks_(std::move(chunks)), outputs_(std::move(outputs)) {
  for (const Output &o : outputs_) {
    offsets_.push_back(partialFloats_);
    // Each partial sum 64-byte aligned for oneDNN.
    partialFloats_ += (static_cast<int64_t>(o.partial.get_size() / sizeof(float)) + 15) / 16 * 16;
  }
}

ChunkedSum::ChunkedSum(std::vector<DnnlCall> chunks, int outArg, const dnnl::memory::desc &partial,
                       DnnlCall finish)
    : ChunkedSum(std::move(chunks), [&] {
        std::vector<Output> outputs;
        outputs.push_back({outArg, partial, std::move(finish)});
        return outputs;
      }()) {}

void ChunkedSum::run(const StepContext &) {
  // The partial sums of the kernels this thread runs; 64-byte aligned for oneDNN.
  thread_local std::unique_ptr<float, decltype(&std::free)> scratch(nullptr, &std::free);
  thread_local int64_t capacity = 0;
  const int64_t count = static_cast<int64_t>(chunks_.size());
  const int64_t stride = partialFloats_;
  if (stride > 0 && capacity < count * stride) {
    scratch.reset();
    const size_t bytes = size_t(count * stride) * sizeof(float);
    scratch.reset(static_cast<float *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    if (!scratch)
      throw std::bad_alloc();
    capacity = count * stride;
  }
  float *base = scratch.get();
  for (int64_t i = 0; i < count; ++i)
    for (size_t o = 0; o < outputs_.size(); ++o)
      chunks_[i].back().rebind(outputs_[o].arg, base + i * stride + offsets_[o]);
  std::exception_ptr failure;
#pragma omp parallel for schedule(static) if (count > 1)
  for (int64_t i = 0; i < count; ++i) {
    try {
      for (DnnlCall &call : chunks_[i])
        call.run();
    } catch (...) {
#pragma omp critical(dp_chunked_sum)
      failure = std::current_exception();
    }
  }
  if (failure)
    std::rethrow_exception(failure);
  // The tree: at distance d, partial i (a multiple of 2d) takes partial i + d.
  for (int64_t d = 1; d < count; d *= 2)
    for (int64_t i = 0; i + d < count; i += 2 * d) {
      float *into = base + i * stride;
      const float *from = base + (i + d) * stride;
      parallelChunks(stride, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k)
          into[k] += from[k];
      });
    }
  for (const auto &[at, len] : zeros_)
    std::fill_n(zeroBase_ + at, len, 0.0f);
  for (size_t o = 0; o < outputs_.size(); ++o) {
    outputs_[o].finish.rebind(DNNL_ARG_FROM, base + offsets_[o]);
    outputs_[o].finish.run();
  }
}

DnnlCall matmulCall(const dnnl::memory::desc &a, void *aData, const dnnl::memory::desc &b,
                    void *bData, const dnnl::memory::desc &c, void *cData, const void *bias,
                    const dnnl::primitive_attr &attr, const std::string &where, int threads) {
  const dnnl::memory::dims cDims = c.dims();
  double macs = double(a.dims().back());
  for (dnnl::memory::dim d : cDims)
    macs *= double(d);
  if (threads < 0)
    threads = threadsFor(macs);
  ThreadCap cap(threads);
  const dnnl::memory::desc biasDesc =
      bias ? f32Desc({1, cDims.back()}, {cDims.back(), 1}) : dnnl::memory::desc();
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, biasDesc, c), attr, cpuEngine());
  std::vector<std::pair<int, dnnl::memory>> args = {
      {DNNL_ARG_SRC, dnnl::memory(a, cpuEngine(), aData)},
      {DNNL_ARG_WEIGHTS, dnnl::memory(b, cpuEngine(), bData)},
      {DNNL_ARG_DST, dnnl::memory(c, cpuEngine(), cData)}};
  if (bias)
    args.emplace_back(DNNL_ARG_BIAS, dnnl::memory(biasDesc, cpuEngine(), const_cast<void *>(bias)));
  return DnnlCall(pd, dnnl::matmul(pd), std::move(args), where, threads);
}

DnnlCall reorderCall(const dnnl::memory &from, const dnnl::memory &to, const std::string &where,
                     int threads) {
  dnnl::reorder::primitive_desc pd(cpuEngine(), from.get_desc(), cpuEngine(), to.get_desc(),
                                   userScratchpad());
  return DnnlCall(pd, dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, where,
                  threads);
}

} // namespace dp::rt::cpu
