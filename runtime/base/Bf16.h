// bfloat16, the upper 16 bits of an IEEE f32: the conversions every part of dp uses (the CPU
// backend's cast kernel, the tests' references), so that all of them round alike.
#pragma once

#include <cstdint>
#include <cstring>

namespace dp::rt {

/// f32 to bf16, rounded to nearest even; NaN stays a (quiet) NaN, infinities stay infinite.
inline uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
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

} // namespace dp::rt
