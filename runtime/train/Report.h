// Presenting a run's results: the metrics JSON (written atomically), the per-epoch line and the
// phase-timing table.
#pragma once

#include "runtime/base/Files.h"
#include "runtime/train/Run.h"

#include <ostream>
#include <string>

namespace dp::rt {

/// The metrics document: {"epochs": [{"epoch", "loss", "train_accuracy", "seconds",
/// "samples_per_sec"}, ...], "test_accuracy", "test_loss", "params"}. Non-finite numbers (an
/// unavailable train accuracy, a diverged loss) are written as null, since JSON has no NaN.
std::string metricsJson(const TrainReport &report);

/// "1.5 MiB", "12.0 KiB".
std::string sizeText(uint64_t bytes);

/// "epoch 1/2  loss 0.5123  accuracy 0.8123  12.3 s  48,780 samples/s" (a regression's without the
/// accuracy).
std::string epochLine(const EpochStats &stats, int64_t epochs);

/// "  server 0: 1,872 updates (4,012/s); staleness 0: 51.2% 1: 48.8%": a parameter server's
/// figures over an epoch, as worker 0 prints them after the epoch line.
std::string serverEpochLine(int server, const ServerEpochStats &stats);

/// The table of phase times: seconds and share of the total for load, init, train, evaluate
/// (and checkpoint when any was written); under train, the part of it that compute waited for
/// input.
void printPhaseTable(const PhaseTimes &phases, std::ostream &out);

/// "compute: 5.84 GFLOP a step in the products, 0.214 TFLOP/s over the train phase; MFU 12.3%
/// of 1.742 TFLOP/s (the f32 peak, dprun --measure-peak)", or where no peak is known, how to
/// get one (`threads`: the process's compute threads, 0 for a GPU).
std::string computeLine(const TrainReport::Compute &compute, int threads);

} // namespace dp::rt
