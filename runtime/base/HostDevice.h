// DP_HOST_DEVICE marks code written once for the host and the GPU: nvcc compiles it for both,
// the host compiler (which never sees __host__/__device__) for the host only. Such code uses
// no standard library beyond <cmath>/<cstdint> and never throws.
#pragma once

#if defined(__CUDACC__)
#define DP_HOST_DEVICE __host__ __device__
#else
#define DP_HOST_DEVICE
#endif

// DP_UNROLL before a loop of a constant trip count unrolls it on the device, so that the
// arrays it indexes by its counter stay in registers (a dynamic index puts them on the
// thread's stack, in local memory).
#if defined(__CUDA_ARCH__)
#define DP_UNROLL _Pragma("unroll")
#else
#define DP_UNROLL
#endif
