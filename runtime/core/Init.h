// Parameter initialisers with Keras semantics (glorot/he fans, truncated normals with Keras's
// stddev correction). A parameter's values depend only on the seed and the parameter's name.
#pragma once

#include "runtime/format/Plan.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace dp::rt {

/// Keras divides the stddev of a truncated normal by this (the stddev of a unit normal
/// truncated to [-2, 2]) so that the truncated values have the intended stddev.
inline constexpr double kTruncatedNormalStddevFactor = 0.87962566103423978;

/// Checks that `init` can be drawn for a parameter of `elements` values (known kind, positive
/// fans where needed, a sane range; an orthogonal matrix of fan_in x fan_out = `elements`, LSTM
/// gates that divide by 4). Throws Error(Plan) prefixed by `where`.
void checkInit(const InitDesc &init, int64_t elements, const std::string &where);

/// Fills `out[0, n)` with draws from `init`, from a random stream keyed by (`seed`, `name`).
void drawInit(float *out, int64_t n, const InitDesc &init, uint64_t seed, std::string_view name);

} // namespace dp::rt
