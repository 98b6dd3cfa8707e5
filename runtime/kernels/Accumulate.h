// Kernels.def's accumulate for one element, written once for every backend (the CPU backend
// runs it in chunks across threads, the CUDA backend in a grid-stride kernel).
//
// The micro-shards' gradients g_0 .. g_{M-1} are summed in a binary tree over their indices,
// ((g0 + g1) + (g2 + g3)) + ...: the tree in which a layout's replicas are summed
// (runtime/comm/Collectives.cpp), so that with power-of-two counts one device's micro-shards and
// several devices' give the same bits. As a binary counter: before micro-shard m, level l holds
// the sum of the 2^l micro-shards of bit l of m; g carries up through the set low bits of m
// (each level's older sum on the left), and stops at the first clear one. The last micro-shard
// then folds in the levels of M's higher set bits, lowest first, and divides by M.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cstdint>

namespace dp::rt {

/// Element i of accumulate on micro-shard `m` of `count`: `level(l)` is level l's element
/// (level 0 the kernel's sum, which receives the mean on the last micro-shard).
template <typename Level>
DP_HOST_DEVICE inline void accumulateElement(float g, int64_t m, int64_t count, Level level) {
  float carry = g;
  int l = 0;
  for (int64_t bits = m; bits & 1; bits >>= 1, ++l)
    carry = level(l) + carry;
  if (m + 1 < count) {
    level(l) = carry;
    return;
  }
  // m + 1 = count: l is count's lowest set bit; its higher set bits hold the older sums.
  int k = l + 1;
  for (int64_t bits = count >> (l + 1); bits; bits >>= 1, ++k)
    if (bits & 1)
      carry = level(k) + carry;
  level(0) = carry / static_cast<float>(count);
}

} // namespace dp::rt
