// Tests of checkpoint files on the tiny plan: what is written reads back exactly (tensors,
// position, epochs), every corruption of a file is refused with its problem named (bad magic,
// another version, truncation at every length, a flipped bit anywhere), a checkpoint of another
// model is refused naming the first difference, a hostile file behind a valid checksum (a step
// or epoch count of 2^63 - 1, a NaN scale, more step losses than steps) is refused naming the
// field, the directory is listed, pruned of this run's older checkpoints only (never a file
// that is not the run's, whatever its step), and locked to one run.
#include "runtime/train/Checkpoint.h"

#include "ErrorMatchers.h"
#include "dprun/TinyPlan.h"
#include "runtime/base/Files.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

namespace dp::rt {
namespace {

/// A fresh directory under the test's temporary directory.
/// The folders tempDir() made, removed when the test process exits.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    for (const std::string &dir : dirs)
      std::system(("rm -rf '" + dir + "'").c_str());
  }
};

std::string tempDir(const std::string &name) {
  static TempDirs made;
  const char *base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/dp-ckpt-" + name + "-" +
                    std::to_string(::getpid());
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(::mkdir(dir.c_str(), 0777), 0);
  made.dirs.push_back(dir);
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
  meta.threads = 3;
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
  e.valLoss = 0.4375;
  e.valAccuracy = 0.875;
  meta.epochs = {e, e};
  meta.epochs[1].epoch = 2;
  Evaluation v;
  v.set = Evaluation::Set::Validation;
  v.epoch = 2;
  v.step = 9;
  v.stats = {64, 0.5625, 0.75};
  v.epochEnd = false;
  meta.validations = {v, v};
  meta.validations[1].step = 14;
  meta.validations[1].epochEnd = true;
  meta.validations[1].stats.loss = std::nan("");
  return meta;
}

/// The weights of `program`'s device 0, as --restore-best keeps them.
std::vector<ParamsEntry> weightsOf(Program &program) {
  std::vector<ParamsEntry> out;
  for (const ParamDesc &p : program.plan().params) {
    const BufferDesc &b = program.buffer(p.buffer);
    if (b.device != 0 || p.kind != ParamKind::Weight)
      continue;
    ParamsEntry &e = out.emplace_back();
    e.name = p.name;
    e.shape = b.shape;
    e.values.resize(size_t(b.numel));
    program.read(p.buffer, e.values.data());
  }
  return out;
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
  EXPECT_EQ(c.meta.threads, 3);
  // A resume takes the thread count from the newest checkpoint before reading it whole.
  EXPECT_EQ(peekCheckpointThreads(f.dir), 3);
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
  EXPECT_EQ(c.meta.epochs[1].valLoss, 0.4375);
  EXPECT_EQ(c.meta.epochs[1].valAccuracy, 0.875);
  ASSERT_EQ(c.meta.validations.size(), 2u);
  EXPECT_EQ(c.meta.validations[0].step, 9);
  EXPECT_EQ(c.meta.validations[0].epoch, 2);
  EXPECT_EQ(c.meta.validations[0].stats.samples, 64);
  EXPECT_EQ(c.meta.validations[0].stats.accuracy, 0.75);
  EXPECT_FALSE(c.meta.validations[0].epochEnd);
  EXPECT_TRUE(c.meta.validations[1].epochEnd);
  EXPECT_TRUE(std::isnan(c.meta.validations[1].stats.loss));
  EXPECT_EQ(c.meta.best, -1);

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
  newer[8] = 5;
  EXPECT_DP_ERROR(Checkpoint::fromBytes(newer, "n.dpk"), ErrorKind::Checkpoint,
                  "checkpoint format version 5, newer than this dprun's (1 to 4)");
}

TEST(Checkpoint, KeepsTheBestWeightsBesideTheParameters) {
  // --restore-best: the weights of the best validation go with the run's own parameters.
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(7);
  std::unique_ptr<Program> bestProgram = test::tinyPlan(8, 4, 3).load();
  bestProgram->initParams(8);
  const std::vector<ParamsEntry> best = weightsOf(*bestProgram);
  ASSERT_FALSE(best.empty());
  CheckpointMeta meta = sampleMeta();
  meta.best = 1;
  meta.bestMonitor = "val_accuracy";
  const std::string path = tempDir("best") + "/" + checkpointFileName(17);
  writeCheckpoint(*program, meta, path, &best);
  const Plan &plan = program->plan();
  Checkpoint c = Checkpoint::read(path, checkpointSizeLimit(plan));
  EXPECT_EQ(c.meta.best, 1);
  EXPECT_EQ(c.meta.bestMonitor, "val_accuracy");
  EXPECT_NO_THROW(checkCheckpointFits(c, plan, path));
  // The best copies read back as written; loading sets the parameters, not the best copies.
  const std::vector<ParamsEntry> read = checkpointBestWeights(c, plan);
  ASSERT_EQ(read.size(), best.size());
  for (size_t i = 0; i < best.size(); ++i) {
    EXPECT_EQ(read[i].name, best[i].name);
    EXPECT_EQ(read[i].shape, best[i].shape);
    EXPECT_EQ(read[i].values, best[i].values) << best[i].name;
  }
  std::unique_ptr<Program> other = test::tinyPlan(8, 4, 3).load();
  other->initParams(99);
  loadCheckpoint(*other, c);
  EXPECT_EQ(weightsOf(*other)[0].values, weightsOf(*program)[0].values);
  EXPECT_NE(weightsOf(*other)[0].values, best[0].values);
  // A checkpoint without them has none.
  Checkpoint plain = c;
  plain.tensors.erase(std::remove_if(plain.tensors.begin(), plain.tensors.end(),
                                     [](const CheckpointTensor &t) { return t.best; }),
                      plain.tensors.end());
  EXPECT_TRUE(checkpointBestWeights(plain, plan).empty());
  // Best copies of only some weights, or of a tensor that is no weight, do not fit.
  Checkpoint some = c;
  some.tensors.pop_back();
  ASSERT_TRUE(c.tensors.back().best);
  EXPECT_DP_ERROR(checkCheckpointFits(some, plan, "c.dpk"), ErrorKind::Checkpoint,
                  "its best weights lack '" + c.tensors.back().name + "'");
  Checkpoint stray = c;
  stray.tensors.push_back(c.tensors.back());
  stray.tensors.back().name = "dense/kernel/m";
  EXPECT_DP_ERROR(checkCheckpointFits(stray, plan, "c.dpk"), ErrorKind::Checkpoint,
                  "it holds a best copy of 'dense/kernel/m'");
  // Hostile records behind a valid checksum: a best that is no validation, an unknown figure,
  // validations out of order.
  auto readWith = [&](auto change) {
    CheckpointMeta m = meta;
    change(m);
    writeCheckpoint(*program, m, path, &best);
    return Checkpoint::read(path, checkpointSizeLimit(plan));
  };
  EXPECT_DP_ERROR(readWith([](CheckpointMeta &m) { m.best = 5; }), ErrorKind::Checkpoint,
                  "the best weights are those of validation 6 of 2");
  EXPECT_DP_ERROR(readWith([](CheckpointMeta &m) { m.bestMonitor = "test_loss"; }),
                  ErrorKind::Checkpoint, "the best validation was chosen by 'test_loss'");
  EXPECT_DP_ERROR(
      readWith([](CheckpointMeta &m) { m.validations[1].step = 3; }), ErrorKind::Checkpoint,
      "validation 2 is after step 3 (the validations are in order, none after step 17)");
  EXPECT_DP_ERROR(readWith([](CheckpointMeta &m) { m.validations[1].step = 18; }),
                  ErrorKind::Checkpoint, "validation 2 is after step 18");
  EXPECT_DP_ERROR(readWith([](CheckpointMeta &m) { m.validations[0].epoch = 4; }),
                  ErrorKind::Checkpoint,
                  "validation 1 is in epoch 4 (of 2 finished and one begun)");
  // The writer keeps the weights and their record together.
  meta.best = -1;
  EXPECT_DP_ERROR(writeCheckpoint(*program, meta, path, &best), ErrorKind::Runtime,
                  "best weights without their validation");
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

/// The sample checkpoint with `change` applied to its records, written (so with a valid
/// checksum) and read back: what a hostile file that verifies leads to.
template <typename Change> void readChanged(Change change) {
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(7);
  CheckpointMeta meta = sampleMeta();
  change(meta);
  const std::string dir = tempDir("hostile");
  const std::string path = dir + "/" + checkpointFileName(17);
  writeCheckpoint(*program, meta, path);
  const Checkpoint c = Checkpoint::read(path, 1 << 20);
  checkCheckpointPosition(c.meta, 64, "c.dpk");
}

TEST(Checkpoint, RefusesHostileFieldsBehindAValidChecksum) {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  const double nan = std::nan("");
  EXPECT_NO_THROW(readChanged([](CheckpointMeta &) {}));
  // The step a name holds, the epochs the records hold (a run counting on from there would
  // overflow, or never reach its --epochs).
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.step = huge; }),
                  ErrorKind::Checkpoint,
                  "not a valid checkpoint: step 9223372036854775807 is past 999999999999, the "
                  "last step a checkpoint's name holds");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.epochsDone = huge; }),
                  ErrorKind::Checkpoint,
                  "9223372036854775807 finished epochs, but 2 epoch records");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs.push_back(m.epochs[1]); }),
                  ErrorKind::Checkpoint, "2 finished epochs, but 3 epoch records");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[1].epoch = huge; }),
                  ErrorKind::Checkpoint, "the record of epoch 2 is numbered 9223372036854775807");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[0].steps = 0; }),
                  ErrorKind::Checkpoint, "the record of epoch 1 has 0 steps of 56 samples");
  // Record counts: more step losses than steps (the counts themselves fit in the file).
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) {
                    m.position.epochStepLosses.assign(100000, 1.0f);
                  }),
                  ErrorKind::Checkpoint, "100004 step losses recorded for step 17");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[1].stepLosses.assign(20, 1); }),
                  ErrorKind::Checkpoint, "25 step losses recorded for step 17");
  // The place in the epoch.
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.samplesInEpoch = huge; }),
                  ErrorKind::Checkpoint,
                  "3 steps of the unfinished epoch in batches of 8 do not make its "
                  "9223372036854775807 samples");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) {
                    m.position.stepsInEpoch = huge / 8;
                    m.position.samplesInEpoch = huge / 8 * 8;
                  }),
                  ErrorKind::Checkpoint,
                  "c.dpk: its unfinished epoch is at step 1152921504606846975 of an epoch of 8 "
                  "steps of 8 samples (this run's training data has 64 samples an epoch)");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.replicas = 100; }),
                  ErrorKind::Checkpoint,
                  "a layout of 3 process(es) x 100 replica(s) cannot share a global batch of 8");
  // Floats: finite, and a learning-rate scale in (0, 1].
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.plateau.scale = nan; }),
                  ErrorKind::Checkpoint,
                  "the plateau schedule's learning-rate scale is nan (not in (0, 1])");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.plateau.scale = 0; }),
                  ErrorKind::Checkpoint, "learning-rate scale is 0 (not in (0, 1])");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.earlyStop.scale = 2; }),
                  ErrorKind::Checkpoint, "early stopping's learning-rate scale is 2");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) {
                    m.position.earlyStop.best = std::numeric_limits<double>::infinity();
                  }),
                  ErrorKind::Checkpoint, "early stopping's best test loss is inf (not finite)");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.plateau.badEpochs = huge; }),
                  ErrorKind::Checkpoint,
                  "the plateau schedule's count of epochs without improvement is "
                  "9223372036854775807, more than the 2 finished");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.epochLossSum = nan; }),
                  ErrorKind::Checkpoint, "the unfinished epoch's loss sum is nan");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.epochCorrect = -1; }),
                  ErrorKind::Checkpoint, "the unfinished epoch's correct count is -1");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.epochSeconds = nan; }),
                  ErrorKind::Checkpoint, "the unfinished epoch's seconds are nan");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[0].samplesPerSec = nan; }),
                  ErrorKind::Checkpoint, "the record of epoch 1 has 1.25 seconds and nan samples");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[0].lrScale = -1; }),
                  ErrorKind::Checkpoint, "the record of epoch 1 has a learning-rate factor of -1");
  // What a finished epoch's loss and accuracy are is only reported: NaN stays allowed (a
  // figure not measured, a diverged run).
  EXPECT_NO_THROW(readChanged([&](CheckpointMeta &m) { m.epochs[0].loss = nan; }));
  // Against the run's data (64 samples an epoch): the step an epoch count allows, the batch.
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.position.step = kMaxCheckpointStep; }),
                  ErrorKind::Checkpoint,
                  "c.dpk: step 999999999999 is past the 3 x 64 steps its 2 finished epoch(s) and "
                  "the one begun can have taken, at most one step a sample (this run's training "
                  "data has 64 samples an epoch)");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) {
                    m.globalBatch = 128;
                    m.position.samplesInEpoch = 3 * 128;
                  }),
                  ErrorKind::Checkpoint, "its global batch of 128 is more than an epoch's samples");
  EXPECT_DP_ERROR(readChanged([&](CheckpointMeta &m) { m.epochs[0].samples = 6400; }),
                  ErrorKind::Checkpoint,
                  "the record of epoch 1 has 7 steps of 6400 samples, more than an epoch holds");
}

TEST(Checkpoint, RefusesAHugeRecordCountBehindAValidChecksum) {
  Fixture f = written("count");
  std::string bytes = readAll(f.path);
  // The unfinished epoch's step losses: their u32 count follows the fixed records and the
  // model's name ("tiny").
  const size_t at = kCheckpointHeaderBytes + 4 * 8 + 8 + 8 + 8 + 4 + 4 + 3 * 8 + 2 * 28 + 4 + 4;
  ASSERT_EQ(bytes.substr(at - 4, 4), "tiny");
  ASSERT_EQ(static_cast<uint8_t>(bytes[at]), 3);
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = '\xff';
  // From version 3 the CRC-32 covers the header's version bytes, then the payload.
  const uLong start =
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef *>(bytes.data()) + 8, 4);
  const uint32_t crc = crc32(start, reinterpret_cast<const Bytef *>(bytes.data()) + 64,
                             static_cast<uInt>(bytes.size() - 64));
  for (int i = 0; i < 4; ++i)
    bytes[24 + i] = static_cast<char>(crc >> (8 * i));
  EXPECT_DP_ERROR(Checkpoint::fromBytes(bytes, "c.dpk"), ErrorKind::Checkpoint,
                  "4294967295 step losses cannot fit");
}

TEST(Checkpoint, DirectoryListsNewestFirst) {
  const std::string dir = tempDir("dir");
  EXPECT_TRUE(listCheckpoints(dir + "/missing").empty());
  for (int64_t step : {5, 100, 20, 7})
    writeFileAtomically(dir + "/" + checkpointFileName(step), "x");
  writeFileAtomically(dir + "/ckpt-12.dpk", "not a checkpoint name");
  writeFileAtomically(dir + "/notes.txt", "kept");
  auto found = listCheckpoints(dir);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0].first, 100);
  EXPECT_EQ(found[0].second, dir + "/ckpt-000000000100.dpk");
  EXPECT_EQ(found[3].first, 5);
}

bool exists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }

TEST(Checkpoint, PruningRemovesOnlyThisRunsOlderCheckpoints) {
  const std::string dir = tempDir("prune");
  std::unique_ptr<Program> program = test::tinyPlan(8, 4, 3).load();
  program->initParams(7);
  const Plan &plan = program->plan();
  CheckpointMeta mine = sampleMeta();
  mine.model = plan.model;
  auto path = [&](int64_t step) { return dir + "/" + checkpointFileName(step); };
  auto write = [&](Program &p, const CheckpointMeta &meta, int64_t step) {
    writeCheckpoint(p, meta, path(step));
  };
  for (int64_t step : {5, 7, 20, 100})
    write(*program, mine, step);
  // Higher steps than this run's, none of them its own: a file that is no checkpoint, a
  // checkpoint of this run cut short, another model's (by name, and of the same name with
  // other shapes), another run's of the model (another seed), and one whose place in an
  // epoch is past this run's data.
  writeFileAtomically(path(999999999999), "not a checkpoint");
  writeFileAtomically(path(500), readAll(path(100)).substr(0, 300));
  std::unique_ptr<Program> wider = test::tinyPlan(8, 4, 5).load();
  wider->initParams(7);
  CheckpointMeta other = mine;
  other.model = "another";
  write(*wider, other, 400);
  write(*wider, mine, 300);
  other = mine;
  other.seed = 43;
  write(*program, other, 200);
  other = mine;
  other.position.stepsInEpoch = 9;
  other.position.samplesInEpoch = 72;
  write(*program, other, 150);
  // Temporary files: of a writer that died (no process has pid 2^22 + 1 here), and of a live
  // one (the parent of this process).
  const std::string dead = path(600) + ".tmp.4194305";
  const std::string live = path(700) + ".tmp." + std::to_string(::getppid());
  writeFileAtomically(dead, "partial");
  writeFileAtomically(live, "partial");

  CheckpointPruner pruner(dir, 2, plan, mine.seed, 64);
  std::vector<std::string> warnings = pruner.prune(path(100));
  EXPECT_TRUE(exists(path(100)));
  EXPECT_TRUE(exists(path(20)));
  EXPECT_FALSE(exists(path(7)));
  EXPECT_FALSE(exists(path(5)));
  for (int64_t step : {kMaxCheckpointStep, int64_t(500), int64_t(400), int64_t(300), int64_t(200),
                       int64_t(150)})
    EXPECT_TRUE(exists(path(step))) << "step " << step << " is not this run's but was removed";
  EXPECT_FALSE(exists(dead)) << "a dead writer's temporary file stays";
  EXPECT_TRUE(exists(live)) << "a live writer's temporary file was removed";
  // One warning for each file left alone, saying why.
  ASSERT_EQ(warnings.size(), 6u);
  auto warned = [&](int64_t step, const std::string &why) {
    for (const std::string &w : warnings)
      if (w.find(path(step) + " alone, as it is not this run's: " + why) != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(warned(999999999999, "not a dp checkpoint")) << warnings[0];
  EXPECT_TRUE(warned(500, "truncated or padded"));
  EXPECT_TRUE(warned(400, "a checkpoint of model another, this run's is test"));
  EXPECT_TRUE(warned(300, "does not fit the plan's model test"));
  EXPECT_TRUE(warned(200, "a checkpoint of another run of the model (seed 43, this run's is 42)"));
  EXPECT_TRUE(warned(150, "its unfinished epoch is at step 9 of an epoch of 8 steps"));

  // The next write: the files left alone are not named again, and the newest two of the
  // run's are kept, here one of an earlier run of the model with the same seed (the same
  // lineage: --resume would take it) and the one just written.
  write(*program, mine, 250);
  write(*program, mine, 110);
  warnings = pruner.prune(path(110));
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_TRUE(exists(path(250)));
  EXPECT_TRUE(exists(path(110)));
  EXPECT_FALSE(exists(path(100)));
  EXPECT_FALSE(exists(path(20)));
  // A file of the run replaced since it was judged is judged again: cut short, it stays.
  writeFileAtomically(path(110), readAll(path(250)).substr(0, 200));
  write(*program, mine, 120);
  write(*program, mine, 130);
  warnings = pruner.prune(path(130));
  EXPECT_TRUE(exists(path(250)));
  EXPECT_TRUE(exists(path(130)));
  EXPECT_FALSE(exists(path(120)));
  EXPECT_TRUE(exists(path(110)));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path(110) + " alone"), std::string::npos) << warnings[0];
  // With --checkpoint-keep 1 the newest file the run wrote survives beside a newer one.
  CheckpointPruner keepOne(dir, 1, plan, mine.seed, 64);
  warnings = keepOne.prune(path(130));
  EXPECT_TRUE(exists(path(250)));
  EXPECT_TRUE(exists(path(130)));
  EXPECT_EQ(warnings.size(), 7u);
}

TEST(Checkpoint, ADirectoryIsLockedToOneRun) {
  const std::string dir = tempDir("lock");
  {
    CheckpointDirLock first(dir);
    EXPECT_EQ(first.warning(), "");
    EXPECT_DP_ERROR(CheckpointDirLock second(dir), ErrorKind::Usage,
                    "--checkpoint-dir " + dir + ": in use by another run (pid " +
                        std::to_string(::getpid()) + " on ");
    EXPECT_DP_ERROR(CheckpointDirLock second(dir), ErrorKind::Usage,
                    "which holds the lock " + dir + "/.lock; two runs must not share");
  }
  // Released with its holder (a process that ends, however it ends, closes it).
  EXPECT_NO_THROW(CheckpointDirLock again(dir));
  EXPECT_TRUE(listCheckpoints(dir).empty());
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
