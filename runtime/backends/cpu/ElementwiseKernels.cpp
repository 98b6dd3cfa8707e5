// Elementwise and row kernels: activation (sigmoid/tanh on oneDNN eltwise, the rest as loops),
// activation_grad, add, add_rows, mul, mul_reduce, copy, cast, fill and reduce_rows. The loops are
// written so that the compiler vectorises them, and split across threads only when large.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"
#include "runtime/backends/cpu/Parallel.h"
#include "runtime/base/Bf16.h"

#include <cstring>
#include <type_traits>

namespace dp::rt::cpu {

void softmaxRows(const float *x, float *y, int64_t rows, int64_t cols) {
  parallelChunks(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          softmaxRow(x + r * cols, y + r * cols, cols);
      },
      rows * cols);
}

namespace {

void copyBytes(const TensorView &from, const TensorView &to) {
  if (from.data != to.data)
    std::memcpy(to.data, from.data, to.bytes()); // overlap is excluded at load
}

class ActivationKernel final : public Kernel {
public:
  ActivationKernel(const KernelSite &site, Activation act, Rows shape)
      : act_(act), rows_(shape.rows), cols_(shape.cols) {
    x_ = site.input(0);
    y_ = site.output(0);
    if (act == Activation::Sigmoid || act == Activation::Tanh) {
      const dnnl::memory::desc d = f32Desc({x_.numel}, {1});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const int threads = x_.numel < kParallelMinWork ? 1 : 0;
      ThreadCap cap(threads);
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                      act == Activation::Sigmoid ? dnnl::algorithm::eltwise_logistic
                                                                 : dnnl::algorithm::eltwise_tanh,
                                      d, 0.0f, 0.0f),
          attr, cpuEngine());
      eltwise_ = DnnlCall(pd, dnnl::eltwise_forward(pd),
                          {{DNNL_ARG_SRC, dnnl::memory(d, cpuEngine(), x_.data)},
                           {DNNL_ARG_DST, dnnl::memory(d, cpuEngine(), y_.data)}},
                          site.where(), threads);
    }
  }

  void run(const StepContext &) override {
    switch (act_) {
    case Activation::None:
      copyBytes(x_, y_);
      return;
    case Activation::Relu: {
      const float *x = x_.f32();
      float *y = y_.f32();
      parallelChunks(x_.numel, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      });
      return;
    }
    case Activation::Sigmoid:
    case Activation::Tanh:
      eltwise_.run();
      return;
    case Activation::Softmax:
      softmaxRows(x_.f32(), y_.f32(), rows_, cols_);
      return;
    }
  }

private:
  Activation act_;
  int64_t rows_, cols_;
  TensorView x_, y_;
  DnnlCall eltwise_;
};

/// Stores a result in f32, or rounded to bf16 (a kernel writing the cast that followed it).
inline void store(float &to, float v) { to = v; }
inline void store(uint16_t &to, float v) { to = toBf16(v); }

class ActivationGradKernel final : public Kernel {
public:
  ActivationGradKernel(const KernelSite &site, Activation act, Rows shape)
      : act_(act), rows_(shape.rows), cols_(shape.cols) {
    y_ = site.input(0).f32();
    dy_ = site.input(1).f32();
    dx_ = site.output(0).data;
    bf16_ = site.output(0).dtype == DType::BF16;
    n_ = site.input(0).numel;
  }

  void run(const StepContext &) override {
    if (bf16_)
      runInto(static_cast<uint16_t *>(dx_));
    else
      runInto(static_cast<float *>(dx_));
  }

private:
  /// dx in f32, or in bf16 when the compiler fused the cast that followed.
  template <typename Out> void runInto(Out *dx) {
    const float *y = y_, *dy = dy_;
    switch (act_) {
    case Activation::None:
      if constexpr (std::is_same_v<Out, float>) {
        if (dx != dy)
          std::memcpy(dx, dy, n_ * sizeof(float));
      } else {
        parallelChunks(n_, [=](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            store(dx[i], dy[i]);
        });
      }
      return;
    case Activation::Relu:
      // y = max(x, 0) > 0 exactly where x > 0; at x = 0 the subgradient 0 is used.
      // dy is loaded unconditionally: a load under the condition would keep the loop scalar.
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const float g = dy[i];
          store(dx[i], y[i] > 0.0f ? g : 0.0f);
        }
      });
      return;
    case Activation::Sigmoid:
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          store(dx[i], dy[i] * y[i] * (1.0f - y[i]));
      });
      return;
    case Activation::Tanh:
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          store(dx[i], dy[i] * (1.0f - y[i] * y[i]));
      });
      return;
    case Activation::Softmax: {
      const int64_t cols = cols_;
      parallelChunks(
          rows_,
          [=](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const float *yr = y + r * cols, *dyr = dy + r * cols;
              Out *dxr = dx + r * cols;
              float dot = 0;
#pragma omp simd reduction(+ : dot)
              for (int64_t j = 0; j < cols; ++j)
                dot += yr[j] * dyr[j];
#pragma omp simd
              for (int64_t j = 0; j < cols; ++j)
                store(dxr[j], yr[j] * (dyr[j] - dot));
            }
          },
          n_);
      return;
    }
    }
  }

  Activation act_;
  int64_t rows_, cols_;
  const float *y_, *dy_;
  void *dx_;
  bool bf16_;
  int64_t n_;
};

class AddKernel final : public Kernel {
public:
  AddKernel(const float *a, const float *b, float *c, int64_t n) : a_(a), b_(b), c_(c), n_(n) {}
  void run(const StepContext &) override {
    const float *a = a_, *b = b_;
    float *c = c_;
    parallelChunks(n_, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        c[i] = a[i] + b[i];
    });
  }

private:
  const float *a_, *b_;
  float *c_;
  int64_t n_;
};

class AddRowsKernel final : public Kernel {
public:
  AddRowsKernel(const float *x, const float *b, float *y, Rows r) : x_(x), b_(b), y_(y), r_(r) {}
  void run(const StepContext &) override {
    const float *x = x_, *b = b_;
    float *y = y_;
    const int64_t cols = r_.cols;
    parallelChunks(
        r_.rows,
        [=](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row)
            for (int64_t j = 0; j < cols; ++j)
              y[row * cols + j] = x[row * cols + j] + b[j];
        },
        r_.rows * cols);
  }

private:
  const float *x_, *b_;
  float *y_;
  Rows r_;
};

// mul and mul_reduce through Broadcast.h's element functions, which the CUDA backend runs too.
class MulKernel final : public Kernel {
public:
  MulKernel(const float *a, const float *b, float *y, BroadcastShape s)
      : a_(a), b_(b), y_(y), s_(s) {}
  void run(const StepContext &) override {
    const float *a = a_, *b = b_;
    float *y = y_;
    const BroadcastShape s = s_;
    // Along the last merged axis b's index moves by 1 (kept) or not at all (broadcast).
    const int64_t inner = s.dims[s.rank - 1], step = s.broadcast[s.rank - 1] ? 0 : 1;
    parallelChunks(
        s.elements / inner,
        [=](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t i = row * inner, j = broadcast::bIndex(s, i);
            for (int64_t k = 0; k < inner; ++k)
              y[i + k] = a[i + k] * b[j + k * step];
          }
        },
        s.elements);
  }

private:
  const float *a_, *b_;
  float *y_;
  BroadcastShape s_;
};

class MulReduceKernel final : public Kernel {
public:
  MulReduceKernel(const float *dy, const float *a, float *db, BroadcastShape s)
      : dy_(dy), a_(a), db_(db), s_(s) {}
  void run(const StepContext &) override {
    const float *dy = dy_, *a = a_;
    float *db = db_;
    const BroadcastShape s = s_;
    parallelChunks(
        s.bElements,
        [=](int64_t begin, int64_t end) {
          for (int64_t j = begin; j < end; ++j)
            db[j] = broadcast::mulReduceElement(s, dy, a, j);
        },
        s.elements);
  }

private:
  const float *dy_, *a_;
  float *db_;
  BroadcastShape s_;
};

class CopyKernel final : public Kernel {
public:
  CopyKernel(TensorView from, TensorView to) : from_(std::move(from)), to_(std::move(to)) {}
  void run(const StepContext &) override { copyBytes(from_, to_); }

private:
  TensorView from_, to_;
};

/// f32 to bf16 or back (Bf16.h's rounding), in chunks across threads when large.
class CastKernel final : public Kernel {
public:
  CastKernel(TensorView from, TensorView to, int64_t n)
      : from_(std::move(from)), to_(std::move(to)), n_(n) {}
  void run(const StepContext &) override {
    if (from_.dtype == DType::F32) {
      const float *x = from_.f32();
      uint16_t *y = static_cast<uint16_t *>(to_.data);
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = toBf16(x[i]);
      });
    } else {
      const uint16_t *x = static_cast<const uint16_t *>(from_.data);
      float *y = to_.f32();
      parallelChunks(n_, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = fromBf16(x[i]);
      });
    }
  }

private:
  TensorView from_, to_;
  int64_t n_;
};

class FillKernel final : public Kernel {
public:
  FillKernel(TensorView out, uint32_t pattern) : out_(std::move(out)), pattern_(pattern) {}
  void run(const StepContext &) override {
    // The pattern is the 4-byte element, so one loop serves f32 and i32.
    uint32_t *out = static_cast<uint32_t *>(out_.data);
    const uint32_t pattern = pattern_;
    for (int64_t i = 0, n = out_.numel; i < n; ++i)
      out[i] = pattern;
  }

private:
  TensorView out_;
  uint32_t pattern_;
};

class ReduceRowsKernel final : public Kernel {
public:
  ReduceRowsKernel(const float *x, float *y, int64_t rows, int64_t cols)
      : x_(x), y_(y), rows_(rows), cols_(cols) {}
  void run(const StepContext &) override {
    const float *x = x_;
    float *y = y_;
    const int64_t rows = rows_, cols = cols_;
    // Threads own disjoint column ranges, so each sums its columns row by row, in order.
    parallelChunks(
        cols,
        [=](int64_t begin, int64_t end) {
          for (int64_t j = begin; j < end; ++j)
            y[j] = x[j];
          for (int64_t r = 1; r < rows; ++r) {
            const float *xr = x + r * cols;
            for (int64_t j = begin; j < end; ++j)
              y[j] += xr[j];
          }
        },
        rows * cols);
  }

private:
  const float *x_;
  float *y_;
  int64_t rows_, cols_;
};

} // namespace

std::unique_ptr<Kernel> makeActivation(const KernelSite &site, const ActivationAttrs &attrs,
                                       Rows geometry) {
  return std::make_unique<ActivationKernel>(site, attrs.activation, geometry);
}

std::unique_ptr<Kernel> makeActivationGrad(const KernelSite &site, const ActivationAttrs &attrs,
                                           Rows geometry) {
  return std::make_unique<ActivationGradKernel>(site, attrs.activation, geometry);
}

std::unique_ptr<Kernel> makeAdd(const KernelSite &site, const NoAttrs &, int64_t n) {
  return std::make_unique<AddKernel>(site.input(0).f32(), site.input(1).f32(), site.output(0).f32(),
                                     n);
}

std::unique_ptr<Kernel> makeAddRows(const KernelSite &site, const NoAttrs &, Rows r) {
  return std::make_unique<AddRowsKernel>(site.input(0).f32(), site.input(1).f32(),
                                         site.output(0).f32(), r);
}

std::unique_ptr<Kernel> makeMul(const KernelSite &site, const NoAttrs &, BroadcastShape s) {
  return std::make_unique<MulKernel>(site.input(0).f32(), site.input(1).f32(), site.output(0).f32(),
                                     s);
}

std::unique_ptr<Kernel> makeMulReduce(const KernelSite &site, const NoAttrs &, BroadcastShape s) {
  return std::make_unique<MulReduceKernel>(site.input(0).f32(), site.input(1).f32(),
                                           site.output(0).f32(), s);
}

std::unique_ptr<Kernel> makeCopy(const KernelSite &site, const NoAttrs &, int64_t) {
  return std::make_unique<CopyKernel>(site.input(0), site.output(0));
}

std::unique_ptr<Kernel> makeCast(const KernelSite &site, const NoAttrs &, int64_t n) {
  return std::make_unique<CastKernel>(site.input(0), site.output(0), n);
}

std::unique_ptr<Kernel> makeFill(const KernelSite &site, const FillAttrs &attrs,
                                 uint32_t geometry) {
  return std::make_unique<FillKernel>(site.output(0), geometry);
}

std::unique_ptr<Kernel> makeReduceRows(const KernelSite &site, const NoAttrs &, Rows s) {
  return std::make_unique<ReduceRowsKernel>(site.input(0).f32(), site.output(0).f32(), s.rows,
                                            s.cols);
}

} // namespace dp::rt::cpu
