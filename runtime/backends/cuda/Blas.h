// The cuBLAS adapter: dp's row-major products as cuBLAS's column-major GEMM. The translation
// is a pure function (tested on the host against the reference product, through a
// column-major GEMM written from the BLAS definition); the call itself is one cublasSgemm.
#pragma once

#include <cstdint>
#include <string>

namespace dp::rt::cuda {

/// One column-major GEMM, C = opA(A) . opB(B) with C m x n, as cublasSgemm takes it: `first`
/// and `second` say which of dp's operands (a = 0, b = 1) is cuBLAS's A and which its B.
struct GemmArgs {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int first = 0, second = 1;
  /// Products one after another (cublasSgemmStridedBatched when more than one): the elements
  /// from one matrix of A, B and C to the next.
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
};

/// The GEMM that computes dp's row-major c[m,n] = op(a)[m,k] . op(b)[k,n], where a is stored
/// [m,k] (or [k,m] when `ta`) and b [k,n] (or [n,k] when `tb`), all densely. A row-major
/// matrix is its transpose in column-major order, so cuBLAS computes c^T = op(b)^T . op(a)^T.
/// `batch` such products with the matrices of a, b and c consecutive.
GemmArgs rowMajorGemm(int64_t m, int64_t k, int64_t n, bool ta, bool tb, int64_t batch = 1);

/// Empty when every size and leading dimension fits cuBLAS's 32-bit interface and satisfies
/// its rules (ld >= the rows of the stored matrix, >= 1); else why not.
std::string gemmProblem(const GemmArgs &g);

} // namespace dp::rt::cuda
