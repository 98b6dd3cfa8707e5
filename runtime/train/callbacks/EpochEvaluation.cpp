// The test set's evaluation after every epoch, which the plateau schedule and early stopping
// watch; see Callbacks.h.
#include "runtime/train/Progress.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <ostream>

namespace dp::rt {
namespace {

class EpochEvaluation final : public RunCallback {
public:
  EpochEvaluation(RunState &state, Callback &all) : RunCallback(state), all_(all) {}

  void onEpochEnd(EpochStats &epoch) override {
    const auto start = Clock::now();
    const EvalStats result = s_.trainer.evaluate(*s_.test);
    s_.epochEvalSeconds += secondsSince(start);
    epoch.testLoss = result.loss;
    epoch.testAccuracy = result.accuracy;
    all_.onEvalEnd(result, epoch.epoch);
    s_.out << std::flush;
  }

private:
  Callback &all_;
};

} // namespace

std::unique_ptr<Callback> makeEpochEvaluation(RunState &state, Callback &all) {
  return std::make_unique<EpochEvaluation>(state, all);
}

} // namespace dp::rt
