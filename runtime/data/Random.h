// Small portable random number generators for the data pipeline. The standard library's
// distributions differ between implementations, so shuffling uses these instead: the same seed
// gives the same sample order on every platform, compiler and replica.
#pragma once

#include <cstdint>

namespace dp::rt {

/// SplitMix64: a one-word generator, used to expand seeds into xoshiro state and to mix
/// several values (seed, epoch) into one well-distributed seed.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

private:
  uint64_t state_;
};

/// xoshiro256**: a fast generator with a 256-bit state, seeded through SplitMix64 (so that no
/// seed, including 0, yields the all-zero state).
class Xoshiro256 {
public:
  explicit Xoshiro256(uint64_t seed) {
    SplitMix64 sm(seed);
    for (uint64_t &word : s_)
      word = sm.next();
  }

  uint64_t next() {
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

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// Mixes two words into one seed; used to give each (seed, epoch) its own stream.
inline uint64_t mixSeed(uint64_t a, uint64_t b) {
  SplitMix64 sm(a ^ SplitMix64(b).next());
  return sm.next();
}

} // namespace dp::rt
