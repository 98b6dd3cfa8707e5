// Parameter servers' figures, which worker 0 asks for after each epoch, and the workers'
// finish; see Callbacks.h.
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <algorithm>
#include <ostream>

namespace dp::rt {
namespace {

/// Each server's figures between its answers `last` (then replaced) and `now` into `epoch`,
/// and a line per server on `out` (unless null).
void serverEpoch(std::vector<ServerReport> now, std::vector<ServerReport> &last, EpochStats &epoch,
                 std::ostream *out) {
  for (size_t s = 0; s < now.size(); ++s) {
    const ServerReport &a = now[s];
    const ServerReport b = s < last.size() ? last[s] : ServerReport();
    ServerEpochStats e;
    e.updates = a.updates - b.updates;
    const double seconds = a.seconds - b.seconds;
    e.updatesPerSec = seconds > 0 ? double(e.updates) / seconds : 0;
    e.staleness = a.staleness;
    for (size_t k = 0; k < b.staleness.size() && k < e.staleness.size(); ++k)
      e.staleness[k] -= b.staleness[k];
    while (!e.staleness.empty() && e.staleness.back() == 0)
      e.staleness.pop_back();
    e.pullsHeld = a.pullsHeld - b.pullsHeld;
    e.heldSeconds = a.heldSeconds - b.heldSeconds;
    if (out)
      *out << serverEpochLine(static_cast<int>(s), e) << "\n";
    epoch.servers.push_back(std::move(e));
  }
  if (out)
    *out << std::flush;
  last = std::move(now);
}

class ServerFigures final : public RunCallback {
public:
  explicit ServerFigures(RunState &state) : RunCallback(state), exchanges_(*state.job.pushPull()) {}

  void onEpochBegin(int64_t, int64_t) override { takeBaseline(); }

  // (The last epoch's, with the other workers' last steps, once they have finished.)
  void onEpochEnd(EpochStats &epoch) override {
    if (s_.printer && epoch.epoch < s_.options.epochs)
      serverEpoch(exchanges_.ask(false), figures_, epoch, s_.quiet ? nullptr : &s_.out);
  }

  // This worker's last gradient is in: the servers may stop waiting for it. Worker 0 then
  // waits for the others, takes the last epoch's figures and the workers any server left out.
  void onTrainEnd() override {
    takeBaseline();
    exchanges_.finish(s_.timeout);
    if (!s_.printer)
      return;
    TrainReport &report = s_.report;
    if (!s_.quiet && report.processes > 1)
      s_.out << "waiting for the other workers to finish\n" << std::flush;
    const std::vector<ServerReport> finals = exchanges_.ask(true);
    if (!report.epochs.empty())
      serverEpoch(finals, figures_, report.epochs.back(), s_.quiet ? nullptr : &s_.out);
    // A worker any server left out, after the most steps any of them saw.
    std::vector<int64_t> lostAfter(report.processes, -1);
    for (const ServerReport &r : finals)
      for (size_t w = 0; w < r.lostAfter.size() && w < lostAfter.size(); ++w)
        lostAfter[w] = std::max(lostAfter[w], r.lostAfter[w]);
    for (int w = 0; w < report.processes; ++w)
      if (lostAfter[w] >= 0)
        report.lostWorkers.push_back({w, s_.job.jobSize() - report.processes + w, lostAfter[w]});
  }

private:
  /// Once, as training starts: the first epoch counts from nothing (a worker may have started
  /// first), on the servers' clocks from here.
  void takeBaseline() {
    if (!s_.printer || asked_)
      return;
    asked_ = true;
    for (const ServerReport &r : exchanges_.ask(false)) {
      figures_.emplace_back();
      figures_.back().seconds = r.seconds;
    }
  }

  PushPull &exchanges_;
  std::vector<ServerReport> figures_;
  bool asked_ = false;
};

} // namespace

std::unique_ptr<Callback> makeServerFigures(RunState &state) {
  return std::make_unique<ServerFigures>(state);
}

} // namespace dp::rt
