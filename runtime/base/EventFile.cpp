// TensorBoard's event files; see EventFile.h.
#include "runtime/base/EventFile.h"

#include "runtime/base/Error.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace dp::rt {
namespace {

std::array<uint32_t, 256> crc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0x82f63b78u ^ (c >> 1) : c >> 1; // the reflected Castagnoli polynomial
    table[i] = c;
  }
  return table;
}

void putLE(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

/// A length-delimited field: its key, length and bytes.
void putBytes(std::string &out, int field, const std::string &bytes) {
  putVarint(out, uint64_t(field) << 3 | 2);
  putVarint(out, bytes.size());
  out += bytes;
}

void putDouble(std::string &out, int field, double v) {
  putVarint(out, uint64_t(field) << 3 | 1);
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  putLE(out, bits, 8);
}

double secondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

uint32_t crc32c(const void *data, size_t size) {
  static const std::array<uint32_t, 256> table = crc32cTable();
  const auto *p = static_cast<const uint8_t *>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t maskedCrc32c(const void *data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfRecord(const std::string &message) {
  std::string out;
  putLE(out, message.size(), 8);
  putLE(out, maskedCrc32c(out.data(), 8), 4);
  out += message;
  putLE(out, maskedCrc32c(message.data(), message.size()), 4);
  return out;
}

std::string versionEvent(double wallTime) {
  std::string event;
  putDouble(event, 1, wallTime);
  putBytes(event, 3, "brain.Event:2");
  return event;
}

std::string scalarEvent(double wallTime, int64_t step, const std::string &tag, float value) {
  std::string summaryValue;
  putBytes(summaryValue, 1, tag);
  putVarint(summaryValue, 2 << 3 | 5); // simple_value, a 32-bit float
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  putLE(summaryValue, bits, 4);
  std::string summary;
  putBytes(summary, 1, summaryValue);
  std::string event;
  putDouble(event, 1, wallTime);
  putVarint(event, 2 << 3 | 0);
  putVarint(event, uint64_t(step));
  putBytes(event, 5, summary);
  return event;
}

void makeLogDirectory(const std::string &dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    throw Error(ErrorKind::Usage,
                "--tensorboard " + dir + ": cannot create the directory" +
                    (ec ? ": " + ec.message() : std::string(": not a directory")));
}

EventFileWriter::EventFileWriter(const std::string &dir) {
  makeLogDirectory(dir);
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  const double now = secondsNow();
  // A new file of its own: a name taken is another run's.
  file_ =
      std::make_unique<AppendFile>(dir + "/events.out.tfevents." + std::to_string(int64_t(now)) +
                                       "." + host + "." + std::to_string(::getpid()),
                                   AppendFile::Mode::Create, "--tensorboard");
  file_->append(tfRecord(versionEvent(now)));
}

void EventFileWriter::scalar(const std::string &tag, int64_t step, double value) {
  file_->append(tfRecord(scalarEvent(secondsNow(), step, tag, float(value))));
}

} // namespace dp::rt
