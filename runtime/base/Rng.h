// A small, portable random number generator for parameter initialisation. Every draw is defined
// by integer arithmetic and a few libm calls in double precision, never by std:: distributions,
// whose outputs differ between standard libraries. The integer core (splitmix64, xoshiro256**,
// uniform draws and dropout's counter-based draws) is host-and-device code: the CUDA backend's
// dropout draws exactly the CPU backend's numbers.
#pragma once

#include "runtime/base/HostDevice.h"

#include <cmath>
#include <cstdint>
#include <string_view>

namespace dp::rt {

/// One step of splitmix64: advances `state` and returns a well-mixed 64-bit value.
DP_HOST_DEVICE inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// FNV-1a hash of a name: stable across machines, used to key a parameter's random stream.
inline uint64_t hashName(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// xoshiro256** with helpers for uniform and normal draws in double precision.
class Rng {
public:
  DP_HOST_DEVICE explicit Rng(uint64_t seed) {
    for (int i = 0; i < 4; ++i)
      s_[i] = splitmix64(seed);
  }
  /// A stream that depends only on (seed, name).
  static Rng forName(uint64_t seed, std::string_view name) {
    uint64_t mixed = seed;
    return Rng(splitmix64(mixed) ^ hashName(name));
  }

  DP_HOST_DEVICE uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// A uniform integer in [0, bound), bound > 0. Rejection removes the modulo bias, and the
  /// arithmetic is plain 64-bit so the result is the same everywhere.
  uint64_t below(uint64_t bound) {
    // 2^64 mod bound: values under it would make low residues slightly more likely.
    const uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      uint64_t r = next();
      if (r >= threshold)
        return r % bound;
    }
  }

  /// Uniform on [0, 1) with 53 random bits.
  DP_HOST_DEVICE double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Standard normal by Box-Muller; the second value of each pair is kept for the next call.
  double normal() {
    if (haveSpare_) {
      haveSpare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform(); // (0, 1]: log stays finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 6.283185307179586476925 * u2;
    spare_ = r * std::sin(theta);
    haveSpare_ = true;
    return r * std::cos(theta);
  }

private:
  DP_HOST_DEVICE static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  double spare_ = 0;
  bool haveSpare_ = false;
};

/// The key of dropout's draws for one sample row of one step: it depends only on the run's
/// seed, the 1-based step, the dropout's number in the step (`stream`) and the row's index in
/// the global batch, so every split of the batch across replicas draws the same masks.
DP_HOST_DEVICE inline uint64_t dropoutRowKey(uint64_t seed, int64_t step, int64_t stream,
                                             int64_t row) {
  uint64_t s = seed ^ 0x64726f706f7574ULL; // "dropout"
  uint64_t mixed = splitmix64(s);
  const uint64_t keys[3] = {uint64_t(step), uint64_t(stream), uint64_t(row)};
  for (uint64_t v : keys) {
    s = mixed ^ v;
    mixed = splitmix64(s);
  }
  return mixed;
}

/// Dropout's scale of a kept element, 1 / (1 - rate), as every backend forms it.
DP_HOST_DEVICE inline float dropoutKeepScale(double rate) {
  return static_cast<float>(1.0 / (1.0 - rate));
}

/// Dropout's draw for one rate: element i of a row keyed by dropoutRowKey is dropped when
/// splitmix64's (i+1)-th output from the key (computed directly: splitmix64 is a counter-based
/// generator, so each element is drawn on its own, one GPU thread per element, and equals the
/// sequential draw), as a uniform u = (bits >> 11) * 2^-53 on [0, 1), is below the rate. The
/// comparison is made on the integer: u < rate <=> (bits >> 11) < ceil(rate * 2^53), exactly,
/// since both sides scale by a power of two.
struct DropoutDraw {
  uint64_t threshold; // ceil(rate * 2^53)
  float keep;         // 1 / (1 - rate), the scale of a kept element

  DP_HOST_DEVICE explicit DropoutDraw(double rate)
      : threshold(static_cast<uint64_t>(rate * 0x1.0p53)), keep(dropoutKeepScale(rate)) {
    if (static_cast<double>(threshold) < rate * 0x1.0p53)
      ++threshold;
  }
  /// The mask value of element i: 0 where dropped (probability `rate`), `keep` where kept.
  DP_HOST_DEVICE float value(uint64_t rowKey, int64_t i) const {
    uint64_t s = rowKey + uint64_t(i) * 0x9e3779b97f4a7c15ULL;
    return (splitmix64(s) >> 11) < threshold ? 0.0f : keep;
  }
};

/// Fills mask[0, n) for one row (DropoutDraw::value of each element).
DP_HOST_DEVICE inline void dropoutMaskRow(float *mask, int64_t n, double rate, uint64_t seed,
                                          int64_t step, int64_t stream, int64_t row) {
  const uint64_t key = dropoutRowKey(seed, step, stream, row);
  const DropoutDraw draw(rate);
  for (int64_t i = 0; i < n; ++i)
    mask[i] = draw.value(key, i);
}

} // namespace dp::rt
