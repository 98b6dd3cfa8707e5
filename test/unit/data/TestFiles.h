// Helpers for the data tests: a private temporary directory and raw file writers, so that tests
// can produce malformed IDX files and CIFAR-10 batches the library's own writer never would.
#pragma once

#include "runtime/base/Error.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace dp::rt::test {

/// Runs `body`, expecting an Error of kind Data whose message contains every one of `parts`.
inline void expectDataError(const std::function<void()> &body, const std::vector<std::string> &parts) {
  try {
    body();
    ADD_FAILURE() << "expected a data error containing '" << parts.front() << "'";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Data) << e.what();
    EXPECT_EQ(e.exitCode(), 4);
    for (const std::string &part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message '" << e.what() << "' lacks '" << part << "'";
  }
}


/// A fresh directory under the test temp dir, removed with its files at the end of the test.
class TempDir {
public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "dprt-data-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (!mkdtemp(name.data()))
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = name.data();
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

/// Big-endian IDX header for unsigned bytes with the given dims; `magic` overrides the magic.
inline std::string idxHeader(const std::vector<uint32_t> &dims, uint32_t magic = 0) {
  if (magic == 0)
    magic = 0x00000800u | static_cast<uint32_t>(dims.size());
  std::string out;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((v >> shift) & 0xff));
  };
  put(magic);
  for (uint32_t d : dims)
    put(d);
  return out;
}

/// Writes `bytes` to `path`, gzipped when `gzip`.
inline void writeRaw(const std::string &path, const std::string &bytes, bool gzip) {
  if (!gzip) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
    return;
  }
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
  }
  ASSERT_EQ(gzclose(file), Z_OK);
}

/// The bytes of `n` images of h x w whose pixel p of image i is (i * 7 + p) % 256.
inline std::string imageBytes(uint32_t n, uint32_t h, uint32_t w) {
  std::string out;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t p = 0; p < h * w; ++p)
      out.push_back(static_cast<char>((i * 7 + p) % 256));
  return out;
}

/// The bytes of `n` labels, label i being i % classes.
inline std::string labelBytes(uint32_t n, uint32_t classes = 10) {
  std::string out;
  for (uint32_t i = 0; i < n; ++i)
    out.push_back(static_cast<char>(i % classes));
  return out;
}

/// Pixel (c, y, x) of CIFAR-10 test record `record`: distinct across channels and neighbours,
/// so a wrong reordering shows.
inline uint8_t cifarPixel(uint32_t record, uint32_t c, uint32_t y, uint32_t x) {
  return static_cast<uint8_t>((record * 37 + c * 101 + y * 7 + x * 3) % 256);
}

/// One CIFAR-10 binary record (3073 bytes): `label`, then the red, green and blue 32x32 planes
/// (channel-planar CHW) of cifarPixel(record, ...).
inline std::string cifarRecord(uint32_t record, uint8_t label) {
  std::string out(1, static_cast<char>(label));
  for (uint32_t c = 0; c < 3; ++c)
    for (uint32_t y = 0; y < 32; ++y)
      for (uint32_t x = 0; x < 32; ++x)
        out.push_back(static_cast<char>(cifarPixel(record, c, y, x)));
  return out;
}

/// `count` records numbered from `first`, record r having label r % 10.
inline std::string cifarRecords(uint32_t first, uint32_t count) {
  std::string out;
  for (uint32_t r = first; r < first + count; ++r)
    out += cifarRecord(r, static_cast<uint8_t>(r % 10));
  return out;
}

} // namespace dp::rt::test
