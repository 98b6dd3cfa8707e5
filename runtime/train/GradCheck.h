// The gradient check of `dprun --check-gradients`: the gradients a plan's train step computes
// (the compiler's autodiff rules run through the runtime's kernels) against central finite
// differences of the loss that step differentiates, its own 'loss' output (batch statistics
// where the model normalises batches, its dropout masks), on random inputs. Needs no data set.
#pragma once

#include "runtime/format/Plan.h"

#include <cstdint>
#include <ostream>

namespace dp::rt {

struct GradCheckOptions {
  uint64_t seed = 1;
  /// Elements checked per parameter, spread over it.
  int samplesPerParam = 12;
  /// Finite-difference step.
  double step = 1e-2;
  /// An element passes when |fd - grad| <= absTolerance + relTolerance * max(|fd|, |grad|).
  double relTolerance = 5e-2;
  double absTolerance = 2e-4;
};

/// Checks every trainable parameter; prints a line per parameter and returns the number of
/// parameters with a failing element (0: all gradients agree). The caller has checked the plan
/// (checkRunnable, refuseUncheckablePlan).
int checkGradients(Plan plan, const GradCheckOptions &options, std::ostream &out);

} // namespace dp::rt
