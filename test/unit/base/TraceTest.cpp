// Tests of the trace recorder: nothing is kept while it is off, spans land on their thread's
// named row, the limit drops and counts, and the JSON has the fields Perfetto needs.
// (test/e2e/trace.test parses whole dprun traces with Python's json module.)
#include "runtime/base/Trace.h"

#include <cstdio>
#include <unistd.h>
#include <sstream>
#include <fstream>
#include <gtest/gtest.h>

#include <thread>

namespace dp::rt::trace {
namespace {

/// Occurrences of `needle` in `text`.
size_t count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

class TraceTest : public ::testing::Test {
protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }
};

TEST_F(TraceTest, NothingIsRecordedWhileOff) {
  { Span span(Category::Host, "ignored"); }
  record(Category::Host, "ignored too", 1, 0, 10);
  EXPECT_FALSE(enabled());
  // record() itself does not look at enabled(): its callers do. Spans do.
  EXPECT_EQ(count(eventsJson(0, "rank 0", 0), "\"ignored\""), 0u);
}

TEST_F(TraceTest, SpansLandOnTheirThreadsRowWithTimesInMicroseconds) {
  enable(100);
  nameThread("main");
  record(Category::Host, "epoch", 1, 5'000, 2'005'500);
  std::thread worker([] {
    nameThread("device 0 compute");
    record(Category::Kernel, intern("dense"), 7, 10'000, 12'250);
    record(Category::Step, "train step", 3, 9'000, 20'000);
  });
  worker.join();
  const std::string json = eventsJson(2, "rank 2 (node\"1)", 1'000);
  EXPECT_NE(json.find("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"tid\":0,"
                      "\"args\":{\"name\":\"rank 2 (node\\\"1)\"}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"args\":{\"name\":\"main\"}"), std::string::npos);
  EXPECT_NE(json.find("\"args\":{\"name\":\"device 0 compute\"}"), std::string::npos);
  EXPECT_NE(json.find("{\"name\":\"epoch\",\"cat\":\"host\",\"ph\":\"X\",\"pid\":2,\"tid\":1,"
                      "\"ts\":4.000,\"dur\":2000.500,\"args\":{\"n\":1}}"),
            std::string::npos)
      << json;
  // The step encloses the kernel and comes first on its row.
  const size_t step = json.find("\"name\":\"train step\""), kernel = json.find("\"name\":\"dense\"");
  ASSERT_NE(step, std::string::npos);
  ASSERT_NE(kernel, std::string::npos);
  EXPECT_LT(step, kernel);
  EXPECT_NE(json.find("\"cat\":\"kernel\",\"ph\":\"X\",\"pid\":2,\"tid\":2,\"ts\":9.000,"
                      "\"dur\":2.250,\"args\":{\"n\":7}}"),
            std::string::npos)
      << json;
  EXPECT_EQ(recordedSpans(), 3u);
  EXPECT_EQ(droppedSpans(), 0u);
}

TEST_F(TraceTest, ThreadsOfOneNameShareARowAndUnnamedThreadsGetOne) {
  enable(100);
  for (int i = 0; i < 2; ++i) {
    std::thread loader([] {
      nameThread("input loader");
      record(Category::Input, "gather batch", 0, 0, 1);
    });
    loader.join();
  }
  std::thread anonymous([] { record(Category::Input, "gather batch", 1, 0, 1); });
  anonymous.join();
  std::thread idle([] { nameThread("idle"); });
  idle.join();
  const std::string json = eventsJson(0, "rank 0", 0);
  EXPECT_EQ(count(json, "\"name\":\"idle\""), 0u) << "a row without spans is left out";
  EXPECT_EQ(count(json, "\"name\":\"input loader\""), 1u) << json;
  EXPECT_EQ(count(json, "\"name\":\"thread 1\""), 1u) << json;
  EXPECT_EQ(count(json, "\"name\":\"gather batch\""), 3u);
}

TEST_F(TraceTest, AsyncSpansArePairsWithIdsUniqueAcrossProcesses) {
  enable(10);
  nameThread("communication");
  // Two buckets in flight at once: they overlap, so they cannot be nested "X" spans.
  recordAsync(Category::Collective, "average bucket", 0, 1'000, 5'000);
  recordAsync(Category::Collective, "average bucket", 1, 2'000, 7'000);
  const std::string json = eventsJson(3, "rank 3", 0);
  EXPECT_NE(json.find("{\"name\":\"average bucket\",\"cat\":\"collective\",\"ph\":\"b\","
                      "\"pid\":3,\"tid\":1,\"ts\":1.000,\"id\":\"3.1\",\"args\":{\"n\":0}}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"ph\":\"e\",\"pid\":3,\"tid\":1,\"ts\":7.000,\"id\":\"3.2\""),
            std::string::npos)
      << json;
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 0u);
}

TEST_F(TraceTest, TheLimitDropsAndCounts) {
  enable(3);
  for (int i = 0; i < 5; ++i) {
    Span span(Category::Kernel, "k", i);
  }
  EXPECT_EQ(recordedSpans(), 3u);
  EXPECT_EQ(droppedSpans(), 2u);
  EXPECT_EQ(count(eventsJson(0, "rank 0", 0), "\"ph\":\"X\""), 3u);
}

TEST_F(TraceTest, TheFileWrapsEventsAndMetadata) {
  enable(10);
  nameThread("main");
  record(Category::Host, "evaluate", -1, 0, 1000);
  const std::string file = traceFile(eventsJson(0, "rank 0", 0), "{\"ranks\":1}");
  EXPECT_EQ(file.rfind("{\"traceEvents\":[\n", 0), 0u);
  EXPECT_NE(file.find("\"dur\":1.000}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":"
                      "{\"ranks\":1}}\n"),
            std::string::npos)
      << file;
  EXPECT_EQ(count(file, ",\n]"), 0u) << "no trailing comma";
  EXPECT_EQ(traceFile("", ""), "{\"traceEvents\":[\n\n],\n\"displayTimeUnit\":\"ms\",\n"
                               "\"otherData\":{}}\n");
}

TEST_F(TraceTest, TheStreamedFileEqualsTheWholeText) {
  enable(10);
  nameThread("main");
  record(Category::Host, "evaluate", -1, 0, 1000);
  const std::string a = eventsJson(0, "rank 0", 0), b = eventsJson(1, "rank 1", 0), none;
  char dir[] = "/tmp/dp-trace-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/t.json";
  // The parts of several ranks (an empty one last), as rank 0 merges them.
  writeTraceFile(path, {&a, &b, &none}, "{\"ranks\":2}");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), traceFile(a + b, "{\"ranks\":2}"));
  writeTraceFile(path, {&none}, "");
  std::ifstream again(path);
  std::stringstream empty;
  empty << again.rdbuf();
  EXPECT_EQ(empty.str(), traceFile("", ""));
  std::remove(path.c_str());
  ::rmdir(dir);
}

} // namespace
} // namespace dp::rt::trace
