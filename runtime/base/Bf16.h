// bfloat16, the upper 16 bits of an IEEE f32: the conversions every part of dp uses (the CPU
// backend's cast kernel, the tests' references), so that all of them round alike.
#pragma once

#include <cstdint>
#include <cstring>

namespace dp::rt {

/// f32 to bf16, rounded to nearest even; NaN stays a (quiet) NaN, infinities stay infinite.
/// Branch-free (a select), so that loops of it vectorise.
inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t quietNan = (u >> 16) | 0x0040u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quietNan : rounded);
}

/// bf16 to f32: exact.
inline float fromBf16(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// `f` as a bf16 value would hold it (toBf16 then fromBf16).
inline float roundToBf16(float f) { return fromBf16(toBf16(f)); }

/// to[i] = toBf16(from[i]) for n elements.
inline void toBf16(const float *from, uint16_t *to, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    to[i] = toBf16(from[i]);
}

/// to[i] = fromBf16(from[i]) for n elements.
inline void fromBf16(const uint16_t *from, float *to, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    to[i] = fromBf16(from[i]);
}

/// inout[i] = in[i] + inout[i], added in f32 and rounded to bf16 (a bf16 allreduce's sum).
inline void addBf16Into(uint16_t *inout, const uint16_t *in, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    inout[i] = toBf16(fromBf16(inout[i]) + fromBf16(in[i]));
}

} // namespace dp::rt
