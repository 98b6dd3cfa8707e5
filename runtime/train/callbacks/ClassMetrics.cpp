// --top-k K and --confusion-matrix: the final test evaluation's predictions, summed up per
// sample on the printing process: the top-K accuracy, each class's accuracy and the confusion
// matrix (rows the labels, columns the predicted classes), which the console prints after the
// test line and the metrics hold; see Callbacks.h.
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace dp::rt {

ClassReport classReport(const Predictions &p, const Dataset &data, int64_t topK) {
  ClassReport r;
  const int64_t classes = p.classes, n = data.size();
  r.topK = topK;
  r.confusion.assign(size_t(classes), std::vector<int64_t>(size_t(classes), 0));
  int64_t inTopK = 0;
  for (int64_t s = 0; s < n; ++s) {
    const float *logits = p.logits.data() + s * classes;
    const int64_t label = data.label(s);
    // The predicted class is the first largest logit, as the accuracy counts it; a label is in
    // the top K when fewer than K classes score above it (ties counted for it, first first).
    int64_t predicted = 0, above = 0;
    for (int64_t c = 0; c < classes; ++c) {
      if (logits[c] > logits[predicted])
        predicted = c;
      if (logits[c] > logits[label] || (logits[c] == logits[label] && c < label))
        ++above;
    }
    inTopK += above < topK;
    if (label < classes)
      ++r.confusion[size_t(label)][size_t(predicted)];
  }
  r.topKAccuracy = n ? double(inTopK) / double(n) : 0;
  return r;
}

namespace {

class ClassMetrics final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const Evaluation &e) override {
    if (!e.final || !s_.printer || s_.predictions.logits.empty())
      return;
    // Printed by the console after the test line (classesText).
    s_.report.classes =
        classReport(s_.predictions, *s_.test, s_.options.topK > 0 ? s_.options.topK : 1);
  }
};

} // namespace

std::string classesText(const ClassReport &r, bool topK, bool table) {
  std::string out;
  if (topK) {
    char line[96];
    std::snprintf(line, sizeof(line), "test  top-%lld accuracy %.4f\n",
                  static_cast<long long>(r.topK), r.topKAccuracy);
    out += line;
  }
  return table ? out + confusionTable(r) : out;
}

std::string confusionTable(const ClassReport &r) {
  const size_t classes = r.confusion.size();
  std::string out = "per class (test; rows: the label, columns: the predicted class)\n";
  char cell[64];
  out += "class  samples  accuracy ";
  for (size_t c = 0; c < classes; ++c) {
    std::snprintf(cell, sizeof(cell), " %6zu", c);
    out += cell;
  }
  out += "\n";
  for (size_t l = 0; l < classes; ++l) {
    int64_t total = 0;
    for (int64_t v : r.confusion[l])
      total += v;
    std::snprintf(cell, sizeof(cell), "%5zu  %7lld    ", l, static_cast<long long>(total));
    out += cell;
    if (total)
      std::snprintf(cell, sizeof(cell), "%.4f", double(r.confusion[l][l]) / double(total));
    else
      std::snprintf(cell, sizeof(cell), "   n/a");
    out += cell;
    for (size_t c = 0; c < classes; ++c) {
      std::snprintf(cell, sizeof(cell), " %6lld", static_cast<long long>(r.confusion[l][c]));
      out += cell;
    }
    out += "\n";
  }
  return out;
}

std::unique_ptr<Callback> makeClassMetrics(RunState &state) {
  return std::make_unique<ClassMetrics>(state);
}

} // namespace dp::rt
