// --metrics FILE: the run's figures as JSON (Report.h), written by the printing process at the
// end, and when a signal stops training, with the epochs finished by then; see Callbacks.h.
#include "runtime/base/Interrupt.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

namespace dp::rt {
namespace {

class Metrics final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (s_.printer)
      writeFileAtomically(s_.options.metricsPath, metricsJson(s_.report));
  }

  void onStop(Stop &stop) override {
    if (!s_.printer)
      return;
    TrainReport &report = s_.report;
    report.interrupted = signalName(pendingInterrupt());
    writeFileAtomically(s_.options.metricsPath, metricsJson(report));
    stop.message += "; the metrics of " + std::to_string(report.epochs.size()) + " finished epoch" +
                    (report.epochs.size() == 1 ? "" : "s") + " are in " + s_.options.metricsPath;
  }
};

} // namespace

std::unique_ptr<Callback> makeMetrics(RunState &state) { return std::make_unique<Metrics>(state); }

} // namespace dp::rt
