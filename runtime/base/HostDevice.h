// DP_HOST_DEVICE marks code written once for the host and the GPU: nvcc compiles it for both,
// the host compiler (which never sees __host__/__device__) for the host only. Such code uses
// no standard library beyond <cmath>/<cstdint> and never throws.
#pragma once

#if defined(__CUDACC__)
#define DP_HOST_DEVICE __host__ __device__
#else
#define DP_HOST_DEVICE
#endif
