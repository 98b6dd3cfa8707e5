// --restore-best: keeps a copy of the weights at the best validation evaluation (by the
// watched figure) and ends training with them; see Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace dp::rt {
namespace {

/// "val_loss 0.3521" or "val_accuracy 0.8712": the watched figure of `stats`.
std::string figure(const RunState &s, const EvalStats &stats) {
  char text[64];
  std::snprintf(text, sizeof(text), "%s %.4f", watchedName(s).c_str(),
                s.options.monitor == "val_accuracy" ? stats.accuracy : stats.loss);
  return text;
}

class RestoreBest final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const Evaluation &e) override {
    if (e.set != Evaluation::Set::Validation)
      return;
    RunState::BestWeights &best = s_.best;
    const double value = watchedValue(s_, e.stats);
    // NaN is never the best (a diverged evaluation), and a best that is NaN yields to anything.
    if (std::isnan(value))
      return;
    if (best.validation >= 0) {
      const double bestValue = watchedValue(s_, s_.report.validations[best.validation].stats);
      if (!std::isnan(bestValue) && !(value < bestValue))
        return;
    }
    // Evaluations appends each validation before telling the callbacks of it.
    best.validation = int64_t(s_.report.validations.size()) - 1;
    // Every rank keeps its own copy: the ranks hold the same weights and decide alike (the
    // figures are summed over them).
    best.weights = readParams(s_.job.program(), /*weightsOnly=*/true);
  }

  void onTrainEnd() override {
    if (s_.best.validation < 0)
      return;
    const Evaluation &at = s_.report.validations[s_.best.validation];
    TrainReport::Best &best = s_.report.best;
    best.step = at.step;
    best.epoch = at.epoch;
    best.value = s_.options.monitor == "val_accuracy" ? at.stats.accuracy : at.stats.loss;
    const Evaluation &last = s_.report.validations.back();
    if (at.step == s_.trainer.stepsRun()) {
      if (!s_.quiet)
        s_.out << "restore-best: the last weights are the best (step " << best.step << ", "
               << figure(s_, at.stats) << ")\n";
      return;
    }
    setWeights(s_.job.program(), s_.best.weights, "the best weights");
    best.restored = true;
    if (!s_.quiet)
      s_.out << "restore-best: training ends with the weights of step " << best.step << " (epoch "
             << best.epoch << ", " << figure(s_, at.stats) << "); the last evaluation's, at step "
             << last.step << ", had " << figure(s_, last.stats) << "\n";
  }
};

} // namespace

std::unique_ptr<Callback> makeRestoreBest(RunState &state) {
  return std::make_unique<RestoreBest>(state);
}

} // namespace dp::rt
