// The evaluations during training: the validation set after every epoch and every
// --eval-every train steps, or, without a validation set, the test set after every epoch
// when a plateau schedule or early stopping watches it; see Callbacks.h.
#include "runtime/train/Progress.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <ostream>

namespace dp::rt {

double watchedValue(const RunState &state, const EvalStats &stats) {
  return state.validation && state.options.monitor == "val_accuracy" ? -stats.accuracy : stats.loss;
}

std::string watchedName(const RunState &state) {
  return state.validation ? state.options.monitor : "the test loss";
}

namespace {

class Evaluations final : public RunCallback {
public:
  Evaluations(RunState &state, Callback &all) : RunCallback(state), all_(all) {}

  bool wantsBoundary(int64_t step) const override {
    const int64_t every = s_.options.evalEvery;
    return s_.validation && every > 0 && step % every == 0;
  }

  void onBoundary(const TrainPosition &position, int signal) override {
    // A boundary another callback wanted, or a signal's: no evaluation.
    if (signal == 0 && wantsBoundary(position.step))
      evaluate(position.epochsDone + 1, position.step, false);
  }

  void onEpochEnd(EpochStats &epoch) override {
    const Evaluation e = evaluate(epoch.epoch, s_.trainer.stepsRun(), true);
    if (e.set == Evaluation::Set::Validation) {
      epoch.valLoss = e.stats.loss;
      epoch.valAccuracy = e.stats.accuracy;
    } else {
      epoch.testLoss = e.stats.loss;
      epoch.testAccuracy = e.stats.accuracy;
    }
  }

private:
  Evaluation evaluate(int64_t epoch, int64_t step, bool epochEnd) {
    const auto start = Clock::now();
    Evaluation e;
    e.set = s_.validation ? Evaluation::Set::Validation : Evaluation::Set::Test;
    // A signal meanwhile is taken where the run keeps its place (the next step, the epoch's
    // end), not in this pass.
    e.stats = s_.trainer.evaluate(s_.validation ? *s_.validation : *s_.test, nullptr,
                                  /*stopForSignal=*/false);
    e.epoch = epoch;
    e.step = step;
    e.epochEnd = epochEnd;
    s_.epochEvalSeconds += secondsSince(start);
    if (s_.validation)
      s_.report.validations.push_back(e);
    all_.onEvalEnd(e);
    s_.out << std::flush;
    return e;
  }

  Callback &all_;
};

} // namespace

std::unique_ptr<Callback> makeEvaluations(RunState &state, Callback &all) {
  return std::make_unique<Evaluations>(state, all);
}

} // namespace dp::rt
