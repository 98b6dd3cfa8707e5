// The learning-rate plateau schedule: after each epoch's evaluation, the factor drops when the
// watched figure (the validation loss or accuracy, else the test loss) stopped improving; see
// Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

#include <ostream>

namespace dp::rt {
namespace {

class Plateau final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEvalEnd(const Evaluation &e) override {
    const LrSchedule &schedule = s_.job.program().plan().lrSchedule;
    if (!e.epochEnd || !schedule.needsEvaluation())
      return;
    if (plateauStep(schedule, s_.trainer.plateau(), watchedValue(s_, e.stats)) && !s_.quiet)
      s_.out << watchedName(s_) << " has not improved for " << schedule.patience << " epoch"
             << (schedule.patience == 1 ? "" : "s") << ": learning rate x "
             << s_.trainer.plateau().scale << " from now on\n";
  }
};

} // namespace

std::unique_ptr<Callback> makePlateau(RunState &state) { return std::make_unique<Plateau>(state); }

} // namespace dp::rt
