// Helpers for the kernel tests: random data, copying into and out of a loaded program, and
// element-wise comparisons that report the first mismatches.
#pragma once

#include "runtime/format/ConvGeometry.h"
#include "runtime/kernels/reference/Reference.h"
#include "test/unit/PlanBuilder.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <vector>

namespace dp::rt {

/// Readable names for parameterised tests and failure messages.
inline void PrintTo(Activation act, std::ostream *os) { *os << activationName(act); }

} // namespace dp::rt

namespace dp::rt::testing {

/// Whether the convolution kernels of the reference's geometry `r` (with bottom and right
/// paddings pb, pr) may read the stored weights (the attribute plain_weights).
inline bool allowsPlainWeights(const ref::ConvGeometry &r, int64_t pb, int64_t pr) {
  ConvGeometry g;
  g.n = r.n, g.h = r.h, g.w = r.w, g.c = r.c, g.kh = r.kh, g.kw = r.kw, g.f = r.f;
  g.oh = r.oh, g.ow = r.ow, g.sh = r.sh, g.sw = r.sw, g.pt = r.pt, g.pl = r.pl;
  g.pb = pb, g.pr = pr, g.g = r.groups, g.dh = r.dh, g.dw = r.dw;
  return liveTaps(g).allowsPlainWeights();
}

/// A StepContext with `validRows` valid rows at step `step`.
/// Runs what is loaded while it lives with `threads` OpenMP threads: on the calling thread (the
/// kernels' creation) and on the CPU device's stream thread (their runs; OpenMP's thread count
/// is per thread). Back to the defaults after.
class ComputeThreads {
public:
  explicit ComputeThreads(int threads) : saved_(omp_get_max_threads()) {
    registerBuiltinBackends();
    omp_set_num_threads(threads);
    BackendRegistry::get(DeviceKind::Cpu).setComputeThreads(threads);
  }
  ~ComputeThreads() {
    BackendRegistry::get(DeviceKind::Cpu).setComputeThreads(0);
    omp_set_num_threads(saved_);
  }
  ComputeThreads(const ComputeThreads &) = delete;
  ComputeThreads &operator=(const ComputeThreads &) = delete;

private:
  int saved_;
};

/// dprun --reproducible on the CPU backend while it lives (Backend::setReproducible): the
/// kernels made meanwhile run in fixed partitions.
class Reproducible {
public:
  Reproducible() {
    registerBuiltinBackends();
    BackendRegistry::get(DeviceKind::Cpu).setReproducible(true);
  }
  ~Reproducible() { BackendRegistry::get(DeviceKind::Cpu).setReproducible(false); }
  Reproducible(const Reproducible &) = delete;
  Reproducible &operator=(const Reproducible &) = delete;
};

inline StepContext stepContext(int64_t validRows, int64_t step = 1) {
  StepContext ctx;
  ctx.validRows = validRows;
  ctx.step = step;
  return ctx;
}

/// Reproducible random test data.
class RandomData {
public:
  explicit RandomData(uint32_t seed) : gen_(seed) {}
  std::vector<float> uniform(int64_t n, float low = -1.0f, float high = 1.0f) {
    std::uniform_real_distribution<float> dist(low, high);
    std::vector<float> v(n);
    for (float &x : v)
      x = dist(gen_);
    return v;
  }
  std::vector<int32_t> labels(int64_t n, int32_t classes) {
    std::uniform_int_distribution<int32_t> dist(0, classes - 1);
    std::vector<int32_t> v(n);
    for (int32_t &x : v)
      x = dist(gen_);
    return v;
  }

private:
  std::mt19937 gen_;
};

template <typename T> void put(Program &program, uint32_t id, const std::vector<T> &values) {
  ASSERT_EQ(static_cast<int64_t>(values.size()), program.buffer(id).numel)
      << "buffer " << id;
  std::memcpy(program.bufferData(id), values.data(), values.size() * sizeof(T));
}

template <typename T = float> std::vector<T> get(Program &program, uint32_t id) {
  std::vector<T> values(program.buffer(id).numel);
  std::memcpy(values.data(), program.bufferData(id), values.size() * sizeof(T));
  return values;
}

inline std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// Success when |got - want| <= atol + rtol * |want| everywhere (NaN never matches).
template <typename A, typename B>
::testing::AssertionResult allNear(const std::vector<A> &got, const std::vector<B> &want,
                                   double atol, double rtol = 0) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  int bad = 0;
  ::testing::AssertionResult result = ::testing::AssertionFailure();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i], err = std::fabs(g - w);
    if (!(err <= atol + rtol * std::fabs(w))) {
      if (bad < 5)
        result << "\n  [" << i << "] got " << g << ", want " << w;
      ++bad;
      worst = std::isnan(err) ? err : std::max(worst, err);
    }
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return result << "\n  " << bad << " of " << got.size() << " differ, worst error " << worst;
}

/// Step of the central differences below.
constexpr double kStep = 1e-6;

/// d/dv[i] of f(v) for every i, by central differences.
inline std::vector<double>
numericGradient(std::vector<double> v, const std::function<double(const std::vector<double> &)> &f) {
  std::vector<double> grad(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double saved = v[i];
    v[i] = saved + kStep;
    const double up = f(v);
    v[i] = saved - kStep;
    const double down = f(v);
    v[i] = saved;
    grad[i] = (up - down) / (2 * kStep);
  }
  return grad;
}

/// Sum of a[i] * b[i].
inline double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

} // namespace dp::rt::testing
