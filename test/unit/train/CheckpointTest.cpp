// Tests of checkpoint files on the tiny plan: what is written reads back exactly (tensors,
// position, epochs), every corruption of a file is refused with its problem named (bad magic,
// another version, truncation at every length, a flipped bit anywhere), a checkpoint of another
// model is refused naming the first difference, and the directory is listed and pruned by step.
#include "runtime/train/Checkpoint.h"

#include "ErrorMatchers.h"
#include "dprun/TinyPlan.h"
#include "runtime/base/Files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dp::rt {
namespace {

/// A fresh directory under the test's temporary directory.
std::string tempDir(const std::string &name) {
  const char *base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/dp-ckpt-" + name + "-" +
                    std::to_string(::getpid());
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(::mkdir(dir.c_str(), 0777), 0);
  return dir;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CheckpointMeta sampleMeta() {
  CheckpointMeta meta;
  meta.model = "tiny";
  meta.seed = 42;
  meta.globalBatch = 8;
  meta.planHash = 0x1234567890abcdefull;
  meta.replicas = 2;
  meta.processes = 3;
  meta.position.step = 17;
  meta.position.epochsDone = 2;
  meta.position.stepsInEpoch = 3;
  meta.position.samplesInEpoch = 24;
  meta.position.epochLossSum = 3.25;
  meta.position.epochCorrect = 11;
  meta.position.epochSeconds = 0.5;
  meta.position.epochStepLosses = {1.5f, 1.0f, 0.75f};
  meta.position.plateau.scale = 0.25;
  meta.position.plateau.best = 0.5;
  meta.position.plateau.haveBest = true;
  meta.position.plateau.badEpochs = 2;
  meta.position.earlyStop.best = 0.75;
  EpochStats e;
  e.epoch = 1;
  e.steps = 7;
  e.samples = 56;
  e.loss = 0.625;
  e.trainAccuracy = 0.5;
  e.seconds = 1.25;
  e.samplesPerSec = 44.8;
  e.stepLosses = {2.0f, 1.0f};
  e.lrScale = 0.5;
  e.testLoss = 0.375;
  meta.epochs = {e, e};
  meta.epochs[1].epoch = 2;
  return meta;
}

struct Fixture {
  std::unique_ptr<Program> program;
  std::string dir, path;
};

/// The tiny plan loaded, its parameters drawn, one checkpoint of it written.
Fixture written(const std::string &name) {
  Fixture f;
  f.program = test::tinyPlan(8, 4, 3).load();
  f.program->initParams(7);
  f.dir = tempDir(name);
  f.path = f.dir + "/" + checkpointFileName(17);
  writeCheckpoint(*f.program, sampleMeta(), f.path);
  return f;
}

TEST(Checkpoint, RoundTripsTensorsPositionAndEpochs) {
  Fixture f = written("roundtrip");
  Checkpoint c = Checkpoint::read(f.path, checkpointSizeLimit(f.program->plan()));
  const CheckpointMeta expected = sampleMeta();
  EXPECT_EQ(c.meta.model, "tiny");
  EXPECT_EQ(c.meta.seed, 42u);
  EXPECT_EQ(c.meta.globalBatch, 8);
  EXPECT_EQ(c.meta.planHash, expected.planHash);
  EXPECT_EQ(c.meta.replicas, 2);
  EXPECT_EQ(c.meta.processes, 3);
  const TrainPosition &p = c.meta.position;
  EXPECT_EQ(p.step, 17);
  EXPECT_EQ(p.epochsDone, 2);
  EXPECT_EQ(p.stepsInEpoch, 3);
  EXPECT_EQ(p.samplesInEpoch, 24);
  EXPECT_EQ(p.epochLossSum, 3.25);
  EXPECT_EQ(p.epochCorrect, 11);
  EXPECT_EQ(p.epochSeconds, 0.5);
  EXPECT_EQ(p.epochStepLosses, expected.position.epochStepLosses);
  EXPECT_EQ(p.plateau.scale, 0.25);
  EXPECT_EQ(p.plateau.best, 0.5);
  EXPECT_TRUE(p.plateau.haveBest);
  EXPECT_EQ(p.plateau.badEpochs, 2);
  EXPECT_EQ(p.earlyStop.best, 0.75);
  EXPECT_FALSE(p.earlyStop.haveBest);
  ASSERT_EQ(c.meta.epochs.size(), 2u);
  EXPECT_EQ(c.meta.epochs[1].epoch, 2);
  EXPECT_EQ(c.meta.epochs[0].samplesPerSec, 44.8);
  EXPECT_EQ(c.meta.epochs[0].stepLosses, expected.epochs[0].stepLosses);
  EXPECT_EQ(c.meta.epochs[0].lrScale, 0.5);
  EXPECT_EQ(c.meta.epochs[0].testLoss, 0.375);
  EXPECT_TRUE(std::isnan(c.meta.epochs[0].testAccuracy));

  // The tensors are the plan's parameters, values and all.
  const Plan &plan = f.program->plan();
  ASSERT_EQ(c.tensors.size(), plan.params.size());
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamDesc &param = plan.params[i];
    const CheckpointTensor &t = c.tensors[i];
    EXPECT_EQ(t.name, param.name);
    EXPECT_EQ(t.shape, plan.buffers[param.buffer].shape);
    EXPECT_EQ(t.offset % 64, 0u);
    std::vector<uint8_t> values(plan.buffers[param.buffer].bytes());
    f.program->read(param.buffer, values.data());
    ASSERT_EQ(t.bytes, values.size());
    EXPECT_EQ(std::memcmp(c.data(t), values.data(), values.size()), 0) << t.name;
  }
  EXPECT_NO_THROW(checkCheckpointFits(c, plan, f.path));

  // Loading writes them back: parameters drawn from another seed become the written ones.
  std::unique_ptr<Program> other = test::tinyPlan(8, 4, 3).load();
  other->initParams(99);
  loadCheckpoint(*other, c);
  for (const ParamDesc &param : plan.params) {
    std::vector<uint8_t> a(plan.buffers[param.buffer].bytes()), b(a.size());
    f.program->read(param.buffer, a.data());
    other->read(param.buffer, b.data());
    EXPECT_EQ(a, b) << param.name;
  }
}

TEST(Checkpoint, RefusesEveryTruncationAndBitFlip) {
  Fixture f = written("corrupt");
  const std::string good = readAll(f.path);
  ASSERT_NO_THROW(Checkpoint::fromBytes(good, "good"));
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(Checkpoint::fromBytes(good.substr(0, n), "cut"), Error) << "cut to " << n;
  EXPECT_DP_ERROR(Checkpoint::fromBytes(good.substr(0, good.size() - 1), "c.dpk"),
                  ErrorKind::Checkpoint, "c.dpk: truncated or padded");
  EXPECT_DP_ERROR(Checkpoint::fromBytes(good + "x", "c.dpk"), ErrorKind::Checkpoint,
                  "truncated or padded");
  // Every single-bit flip, in the header or the payload, is caught (CRC-32 sees them all).
  for (size_t i = 0; i < good.size(); i += (i < 256 ? 1 : 97)) {
    for (int bit : {0, 7}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_THROW(Checkpoint::fromBytes(bad, "flip"), Error) << "byte " << i << " bit " << bit;
    }
  }
  std::string flipped = good;
  flipped[good.size() - 5] ^= 0x10;
  EXPECT_DP_ERROR(Checkpoint::fromBytes(flipped, "c.dpk"), ErrorKind::Checkpoint,
                  "c.dpk: corrupt: checksum mismatch");
  std::string text = "just some text that is long enough to fill a header of sixty-four bytes";
  EXPECT_DP_ERROR(Checkpoint::fromBytes(text, "t.txt"), ErrorKind::Checkpoint,
                  "t.txt: not a dp checkpoint");
  std::string newer = good;
  newer[8] = 2;
  EXPECT_DP_ERROR(Checkpoint::fromBytes(newer, "n.dpk"), ErrorKind::Checkpoint,
                  "checkpoint format version 2, newer than this dprun's (1)");
}

TEST(Checkpoint, RefusesAFileLargerThanTheModelsAndNonRegularFiles) {
  Fixture f = written("limits");
  EXPECT_DP_ERROR(Checkpoint::read(f.path, 100), ErrorKind::Checkpoint,
                  "larger than a checkpoint file may be");
  EXPECT_DP_ERROR(Checkpoint::read(f.dir, 1 << 20), ErrorKind::Checkpoint, "a directory");
  const std::string fifo = f.dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_DP_ERROR(Checkpoint::read(fifo, 1 << 20), ErrorKind::Checkpoint, "a FIFO");
}

TEST(Checkpoint, RefusesAnotherModelNamingTheFirstDifference) {
  Fixture f = written("fits");
  Checkpoint c = Checkpoint::read(f.path, 1 << 20);
  // Another number of classes: the kernel's shape differs.
  std::unique_ptr<Program> wider = test::tinyPlan(8, 4, 5).load();
  EXPECT_DP_ERROR(checkCheckpointFits(c, wider->plan(), "c.dpk"), ErrorKind::Checkpoint,
                  "c.dpk does not fit the plan's model test: 'dense/kernel' is a weight f32[4,3] in "
                  "it but a weight f32[4,5] in the plan");
  // Another batch is the same model: it fits.
  std::unique_ptr<Program> batch = test::tinyPlan(4, 4, 3).load();
  EXPECT_NO_THROW(checkCheckpointFits(c, batch->plan(), "c.dpk"));
  // A parameter missing from the checkpoint, and one the plan lacks.
  Checkpoint missing = c;
  missing.tensors.pop_back();
  EXPECT_DP_ERROR(checkCheckpointFits(missing, batch->plan(), "c.dpk"), ErrorKind::Checkpoint,
                  "it has no 'dense/bias'");
  Checkpoint extra = c;
  extra.tensors.push_back(c.tensors.back());
  extra.tensors.back().name = "dense/bias/m";
  EXPECT_DP_ERROR(checkCheckpointFits(extra, batch->plan(), "c.dpk"), ErrorKind::Checkpoint,
                  "it holds 'dense/bias/m' (f32[3]), which the plan does not have");
}

TEST(Checkpoint, DirectoryListsNewestFirstAndPrunes) {
  const std::string dir = tempDir("dir");
  EXPECT_TRUE(listCheckpoints(dir + "/missing").empty());
  for (int64_t step : {5, 100, 20, 7})
    writeFileAtomically(dir + "/" + checkpointFileName(step), "x");
  writeFileAtomically(dir + "/ckpt-12.dpk", "not a checkpoint name");
  writeFileAtomically(dir + "/notes.txt", "kept");
  // A temporary file of a writer that died (no process has pid 2^22 + 1 here), and one of a
  // live writer (this process).
  const std::string dead = dir + "/" + checkpointFileName(200) + ".tmp.4194305";
  const std::string live = dir + "/" + checkpointFileName(300) + ".tmp." + std::to_string(::getppid());
  writeFileAtomically(dead, "partial");
  writeFileAtomically(live, "partial");
  auto found = listCheckpoints(dir);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].first, 100);
  EXPECT_EQ(found[0].second, dir + "/ckpt-000000000100.dpk");
  EXPECT_EQ(found[3].first, 5);
  pruneCheckpoints(dir, 2);
  found = listCheckpoints(dir);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].first, 100);
  EXPECT_EQ(found[1].first, 20);
  EXPECT_NE(::access(dead.c_str(), F_OK), 0) << "a dead writer's temporary file stays";
  EXPECT_EQ(::access(live.c_str(), F_OK), 0) << "a live writer's temporary file was removed";
  EXPECT_EQ(::access((dir + "/notes.txt").c_str(), F_OK), 0);
}

TEST(Checkpoint, DirectoryIsCreatedOrRefused) {
  const std::string dir = tempDir("prepare");
  EXPECT_NO_THROW(prepareCheckpointDir(dir + "/new"));
  struct stat info;
  ASSERT_EQ(::stat((dir + "/new").c_str(), &info), 0);
  EXPECT_TRUE(S_ISDIR(info.st_mode));
  EXPECT_NO_THROW(prepareCheckpointDir(dir + "/new"));
  EXPECT_DP_ERROR(prepareCheckpointDir(dir + "/no/such"), ErrorKind::Usage, "cannot create it");
  writeFileAtomically(dir + "/file", "x");
  EXPECT_DP_ERROR(prepareCheckpointDir(dir + "/file"), ErrorKind::Usage,
                  "is a regular file, not a directory");
}

TEST(Checkpoint, AWriteThatFailsLeavesThePreviousFile) {
  Fixture f = written("failed-write");
  const std::string before = readAll(f.path);
  {
    // A writer that never commits (an error, an interruption) removes its temporary file.
    AtomicFileWriter writer(f.path);
    writer.write("partial", 7);
    EXPECT_EQ(::access(writer.tempPath().c_str(), F_OK), 0);
  }
  EXPECT_EQ(readAll(f.path), before);
  auto found = listCheckpoints(f.dir);
  ASSERT_EQ(found.size(), 1u);
}

} // namespace
} // namespace dp::rt
