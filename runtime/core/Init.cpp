// Parameter initialisers; see Init.h. Draws are computed in double and rounded to f32 once, so
// that the last-bit differences of libm implementations almost never reach the stored values.
#include "runtime/core/Init.h"

#include "runtime/base/Error.h"
#include "runtime/base/Rng.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dp::rt {
namespace {

void fillUniform(float *out, int64_t n, Rng &rng, double low, double high) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(low + (high - low) * rng.uniform());
}

void fillNormal(float *out, int64_t n, Rng &rng, double mean, double stddev) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(mean + stddev * rng.normal());
}

// Keras's truncated normal: draws further than two stddevs from the mean are redrawn.
void fillTruncatedNormal(float *out, int64_t n, Rng &rng, double stddev) {
  for (int64_t i = 0; i < n; ++i) {
    double z;
    do
      z = rng.normal();
    while (std::fabs(z) > 2.0);
    out[i] = static_cast<float>(stddev * z);
  }
}

// gain * Q for the thin QR factorisation of a normal [max, min] draw, Q's columns made the
// result's columns (rows >= cols) or rows (rows < cols). Modified Gram-Schmidt gives R a positive
// diagonal, the sign convention Keras applies.
void fillOrthogonal(float *out, int64_t rows, int64_t cols, Rng &rng, double gain) {
  const int64_t m = std::max(rows, cols), k = std::min(rows, cols);
  std::vector<double> q(static_cast<size_t>(m * k)); // column j at q[j * m]
  for (double &v : q)
    v = rng.normal();
  for (int64_t j = 0; j < k; ++j) {
    double *col = &q[j * m];
    for (int64_t p = 0; p < j; ++p) {
      const double *prev = &q[p * m];
      double dot = 0;
      for (int64_t i = 0; i < m; ++i)
        dot += prev[i] * col[i];
      for (int64_t i = 0; i < m; ++i)
        col[i] -= dot * prev[i];
    }
    double norm = 0;
    for (int64_t i = 0; i < m; ++i)
      norm += col[i] * col[i];
    norm = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i)
      col[i] /= norm;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] =
          static_cast<float>(gain * (rows >= cols ? q[c * m + r] : q[r * m + c]));
}

} // namespace

void checkInit(const InitDesc &init, int64_t elements, const std::string &where) {
  auto fail = [&](const std::string &message) {
    throw Error(ErrorKind::Plan, where + ": " + message);
  };
  const double a = init.a, b = init.b;
  const int64_t fanIn = init.fanIn, fanOut = init.fanOut;
  switch (init.kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return;
  case InitKind::Constant:
    if (!std::isfinite(a))
      fail("constant initialiser value is not finite");
    return;
  case InitKind::Uniform:
    if (!std::isfinite(a) || !std::isfinite(b) || a > b)
      fail("uniform initialiser range [" + std::to_string(a) + ", " + std::to_string(b) +
           ") is invalid");
    return;
  case InitKind::Normal:
    if (!std::isfinite(a) || !std::isfinite(b) || b < 0)
      fail("normal initialiser stddev " + std::to_string(b) + " is invalid");
    return;
  case InitKind::GlorotUniform:
  case InitKind::GlorotNormal:
    if (fanIn <= 0 || fanOut <= 0)
      fail("glorot initialiser needs positive fans, got fan_in " + std::to_string(fanIn) +
           ", fan_out " + std::to_string(fanOut));
    return;
  case InitKind::HeNormal:
  case InitKind::HeUniform:
    if (fanIn <= 0)
      fail("he initialiser needs a positive fan_in, got " + std::to_string(fanIn));
    return;
  case InitKind::Orthogonal:
    if (fanIn <= 0 || fanOut <= 0 || !std::isfinite(a))
      fail("orthogonal initialiser needs a [rows, cols] shape and a finite gain, got " +
           std::to_string(fanIn) + "x" + std::to_string(fanOut) + " and " + std::to_string(a));
    // Compared by division: the fans' product may overflow.
    if (elements % fanIn != 0 || elements / fanIn != fanOut)
      fail("orthogonal initialiser of " + std::to_string(fanIn) + "x" + std::to_string(fanOut) +
           " for " + std::to_string(elements) + " elements");
    return;
  case InitKind::Data:
    if (!init.values || static_cast<int64_t>(init.values->size()) != elements)
      fail("data initialiser of " + std::to_string(init.values ? init.values->size() : 0) +
           " values for " + std::to_string(elements) + " elements");
    for (size_t i = 0; i < init.values->size(); ++i)
      if (!std::isfinite((*init.values)[i]))
        fail("data initialiser value " + std::to_string(i) + " is not finite");
    return;
  case InitKind::UnitForgetBias:
    if (elements % 4 != 0)
      fail("unit_forget_bias initialiser for " + std::to_string(elements) +
           " elements, not 4 gates of equal size");
    return;
  case InitKind::NumKinds:
    break;
  }
  fail("unknown initialiser kind " + std::to_string(static_cast<int>(init.kind)));
}

void drawInit(float *out, int64_t n, const InitDesc &init, uint64_t seed, std::string_view name) {
  Rng rng = Rng::forName(seed, name);
  const double fanIn = static_cast<double>(init.fanIn);
  const double fanOut = static_cast<double>(init.fanOut);
  switch (init.kind) {
  case InitKind::Zeros:
    std::fill(out, out + n, 0.0f);
    return;
  case InitKind::Ones:
    std::fill(out, out + n, 1.0f);
    return;
  case InitKind::Constant:
    std::fill(out, out + n, static_cast<float>(init.a));
    return;
  case InitKind::Uniform:
    fillUniform(out, n, rng, init.a, init.b);
    return;
  case InitKind::Normal:
    fillNormal(out, n, rng, init.a, init.b);
    return;
  case InitKind::GlorotUniform: {
    const double limit = std::sqrt(6.0 / (fanIn + fanOut));
    fillUniform(out, n, rng, -limit, limit);
    return;
  }
  case InitKind::HeUniform: {
    const double limit = std::sqrt(6.0 / fanIn);
    fillUniform(out, n, rng, -limit, limit);
    return;
  }
  case InitKind::GlorotNormal:
    fillTruncatedNormal(out, n, rng,
                        std::sqrt(2.0 / (fanIn + fanOut)) / kTruncatedNormalStddevFactor);
    return;
  case InitKind::HeNormal:
    fillTruncatedNormal(out, n, rng, std::sqrt(2.0 / fanIn) / kTruncatedNormalStddevFactor);
    return;
  case InitKind::Orthogonal:
    if (static_cast<int64_t>(fanIn) * static_cast<int64_t>(fanOut) != n)
      throw Error(ErrorKind::Plan, "orthogonal initialiser of " + std::to_string(init.fanIn) +
                                       "x" + std::to_string(init.fanOut) + " for " +
                                       std::to_string(n) + " elements");
    fillOrthogonal(out, init.fanIn, init.fanOut, rng, init.a);
    return;
  case InitKind::UnitForgetBias:
    if (n % 4 != 0)
      throw Error(ErrorKind::Plan, "unit_forget_bias initialiser for " + std::to_string(n) +
                                       " elements, not 4 gates of equal size");
    std::fill(out, out + n, 0.0f);
    std::fill(out + n / 4, out + n / 2, 1.0f);
    return;
  case InitKind::Data:
    if (!init.values || static_cast<int64_t>(init.values->size()) != n)
      throw Error(ErrorKind::Plan, "data initialiser for " + std::to_string(n) +
                                       " elements holds " +
                                       std::to_string(init.values ? init.values->size() : 0));
    std::copy(init.values->begin(), init.values->end(), out);
    return;
  case InitKind::NumKinds:
    break;
  }
  throw Error(ErrorKind::Plan, "unknown initialiser kind " + std::to_string(static_cast<int>(init.kind)));
}

} // namespace dp::rt
