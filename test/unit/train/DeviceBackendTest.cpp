// The training loop on a device the host cannot address: a test backend registered for another
// device kind (as the CUDA backend will be) whose memory only copies reach. The trainer gathers
// batches into staging memory and copies them, and reads results through copies; everything it
// computes must be what the CPU backend computes, bit for bit, because the kernels are the same.
#include "dprun/TinyPlan.h"
#include "runtime/train/Trainer.h"
#include "test/unit/TestBackend.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dp::rt {
namespace {

/// `n` samples of 2x2 pixels in 3 classes; the pixel of the sample's class is bright.
Dataset makeData(int64_t n) {
  std::vector<uint8_t> images, labels;
  uint32_t noise = 7;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < 4; ++p) {
      noise = noise * 1103515245u + 12345u;
      images.push_back(static_cast<uint8_t>(p == i % 3 ? 170 + (noise >> 26) : noise >> 26));
    }
    labels.push_back(static_cast<uint8_t>(i % 3));
  }
  return Dataset::fromBytes(images, labels, 2, 2, 3, "synthetic");
}

struct Trained {
  std::vector<double> losses;
  EvalStats test;
  std::vector<float> weights;
};

Trained train(std::unique_ptr<Program> program) {
  Dataset data = makeData(40), test = makeData(13);
  std::ostringstream out;
  Trained run;
  program->initParams(3);
  {
    Trainer trainer(*program, "tiny.dpx");
    Batcher batcher(data, 8, BatchOrder::Shuffled, Remainder::Drop, 3);
    for (int epoch = 1; epoch <= 3; ++epoch)
      run.losses.push_back(trainer.trainEpoch(batcher, epoch, 3, 0).loss);
    run.test = trainer.evaluate(test);
  }
  const uint32_t w = program->plan().params[0].buffer;
  run.weights.resize(program->buffer(w).numel);
  program->read(w, run.weights.data());
  return run;
}

TEST(DeviceBackend, TrainingOnAnotherBackendMatchesTheCpu) {
  testing::PlanBuilder cpuPlan = test::tinyPlan(8, 4, 3);
  Trained cpu = train(cpuPlan.load());

  testing::PlanBuilder devicePlan = test::tinyPlan(8, 4, 3);
  devicePlan.deviceKind(static_cast<uint8_t>(DeviceKind::Cuda));
  testing::TestBackend backend(DeviceKind::Cuda, /*hostAccessible=*/false);
  std::unique_ptr<Program> program = Program::load(devicePlan.plan(), &backend);
  ASSERT_FALSE(program->device(0).hostAccessible());
  Trained device = train(std::move(program));

  EXPECT_EQ(device.losses, cpu.losses);
  EXPECT_EQ(device.test.samples, 13);
  EXPECT_EQ(device.test.loss, cpu.test.loss);
  EXPECT_EQ(device.test.accuracy, cpu.test.accuracy);
  EXPECT_EQ(device.weights, cpu.weights);
  EXPECT_LT(device.losses.back(), device.losses.front()) << "the model did not learn";
  EXPECT_GT(backend.runs(0), 0);
}

} // namespace
} // namespace dp::rt
