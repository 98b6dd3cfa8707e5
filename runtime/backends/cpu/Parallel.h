// Work splitting for the loop kernels. The reference machine has few cores and the typical
// tensors are small, so loops run on the calling thread unless they are large enough for an
// OpenMP fork to pay off.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace dp::rt::cpu {

// The loop kernels' bodies run in clones for AVX-512 (x86-64-v4), AVX2 with FMA (x86-64-v3) and
// the baseline x86-64 that the build targets: the dynamic loader picks the clone for the CPU at
// hand (GCC's and Clang's target_clones, an ifunc), so one binary runs anywhere and uses the
// widest vectors it finds. `flatten` inlines what a clone calls into it. A softmax over rows of
// 49 ran 4-6x faster in the AVX-512 clone than in the baseline's SSE2 (AMD EPYC, 2 threads).
// The x86-64-vN names need GCC 12 or Clang 18; Clang refuses `flatten` on a multiversioned
// function (its clones inline as it chooses). Older compilers build the baseline alone.
#define DP_CLONE_TARGETS target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")
#if defined(__x86_64__) && defined(__ELF__)
#if defined(__clang__) && __clang_major__ >= 18
#define DP_VECTOR_CLONES __attribute__((DP_CLONE_TARGETS))
#elif !defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12
#define DP_VECTOR_CLONES __attribute__((flatten, DP_CLONE_TARGETS))
#endif
#endif
#ifndef DP_VECTOR_CLONES
#define DP_VECTOR_CLONES
#endif
// Clang clones no templates: its builds (the fuzzers') run parallelChunks' bodies in the
// baseline, and only the plain functions marked DP_VECTOR_CLONES in clones.
#if defined(__clang__)
#define DP_TEMPLATE_CLONES
#else
#define DP_TEMPLATE_CLONES DP_VECTOR_CLONES
#endif

/// Runs `body(begin, end)` in the clone for this CPU (DP_VECTOR_CLONES).
template <typename Body>
DP_TEMPLATE_CLONES void runVectorised(Body &body, int64_t begin, int64_t end) {
  body(begin, end);
}

/// Elements (or element-sized units of work) below which a loop stays on one thread.
inline constexpr int64_t kParallelMinWork = 32768;

/// Calls `body(begin, end)` on disjoint chunks covering [0, n), in parallel when `work`
/// (defaults to n) is large. Chunks start on multiples of 16 elements to keep cache lines apart.
template <typename Body> void parallelChunks(int64_t n, Body &&body, int64_t work = -1) {
  if (work < 0)
    work = n;
  if (work < kParallelMinWork || n < 32 || omp_get_max_threads() == 1) {
    runVectorised(body, int64_t(0), n);
    return;
  }
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t per = ((n + threads - 1) / threads + 15) / 16 * 16;
    const int64_t begin = std::min(n, per * omp_get_thread_num());
    const int64_t end = std::min(n, begin + per);
    if (begin < end)
      runVectorised(body, begin, end);
  }
}

/// Blocks a reduction over a large range is cut into: a count fixed by the problem alone, so
/// that the sum's rounding does not depend on how many threads add it up.
inline constexpr int kSumBlocks = 16;

/// The sum of `part(k, blocks)` over k in [0, blocks) (blocks <= kSumBlocks), the parts computed
/// in parallel and added in block order: the same bits whatever the thread count.
template <typename Part> double orderedSum(int blocks, Part &&part) {
  double partial[kSumBlocks];
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int k = 0; k < blocks; ++k)
    partial[k] = part(k, blocks);
  double total = 0;
  for (int k = 0; k < blocks; ++k)
    total += partial[k];
  return total;
}

/// Caps OpenMP's thread count on this thread while it lives. Small oneDNN primitives run faster
/// on one thread than split across cores, and must be created and run under the same cap.
class ThreadCap {
public:
  explicit ThreadCap(int threads) : saved_(omp_get_max_threads()) {
    if (threads > 0 && threads < saved_)
      omp_set_num_threads(threads);
    else
      saved_ = 0;
  }
  ~ThreadCap() {
    if (saved_ > 0)
      omp_set_num_threads(saved_);
  }
  ThreadCap(const ThreadCap &) = delete;
  ThreadCap &operator=(const ThreadCap &) = delete;

private:
  int saved_;
};

} // namespace dp::rt::cpu
