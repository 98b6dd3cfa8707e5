// --early-stop N: training ends when the test loss has not improved for N epochs; see
// Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

#include <ostream>

namespace dp::rt {
namespace {

class EarlyStop final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const EvalStats &result, int64_t epoch) override {
    const int64_t patience = s_.options.earlyStop;
    PlateauState &watch = s_.earlyStop;
    if (epoch == kFinalEvaluation || watch.record(result.loss, 0) || watch.badEpochs < patience ||
        epoch >= s_.options.epochs)
      return;
    s_.stopTraining = true;
    s_.report.earlyStoppedAfter = epoch;
    if (!s_.quiet)
      s_.out << "early stop: the test loss has not improved on " << watch.best << " for "
             << watch.badEpochs << " epochs\n";
  }
};

} // namespace

std::unique_ptr<Callback> makeEarlyStop(RunState &state) {
  return std::make_unique<EarlyStop>(state);
}

} // namespace dp::rt
