// What a run prints on the console: the banner, each epoch's line and evaluation, and the
// results; see Callbacks.h.
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <ostream>
#include <string>

namespace dp::rt {
namespace {

/// "  accuracy 0.8123", or nothing for a model without one (a regression).
std::string accuracyText(double accuracy) {
  if (std::isnan(accuracy))
    return "";
  char text[32];
  std::snprintf(text, sizeof(text), "  accuracy %.4f", accuracy);
  return text;
}

class Console final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onTrainBegin() override {
    if (!s_.quiet)
      banner();
  }

  void onEpochEnd(EpochStats &epoch) override {
    if (!s_.quiet)
      s_.out << epochLine(epoch, s_.options.epochs) << std::endl;
  }

  void onEvalEnd(const Evaluation &e) override {
    if (e.final || s_.quiet)
      return;
    const char *set = e.set == Evaluation::Set::Validation ? "val" : "test";
    char line[200];
    if (e.epochEnd)
      std::snprintf(line, sizeof(line), "epoch %lld/%lld  %s loss %.4f%s  learning rate x %.4g\n",
                    static_cast<long long>(e.epoch), static_cast<long long>(s_.options.epochs), set,
                    e.stats.loss, accuracyText(e.stats.accuracy).c_str(),
                    s_.report.epochs.back().lrScale);
    else
      std::snprintf(line, sizeof(line), "step %lld (epoch %lld/%lld)  %s loss %.4f%s\n",
                    static_cast<long long>(e.step), static_cast<long long>(e.epoch),
                    static_cast<long long>(s_.options.epochs), set, e.stats.loss,
                    accuracyText(e.stats.accuracy).c_str());
    s_.out << line;
  }

  void onRunEnd() override {
    if (!s_.printer)
      return;
    const TrainReport &report = s_.report;
    char line[120];
    std::snprintf(line, sizeof(line), "test  loss %.4f%s  (%s samples)\n", report.test.loss,
                  accuracyText(report.test.accuracy).c_str(),
                  withCommas(report.test.samples).c_str());
    s_.out << line;
    if (!report.classes.confusion.empty())
      s_.out << classesText(report.classes, s_.options.topK > 0, s_.options.confusionMatrix);
    if (!s_.options.quiet) {
      printPhaseTable(report.phases, s_.out);
      if (report.compute.steps > 0 && report.compute.stepFlops > 0)
        s_.out << computeLine(report.compute, s_.job.threads().effective()) << "\n";
    }
    if (!s_.options.quiet && s_.job.collectives())
      s_.out << "allreduce: " << std::fixed << std::setprecision(3) << report.allreduceSeconds
             << " s averaging buckets, " << report.allreduceWaitSeconds
             << " s of replica time waiting for them (the rest overlapped compute)\n"
             << std::defaultfloat;
    s_.out << std::flush;
  }

private:
  /// The model, the job's layout, the data, the threads and the input.
  void banner() {
    const Plan &plan = s_.job.program().plan();
    const TrainReport &report = s_.report;
    const ThreadChoice &threads = s_.job.threads();
    std::ostream &out = s_.out;
    const int64_t full = s_.batcher->numBatches();
    const int64_t perEpoch = s_.options.stepsPerEpoch;
    const int64_t steps = perEpoch > 0 && perEpoch < full ? perEpoch : full;
    out << "model " << (plan.model.empty() ? "(unnamed)" : plan.model) << ": "
        << withCommas(report.params) << " parameters, batch " << plan.batch << ", "
        << (targetWidth(plan) > 0 ? targetsText(plan)
                                  : std::to_string(numClasses(plan)) + " classes")
        << "\n";
    layout();
    if (s_.options.predict) {
      out << "predict: no training; the weights "
          << (s_.options.initParamsPath.empty() ? std::string("the plan starts from")
                                                : "of " + s_.options.initParamsPath)
          << "\n";
    } else {
      out << "train " << withCommas(s_.train->size()) << " samples: " << steps
          << " steps per epoch";
      if (steps < full)
        out << " (--steps-per-epoch: " << withCommas(steps * plan.batch)
            << " samples of each shuffled epoch)";
      else if (int64_t dropped = s_.train->size() - s_.batcher->samplesPerEpoch())
        out << " (the last " << dropped
            << " samples of each shuffled epoch do not fill a batch and are skipped)";
      if (s_.options.maxSteps > 0 && s_.options.maxSteps < steps * s_.options.epochs)
        out << "; the run stops after " << withCommas(s_.options.maxSteps)
            << " steps (--max-steps)";
      out << "\n";
      if (!s_.options.initParamsPath.empty())
        out << "init-params: training starts from the weights of " << s_.options.initParamsPath
            << "\n";
    }
    if (const Dataset *v = s_.validation) {
      out << "validation " << withCommas(v->size()) << " samples";
      if (s_.options.validationDir.empty())
        out << ": the last " << s_.options.validationSplit * 100 << "% of the training set";
      else
        out << " (" << v->imagesPath() << ")";
      out << ", evaluated after every epoch";
      if (s_.options.evalEvery > 0)
        out << " and every " << s_.options.evalEvery << " steps";
      out << "\n";
    }
    out << "test " << withCommas(s_.test->size()) << " samples";
    if (s_.validation)
      out << ", evaluated once, after training";
    out << "\n";
    if (threads.leftCoresOut())
      out << "threads: " << threads.threads << " of this process's " << threads.allowed
          << " cores: " << threads.why() << " (--threads " << threads.allowed
          << " uses them all)\n";
    if (report.threads > 0)
      out << "compute threads: " << report.threads << " per process ("
          << (s_.options.threadsFromCheckpoint ? std::string("the checkpoint's run's")
              : threads.how == "auto"          ? std::string("auto")
                                               : threads.how)
          << (s_.options.reproducible ? "; --reproducible: the same bits with any count)\n"
                                      : "; results depend on the count)\n");
    input();
    out << std::flush;
  }

  /// The job's processes, replicas or servers and workers, and how gradients are summed.
  void layout() {
    const Plan &plan = s_.job.program().plan();
    const TrainReport &report = s_.report;
    ProcessGroup &group = s_.job.group();
    std::ostream &out = s_.out;
    if (s_.job.pushPull())
      out << "parameter servers: " << s_.job.jobSize() - report.processes << " + "
          << report.processes << " workers ("
          << (plan.sync             ? std::string("synchronous")
              : plan.staleness >= 0 ? "staleness " + std::to_string(plan.staleness)
                                    : std::string("asynchronous"))
          << "), " << plan.batch / report.processes << " samples per worker and step; worker "
          << group.rank() << " is rank " << s_.job.jobRank() << " of " << s_.job.jobSize() << "\n";
    else if (report.replicas * report.processes > 1)
      out << "data parallel: " << report.processes << " process(es) x " << report.replicas
          << " replica(s), " << plan.batch / (report.replicas * report.processes)
          << " samples each per step; " << group.launch().describe() << "\n";
    if (plan.accumulation > 1)
      out << "gradient accumulation: each device runs a step in " << plan.accumulation
          << " micro-shards of "
          << plan.batch / (int64_t(report.replicas) * report.processes * plan.accumulation)
          << " samples, one optimizer step per batch\n";
    if (plan.shardsOptimizerState()) {
      // The state each replica of this process holds, from the plan's optimizer-state
      // parameters (under sharding over the processes, this process's share).
      std::vector<int64_t> held(report.replicas, 0);
      int64_t whole = 0;
      for (size_t i : plan.logicalParams())
        if (plan.params[i].kind == ParamKind::OptimizerState)
          whole += int64_t(plan.buffers[plan.params[i].buffer].bytes());
      for (const ParamDesc &p : plan.params)
        if (const BufferDesc &b = plan.buffers[p.buffer];
            p.kind == ParamKind::OptimizerState && b.device < report.replicas && plan.holds(p))
          held[b.device] += int64_t(b.bytes());
      if (plan.shardsAcrossProcesses())
        out << "optimizer state: sharded over the " << report.replicas * report.processes
            << " replicas of the job, each parameter updated by one and broadcast to the "
               "others; MiB by replica of this process:";
      else
        out << "optimizer state: sharded over the " << report.replicas
            << " replicas of each process, each parameter updated by one and broadcast to the "
               "others; MiB by replica:";
      char mib[32];
      for (int64_t bytes : held) {
        std::snprintf(mib, sizeof(mib), " %.2f", bytes / 1048576.0);
        out << mib;
      }
      std::snprintf(mib, sizeof(mib), "%.2f", whole / 1048576.0);
      out << " (unsharded " << mib << ")\n";
    }
    if (group.size() > 1 && !s_.job.pushPull())
      out << "gradient sums: " << report.allreduceLayout
          << (report.allreduceLayout == "flat"
                  ? " (one allreduce over all " + std::to_string(group.size()) + " ranks)"
              : report.allreduceLayout.rfind("tree", 0) == 0
                  ? ": up the binary tree over the ranks' indices, ((0 + 1) + (2 + 3)) + ..., "
                    "then back down it"
                  : ": within each host, then across one leader per host, then back")
          << (plan.shardsAcrossProcesses()
                  ? "; the buckets only updates read are reduce-scattered: each rank receives "
                    "the sums of the parameters it updates"
                  : "")
          << "\n";
    const auto powerOfTwo = [](int64_t n) { return n > 0 && (n & (n - 1)) == 0; };
    if (s_.options.reproducible && !(powerOfTwo(report.replicas) && powerOfTwo(report.processes) &&
                                     powerOfTwo(plan.accumulation)))
      out << "note: --reproducible: " << report.processes << " process(es) x " << report.replicas
          << " replica(s) x " << plan.accumulation
          << " micro-shard(s) are not all powers of two: the bits do not depend on the thread "
             "count or the order the ranks arrive in, but other layouts sum in trees of other "
             "shapes\n";
  }

  /// Who gathers the input rows.
  void input() {
    std::ostream &out = s_.out;
    if (s_.prefetch > 0)
      out << "input: a loader thread gathers " << s_.prefetch << " batch"
          << (s_.prefetch == 1 ? "" : "es") << " ahead of the steps\n";
    else if (s_.job.pushPull() && s_.job.sharesBatches())
      out << "input: gathered by the compute threads before each step (shared batches: a "
             "worker learns its next rows a step ahead)\n";
    else
      out << "input: gathered by the compute threads before each step"
          << (s_.options.prefetch < 0
                  ? " (they keep this process's " + std::to_string(s_.cores) + " core" +
                        (s_.cores == 1 ? "" : "s") + " busy; --prefetch N adds a loader thread)"
                  : std::string())
          << "\n";
  }
};

} // namespace

std::unique_ptr<Callback> makeConsole(RunState &state) { return std::make_unique<Console>(state); }

} // namespace dp::rt
