// Tests of the report helpers: the exact metrics JSON, number formatting, the epoch line, the
// phase table, and atomic file replacement.
#include "runtime/train/Report.h"
#include "runtime/base/Error.h"
#include "runtime/train/PlanInfo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace dp::rt {
namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Report, MetricsJsonShape) {
  TrainReport report;
  EpochStats e;
  e.epoch = 1;
  e.loss = 0.5;
  e.trainAccuracy = 0.8125;
  e.seconds = 12.25;
  e.samplesPerSec = 48780;
  e.rankSamplesPerSec = {24000, 24780.5};
  e.stepLosses = {0.75f, 0.25f};
  e.lrScale = 0.5;
  e.testLoss = 0.25;
  e.testAccuracy = 0.875;
  e.inputWaitSeconds = 0.125;
  report.epochs.push_back(e);
  e.stepLosses = {};
  e.lrScale = 1;
  e.testLoss = e.testAccuracy = std::nan("");
  e.epoch = 2;
  e.loss = 0.1; // not exact in binary: must still read back as 0.1
  e.trainAccuracy = std::nan("");
  report.epochs.push_back(e);
  report.test.accuracy = 0.75;
  report.test.loss = INFINITY;
  report.params = 101770;
  report.replicas = 2;
  report.processes = 2;
  report.allreduceSeconds = 0.5;
  report.allreduceWaitSeconds = 0.25;
  report.phases.inputWait = 0.375;
  EXPECT_EQ(metricsJson(report),
            "{\n"
            "  \"epochs\": [\n"
            "    {\"epoch\": 1, \"loss\": 0.5, \"train_accuracy\": 0.8125, \"seconds\": 12.25, "
            "\"samples_per_sec\": 48780, \"rank_samples_per_sec\": [24000, 24780.5], "
            "\"lr_scale\": 0.5, \"input_wait_seconds\": 0.125, \"test_loss\": 0.25, "
            "\"test_accuracy\": 0.875, "
            "\"step_losses\": [0.75, 0.25]},\n"
            "    {\"epoch\": 2, \"loss\": 0.1, \"train_accuracy\": null, \"seconds\": 12.25, "
            "\"samples_per_sec\": 48780, \"rank_samples_per_sec\": [24000, 24780.5], "
            "\"lr_scale\": 1, \"input_wait_seconds\": 0.125, \"step_losses\": []}\n"
            "  ],\n"
            "  \"test_accuracy\": 0.75,\n"
            "  \"test_loss\": null,\n"
            "  \"replicas_per_process\": 2,\n"
            "  \"compute_threads\": 0,\n"
            "  \"processes\": 2,\n"
            "  \"allreduce_seconds\": 0.5,\n"
            "  \"allreduce_wait_seconds\": 0.25,\n"
            "  \"input_wait_seconds\": 0.375,\n"
            "  \"params\": 101770\n"
            "}\n");
  EXPECT_NE(metricsJson(TrainReport{}).find("\"epochs\": [],"), std::string::npos);
}

TEST(Report, MetricsNameTheCheckpoints) {
  TrainReport report;
  EXPECT_EQ(metricsJson(report).find("checkpoint"), std::string::npos);
  report.checkpoints.resumedFrom = "ck/\"odd\\name\n.dpk";
  report.checkpoints.resumedStep = 42;
  report.checkpoints.written = 3;
  report.checkpoints.last = "ck/ckpt-000000000060.dpk";
  report.checkpoints.lastBytes = 318952;
  report.checkpoints.lastSeconds = 0.125;
  const std::string json = metricsJson(report);
  EXPECT_NE(json.find("  \"resumed_from\": \"ck/\\\"odd\\\\name\\u000a.dpk\",\n"
                      "  \"resumed_step\": 42,\n"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("  \"checkpoints_written\": 3,\n  \"checkpoint\": "
                      "\"ck/ckpt-000000000060.dpk\",\n  \"checkpoint_bytes\": 318952,\n"
                      "  \"checkpoint_seconds\": 0.125,\n"),
            std::string::npos)
      << json;
}

TEST(Report, MetricsListTheValidationsAndTheBest) {
  TrainReport report;
  EXPECT_EQ(metricsJson(report).find("validations"), std::string::npos);
  EpochStats e;
  e.epoch = 1;
  e.valLoss = 0.5;
  e.valAccuracy = 0.75;
  report.epochs = {e};
  Evaluation within, after;
  within.set = after.set = Evaluation::Set::Validation;
  within.epoch = after.epoch = 1;
  within.step = 5;
  within.stats.loss = 0.625;
  within.stats.accuracy = 0.5;
  after.step = 10;
  after.epochEnd = true;
  after.stats.loss = 0.5;
  after.stats.accuracy = 0.75;
  report.validations = {within, after};
  report.monitor = "val_accuracy";
  report.best = {true, 10, 1, 0.75};
  const std::string json = metricsJson(report);
  EXPECT_NE(json.find("\"val_loss\": 0.5, \"val_accuracy\": 0.75"), std::string::npos) << json;
  EXPECT_NE(
      json.find("  \"monitor\": \"val_accuracy\",\n  \"validations\": [\n"
                "    {\"step\": 5, \"epoch\": 1, \"epoch_end\": false, \"loss\": 0.625, "
                "\"accuracy\": 0.5},\n"
                "    {\"step\": 10, \"epoch\": 1, \"epoch_end\": true, \"loss\": 0.5, "
                "\"accuracy\": 0.75}\n  ],\n"
                "  \"best\": {\"step\": 10, \"epoch\": 1, \"value\": 0.75, \"restored\": true},\n"),
      std::string::npos)
      << json;
}

TEST(Report, NumbersReadBack) {
  TrainReport report;
  report.test.loss = 0.1 + 0.2; // needs 17 digits
  std::string json = metricsJson(report);
  size_t at = json.find("\"test_loss\": ") + 13;
  EXPECT_EQ(std::strtod(json.c_str() + at, nullptr), 0.1 + 0.2) << json;
}

TEST(Report, WithCommas) {
  EXPECT_EQ(withCommas(0), "0");
  EXPECT_EQ(withCommas(999), "999");
  EXPECT_EQ(withCommas(1000), "1,000");
  EXPECT_EQ(withCommas(48780), "48,780");
  EXPECT_EQ(withCommas(1234567), "1,234,567");
  EXPECT_EQ(withCommas(-1234), "-1,234");
}

TEST(Report, EpochLine) {
  EpochStats e;
  e.epoch = 1;
  e.loss = 0.51234;
  e.trainAccuracy = 0.81234;
  e.seconds = 12.34;
  e.samplesPerSec = 48780.4;
  EXPECT_EQ(epochLine(e, 2), "epoch 1/2  loss 0.5123  accuracy 0.8123  12.3 s  48,780 samples/s");
  e.trainAccuracy = std::nan("");
  EXPECT_NE(epochLine(e, 2).find("accuracy n/a"), std::string::npos);
  // A regression has none to report.
  e.regression = true;
  EXPECT_EQ(epochLine(e, 2), "epoch 1/2  loss 0.5123  12.3 s  48,780 samples/s");
}

TEST(Report, PhaseTable) {
  std::ostringstream out;
  PhaseTimes phases{1.0, 0.0, 2.5, 0.5};
  phases.inputWait = 0.25;
  printPhaseTable(phases, out);
  const std::string table = out.str();
  // The input wait is a part of train, under it and not in the total.
  for (const char *row : {"load            1.000   25.0%", "init            0.000    0.0%",
                          "train           2.500   62.5%\n  input         0.250    6.2%\n"
                          "evaluate        0.500   12.5%",
                          "total           4.000  100.0%"})
    EXPECT_NE(table.find(row), std::string::npos) << "'" << row << "' missing from:\n" << table;
}

class AtomicWrite : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "dprt-report-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    dir = name.data();
  }
  void TearDown() override { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string dir;
};

TEST_F(AtomicWrite, ReplacesWholeFileAndLeavesNoTemporary) {
  std::string path = dir + "/metrics.json";
  writeFileAtomically(path, "a much longer first version\n");
  writeFileAtomically(path, "second\n");
  EXPECT_EQ(readFile(path), "second\n");
  EXPECT_NE(std::system(("ls '" + dir + "' | grep -q tmp").c_str()), 0) << "temporary file left";
}

TEST_F(AtomicWrite, ReplacesOnlyRegularFiles) {
  // A FIFO given as --metrics or --save-params stays a FIFO (renaming over it would delete it).
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    writeFileAtomically(fifo, "x");
    FAIL() << "a FIFO was replaced";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find(fifo + ": is a FIFO, not a regular file"),
              std::string::npos)
        << e.what();
  }
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_NE(std::system(("ls '" + dir + "' | grep -q tmp").c_str()), 0) << "temporary file left";
}

TEST_F(AtomicWrite, FailuresNameThePath) {
  std::string path = dir + "/missing/metrics.json";
  try {
    writeFileAtomically(path, "x");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  try {
    checkWritable(path);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("directory " + dir + "/missing does not exist"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(checkWritable(dir), Error); // a directory, not a file
  EXPECT_NO_THROW(checkWritable(dir + "/new.json"));
}

} // namespace
} // namespace dp::rt
