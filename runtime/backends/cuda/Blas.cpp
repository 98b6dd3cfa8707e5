// The cuBLAS adapter's translation; see Blas.h.
#include "runtime/backends/cuda/Blas.h"

#include <climits>

namespace dp::rt::cuda {

GemmArgs rowMajorGemm(int64_t m, int64_t k, int64_t n, bool ta, bool tb, int64_t batch) {
  GemmArgs g;
  // cuBLAS's A is dp's b: stored [k,n] row-major it is n x k column-major with ld n, which is
  // op(b)^T already; stored [n,k] (tb) it is k x n with ld k, to be transposed.
  g.first = 1;
  g.transA = tb;
  g.lda = tb ? k : n;
  // cuBLAS's B is dp's a, likewise: [m,k] row-major is k x m with ld k.
  g.second = 0;
  g.transB = ta;
  g.ldb = ta ? m : k;
  g.m = n;
  g.n = m;
  g.k = k;
  g.ldc = n;
  g.batch = batch;
  g.strideA = k * n, g.strideB = m * k, g.strideC = m * n;
  return g;
}

std::string gemmProblem(const GemmArgs &g) {
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch})
    if (v > INT_MAX)
      return "a size of " + std::to_string(v) + " exceeds cuBLAS's 32-bit sizes";
  // The stored A is m x k (k x m when transposed), B k x n (n x k), C m x n.
  const int64_t rowsA = g.transA ? g.k : g.m, rowsB = g.transB ? g.n : g.k;
  if (g.lda < (rowsA > 1 ? rowsA : 1) || g.ldb < (rowsB > 1 ? rowsB : 1) ||
      g.ldc < (g.m > 1 ? g.m : 1))
    return "a leading dimension is smaller than its matrix's rows";
  return {};
}

} // namespace dp::rt::cuda
