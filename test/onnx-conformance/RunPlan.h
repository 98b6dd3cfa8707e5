// The runtime half of the conformance harness: runs a compiled plan's eval step on given
// samples and reads its predictions. Compiled with exceptions (the runtime throws), apart
// from the compiler half (no exceptions); this header names neither side's types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp::conformance {

/// Loads the plan at `planPath` on the CPU, draws its parameters (initializers keep their
/// values), feeds `samples` (the samples input, in the plan's layout of it) and class 0 as
/// every target, runs the eval step and copies its predictions to `predictions`. Returns ""
/// or the runtime's error.
std::string runEval(const std::string &planPath, const std::vector<float> &samples,
                    std::vector<float> &predictions);

} // namespace dp::conformance
