// The --save-params file format; see ParamsFile.h.
#include "runtime/base/ParamsFile.h"

#include "runtime/base/Files.h"

#include <cstring>
#include <set>

namespace dp::rt {

void appendParamsEntry(std::string &image, const std::string &name, const float *values,
                       uint64_t count) {
  image += name;
  image.push_back('\0');
  for (int i = 0; i < 8; ++i)
    image.push_back(static_cast<char>((count >> (8 * i)) & 0xff));
  image.append(reinterpret_cast<const char *>(values), count * sizeof(float));
}

std::string readParamsFile(const std::string &path, std::vector<ParamsEntry> &out) {
  std::string bytes, error;
  // f32 values: 4 GiB is 1G parameters.
  if (!tryReadInputFile(path, uint64_t(4) << 30, "parameters", bytes, error))
    return error;
  std::set<std::string> names;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t end = bytes.find('\0', at);
    if (end == std::string::npos || end == at || end - at > 4096)
      return path +
             ": not a dprun --save-params file (a parameter's name is missing or cut off "
             "at byte " +
             std::to_string(at) + ")";
    ParamsEntry entry;
    entry.name = bytes.substr(at, end - at);
    if (bytes.size() - (end + 1) < 8)
      return path + ": cut off in the size of '" + entry.name + "'";
    uint64_t count = 0;
    for (int i = 0; i < 8; ++i)
      count |= uint64_t(uint8_t(bytes[end + 1 + i])) << (8 * i);
    at = end + 9;
    if (count > (bytes.size() - at) / sizeof(float))
      return path + ": '" + entry.name + "' says " + std::to_string(count) +
             " values, more than the file holds";
    if (!names.insert(entry.name).second)
      return path + ": '" + entry.name + "' appears twice";
    entry.values.resize(count);
    std::memcpy(entry.values.data(), bytes.data() + at, count * sizeof(float));
    at += count * sizeof(float);
    out.push_back(std::move(entry));
  }
  return "";
}

} // namespace dp::rt
