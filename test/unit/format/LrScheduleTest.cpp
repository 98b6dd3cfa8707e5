// Tests of the learning-rate schedules: every kind's factor per step against its closed form,
// the warmup, the plateau's reductions, the parser's messages, and the canonical text.
#include "runtime/format/LrSchedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace dp::rt {
namespace {

LrSchedule parsed(const std::string &text, double defaultStart = 0.1) {
  LrSchedule s;
  std::string error;
  EXPECT_TRUE(parseLrSchedule(text, defaultStart, s, error)) << text << ": " << error;
  return s;
}

std::string refusal(const std::string &text) {
  LrSchedule s;
  std::string error;
  EXPECT_FALSE(parseLrSchedule(text, 0.1, s, error)) << text;
  return error;
}

TEST(LrSchedule, EveryStepOfEveryKindMatchesItsClosedForm) {
  const int steps = 7; // per epoch
  const LrSchedule constant = parsed("constant");
  const LrSchedule step = parsed("step:every=2,factor=0.1");
  const LrSchedule cosine = parsed("cosine:epochs=3,min=0.2");
  const LrSchedule warm = parsed("warmup-linear:epochs=2,start=0.25+step:every=3,factor=0.5");
  for (int epoch = 0; epoch < 5; ++epoch)
    for (int s = 0; s < steps; ++s) {
      const double t = epoch + double(s) / steps;
      EXPECT_EQ(lrScaleAt(constant, t), 1.0);
      EXPECT_DOUBLE_EQ(lrScaleAt(step, t), std::pow(0.1, epoch / 2)) << t;
      const double x = std::min(t / 3, 1.0);
      EXPECT_NEAR(lrScaleAt(cosine, t), 0.2 + 0.8 * 0.5 * (1 + std::cos(M_PI * x)), 1e-15) << t;
      const double ramp = t < 2 ? 0.25 + 0.75 * t / 2 : 1.0;
      EXPECT_NEAR(lrScaleAt(warm, t), ramp * std::pow(0.5, epoch / 3), 1e-15) << t;
    }
  // The first step of a warmup is at the start factor, the cosine ends at its floor.
  EXPECT_EQ(lrScaleAt(warm, 0), 0.25);
  EXPECT_NEAR(lrScaleAt(cosine, 3), 0.2, 1e-15);
  EXPECT_NEAR(lrScaleAt(cosine, 30), 0.2, 1e-15);
}

TEST(LrSchedule, PlateauReducesAfterPatienceEpochsWithoutImprovement) {
  const LrSchedule s = parsed("plateau:patience=2,factor=0.5,min=0.2");
  EXPECT_TRUE(s.needsEvaluation());
  PlateauState state;
  EXPECT_FALSE(plateauStep(s, state, 1.0)); // the first is the best
  EXPECT_FALSE(plateauStep(s, state, 0.9)); // improved
  EXPECT_FALSE(plateauStep(s, state, 0.95));
  EXPECT_EQ(state.badEpochs, 1);
  EXPECT_TRUE(plateauStep(s, state, 0.9)); // equal is no improvement: 2 epochs without
  EXPECT_EQ(state.scale, 0.5);
  EXPECT_EQ(state.badEpochs, 0);
  EXPECT_EQ(lrScaleAt(s, 4.5, state.scale), 0.5);
  EXPECT_FALSE(plateauStep(s, state, 0.91));
  EXPECT_TRUE(plateauStep(s, state, 0.92));
  EXPECT_EQ(state.scale, 0.25);
  plateauStep(s, state, 0.93);
  EXPECT_TRUE(plateauStep(s, state, 0.94)); // 0.125, floored at min
  EXPECT_EQ(state.scale, 0.2);
  plateauStep(s, state, 0.95);
  EXPECT_FALSE(plateauStep(s, state, 0.96)); // at the floor: no change
  EXPECT_EQ(state.scale, 0.2);
  // The threshold: a relative improvement of 1e-4 is needed.
  PlateauState t;
  t.record(1.0, 1e-4);
  EXPECT_FALSE(t.record(0.99995, 1e-4));
  EXPECT_TRUE(t.record(0.9998, 1e-4));
}

TEST(LrSchedule, ParserNamesWhatIsWrong) {
  EXPECT_EQ(refusal("linear"), "unknown schedule 'linear' (constant, step, cosine, plateau, "
                               "warmup-linear)");
  EXPECT_EQ(refusal("step:every=2"), "'step' needs factor=...");
  EXPECT_EQ(refusal("step:every=2,factor=0.5,gamma=3"),
            "'step' takes every, factor, not 'gamma'");
  EXPECT_EQ(refusal("cosine:epochs=ten"), "'epochs=ten' in 'cosine:epochs=ten' is not key=number");
  EXPECT_EQ(refusal("cosine:epochs=0"),
            "cosine: epochs must be positive (from 0.001 to 1000000000 epochs), found 0");
  // Spans that leave a double's range as a run goes on, and a step that grows the rate.
  EXPECT_EQ(refusal("cosine:epochs=1e15"),
            "cosine: epochs must be positive (from 0.001 to 1000000000 epochs), found 1e15");
  EXPECT_EQ(refusal("step:every=1e-300,factor=0.5"),
            "step: every must be a positive number of epochs (from 0.001 to 1000000000 "
            "epochs), found 1e-300");
  EXPECT_EQ(refusal("step:every=1,factor=2"), "step: factor must be above 0 and at most 1, found 2");
  // An exponent's '+' belongs to its number; the canonical text has none.
  EXPECT_EQ(lrScheduleText(parsed("warmup-linear:epochs=1e+1+cosine:epochs=2e+8")),
            "warmup-linear:epochs=10,start=0.1+cosine:epochs=200000000,min=0");
  EXPECT_EQ(lrScheduleText(parsed("cosine:epochs=5e8")), "cosine:epochs=500000000,min=0");
  EXPECT_EQ(refusal("cosine:epochs=3,min=2"), "cosine: min must be between 0 and 1, found 2");
  EXPECT_EQ(refusal("cosine:epochs=inf"), "'epochs=inf' in 'cosine:epochs=inf' is not key=number");
  EXPECT_EQ(refusal("plateau:patience=1.5,factor=0.5"),
            "plateau: patience must be a whole number of epochs from 1, found 1.5");
  EXPECT_EQ(refusal("plateau:patience=2,factor=1"),
            "plateau: factor must be between 0 and 1 (exclusive), found 1");
  EXPECT_EQ(refusal("cosine:epochs=3+warmup-linear:epochs=1"),
            "warmup-linear must come first ('warmup-linear:epochs=K+SCHEDULE')");
  EXPECT_EQ(refusal("warmup-linear:epochs=1+warmup-linear:epochs=1"),
            "warmup-linear must come first ('warmup-linear:epochs=K+SCHEDULE')");
  EXPECT_EQ(refusal("warmup-linear:epochs=1,start=2"),
            "warmup-linear: start must be between 0 and 1, found 2");
  EXPECT_EQ(refusal("step:every=1,factor=0.5+cosine:epochs=2"),
            "one schedule after the warmup, found 'cosine:epochs=2' too");
  EXPECT_EQ(refusal(""), "unknown schedule '' (constant, step, cosine, plateau, warmup-linear)");
}

TEST(LrSchedule, CanonicalTextParsesBackAndFillsTheWarmupStart) {
  for (const char *text : {"constant", "step:every=2,factor=0.1", "cosine:epochs=30,min=0",
                           "plateau:patience=3,factor=0.5,min=0.01,threshold=0.001",
                           "warmup-linear:epochs=5,start=0.125+cosine:epochs=90,min=0"}) {
    const LrSchedule s = parsed(text);
    EXPECT_EQ(lrScheduleText(s), text);
    const LrSchedule again = parsed(lrScheduleText(s));
    EXPECT_EQ(lrScheduleText(again), text);
  }
  // Without a start, the warmup starts at the caller's default (dpc: 1 / (R x P) under
  // --scale-lr linear); without a schedule after it, the rate is constant after it.
  EXPECT_EQ(lrScheduleText(parsed("warmup-linear:epochs=5", 0.25)),
            "warmup-linear:epochs=5,start=0.25+constant");
  EXPECT_TRUE(parsed("constant").isConstant());
  EXPECT_FALSE(parsed("warmup-linear:epochs=5").isConstant());
  EXPECT_EQ(checkLrSchedule(parsed("cosine:epochs=3")), "");
  LrSchedule broken;
  broken.kind = LrScheduleKind(9);
  EXPECT_EQ(checkLrSchedule(broken), "unknown schedule kind 9");
}

} // namespace
} // namespace dp::rt
