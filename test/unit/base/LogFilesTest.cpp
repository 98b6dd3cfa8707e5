// The files a run writes as it goes: AppendFile (a log: each append on disk before it returns,
// never a FIFO) and TensorBoard's event files (TFRecord framing with masked CRC-32C, the Event
// messages encoded field by field), checked against the formats' published values.
#include "runtime/base/EventFile.h"
#include "runtime/base/Files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace dp::rt {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/dprt-logs-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AppendFile, TruncatesAppendsOrCreatesAndRefusesWhatIsNotAFile) {
  TempDir dir;
  const std::string path = dir.file("log.jsonl");
  {
    AppendFile log(path, AppendFile::Mode::Truncate, "--log");
    log.append("one\n");
    // On disk before the writer is gone (a run killed with -9 keeps it).
    EXPECT_EQ(readAll(path), "one\n");
  }
  {
    AppendFile log(path, AppendFile::Mode::Append, "--log");
    log.append("two\n");
  }
  EXPECT_EQ(readAll(path), "one\ntwo\n");
  { AppendFile log(path, AppendFile::Mode::Truncate, "--log"); }
  EXPECT_EQ(readAll(path), "");
  EXPECT_THROW(AppendFile(path, AppendFile::Mode::Create, "--tensorboard"), Error);
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    AppendFile log(fifo, AppendFile::Mode::Truncate, "--log");
    FAIL() << "a FIFO was opened";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("--log " + fifo + " is a FIFO, not a regular file"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(AppendFile(dir.file("no/such/dir/log"), AppendFile::Mode::Truncate, "--log"), Error);
}

TEST(EventFile, Crc32cIsCastagnolis) {
  // The check value of CRC-32C (RFC 3720's iSCSI CRC).
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  // 32 zero bytes: RFC 3720, B.4.
  const char zeros[32] = {};
  EXPECT_EQ(crc32c(zeros, 32), 0x8a9136aau);
}

TEST(EventFile, RecordsFrameTheMessageWithMaskedCrcs) {
  const std::string message = "hello";
  const std::string record = tfRecord(message);
  ASSERT_EQ(record.size(), 8 + 4 + 5 + 4);
  uint64_t length;
  std::memcpy(&length, record.data(), 8);
  EXPECT_EQ(length, 5u);
  uint32_t lengthCrc, dataCrc;
  std::memcpy(&lengthCrc, record.data() + 8, 4);
  std::memcpy(&dataCrc, record.data() + 17, 4);
  auto masked = [](uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; };
  EXPECT_EQ(lengthCrc, masked(crc32c(record.data(), 8)));
  EXPECT_EQ(dataCrc, masked(crc32c("hello", 5)));
  EXPECT_EQ(record.substr(12, 5), "hello");
}

TEST(EventFile, ScalarEventsAreTheProtobufFieldsTensorBoardReads) {
  // wall_time 1.5 (field 1, fixed64), step 300 (field 2, varint 0xac 0x02), summary (field 5)
  // { value (field 1) { tag "a/b" (field 1), simple_value 0.25 (field 2, fixed32) } }.
  const std::string event = scalarEvent(1.5, 300, "a/b", 0.25f);
  const std::string expected("\x09\x00\x00\x00\x00\x00\x00\xf8\x3f"
                             "\x10\xac\x02"
                             "\x2a\x0c\x0a\x0a\x0a\x03"
                             "a/b"
                             "\x15\x00\x00\x80\x3e",
                             26);
  EXPECT_EQ(event, expected);
  EXPECT_EQ(versionEvent(0), std::string("\x09\0\0\0\0\0\0\0\0\x1a\x0d", 11) + "brain.Event:2");
}

TEST(EventFile, AWriterMakesItsOwnFileInTheDirectory) {
  TempDir dir;
  const std::string logdir = dir.file("tb");
  EventFileWriter writer(logdir);
  writer.scalar("train/loss", 10, 0.5);
  const std::string name = writer.path().substr(logdir.size() + 1);
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  const std::string bytes = readAll(writer.path());
  EXPECT_EQ(bytes.substr(0, tfRecord(versionEvent(0)).size()).size(),
            tfRecord(versionEvent(0)).size());
  EXPECT_NE(bytes.find("train/loss"), std::string::npos);
}

} // namespace
} // namespace dp::rt
