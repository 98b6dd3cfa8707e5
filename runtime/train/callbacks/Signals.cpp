// Signals (SIGINT, SIGTERM, SIGUSR1) at an epoch's end: the ranks agree whether any of them
// received one, so that every rank stops after the same epoch (within an epoch the training
// loop votes after every step); see Callbacks.h.
#include "runtime/train/callbacks/Callbacks.h"

namespace dp::rt {
namespace {

class Signals final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onEpochEnd(EpochStats &) override { s_.signal = s_.trainer.agreeOnStop(); }
};

} // namespace

std::unique_ptr<Callback> makeSignals(RunState &state) { return std::make_unique<Signals>(state); }

} // namespace dp::rt
