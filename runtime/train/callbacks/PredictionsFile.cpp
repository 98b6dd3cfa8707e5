// --predictions FILE: the test set's predictions of the final evaluation, written by the
// printing process as CSV; see Callbacks.h and Run.h.
#include "runtime/train/callbacks/Callbacks.h"

#include "runtime/base/Files.h"
#include "runtime/train/PlanInfo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace dp::rt {

namespace {

/// Float targets' predictions: per sample its targets, with yes/no outputs (`binary`) each
/// output's probability sigmoid(logit), and the model's values (a regression's predictions, a
/// binary model's logits), each %.9g (the f32 value exactly, read back).
std::string floatTargetsCsv(const Predictions &p, const Dataset &data, bool binary) {
  // The targets' width is the data's, the predictions' the model's output (they may differ
  // where the model's loss combines its targets).
  const int64_t targets = data.targetWidth(), width = p.classes;
  std::string text = "index";
  for (int64_t k = 0; k < targets; ++k)
    text += ",target_" + std::to_string(k);
  for (int64_t k = 0; binary && k < width; ++k)
    text += ",prob_" + std::to_string(k);
  for (int64_t k = 0; k < width; ++k)
    text += (binary ? ",logit_" : ",predicted_") + std::to_string(k);
  text += "\n";
  char number[32];
  auto values = [&](const float *row, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      std::snprintf(number, sizeof(number), ",%.9g", double(row[k]));
      text += number;
    }
  };
  for (int64_t i = 0; i < data.size(); ++i) {
    text += std::to_string(i);
    values(data.target(i), targets);
    const float *row = &p.logits[size_t(i * width)];
    for (int64_t k = 0; binary && k < width; ++k) {
      std::snprintf(number, sizeof(number), ",%.9g", 1.0 / (1.0 + std::exp(-double(row[k]))));
      text += number;
    }
    values(row, width);
    text += "\n";
  }
  return text;
}

} // namespace

std::string predictionsCsv(const Predictions &p, const Dataset &data, bool binary) {
  if (data.targetWidth() > 0)
    return floatTargetsCsv(p, data, binary);
  const int64_t classes = p.classes;
  std::string text = "index,label,predicted";
  for (int64_t c = 0; c < classes; ++c)
    text += ",prob_" + std::to_string(c);
  for (int64_t c = 0; c < classes; ++c)
    text += ",logit_" + std::to_string(c);
  text += "\n";
  char number[32];
  std::vector<double> probs(static_cast<size_t>(classes));
  for (int64_t i = 0; i < data.size(); ++i) {
    const float *row = &p.logits[size_t(i * classes)];
    // The first largest logit, as the correct count takes it; softmax computed stably.
    const int64_t predicted = std::max_element(row, row + classes) - row;
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += probs[size_t(c)] = std::exp(double(row[c]) - double(row[predicted]));
    text +=
        std::to_string(i) + "," + std::to_string(data.label(i)) + "," + std::to_string(predicted);
    for (int64_t c = 0; c < classes; ++c) {
      std::snprintf(number, sizeof(number), ",%.9g", probs[size_t(c)] / sum);
      text += number;
    }
    for (int64_t c = 0; c < classes; ++c) {
      // %.9g: the f32 value exactly, read back.
      std::snprintf(number, sizeof(number), ",%.9g", double(row[c]));
      text += number;
    }
    text += "\n";
  }
  return text;
}

namespace {

class PredictionsFile final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (!s_.printer)
      return;
    const bool binary = binaryTargets(s_.job.program().plan());
    writeFileAtomically(s_.options.predictionsPath,
                        predictionsCsv(s_.predictions, *s_.test, binary));
    if (!s_.options.quiet)
      s_.out << "wrote " << s_.options.predictionsPath << ": " << s_.test->size()
             << (binary ? " predictions (the targets, probabilities and logits of each test "
                          "sample)\n"
                 : s_.test->targetWidth() > 0
                     ? " predictions (the targets and predicted values of each test sample)\n"
                     : " predictions (class, probabilities and logits of each test sample)\n")
             << std::flush;
  }
};

} // namespace

std::unique_ptr<Callback> makePredictionsFile(RunState &state) {
  return std::make_unique<PredictionsFile>(state);
}

} // namespace dp::rt
