// The learning-rate plateau schedule: after each epoch's evaluation, the factor drops when the
// test loss stopped improving; see Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

#include <ostream>

namespace dp::rt {
namespace {

class Plateau final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const EvalStats &result, int64_t epoch) override {
    const LrSchedule &schedule = s_.job.program().plan().lrSchedule;
    if (epoch == kFinalEvaluation || !schedule.needsEvaluation())
      return;
    if (plateauStep(schedule, s_.trainer.plateau(), result.loss) && !s_.quiet)
      s_.out << "the test loss has not improved for " << schedule.patience << " epoch"
             << (schedule.patience == 1 ? "" : "s") << ": learning rate x "
             << s_.trainer.plateau().scale << " from now on\n";
  }
};

} // namespace

std::unique_ptr<Callback> makePlateau(RunState &state) { return std::make_unique<Plateau>(state); }

} // namespace dp::rt
