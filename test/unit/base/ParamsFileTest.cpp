// The parameters files: safetensors written and read back by the format's spec (the e2e tests
// read dp's files with safetensors' own library), the older raw format still read, and every
// hostile header or data layout refused with a message naming the problem.
#include "runtime/base/ParamsFile.h"

#include <gtest/gtest.h>

#include <cstring>

namespace dp::rt {
namespace {

std::vector<ParamsEntry> twoTensors() {
  return {{"dense.kernel", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"dense.bias", {3}, {0.5f, -1, 2}}};
}

std::string problemOf(const std::string &bytes, std::vector<ParamsEntry> *out = nullptr) {
  std::vector<ParamsEntry> entries;
  std::string problem = parseParamsFile(bytes, "p.st", entries);
  if (out)
    *out = entries;
  return problem;
}

/// A safetensors image with `header` as its JSON and `data` after it.
std::string image(const std::string &header, const std::string &data = "") {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

TEST(ParamsFile, SafetensorsRoundTrips) {
  const std::string bytes = safetensorsImage(twoTensors(), {{"model", "m\"1"}});
  // The header's JSON as the spec has it, padded to 8 bytes.
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(bytes.substr(8, n).rfind("{\"__metadata__\":{\"model\":\"m\\\"1\"},\"dense.kernel\":"
                                     "{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                                     "\"dense.bias\":{\"dtype\":\"F32\",\"shape\":[3],"
                                     "\"data_offsets\":[24,36]}}",
                                     0),
            0u)
      << bytes.substr(8, n);
  EXPECT_EQ(bytes.size(), 8 + n + 36);
  std::vector<ParamsEntry> back;
  ASSERT_EQ(problemOf(bytes, &back), "");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "dense.kernel");
  EXPECT_EQ(back[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back[0].values, twoTensors()[0].values);
  EXPECT_EQ(back[1].values, twoTensors()[1].values);
}

TEST(ParamsFile, TheOlderRawFormatIsStillRead) {
  std::string raw;
  const float v[2] = {1.5f, -2};
  appendParamsEntry(raw, "w", v, 2);
  std::vector<ParamsEntry> back;
  ASSERT_EQ(problemOf(raw, &back), "");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].shape.empty());
  EXPECT_EQ(back[0].values, (std::vector<float>{1.5f, -2}));
}

TEST(ParamsFile, AnEmptyTensorSharesItsOffsetWithTheNextInEitherOrder) {
  const std::string data(8, '\0');
  for (const char *header : {"{\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},"
                             "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                             "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                             "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}"}) {
    std::vector<ParamsEntry> back;
    EXPECT_EQ(problemOf(image(header, data), &back), "") << header;
    EXPECT_EQ(back.size(), 2u);
  }
}

TEST(ParamsFile, HostileSafetensorsAreRefusedByName) {
  const std::string four(16, '\0');
  struct Case {
    std::string bytes, message;
  };
  const Case cases[] = {
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}").substr(0, 20),
       "cut short: its safetensors header is"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "1234"),
       "tensor 'a' ends at byte 8 of the data, which holds 4 (cut short?)"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", "12345678"),
       "tensor 'a' has 8 bytes for its 3 F32 values"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", "12345678"),
       "tensor 'a' is at bytes [4, 8) of the data, not from byte 0"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
             "1234"),
       "is at bytes [0, 4) of the data, not from byte 4 (where the tensor before it ends): a "
       "hole or an overlap"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", "12345678"),
       "its data holds 4 bytes after the last tensor's"},
      {image("{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}", "1234"),
       "dp reads F32 tensors; these are not: a (BF16)"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
             "\"data_offsets\":[0,4]}}",
             "1234"),
       "tensor 'a' has a shape larger than the file"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", "1234"),
       "lacks a non-negative integer"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", "1234"),
       "tensor 'a' lacks its dtype, shape or two data_offsets"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", "1234"),
       "gives 'a' a field 'x'"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{}}", "1234"),
       "names 'a' twice"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", "1234"),
       "goes on after its object"},
      {image("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}",
             "1234"),
       "has a number past 2^53"},
      {image("{\"a\\q\":{}}"), "has a bad escape"},
      {image("{\"a"), "ends inside a string"},
  };
  for (const Case &c : cases) {
    const std::string problem = problemOf(c.bytes);
    EXPECT_NE(problem.find(c.message), std::string::npos) << c.message << "\n got: " << problem;
    EXPECT_EQ(problem.rfind("p.st: ", 0), 0u) << problem;
  }
  // A header size past the format's bound is not taken for safetensors at all.
  std::string huge = image("{}");
  const uint64_t n = uint64_t(1) << 40;
  std::memcpy(huge.data(), &n, 8);
  EXPECT_NE(problemOf(huge), "");
}

} // namespace
} // namespace dp::rt
