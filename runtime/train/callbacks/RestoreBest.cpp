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
    const double value = watchedValue(s_, e.stats);
    // NaN is never the best (a diverged evaluation), and a best that is NaN yields to anything.
    if (std::isnan(value) || (have_ && !std::isnan(best_.value) && !(value < best_.value)))
      return;
    have_ = true;
    best_ = Best{e, value};
    // Every rank keeps its own copy: the ranks hold the same weights and decide alike (the
    // figures are summed over them).
    weights_ = readParams(s_.job.program(), /*weightsOnly=*/true);
  }

  void onTrainEnd() override {
    if (!have_)
      return;
    TrainReport::Best &best = s_.report.best;
    best.step = best_.at.step;
    best.epoch = best_.at.epoch;
    best.value =
        s_.options.monitor == "val_accuracy" ? best_.at.stats.accuracy : best_.at.stats.loss;
    const Evaluation &last = s_.report.validations.back();
    if (best_.at.step == s_.trainer.stepsRun()) {
      if (!s_.quiet)
        s_.out << "restore-best: the last weights are the best (step " << best.step << ", "
               << figure(s_, best_.at.stats) << ")\n";
      return;
    }
    setWeights(s_.job.program(), weights_, "the best weights");
    best.restored = true;
    if (!s_.quiet)
      s_.out << "restore-best: training ends with the weights of step " << best.step << " (epoch "
             << best.epoch << ", " << figure(s_, best_.at.stats)
             << "); the last evaluation's, at step " << last.step << ", had "
             << figure(s_, last.stats) << "\n";
  }

private:
  struct Best {
    Evaluation at;
    double value = 0;
  };
  bool have_ = false;
  Best best_;
  std::vector<ParamsEntry> weights_;
};

} // namespace

std::unique_ptr<Callback> makeRestoreBest(RunState &state) {
  return std::make_unique<RestoreBest>(state);
}

} // namespace dp::rt
