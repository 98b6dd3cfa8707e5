// The peak file (runtime/train/Peak.h): figures written read back under their key, a key's
// line replaced by a newer measurement and the others kept, and a file that is not one (a
// malformed line, a FIFO, a directory) ignored rather than failing a run; and the measurement
// itself on the CPU backend, whose products run.
#include "runtime/train/Peak.h"

#include "runtime/backends/Backends.h"
#include "runtime/base/Files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace dp::rt {
namespace {

std::string tempPath(const std::string &name) {
  const char *base = std::getenv("TMPDIR");
  return std::string(base ? base : "/tmp") + "/dp-peak-" + name + "-" + std::to_string(::getpid());
}

TEST(Peak, FiguresReadBackUnderTheirKeyAndANewMeasurementReplacesTheOld) {
  const std::string dir = tempPath("file");
  const std::string path = dir + "/sub/peak.tsv"; // the directories are created
  PeakFigures a;
  a.matmul[0] = 0.25, a.conv[0] = 0.5, a.matmul[1] = 1, a.conv[1] = 0;
  writePeak(path, "cpu A | 2 threads", a);
  PeakFigures b;
  b.matmul[0] = 2;
  writePeak(path, "cpu B | 1 thread", b);
  std::optional<PeakFigures> read = readPeak(path, "cpu A | 2 threads");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->matmul[0], 0.25);
  EXPECT_EQ(read->conv[0], 0.5);
  EXPECT_EQ(read->best(false), 0.5);
  EXPECT_EQ(read->best(true), 1);
  EXPECT_FALSE(readPeak(path, "cpu A").has_value()); // the whole key, not a prefix
  EXPECT_FALSE(readPeak(path, "cpu C | 2 threads").has_value());
  a.conv[0] = 0.75;
  writePeak(path, "cpu A | 2 threads", a);
  EXPECT_EQ(readPeak(path, "cpu A | 2 threads")->conv[0], 0.75);
  EXPECT_EQ(readPeak(path, "cpu B | 1 thread")->matmul[0], 2);
  std::istringstream lines(readInputFile(path, 1 << 20, "peak", ErrorKind::Data));
  int count = 0;
  for (std::string line; std::getline(lines, line);)
    count += line[0] != '#';
  EXPECT_EQ(count, 2);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(Peak, AFileThatIsNotOneIsIgnored) {
  const std::string dir = tempPath("bad");
  ::mkdir(dir.c_str(), 0777);
  EXPECT_FALSE(readPeak(dir + "/missing.tsv", "k").has_value());
  EXPECT_FALSE(readPeak("", "k").has_value());
  EXPECT_FALSE(readPeak(dir, "k").has_value()); // a directory
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(readPeak(fifo, "k").has_value()); // and does not block
  const std::string bad = dir + "/bad.tsv";
  writeFileAtomically(bad, "k\t0.5\tx\t1\t1\nk\tnan\t1\t1\t1\nk\t-1\t1\t1\t1\nk\t0\t0\t1\t1\n"
                           "k\t0.5\n");
  EXPECT_FALSE(readPeak(bad, "k").has_value());
  writeFileAtomically(bad, "# k\t9\t9\t9\t9\nk\t0.5\t0.25\t0\t0\n");
  EXPECT_EQ(readPeak(bad, "k")->best(false), 0.5);
  EXPECT_THROW(writePeak("", "k", PeakFigures{}), Error);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(Peak, TheCpuBackendsProductsAreMeasured) {
  registerBuiltinBackends();
  Backend &cpu = BackendRegistry::get(DeviceKind::Cpu);
  cpu.setComputeThreads(1);
  std::ostringstream out;
  const PeakFigures peak = measurePeak(cpu, &out);
  EXPECT_GT(peak.matmul[0], 0);
  EXPECT_GT(peak.conv[0], 0);
  EXPECT_NE(out.str().find("f32  matmul"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("bf16 conv 3x3"), std::string::npos) << out.str();
  EXPECT_NE(peakKey(cpu, 1).find("| 1 thread"), std::string::npos);
  EXPECT_EQ(peakKey(cpu, 1).find('\t'), std::string::npos);
}

} // namespace
} // namespace dp::rt
