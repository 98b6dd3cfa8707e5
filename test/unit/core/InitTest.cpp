// Parameter initialisation: reproducible per (seed, name), independent of parameter order, pinned
// to golden values so that a change of the random stream is noticed, and with the statistics of
// Keras's initialisers (bounds, means, stddevs, truncation).
#include "runtime/core/Init.h"
#include "runtime/base/Rng.h"

#include "test/unit/ErrorMatchers.h"
#include "test/unit/kernels/KernelTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace dp::rt {
namespace {

using namespace dp::rt::testing;

struct Stats {
  double mean = 0, stddev = 0, minimum = 0, maximum = 0;
};

Stats statsOf(const std::vector<float> &v) {
  Stats s;
  double sum = 0, sq = 0;
  for (float x : v)
    sum += x;
  s.mean = sum / v.size();
  for (float x : v)
    sq += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(sq / v.size());
  s.minimum = *std::min_element(v.begin(), v.end());
  s.maximum = *std::max_element(v.begin(), v.end());
  return s;
}

// Draws one param of `shape` with `init` through a loaded program.
std::vector<float> draw(InitSpec init, std::vector<int64_t> shape, uint64_t seed,
                        const std::string &name = "w") {
  PlanBuilder b(1);
  uint32_t id = b.param(name, std::move(shape), init);
  auto program = b.load();
  program->initParams(seed);
  return get(*program, id);
}

TEST(RngTest, SplitMixMatchesItsPublishedSequence) {
  uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4ULL);
}

TEST(RngTest, UniformAndNormalAreInRangeAndCentred) {
  Rng rng(1);
  double sum = 0, sumNormal = 0, sqNormal = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    double z = rng.normal();
    ASSERT_TRUE(std::isfinite(z));
    sumNormal += z;
    sqNormal += z * z;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.003);
  EXPECT_NEAR(sumNormal / n, 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(sqNormal / n), 1.0, 0.01);
}

TEST(InitTest, GoldenValuesPinTheRandomStream) {
  // If these change, every model trained with a given seed starts from different weights.
  const InitSpec glorotUniform{InitKind::GlorotUniform, 0, 0, 10, 20};
  const InitSpec glorotNormal{InitKind::GlorotNormal, 0, 0, 10, 20};
  std::vector<float> u = draw(glorotUniform, {2, 2}, 42, "dense/kernel");
  EXPECT_FLOAT_EQ(u[0], -0.0361738615f);
  EXPECT_FLOAT_EQ(u[1], -0.0343775824f);
  EXPECT_FLOAT_EQ(u[2], -0.114823118f);
  EXPECT_FLOAT_EQ(u[3], -0.160527319f);
  std::vector<float> g = draw(glorotNormal, {4}, 42, "dense/kernel");
  EXPECT_FLOAT_EQ(g[0], -0.316190422f);
  EXPECT_FLOAT_EQ(g[1], 0.0778786615f);
  EXPECT_FLOAT_EQ(g[2], -0.12132065f);
  EXPECT_FLOAT_EQ(g[3], 0.255627304f);
}

TEST(InitTest, SameSeedAndNameGiveTheSameValues) {
  const InitSpec init{InitKind::GlorotNormal, 0, 0, 30, 40};
  EXPECT_EQ(draw(init, {30, 40}, 7), draw(init, {30, 40}, 7));
  EXPECT_NE(draw(init, {30, 40}, 7), draw(init, {30, 40}, 8));
  EXPECT_NE(draw(init, {30, 40}, 7, "w1"), draw(init, {30, 40}, 7, "w2"));
}

TEST(InitTest, ValuesDoNotDependOnParamOrder) {
  const InitSpec init{InitKind::HeNormal, 0, 0, 50, 10};
  PlanBuilder ab(1), ba(1);
  uint32_t a1 = ab.param("a", {50, 10}, init);
  uint32_t b1 = ab.param("b", {20}, InitSpec{InitKind::Uniform, -1, 1});
  uint32_t b2 = ba.param("b", {20}, InitSpec{InitKind::Uniform, -1, 1});
  uint32_t a2 = ba.param("a", {50, 10}, init);
  auto p1 = ab.load(), p2 = ba.load();
  p1->initParams(123);
  p2->initParams(123);
  EXPECT_EQ(get(*p1, a1), get(*p2, a2));
  EXPECT_EQ(get(*p1, b1), get(*p2, b2));
  // Re-initialising with the same seed gives the same values again.
  std::vector<float> before = get(*p1, a1);
  p1->initParams(123);
  EXPECT_EQ(get(*p1, a1), before);
}

TEST(InitTest, OnlyParamBuffersAreWritten) {
  PlanBuilder b(1);
  uint32_t grad = b.buffer({10});
  uint32_t w = b.param("w", {10}, InitSpec{InitKind::Ones}, static_cast<int32_t>(grad));
  uint32_t other = b.persistentBuffer({10});
  auto program = b.load();
  program->initParams(1);
  EXPECT_EQ(get(*program, w), std::vector<float>(10, 1.0f));
  EXPECT_EQ(get(*program, grad), std::vector<float>(10, 0.0f));
  EXPECT_EQ(get(*program, other), std::vector<float>(10, 0.0f));
}

TEST(InitTest, ConstantKinds) {
  EXPECT_EQ(draw(InitSpec{InitKind::Zeros}, {7}, 1), std::vector<float>(7, 0.0f));
  EXPECT_EQ(draw(InitSpec{InitKind::Ones}, {7}, 1), std::vector<float>(7, 1.0f));
  EXPECT_EQ(draw(InitSpec{InitKind::Constant, -0.125}, {7}, 1), std::vector<float>(7, -0.125f));
}

TEST(InitTest, GlorotUniformBoundsAndMoments) {
  const int64_t fanIn = 300, fanOut = 200;
  const double limit = std::sqrt(6.0 / (fanIn + fanOut));
  Stats s = statsOf(draw(InitSpec{InitKind::GlorotUniform, 0, 0, fanIn, fanOut}, {300, 200}, 3));
  EXPECT_GE(s.minimum, -limit);
  EXPECT_LE(s.maximum, limit);
  EXPECT_GT(s.maximum, 0.99 * limit); // the whole range is used
  EXPECT_LT(s.minimum, -0.99 * limit);
  EXPECT_NEAR(s.mean, 0.0, 0.01 * limit);
  EXPECT_NEAR(s.stddev, limit / std::sqrt(3.0), 0.01 * limit);
}

TEST(InitTest, HeUniformBounds) {
  const double limit = std::sqrt(6.0 / 250);
  Stats s = statsOf(draw(InitSpec{InitKind::HeUniform, 0, 0, 250, 7}, {250, 100}, 3));
  EXPECT_GE(s.minimum, -limit);
  EXPECT_LE(s.maximum, limit);
  EXPECT_GT(s.maximum, 0.99 * limit);
  EXPECT_NEAR(s.stddev, limit / std::sqrt(3.0), 0.01 * limit);
}

// A Keras truncated normal of target stddev s draws N(0, s / 0.8796) truncated at two of its own
// stddevs, which brings the stddev of the values back to s.
void expectTruncatedNormal(const std::vector<float> &v, double target) {
  const double raw = target / kTruncatedNormalStddevFactor;
  Stats s = statsOf(v);
  EXPECT_GE(s.minimum, -2 * raw);
  EXPECT_LE(s.maximum, 2 * raw);
  EXPECT_GT(s.maximum, 1.9 * raw); // truncated at 2, not at some smaller bound
  EXPECT_NEAR(s.mean, 0.0, 0.01 * target);
  EXPECT_NEAR(s.stddev, target, 0.01 * target);
}

TEST(InitTest, GlorotNormalIsTruncatedWithKerasCorrection) {
  const int64_t fanIn = 300, fanOut = 200;
  expectTruncatedNormal(draw(InitSpec{InitKind::GlorotNormal, 0, 0, fanIn, fanOut}, {300, 200}, 4),
                        std::sqrt(2.0 / (fanIn + fanOut)));
}

TEST(InitTest, HeNormalIsTruncatedWithKerasCorrection) {
  expectTruncatedNormal(draw(InitSpec{InitKind::HeNormal, 0, 0, 784, 100}, {784, 100}, 5),
                        std::sqrt(2.0 / 784));
}

TEST(InitTest, UniformRange) {
  Stats s = statsOf(draw(InitSpec{InitKind::Uniform, -0.3, 0.7}, {100000}, 6));
  EXPECT_GE(s.minimum, -0.3);
  EXPECT_LE(s.maximum, 0.7);
  EXPECT_NEAR(s.mean, 0.2, 0.005);
  EXPECT_NEAR(s.stddev, 1.0 / std::sqrt(12.0), 0.005);
}

TEST(InitTest, NormalIsNotTruncated) {
  std::vector<float> v = draw(InitSpec{InitKind::Normal, 1.5, 0.2}, {200000}, 7);
  Stats s = statsOf(v);
  EXPECT_NEAR(s.mean, 1.5, 0.002);
  EXPECT_NEAR(s.stddev, 0.2, 0.002);
  // About 4.55% of a normal lies beyond two stddevs.
  double beyond =
      std::count_if(v.begin(), v.end(), [](float x) { return std::fabs(x - 1.5) > 0.4; });
  EXPECT_NEAR(beyond / v.size(), 0.0455, 0.003);
}

TEST(InitTest, InvalidInitialisersAreRejectedAtLoad) {
  {
    PlanBuilder b(1);
    b.param("dense/kernel", {3, 4}, InitSpec{InitKind::GlorotUniform, 0, 0, 0, 4});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan,
                    "param 'dense/kernel': glorot initialiser needs positive fans, got fan_in 0");
  }
  {
    PlanBuilder b(1);
    b.param("k", {3}, InitSpec{InitKind::HeNormal, 0, 0, -3, 4});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "param 'k': he initialiser needs a positive fan_in");
  }
  {
    PlanBuilder b(1);
    b.param("u", {3}, InitSpec{InitKind::Uniform, 1, -1});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "param 'u': uniform initialiser range");
  }
  {
    PlanBuilder b(1);
    b.param("n", {3}, InitSpec{InitKind::Normal, 0, -1});
    EXPECT_DP_ERROR(b.load(), ErrorKind::Plan, "param 'n': normal initialiser stddev");
  }
}

} // namespace
} // namespace dp::rt
