// Metrics JSON, atomic file replacement and the human-readable result lines; see Report.h.
#include "runtime/train/Report.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"
#include "runtime/base/Json.h"
#include "runtime/train/PlanInfo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace dp::rt {
std::string metricsJson(const TrainReport &report) {
  std::string json = "{\n  \"epochs\": [";
  for (size_t i = 0; i < report.epochs.size(); ++i) {
    const EpochStats &e = report.epochs[i];
    json += i ? ",\n    " : "\n    ";
    json += "{\"epoch\": " + std::to_string(e.epoch) + ", \"loss\": " + jsonNumber(e.loss) +
            ", \"train_accuracy\": " + jsonNumber(e.trainAccuracy) +
            ", \"seconds\": " + jsonNumber(e.seconds) +
            ", \"samples_per_sec\": " + jsonNumber(e.samplesPerSec);
    json += ", \"rank_samples_per_sec\": [";
    for (size_t r = 0; r < e.rankSamplesPerSec.size(); ++r)
      json += (r ? ", " : "") + jsonNumber(e.rankSamplesPerSec[r]);
    json += "], \"lr_scale\": " + jsonNumber(e.lrScale);
    json += ", \"input_wait_seconds\": " + jsonNumber(e.inputWaitSeconds);
    if (std::isfinite(e.testLoss))
      json += ", \"test_loss\": " + jsonNumber(e.testLoss) +
              ", \"test_accuracy\": " + jsonNumber(e.testAccuracy);
    if (std::isfinite(e.valLoss))
      json += ", \"val_loss\": " + jsonNumber(e.valLoss) +
              ", \"val_accuracy\": " + jsonNumber(e.valAccuracy);
    if (!e.servers.empty()) {
      json += ", \"servers\": [";
      for (size_t k = 0; k < e.servers.size(); ++k) {
        const ServerEpochStats &v = e.servers[k];
        json += std::string(k ? ", " : "") + "{\"server\": " + std::to_string(k) +
                ", \"updates\": " + std::to_string(v.updates) +
                ", \"updates_per_sec\": " + jsonNumber(v.updatesPerSec) +
                ", \"pulls_held\": " + std::to_string(v.pullsHeld) +
                ", \"held_seconds\": " + jsonNumber(v.heldSeconds) + ", \"staleness\": [";
        for (size_t b = 0; b < v.staleness.size(); ++b)
          json += (b ? ", " : "") + std::to_string(v.staleness[b]);
        json += "]}";
      }
      json += "]";
    }
    json += ", \"step_losses\": [";
    for (size_t s = 0; s < e.stepLosses.size(); ++s)
      json += (s ? ", " : "") + jsonNumber(e.stepLosses[s]);
    json += "]}";
  }
  json += report.epochs.empty() ? "],\n" : "\n  ],\n";
  json += "  \"test_accuracy\": " + jsonNumber(report.test.accuracy) + ",\n";
  json += "  \"test_loss\": " + jsonNumber(report.test.loss) + ",\n";
  json += "  \"replicas_per_process\": " + std::to_string(report.replicas) + ",\n";
  json += "  \"compute_threads\": " + std::to_string(report.threads) + ",\n";
  json += "  \"processes\": " + std::to_string(report.processes) + ",\n";
  json += "  \"allreduce_seconds\": " + jsonNumber(report.allreduceSeconds) + ",\n";
  json += "  \"allreduce_wait_seconds\": " + jsonNumber(report.allreduceWaitSeconds) + ",\n";
  json += "  \"input_wait_seconds\": " + jsonNumber(report.phases.inputWait) + ",\n";
  if (const TrainReport::Compute &c = report.compute; c.stepFlops > 0) {
    json += "  \"compute\": {\"step_flops\": " + jsonNumber(c.stepFlops) +
            ", \"steps\": " + std::to_string(c.steps) + ", \"tflops\": " + jsonNumber(c.tflops) +
            ", \"precision\": \"" + (c.bf16 ? "bf16" : "f32") + "\"";
    if (c.peakTflops > 0)
      json += ", \"peak_tflops\": " + jsonNumber(c.peakTflops) +
              ", \"peak_source\": " + jsonString(c.peakSource) +
              ", \"mfu\": " + jsonNumber(c.mfu());
    json += "},\n";
  }
  if (!report.allreduceLayout.empty())
    json += "  \"allreduce_layout\": " + jsonString(report.allreduceLayout) + ",\n";
  if (!report.interrupted.empty())
    json += "  \"interrupted\": \"" + report.interrupted + "\",\n";
  if (!report.lostWorkers.empty()) {
    json += "  \"lost_workers\": [";
    for (size_t i = 0; i < report.lostWorkers.size(); ++i) {
      const auto &l = report.lostWorkers[i];
      json += std::string(i ? ", " : "") + "{\"worker\": " + std::to_string(l.worker) +
              ", \"rank\": " + std::to_string(l.rank) +
              ", \"after_steps\": " + std::to_string(l.afterSteps) + "}";
    }
    json += "],\n";
  }
  if (report.earlyStoppedAfter > 0)
    json += "  \"early_stopped_after\": " + std::to_string(report.earlyStoppedAfter) + ",\n";
  if (!report.monitor.empty())
    json += "  \"monitor\": " + jsonString(report.monitor) + ",\n";
  if (!report.validations.empty()) {
    json += "  \"validations\": [";
    for (size_t i = 0; i < report.validations.size(); ++i) {
      const Evaluation &v = report.validations[i];
      json += std::string(i ? ",\n    " : "\n    ") + "{\"step\": " + std::to_string(v.step) +
              ", \"epoch\": " + std::to_string(v.epoch) +
              ", \"epoch_end\": " + (v.epochEnd ? "true" : "false") +
              ", \"loss\": " + jsonNumber(v.stats.loss) +
              ", \"accuracy\": " + jsonNumber(v.stats.accuracy) + "}";
    }
    json += "\n  ],\n";
  }
  if (!report.classes.confusion.empty()) {
    const ClassReport &c = report.classes;
    json += "  \"top_k\": " + std::to_string(c.topK) +
            ",\n  \"top_k_accuracy\": " + jsonNumber(c.topKAccuracy) +
            ",\n  \"per_class_accuracy\": [";
    std::string matrix;
    for (size_t l = 0; l < c.confusion.size(); ++l) {
      int64_t total = 0;
      for (int64_t v : c.confusion[l])
        total += v;
      json += (l ? ", " : "") +
              jsonNumber(total ? double(c.confusion[l][l]) / double(total) : std::nan(""));
      matrix += std::string(l ? ",\n    [" : "\n    [");
      for (size_t p = 0; p < c.confusion[l].size(); ++p)
        matrix += (p ? ", " : "") + std::to_string(c.confusion[l][p]);
      matrix += "]";
    }
    json += "],\n  \"confusion_matrix\": [" + matrix + "\n  ],\n";
  }
  if (report.best.step > 0)
    json += "  \"best\": {\"step\": " + std::to_string(report.best.step) +
            ", \"epoch\": " + std::to_string(report.best.epoch) +
            ", \"value\": " + jsonNumber(report.best.value) +
            ", \"restored\": " + (report.best.restored ? "true" : "false") + "},\n";
  const CheckpointReport &c = report.checkpoints;
  if (!c.resumedFrom.empty())
    json += "  \"resumed_from\": " + jsonString(c.resumedFrom) +
            ",\n  \"resumed_step\": " + std::to_string(c.resumedStep) + ",\n";
  if (c.written > 0)
    json += "  \"checkpoints_written\": " + std::to_string(c.written) +
            ",\n  \"checkpoint\": " + jsonString(c.last) +
            ",\n  \"checkpoint_bytes\": " + std::to_string(c.lastBytes) +
            ",\n  \"checkpoint_seconds\": " + jsonNumber(c.lastSeconds) + ",\n";
  json += "  \"params\": " + std::to_string(report.params) + "\n}\n";
  return json;
}

std::string epochLine(const EpochStats &stats, int64_t epochs) {
  char loss[32], accuracy[32], seconds[32];
  std::snprintf(loss, sizeof(loss), "%.4f", stats.loss);
  if (std::isnan(stats.trainAccuracy))
    std::snprintf(accuracy, sizeof(accuracy), "n/a");
  else
    std::snprintf(accuracy, sizeof(accuracy), "%.4f", stats.trainAccuracy);
  std::snprintf(seconds, sizeof(seconds), "%.1f", stats.seconds);
  // A regression has no accuracy to report; a classifier without a train count says n/a.
  const std::string accuracyPart = stats.regression && std::isnan(stats.trainAccuracy)
                                       ? ""
                                       : std::string("  accuracy ") + accuracy;
  return "epoch " + std::to_string(stats.epoch) + "/" + std::to_string(epochs) + "  loss " + loss +
         accuracyPart + "  " + seconds + " s  " +
         withCommas(static_cast<int64_t>(std::llround(stats.samplesPerSec))) + " samples/s";
}

std::string serverEpochLine(int server, const ServerEpochStats &stats) {
  int64_t gradients = 0;
  for (int64_t n : stats.staleness)
    gradients += n;
  std::string line = "  server " + std::to_string(server) + ": " + withCommas(stats.updates) +
                     " updates (" +
                     withCommas(static_cast<int64_t>(std::llround(stats.updatesPerSec))) +
                     "/s); staleness";
  char part[48];
  for (size_t k = 0; k < stats.staleness.size(); ++k) {
    if (!stats.staleness[k])
      continue;
    std::snprintf(part, sizeof(part), " %s%zu: %.1f%%",
                  k + 1 == size_t(kStalenessBins) ? ">=" : "", k,
                  100.0 * double(stats.staleness[k]) / double(gradients));
    line += part;
  }
  if (gradients == 0)
    line += " -";
  if (stats.pullsHeld) {
    std::snprintf(part, sizeof(part), "; %lld pull(s) held %.2f s",
                  static_cast<long long>(stats.pullsHeld), stats.heldSeconds);
    line += part;
  }
  return line;
}

void printPhaseTable(const PhaseTimes &phases, std::ostream &out) {
  std::vector<std::pair<const char *, double>> rows = {{"load", phases.load},
                                                       {"init", phases.init},
                                                       {"train", phases.train},
                                                       {"evaluate", phases.evaluate}};
  if (phases.checkpoint > 0)
    rows.insert(rows.begin() + 3, {"checkpoint", phases.checkpoint});
  double total = phases.load + phases.init + phases.train + phases.evaluate + phases.checkpoint;
  char line[80];
  std::snprintf(line, sizeof(line), "%-10s %10s %7s\n", "phase", "seconds", "%");
  out << line;
  for (const auto &[name, seconds] : rows) {
    std::snprintf(line, sizeof(line), "%-10s %10.3f %6.1f%%\n", name, seconds,
                  total > 0 ? 100.0 * seconds / total : 0.0);
    out << line;
    // A part of train, not a phase of its own: not added to the total.
    if (std::string(name) == "train") {
      std::snprintf(line, sizeof(line), "%-10s %10.3f %6.1f%%\n", "  input", phases.inputWait,
                    total > 0 ? 100.0 * phases.inputWait / total : 0.0);
      out << line;
    }
  }
  std::snprintf(line, sizeof(line), "%-10s %10.3f %6.1f%%\n", "total", total,
                total > 0 ? 100.0 : 0.0);
  out << line;
}

std::string computeLine(const TrainReport::Compute &c, int threads) {
  char line[320];
  const char *precision = c.bf16 ? "bf16" : "f32";
  const int written =
      std::snprintf(line, sizeof(line),
                    "compute: %.3g GFLOP a step in the products, %.3f TFLOP/s over the train "
                    "phase",
                    c.stepFlops / 1e9, c.tflops);
  const size_t n = std::min(size_t(std::max(written, 0)), sizeof(line) - 1);
  if (c.peakTflops > 0)
    std::snprintf(line + n, sizeof(line) - n, "; MFU %.1f%% of %.3f TFLOP/s (the %s peak, %s)",
                  100 * c.mfu(), c.peakTflops, precision,
                  c.peakSource == "--peak-tflops" ? "--peak-tflops" : "dprun --measure-peak");
  else
    std::snprintf(
        line + n, sizeof(line) - n,
        "; MFU unknown: no %s peak recorded for this machine%s (dprun --measure-peak "
        "measures it once; or --peak-tflops)",
        precision,
        threads > 0
            ? (" at " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s")).c_str()
            : "");
  return line;
}

std::string sizeText(uint64_t bytes) {
  char text[32];
  if (bytes >= (uint64_t(1) << 20))
    std::snprintf(text, sizeof(text), "%.1f MiB", double(bytes) / double(1 << 20));
  else
    std::snprintf(text, sizeof(text), "%.1f KiB", double(bytes) / 1024.0);
  return text;
}

} // namespace dp::rt
