// The parameters file of `dprun --save-params` (read by `dprun --params` and `dpc export`):
// per parameter, in plan order, its name, a NUL, its element count as a little-endian u64,
// then its f32 values (little-endian). Optimizer state is named "<parameter>/<slot>".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

struct ParamsEntry {
  std::string name;
  std::vector<float> values;
};

/// Appends one parameter's record to a file image.
void appendParamsEntry(std::string &image, const std::string &name, const float *values,
                       uint64_t count);

/// Reads every record of `path`, in file order. Returns "" or the problem, naming the file: not
/// a regular file, larger than 4 GiB, a name missing, longer than 4096 bytes or given twice, a
/// count past the file's end.
std::string readParamsFile(const std::string &path, std::vector<ParamsEntry> &out);

} // namespace dp::rt
