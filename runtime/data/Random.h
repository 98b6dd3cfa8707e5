// Seed mixing for the data pipeline. Shuffles draw from the runtime's portable generator
// (base/Rng.h), never from std:: distributions, so the same seed gives the same sample order on
// every platform, compiler and replica.
#pragma once

#include "runtime/base/Rng.h"

#include <cstdint>

namespace dp::rt {

/// SplitMix64 as an object: used to mix several values (seed, epoch) into one seed.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64(state_); }

private:
  uint64_t state_;
};

/// Mixes two words into one seed; used to give each (seed, epoch) its own stream.
inline uint64_t mixSeed(uint64_t a, uint64_t b) {
  SplitMix64 sm(a ^ SplitMix64(b).next());
  return sm.next();
}

} // namespace dp::rt
