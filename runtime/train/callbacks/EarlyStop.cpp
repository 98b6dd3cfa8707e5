// --early-stop N: training ends when the watched figure (the validation loss or accuracy, else
// the test loss) has not improved for N epochs; see Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

#include <cstdio>
#include <ostream>

namespace dp::rt {
namespace {

class EarlyStop final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const Evaluation &e) override {
    const int64_t patience = s_.options.earlyStop;
    PlateauState &watch = s_.earlyStop;
    if (!e.epochEnd || watch.record(watchedValue(s_, e.stats), 0) || watch.badEpochs < patience ||
        e.epoch >= s_.options.epochs ||
        (s_.options.maxSteps > 0 && s_.trainer.stepsRun() >= s_.options.maxSteps))
      return;
    s_.stopTraining = true;
    s_.report.earlyStoppedAfter = e.epoch;
    if (!s_.quiet) {
      char best[32];
      std::snprintf(best, sizeof(best), "%.4f", watch.best < 0 ? -watch.best : watch.best);
      s_.out << "early stop: " << watchedName(s_) << " has not improved on " << best << " for "
             << watch.badEpochs << " epochs\n";
    }
  }
};

} // namespace

std::unique_ptr<Callback> makeEarlyStop(RunState &state) {
  return std::make_unique<EarlyStop>(state);
}

} // namespace dp::rt
