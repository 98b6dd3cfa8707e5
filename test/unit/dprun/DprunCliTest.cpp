// Runs the dprun binary as a user would and checks exit codes and messages: command-line
// errors (2), plan errors (3), data errors (4), --inspect, and short training runs on a tiny
// hand-built plan and synthetic data, including the metrics file.
#include "dprun/TinyPlan.h"
#include "runtime/data/Idx.h"
#include "runtime/format/PlanFile.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dp::rt {
namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string quote(const std::string &arg) {
  std::string quoted = "'";
  for (char c : arg)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

class Dprun : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "dprun-cli-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    ASSERT_NE(mkdtemp(name.data()), nullptr);
    dir_ = name.data();
  }
  void TearDown() override { std::system(("rm -rf " + quote(dir_)).c_str()); }

  std::string file(const std::string &name) const { return dir_ + "/" + name; }

  /// Runs dprun with `args`; stdout and stderr are captured separately.
  Result run(const std::vector<std::string> &args) {
    std::string command = quote(DPRUN_PATH);
    for (const std::string &arg : args)
      command += " " + quote(arg);
    command += " >" + quote(file("stdout")) + " 2>" + quote(file("stderr")) + " </dev/null";
    int status = std::system(command.c_str());
    Result result;
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = readFile(file("stdout"));
    result.err = readFile(file("stderr"));
    return result;
  }

  /// Writes the tiny plan to PLAN.dpx and returns its path.
  std::string writePlan(int64_t batch = 8, int64_t pixels = 4, int64_t classes = 3,
                        bool trainCorrect = true) {
    std::string path = file("tiny.dpx");
    writeFile(path, test::tinyPlanBytes(batch, pixels, classes, 0.5f, trainCorrect));
    return path;
  }

  /// Writes a separable synthetic data set to a `data` subdirectory: sample i has class
  /// i % classes, and the pixel of its class is bright while the others are dim.
  std::string writeData(uint32_t trainSamples = 43, uint32_t testSamples = 13, uint32_t side = 2,
                        uint32_t classes = 3, uint32_t maxLabel = 0) {
    std::string data = file("data");
    EXPECT_EQ(std::system(("mkdir -p " + quote(data)).c_str()), 0);
    uint32_t noise = 12345;
    auto split = [&](const std::string &prefix, uint32_t n) {
      std::vector<uint8_t> images, labels;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t label = i % classes;
        for (uint32_t p = 0; p < side * side; ++p) {
          noise = noise * 1103515245u + 12345u;
          images.push_back(static_cast<uint8_t>(p == label ? 200 + (noise >> 27) : (noise >> 26)));
        }
        labels.push_back(static_cast<uint8_t>(i == 0 && maxLabel ? maxLabel : label));
      }
      writeIdx(data + "/" + prefix + "-images-idx3-ubyte.gz", {n, side, side}, images, true);
      writeIdx(data + "/" + prefix + "-labels-idx1-ubyte.gz", {n}, labels, true);
    };
    split("train", trainSamples);
    split("t10k", testSamples);
    return data;
  }

  std::string dir_;
};

/// Every number that follows `"key": ` in a JSON text, in order (null reads as NaN).
std::vector<double> jsonValues(const std::string &json, const std::string &key) {
  std::vector<double> values;
  std::string needle = "\"" + key + "\": ";
  for (size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) {
    const char *start = json.c_str() + at + needle.size();
    values.push_back(std::strncmp(start, "null", 4) == 0 ? std::nan("")
                                                         : std::strtod(start, nullptr));
  }
  return values;
}

TEST_F(Dprun, NoArgumentsPrintsUsage) {
  Result r = run({});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("usage: dprun PLAN --data DIR"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(Dprun, HelpAndVersion) {
  Result help = run({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--steps-per-epoch N"), std::string::npos);
  EXPECT_NE(help.out.find("skipped"), std::string::npos)
      << "help must say the remainder is dropped";
  Result version = run({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("dprun ", 0), 0u) << version.out;
}

TEST_F(Dprun, CommandLineErrors) {
  std::string plan = writePlan();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{plan, "--data", "d", "--frobnicate"}, "unknown option '--frobnicate'"},
      {{plan, "--data"}, "--data needs a value"},
      {{plan, "--data", "d", "--epochs"}, "--epochs needs a value"},
      {{plan, "--data", "d", "--epochs", "two"},
       "--epochs expects a non-negative integer, got 'two'"},
      {{plan, "--data", "d", "--epochs", "0"}, "--epochs expects a positive integer"},
      {{plan, "--data", "d", "--epochs=-1"}, "--epochs expects a non-negative integer, got '-1'"},
      {{plan, "--data", "d", "--seed", "1x"}, "--seed expects a non-negative integer"},
      {{plan, "--inspect=yes"}, "--inspect takes no value"},
      {{plan}, "missing --data DIR"},
      {{"--data", "d"}, "missing the plan file"},
      {{plan, plan, "--inspect"}, "unexpected argument"},
      {{plan, "--data", "d", "--metrics", file("no/such/dir/m.json")}, "does not exist"},
      // Bounded where they are parsed: the run's sums of them (deadlines in nanoseconds,
      // epochs x steps) cannot overflow. 9223372036 s overflowed the deadline: a false
      // timeout at once, or a hang.
      {{plan, "--data", "d", "--collective-timeout", "9223372036"},
       "--collective-timeout expects at most 1000000 seconds"},
      {{plan, "--data", "d", "--epochs", "9223372036854775807"},
       "--epochs expects at most 1000000000"},
      {{plan, "--data", "d", "--steps-per-epoch", "1000000001"},
       "--steps-per-epoch expects at most"},
      {{plan, "--data", "d", "--checkpoint-dir", file("ck"), "--checkpoint-every", "99999999999"},
       "--checkpoint-every expects at most"},
      {{plan, "--data", "d", "--early-stop", "4000000000"}, "--early-stop expects at most"},
      {{plan, "--data", "d", "--validation-split", "nan"},
       "--validation-split expects a fraction between 0 and 1"},
      {{plan, "--data", "d", "--validation-split", "0"},
       "--validation-split expects a fraction between 0 and 1"},
      {{plan, "--data", "d", "--validation-split", "0.1x"},
       "--validation-split expects a fraction between 0 and 1"},
      {{plan, "--data", "d", "--monitor", "loss"}, "--monitor"},
      {{plan, "--data", "d", "--restore-best"}, "--restore-best needs a validation set"},
      {{plan, "--data", "d", "--monitor", "val_accuracy"}, "--monitor needs a validation set"},
      {{plan, "--data", "d", "--eval-every", "0"}, "--eval-every expects a positive integer"},
      {{plan, "--data", "d", "--log-every", "5"},
       "--log-every needs --log FILE or --tensorboard DIR"},
      {{plan, "--data", "d", "--predict", "--predictions", file("p.csv"), "--validation-split",
        "0.1"},
       "--predict trains nothing: --validation-split does not apply"},
      // Thousands of threads died inside OpenMP's runtime.
      {{plan, "--data", "d", "--threads", "4096"}, "--threads 4096: this process may run on"},
  };
  for (const Case &c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "stderr: " << r.err;
  }
}

TEST_F(Dprun, MissingPlanFileIsNamed) {
  std::string missing = file("absent.dpx");
  for (const std::vector<std::string> &args :
       {std::vector<std::string>{missing, "--inspect"}, {missing, "--data", file("nowhere")}}) {
    Result r = run(args);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  }
}

TEST_F(Dprun, PlansThatAreNotRegularFilesAreNamedNotRead) {
  // A FIFO would block the read for ever, /dev/zero never end, a directory fail obscurely.
  std::string fifo = file("plan.fifo");
  ASSERT_EQ(std::system(("mkfifo " + quote(fifo)).c_str()), 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, "is a FIFO, not a plan file"},
      {"/dev/zero", "is a character device, not a plan file"},
      {dir_, "is a directory, not a plan file"},
  };
  for (const auto &[path, what] : cases) {
    Result r = run({path, "--inspect"});
    EXPECT_EQ(r.code, 3) << path << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": " + what), std::string::npos) << r.err;
  }
}

TEST_F(Dprun, OutputsThatAreNotRegularFilesAreRefusedBeforeTraining) {
  // Each is written atomically (a new file renamed over it) after training: a FIFO or a
  // device was refused only then, and the run's results were lost.
  std::string plan = writePlan();
  std::string fifo = file("out.fifo");
  ASSERT_EQ(std::system(("mkfifo " + quote(fifo)).c_str()), 0);
  for (const char *option : {"--metrics", "--save-params", "--trace", "--profile"})
    for (const std::pair<std::string, std::string> &target :
         {std::pair<std::string, std::string>{fifo, "is a FIFO"},
          {"/dev/null", "is a character device"}}) {
      Result r = run({plan, "--data", file("no-data-needed"), option, target.first});
      EXPECT_EQ(r.code, 2) << option << " " << target.first << ": " << r.err;
      EXPECT_NE(r.err.find(target.first + ": " + target.second +
                           ", not a regular file that may be replaced"),
                std::string::npos)
          << r.err;
    }
  // A checkpoint folder that is a symbolic link to itself: named for what it is.
  std::string loop = file("loop");
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  Result r = run({plan, "--data", file("no-data-needed"), "--checkpoint-dir", loop});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--checkpoint-dir " + loop + ": cannot use it: Too many levels of "
                       "symbolic links"),
            std::string::npos)
      << r.err;
}

TEST_F(Dprun, DataFilesThatAreNotRegularFilesAreNamed) {
  // A FIFO named like a data file is found and refused for what it is, not reported missing.
  std::string plan = writePlan();
  std::string data = writeData();
  std::string images = data + "/train-images-idx3-ubyte.gz";
  ASSERT_EQ(std::remove(images.c_str()), 0);
  ASSERT_EQ(std::system(("mkfifo " + quote(images)).c_str()), 0);
  Result r = run({plan, "--data", data});
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find(images + ": is a FIFO, not a data file"), std::string::npos) << r.err;
}

TEST_F(Dprun, CorruptPlansAreRejected) {
  std::string good = test::tinyPlanBytes(8, 4, 3);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  const std::pair<std::string, std::string> corruptions[] = {
      {"garbage", "this is not a plan at all, just some text"},
      {"empty", ""},
      {"truncated", good.substr(0, good.size() - 10)},
      {"flipped", flipped},
  };
  for (const auto &[name, bytes] : corruptions) {
    std::string path = file(name + ".dpx");
    writeFile(path, bytes);
    Result r = run({path, "--inspect"});
    EXPECT_EQ(r.code, 3) << name << ": " << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_EQ(run({path, "--data", writeData()}).code, 3) << name;
  }
}

TEST_F(Dprun, InspectRefusesWhatBuildingTheKernelsRefuses) {
  // A well-formed file whose kernels break the kernel contract: --inspect used to print its
  // summary and exit 0, and only a training run refused it.
  testing::PlanBuilder p = test::tinyPlan(8, 4, 3);
  const uint32_t x = p.buffer({8, 5}), w = p.buffer({4, 3}), y = p.buffer({8, 3});
  p.kernel(StepKind::Eval, KernelKind::Dense, {x, w}, {y}).at("bad.py:9");
  std::vector<uint8_t> bytes = p.fileBytes();
  std::string path = file("contract.dpx");
  writeFile(path, std::string(bytes.begin(), bytes.end()));
  Result r = run({path, "--inspect"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("bad.py:9"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "a summary was printed for a plan dprun refuses";
}

TEST_F(Dprun, InspectRefusesWhatARunRefuses) {
  // Well-formed plans whose kernels keep the contract but that a run refused when it built
  // the training loop: --inspect used to accept them. Every path now refuses each one, before
  // anything runs, with the same message naming the file.
  struct Case {
    const char *name, *message;
    testing::PlanBuilder plan;
  };
  testing::PlanBuilder batch = test::tinyPlan(8, 4, 3);
  batch.setBatch(16);
  testing::PlanBuilder shards = test::tinyPlan(8, 4, 3);
  shards.setProcesses(3);
  Case cases[] = {
      {"batch", "samples input 'image' is f32[8,4], expected f32 or i32[16, ...] (batch 16)",
       batch},
      {"shards", "global batch 8 is not a multiple of 1 x 3 replicas", shards},
  };
  const std::string data = writeData();
  for (Case &c : cases) {
    std::vector<uint8_t> bytes = c.plan.fileBytes();
    const std::string path = file(std::string(c.name) + ".dpx");
    writeFile(path, std::string(bytes.begin(), bytes.end()));
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{path, "--inspect"}, {path, "--check-gradients"},
          {path, "--data", data, "--quiet"}}) {
      Result r = run(args);
      EXPECT_EQ(r.code, 3) << c.name << " " << args[1] << ": " << r.err;
      EXPECT_NE(r.err.find(path + ": " + c.message), std::string::npos)
          << c.name << " " << args[1] << ": " << r.err;
      EXPECT_EQ(r.out, "") << c.name << " " << args[1];
    }
  }
}

/// A plan from fuzz/regressions/plan/: the fuzzer's mode byte taken off, and where it is odd the
/// header's version, payload size and CRC-32 rewritten to match, as the fuzzer does.
std::string regressionPlan(const std::string &name) {
  std::string bytes = readFile(std::string(DP_PLAN_REGRESSIONS) + "/" + name);
  if (bytes.size() <= kPlanHeaderBytes)
    return {};
  const bool fixUp = bytes[0] & 1;
  bytes.erase(0, 1);
  auto put = [&](size_t at, uint64_t value, int width) {
    for (int i = 0; i < width; ++i)
      bytes[at + i] = static_cast<char>(value >> (8 * i));
  };
  if (fixUp) {
    const size_t payload = bytes.size() - kPlanHeaderBytes;
    const auto *start = reinterpret_cast<const Bytef *>(bytes.data() + kPlanHeaderBytes);
    put(8, kFormatVersion, 4);
    put(16, payload, 8);
    put(24, crc32(crc32(0L, Z_NULL, 0), start, static_cast<uInt>(payload)), 4);
  }
  return bytes;
}

TEST_F(Dprun, PlansThatBrokeTheGradientCheckAreRefusedByEveryPath) {
  // Mutated MLP plans that --inspect accepted. A run refused the first; --check-gradients,
  // which checked nothing, crashed on it (SIGSEGV: it read the eval step's 'loss', re-pointed
  // at a 100 x 784 buffer, into one float, on the stream's thread). In the others a parameter
  // and its gradient have different sizes: a run trained them (the gradient records are the
  // check's only), and the check read past the gradient (SIGSEGV for the third: 78,400
  // elements of a 10,000-element one). Each path now refuses all three.
  const std::pair<const char *, const char *> plans[] = {
      {"check-gradients-eval-loss-not-scalar",
       "the eval step's loss output 'loss' is f32[100,784], expected an f32 scalar"},
      {"check-gradients-parameter-larger-than-its-gradient",
       "param 'dense2.bias' (f32[784,100]) has gradient buffer 7 of f32[10]"},
      {"check-gradients-gradient-smaller-than-its-parameter",
       "param 'dense1.kernel' (f32[784,100]) has gradient buffer 16 of f32[100,100]"},
  };
  const std::string data = writeData();
  for (const auto &[name, message] : plans) {
    const std::string bytes = regressionPlan(name);
    ASSERT_FALSE(bytes.empty()) << name;
    const std::string path = file(std::string(name) + ".dpx");
    writeFile(path, bytes);
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{path, "--inspect"}, {path, "--check-gradients"},
          {path, "--data", data, "--quiet"}}) {
      Result r = run(args);
      EXPECT_EQ(r.code, 3) << name << " " << args[1] << ": " << r.err;
      EXPECT_NE(r.err.find(path + ": " + message), std::string::npos)
          << name << " " << args[1] << ": " << r.err;
    }
  }
}

TEST_F(Dprun, InspectSummarisesThePlan) {
  Result r = run({writePlan(), "--inspect"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char *part :
       {"model: test", "producer: PlanBuilder", "batch: 8", "classes: 3",
        "params: 2 (15 weights, trainable or not)", "dense/kernel  weight  f32[4,3]",
        "init glorot_uniform(fan_in 4, fan_out 3)", "input image (samples): buffer 4 f32[8,4]",
        "step train: 9 kernels", "step eval: 3 kernels", "sgd_update x2", "persistent"})
    EXPECT_NE(r.out.find(part), std::string::npos) << "'" << part << "' missing from:\n" << r.out;
}

TEST_F(Dprun, DataErrorsExitWith4) {
  std::string plan = writePlan();
  Result missing = run({plan, "--data", file("nowhere")});
  EXPECT_EQ(missing.code, 4) << missing.err;
  EXPECT_NE(missing.err.find(file("nowhere") + ": data directory not found"), std::string::npos);

  // 3x3 images where the plan takes 4 pixels per sample.
  std::string data = writeData(43, 13, 3);
  Result shape = run({plan, "--data", data});
  EXPECT_EQ(shape.code, 4) << shape.err;
  EXPECT_NE(shape.err.find("3x3x1 = 9 values but"), std::string::npos) << shape.err;

  // A label the 3-class model cannot predict.
  data = writeData(43, 13, 2, 3, 5);
  Result label = run({plan, "--data", data});
  EXPECT_EQ(label.code, 4) << label.err;
  EXPECT_NE(label.err.find("label 5 of sample 0 is out of range for a model with 3 classes"),
            std::string::npos)
      << label.err;

  // Fewer training samples than one batch.
  data = writeData(5, 13);
  Result small = run({plan, "--data", data});
  EXPECT_EQ(small.code, 4) << small.err;
  EXPECT_NE(small.err.find("fewer than one batch of 8"), std::string::npos) << small.err;
}

TEST_F(Dprun, TrainsAndWritesMetrics) {
  std::string plan = writePlan();
  std::string data = writeData();
  std::string metrics = file("metrics.json");
  Result r = run({plan, "--data", data, "--epochs", "4", "--seed", "3", "--metrics", metrics});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "no progress bar when not on a terminal";
  for (const char *part :
       {"epoch 1/4  loss ", "epoch 4/4  loss ", "samples/s", "5 steps per epoch",
        "the last 3 samples", "test  loss ", "(13 samples)", "phase", "evaluate", "total"})
    EXPECT_NE(r.out.find(part), std::string::npos) << "'" << part << "' missing from:\n" << r.out;

  std::string json = readFile(metrics);
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(jsonValues(json, "epoch"), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(jsonValues(json, "params"), std::vector<double>{15});
  std::vector<double> loss = jsonValues(json, "loss");
  ASSERT_EQ(loss.size(), 4u);
  EXPECT_LT(loss.back(), loss.front()) << json;
  std::vector<double> accuracy = jsonValues(json, "train_accuracy");
  ASSERT_EQ(accuracy.size(), 4u);
  EXPECT_GE(accuracy.back(), 0.0);
  EXPECT_LE(accuracy.back(), 1.0);
  ASSERT_EQ(jsonValues(json, "test_accuracy").size(), 1u);
  EXPECT_GE(jsonValues(json, "test_accuracy")[0], 0.9) << json;
  EXPECT_GT(jsonValues(json, "samples_per_sec")[0], 0.0);
  // No temporary file is left beside the metrics.
  EXPECT_NE(std::system(("ls " + quote(dir_) + " | grep -q tmp").c_str()), 0);
}

TEST_F(Dprun, SameSeedSameRun) {
  std::string plan = writePlan();
  std::string data = writeData();
  auto lossesFor = [&](const std::string &seed) {
    std::string metrics = file("m" + seed + ".json");
    Result r = run(
        {plan, "--data", data, "--epochs", "2", "--seed", seed, "--metrics", metrics, "--quiet"});
    EXPECT_EQ(r.code, 0) << r.err;
    std::string json = readFile(metrics);
    std::vector<double> values = jsonValues(json, "loss");
    for (const char *key : {"train_accuracy", "test_loss", "test_accuracy"})
      for (double v : jsonValues(json, key))
        values.push_back(v);
    return values;
  };
  std::vector<double> first = lossesFor("7");
  ASSERT_EQ(first.size(), 6u); // 2 epoch losses, 2 train accuracies, test loss and accuracy
  EXPECT_EQ(lossesFor("7"), first);
  EXPECT_NE(lossesFor("8"), first);
}

TEST_F(Dprun, QuietAndMaxSteps) {
  Result r = run({writePlan(), "--data", writeData(), "--quiet", "--steps-per-epoch", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("test  loss ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("epoch"), std::string::npos) << r.out;
  Result loud = run({writePlan(), "--data", writeData(), "--steps-per-epoch", "2"});
  EXPECT_NE(loud.out.find("2 steps per epoch"), std::string::npos) << loud.out;
}

TEST_F(Dprun, TrainAccuracyUnavailable) {
  std::string metrics = file("metrics.json");
  Result r = run(
      {writePlan(8, 4, 3, /*trainCorrect=*/false), "--data", writeData(), "--metrics", metrics});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("accuracy n/a"), std::string::npos) << r.out;
  EXPECT_NE(readFile(metrics).find("\"train_accuracy\": null"), std::string::npos);
}

} // namespace
} // namespace dp::rt
