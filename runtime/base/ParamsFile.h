// The parameters files dprun writes (--save-params) and reads (--params, dpc export):
// - safetensors (https://github.com/huggingface/safetensors, what --save-params writes): a
//   little-endian u64 header size N, N bytes of JSON naming each tensor's dtype, shape and
//   [begin, end) byte offsets into the data that follows (and "__metadata__", strings only),
//   padded with spaces; then the tensors' bytes, one after another. dp writes and reads F32.
// - dp's older raw format (still read): per parameter, in plan order, its name, a NUL, its
//   element count as a little-endian u64, then its f32 values (little-endian); optimizer state
//   named "<parameter>/<slot>".
// The first 8 bytes tell them apart: a safetensors header size is smaller than the file and
// followed by '{'; an older file starts with a name's printable bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dp::rt {

struct ParamsEntry {
  std::string name;
  /// Its shape (empty from an older raw file, which records only the count).
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// Appends one parameter's record to a raw file image (the older format).
void appendParamsEntry(std::string &image, const std::string &name, const float *values,
                       uint64_t count);

/// A safetensors file image of `entries` (each with its shape, F32) in their order, with
/// `metadata` as its "__metadata__".
std::string safetensorsImage(const std::vector<ParamsEntry> &entries,
                             const std::map<std::string, std::string> &metadata = {});

/// Reads every tensor of `path` (either format), in file order. Returns "" or the problem,
/// naming the file: not a regular file, larger than 4 GiB; a raw file's name missing, longer
/// than 4096 bytes or given twice, a count past the file's end; a safetensors header that is
/// not its JSON (bounded: 100 MB), a dtype other than F32 (naming every such tensor), a shape
/// whose size is not its bytes, offsets that leave a hole, overlap or run past the file.
std::string readParamsFile(const std::string &path, std::vector<ParamsEntry> &out);

/// The same of a file's bytes (`path` names it in messages).
std::string parseParamsFile(const std::string &bytes, const std::string &path,
                            std::vector<ParamsEntry> &out);

} // namespace dp::rt
