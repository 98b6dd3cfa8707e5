// The --save-params file format; see ParamsFile.h.
#include "runtime/base/ParamsFile.h"

#include "runtime/base/Files.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
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

namespace {

/// The little-endian u64 at the start of `bytes` (at least 8): a safetensors header's size.
uint64_t headerSize(const std::string &bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(uint8_t(bytes[size_t(i)])) << (8 * i);
  return n;
}

/// A strict reader of a safetensors header: the JSON the format allows, nothing more (objects,
/// strings, arrays of integers), each problem a message naming where.
class HeaderReader {
public:
  HeaderReader(const std::string &text, const std::string &path) : t_(text), path_(path) {}

  std::string problem() const { return problem_; }
  bool failed() const { return !problem_.empty(); }
  bool fail(const std::string &what) {
    if (problem_.empty())
      problem_ = path_ + ": not a safetensors file: its header " + what + " (at byte " +
                 std::to_string(8 + at_) + ")";
    return false;
  }
  void ws() {
    while (at_ < t_.size() &&
           (t_[at_] == ' ' || t_[at_] == '\n' || t_[at_] == '\r' || t_[at_] == '\t'))
      ++at_;
  }
  bool peek(char c) {
    ws();
    return at_ < t_.size() && t_[at_] == c;
  }
  bool expect(char c) {
    if (!peek(c))
      return fail(std::string("lacks a '") + c + "'");
    ++at_;
    return true;
  }
  bool string(std::string &out) {
    if (!expect('"'))
      return false;
    out.clear();
    while (at_ < t_.size() && t_[at_] != '"') {
      const unsigned char c = static_cast<unsigned char>(t_[at_++]);
      if (c < 0x20)
        return fail("has a control byte in a string");
      if (c != '\\') {
        out.push_back(char(c));
        if (out.size() > 4096)
          return fail("has a string longer than 4096 bytes");
        continue;
      }
      if (at_ >= t_.size())
        break;
      const char e = t_[at_++];
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      if (const char *k = std::strchr(from, e); k && e) {
        out.push_back(to[k - from]);
      } else if (e == 'u' && at_ + 4 <= t_.size()) {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          const char h = t_[at_++];
          if (!std::isxdigit(static_cast<unsigned char>(h)))
            return fail("has a bad \\u escape");
          code = code * 16 + unsigned(std::isdigit(static_cast<unsigned char>(h))
                                          ? h - '0'
                                          : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
        }
        // UTF-8 of a code unit of the Basic Multilingual Plane (surrogates kept as they are).
        if (code < 0x80) {
          out.push_back(char(code));
        } else if (code < 0x800) {
          out.push_back(char(0xc0 | (code >> 6)));
          out.push_back(char(0x80 | (code & 0x3f)));
        } else {
          out.push_back(char(0xe0 | (code >> 12)));
          out.push_back(char(0x80 | ((code >> 6) & 0x3f)));
          out.push_back(char(0x80 | (code & 0x3f)));
        }
      } else {
        return fail("has a bad escape");
      }
      if (out.size() > 4096)
        return fail("has a string longer than 4096 bytes");
    }
    if (at_ >= t_.size())
      return fail("ends inside a string");
    ++at_;
    return true;
  }
  bool integer(int64_t &out) {
    ws();
    const size_t start = at_;
    uint64_t v = 0;
    while (at_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[at_]))) {
      v = v * 10 + uint64_t(t_[at_++] - '0');
      if (v > (uint64_t(1) << 53))
        return fail("has a number past 2^53");
    }
    if (at_ == start)
      return fail("lacks a non-negative integer");
    out = int64_t(v);
    return true;
  }
  bool integers(std::vector<int64_t> &out) {
    out.clear();
    if (!expect('['))
      return false;
    if (peek(']'))
      return expect(']');
    do {
      int64_t v;
      if (!integer(v))
        return false;
      if (out.size() >= 64)
        return fail("has an array of more than 64 numbers");
      out.push_back(v);
    } while (peek(',') && expect(','));
    return expect(']');
  }
  /// Whether the object goes on (a ',' read) or ends (its '}' read): `first` for the first key.
  bool more(bool &first) {
    if (first) {
      first = false;
      if (peek('}')) {
        ++at_;
        return false;
      }
      return true;
    }
    if (peek(',')) {
      ++at_;
      return true;
    }
    expect('}');
    return false;
  }
  bool atEnd() {
    ws();
    return at_ == t_.size();
  }

private:
  const std::string &t_;
  const std::string &path_;
  size_t at_ = 0;
  std::string problem_;
};

struct HeaderTensor {
  std::string name, dtype;
  std::vector<int64_t> shape, offsets;
};

std::string parseSafetensors(const std::string &bytes, const std::string &path,
                             std::vector<ParamsEntry> &out) {
  const uint64_t headerBytes = headerSize(bytes);
  if (headerBytes > bytes.size() - 8)
    return path + ": cut short: its safetensors header is " + std::to_string(headerBytes) +
           " bytes, and the file holds " + std::to_string(bytes.size() - 8) + " after its size";
  const std::string header = bytes.substr(8, size_t(headerBytes));
  HeaderReader r(header, path);
  std::vector<HeaderTensor> tensors;
  std::set<std::string> names;
  bool first = true;
  r.expect('{');
  while (!r.failed() && r.more(first)) {
    std::string key;
    if (!r.string(key) || !r.expect(':'))
      break;
    if (!names.insert(key).second) {
      r.fail("names '" + key + "' twice");
      break;
    }
    bool firstField = true;
    if (!r.expect('{'))
      break;
    if (key == "__metadata__") {
      // Strings only, kept by nobody here.
      while (!r.failed() && r.more(firstField)) {
        std::string k, v;
        if (!r.string(k) || !r.expect(':') || !r.string(v))
          break;
      }
      continue;
    }
    HeaderTensor t;
    t.name = key;
    bool haveDtype = false, haveShape = false, haveOffsets = false;
    while (!r.failed() && r.more(firstField)) {
      std::string field;
      if (!r.string(field) || !r.expect(':'))
        break;
      if (field == "dtype")
        haveDtype = r.string(t.dtype);
      else if (field == "shape")
        haveShape = r.integers(t.shape);
      else if (field == "data_offsets")
        haveOffsets = r.integers(t.offsets);
      else
        r.fail("gives '" + key + "' a field '" + field + "' (dtype, shape, data_offsets)");
    }
    if (r.failed())
      break;
    if (!haveDtype || !haveShape || !haveOffsets || t.offsets.size() != 2)
      return path + ": not a safetensors file: tensor '" + key +
             "' lacks its dtype, shape or two data_offsets";
    tensors.push_back(std::move(t));
  }
  if (!r.failed() && !r.atEnd())
    r.fail("goes on after its object");
  if (r.failed())
    return r.problem();
  std::string otherTypes;
  for (const HeaderTensor &t : tensors)
    if (t.dtype != "F32")
      otherTypes += (otherTypes.empty() ? "" : ", ") + t.name + " (" + t.dtype + ")";
  if (!otherTypes.empty())
    return path + ": dp reads F32 tensors; these are not: " + otherTypes;
  // The data: each tensor's bytes its shape's, one after another from 0, with no hole, to the
  // file's end.
  const uint64_t dataBytes = bytes.size() - 8 - headerBytes;
  std::vector<const HeaderTensor *> byOffset;
  for (const HeaderTensor &t : tensors)
    byOffset.push_back(&t);
  // By [begin, end): an empty tensor at an offset comes before the one that starts there.
  std::stable_sort(
      byOffset.begin(), byOffset.end(),
      [](const HeaderTensor *a, const HeaderTensor *b) { return a->offsets < b->offsets; });
  uint64_t expected = 0;
  for (const HeaderTensor *t : byOffset) {
    uint64_t elements = 1;
    for (int64_t d : t->shape)
      if (__builtin_mul_overflow(elements, uint64_t(d), &elements) || elements > dataBytes)
        return path + ": tensor '" + t->name + "' has a shape larger than the file";
    const uint64_t begin = uint64_t(t->offsets[0]), end = uint64_t(t->offsets[1]);
    if (begin != expected || end < begin)
      return path + ": tensor '" + t->name + "' is at bytes [" + std::to_string(begin) + ", " +
             std::to_string(end) + ") of the data, not from byte " + std::to_string(expected) +
             " (where the tensor before it ends): a hole or an overlap";
    if (end > dataBytes)
      return path + ": tensor '" + t->name + "' ends at byte " + std::to_string(end) +
             " of the data, which holds " + std::to_string(dataBytes) + " (cut short?)";
    if (end - begin != elements * sizeof(float))
      return path + ": tensor '" + t->name + "' has " + std::to_string(end - begin) +
             " bytes for its " + std::to_string(elements) + " F32 values";
    expected = end;
  }
  if (expected != dataBytes)
    return path + ": its data holds " + std::to_string(dataBytes - expected) +
           " bytes after the last tensor's";
  const char *data = bytes.data() + 8 + headerBytes;
  for (const HeaderTensor &t : tensors) {
    ParamsEntry &e = out.emplace_back();
    e.name = t.name;
    e.shape = t.shape;
    e.values.resize(size_t(t.offsets[1] - t.offsets[0]) / sizeof(float));
    if (!e.values.empty())
      std::memcpy(e.values.data(), data + t.offsets[0], e.values.size() * sizeof(float));
  }
  return "";
}

/// A safetensors file: a header size of at most 100 MB (the format's bound), then '{'.
bool isSafetensors(const std::string &bytes) {
  if (bytes.size() < 10)
    return false;
  // (An older raw file has a name's printable bytes there, then a NUL and a count whose
  // top bytes are zero: never a '{' at byte 8.)
  return headerSize(bytes) <= 100'000'000 && bytes[8] == '{';
}

void appendJsonString(std::string &out, const std::string &text) {
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char code[8];
      std::snprintf(code, sizeof(code), "\\u%04x", c);
      out += code;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

} // namespace

std::string safetensorsImage(const std::vector<ParamsEntry> &entries,
                             const std::map<std::string, std::string> &metadata) {
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[k, v] : metadata) {
      header += first ? "" : ",";
      first = false;
      appendJsonString(header, k);
      header += ':';
      appendJsonString(header, v);
    }
    header += "}";
  }
  uint64_t at = 0;
  for (const ParamsEntry &e : entries) {
    header += header.size() > 1 ? "," : "";
    appendJsonString(header, e.name);
    header += ":{\"dtype\":\"F32\",\"shape\":[";
    for (size_t i = 0; i < e.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(e.shape[i]);
    const uint64_t bytes = e.values.size() * sizeof(float);
    header += "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + bytes) + "]}";
    at += bytes;
  }
  header += "}";
  // The data starts 8-byte aligned: the header padded with spaces.
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string image;
  for (int i = 0; i < 8; ++i)
    image.push_back(char((uint64_t(header.size()) >> (8 * i)) & 0xff));
  image += header;
  image.reserve(image.size() + at);
  for (const ParamsEntry &e : entries)
    image.append(reinterpret_cast<const char *>(e.values.data()), e.values.size() * sizeof(float));
  return image;
}

std::string readParamsFile(const std::string &path, std::vector<ParamsEntry> &out) {
  std::string bytes, error;
  // f32 values: 4 GiB is 1G parameters.
  if (!tryReadInputFile(path, uint64_t(4) << 30, "parameters", bytes, error))
    return error;
  return parseParamsFile(bytes, path, out);
}

std::string parseParamsFile(const std::string &bytes, const std::string &path,
                            std::vector<ParamsEntry> &out) {
  if (isSafetensors(bytes))
    return parseSafetensors(bytes, path, out);
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
    if (count > 0)
      std::memcpy(entry.values.data(), bytes.data() + at, count * sizeof(float));
    at += count * sizeof(float);
    out.push_back(std::move(entry));
  }
  return "";
}

} // namespace dp::rt
