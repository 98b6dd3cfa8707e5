// This machine's peak for the products, measured through dprun's own kernels (oneDNN on the
// CPU, cuBLAS and cuDNN on a GPU) with the compute threads a run uses: what a run's model FLOP
// utilization (MFU) divides by. `dprun --measure-peak` measures it once and records it in the
// peak file, keyed by the CPU, the backend and the thread count; each run then looks its own
// key up (or takes --peak-tflops).
#pragma once

#include "runtime/device/Device.h"

#include <iosfwd>
#include <optional>
#include <string>

namespace dp::rt {

/// TFLOP/s of a square matmul (a dense kernel) and of a 3x3 convolution, in f32 ([0]) and with
/// bf16 operands ([1]; 0 where the backend runs no bf16 products).
struct PeakFigures {
  double matmul[2] = {0, 0}, conv[2] = {0, 0};
  /// The higher of the two for the precision of a plan's products.
  double best(bool bf16) const { return matmul[bf16] > conv[bf16] ? matmul[bf16] : conv[bf16]; }
};

/// Runs each product on one device of `backend` (whose compute threads are set) until each
/// has run at least 0.3 s, and returns the fastest run of each. Prints a line per product on
/// `progress` (null: quiet). Throws Error when the backend cannot run even the f32 ones.
PeakFigures measurePeak(Backend &backend, std::ostream *progress);

/// The key of this machine's CPU, `backend`, the device (`device`: a GPU's description, empty
/// for the CPU) and the compute threads in the peak file:
/// "AMD EPYC 9654 | cpu (oneDNN 2.6.3, 2 cores) | 2 threads".
std::string peakKey(const Backend &backend, int threads, const std::string &device = "");

/// Where the peak file is: $DP_PEAK_FILE, else $XDG_CACHE_HOME/dp/peak.tsv, else
/// $HOME/.cache/dp/peak.tsv; empty when none of them is set.
std::string peakFilePath();

/// The figures `path` records for `key`, or none (no file, no such line, or a malformed one:
/// the file is a cache, never a reason to fail a run).
std::optional<PeakFigures> readPeak(const std::string &path, const std::string &key);

/// Records `figures` for `key` in `path` (the line of the same key replaced), atomically,
/// creating its directory. Throws Error(Runtime) naming the path when it cannot.
void writePeak(const std::string &path, const std::string &key, const PeakFigures &figures);

} // namespace dp::rt
