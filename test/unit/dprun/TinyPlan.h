// A real plan for tests that need one without the compiler: softmax regression (one dense layer,
// no activation) on `pixels` inputs and `classes` classes, trained with SGD. The train step also
// reports "correct" unless `trainCorrect` is false. Returns the builder so that a test can break
// the plan further before taking its bytes.
#pragma once

#include "PlanBuilder.h"

#include <cstdint>
#include <string>

namespace dp::rt::test {

/// Buffer ids of the tiny plan, for tests that poke at them.
struct TinyPlanIds {
  uint32_t w, b, image, label, logits, loss, correct;
};

inline testing::PlanBuilder tinyPlan(int64_t batch, int64_t pixels, int64_t classes,
                                     float lr = 0.5f, bool trainCorrect = true,
                                     TinyPlanIds *ids = nullptr) {
  testing::PlanBuilder p(batch);
  const StepKind T = StepKind::Train, E = StepKind::Eval;
  const uint32_t dw = p.buffer({pixels, classes}), db = p.buffer({classes});
  const uint32_t w = p.param("dense/kernel", {pixels, classes},
                             {InitKind::GlorotUniform, 0, 0, pixels, classes}, int32_t(dw));
  const uint32_t b = p.param("dense/bias", {classes}, {InitKind::Zeros}, int32_t(db));
  const uint32_t x = p.buffer({batch, pixels}), y = p.buffer({batch}, DType::I32);
  const uint32_t logits = p.buffer({batch, classes}), dlogits = p.buffer({batch, classes});
  const uint32_t loss = p.buffer({}), dloss = p.buffer({}), correct = p.buffer({});
  p.input("image", x, InputRole::Samples).input("label", y, InputRole::Targets);

  p.kernel(T, KernelKind::Dense, {x, w, b}, {logits}).activation(Activation::None).at("tiny.py:3");
  p.kernel(T, KernelKind::SoftmaxXent, {logits, y}, {loss});
  p.kernel(T, KernelKind::CountCorrect, {logits, y}, {correct});
  p.kernel(T, KernelKind::Fill, {}, {dloss}).attrF("value", 1.0);
  p.kernel(T, KernelKind::SoftmaxXentGrad, {logits, y, dloss}, {dlogits});
  p.kernel(T, KernelKind::MatMul, {x, dlogits}, {dw})
      .attrI("transpose_a", 1)
      .attrI("transpose_b", 0);
  p.kernel(T, KernelKind::ReduceRows, {dlogits}, {db});
  p.kernel(T, KernelKind::SgdUpdate, {dw}, {w}).attrF("lr", lr);
  p.kernel(T, KernelKind::SgdUpdate, {db}, {b}).attrF("lr", lr);
  p.output(T, "loss", loss, OutputRole::Loss);
  if (trainCorrect)
    p.output(T, "correct", correct, OutputRole::Correct);

  p.kernel(E, KernelKind::Dense, {x, w, b}, {logits}).activation(Activation::None);
  p.kernel(E, KernelKind::SoftmaxXent, {logits, y}, {loss});
  p.kernel(E, KernelKind::CountCorrect, {logits, y}, {correct});
  p.output(E, "loss", loss, OutputRole::Loss).output(E, "correct", correct, OutputRole::Correct);
  p.output(E, "logits", logits, OutputRole::Logits);
  if (ids)
    *ids = {w, b, x, y, logits, loss, correct};
  return p;
}

/// The tiny plan as .dpx file bytes.
inline std::string tinyPlanBytes(int64_t batch, int64_t pixels, int64_t classes, float lr = 0.5f,
                                 bool trainCorrect = true) {
  std::vector<uint8_t> bytes = tinyPlan(batch, pixels, classes, lr, trainCorrect).fileBytes();
  return std::string(bytes.begin(), bytes.end());
}

} // namespace dp::rt::test
