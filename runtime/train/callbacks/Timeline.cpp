// --trace FILE: the run's timeline (Chrome trace-event JSON), merged by rank 0 or written per
// rank; see Callbacks.h.
#include "runtime/base/Text.h"
#include "runtime/base/Trace.h"
#include "runtime/train/Report.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <iostream>

namespace dp::rt {

std::string tracePathOfRank(const std::string &path, int rank) {
  const std::string suffix = ".json";
  const bool json = path.size() > suffix.size() &&
                    path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (json ? path.substr(0, path.size() - suffix.size()) : path) + ".rank" +
         std::to_string(rank) + suffix;
}

int64_t Timeline::start(ProcessGroup &group, double timeout) {
  // On every rank at once (after a sum over the ranks: within its latency), so that the ranks'
  // spans line up even where their clocks differ.
  double ready = 0;
  group.sumDoubles(&ready, 1, timeout, "the start of the timeline");
  return trace::now();
}

void Timeline::onRunEnd() { write(); }

void Timeline::onStop(Stop &) {
  // The ranks stopped at the same boundary: the merge can still run.
  try {
    write();
  } catch (const Error &error) {
    std::cerr << std::string("dprun: warning: no timeline: ") + error.what() + "\n";
  }
}

/// The timeline of the run so far: rank 0 merges every rank's (a collective), or each rank
/// writes its own.
void Timeline::write() {
  ProcessGroup &group = s_.job.group();
  const TrainOptions &options = s_.options;
  const int64_t zero = zero_;
  const int replicas = s_.report.replicas;
  const double timeout = s_.timeout;
  std::ostream &out = s_.out;
  const bool quiet = s_.quiet;
  const std::string process = "rank " + std::to_string(group.rank()) + " (" +
                              (group.launch().host.empty() ? "host" : group.launch().host) + ")";
  const std::string events = trace::eventsJson(group.rank(), process, zero);
  double counts[2] = {double(trace::recordedSpans()), double(trace::droppedSpans())};
  if (trace::droppedSpans() > 0)
    std::cerr << "dprun: warning: " + process + ": the timeline kept the first " +
                     withCommas(int64_t(kMaxTraceSpans)) + " spans and dropped " +
                     withCommas(int64_t(trace::droppedSpans())) +
                     " (--max-steps makes a shorter run)\n"
              << std::flush;
  auto metadata = [&](int ranks) {
    return "{\"tool\":\"dprun\",\"ranks\":" + std::to_string(ranks) +
           ",\"replicas_per_process\":" + std::to_string(replicas) +
           ",\"spans\":" + std::to_string(int64_t(counts[0])) +
           ",\"dropped_spans\":" + std::to_string(int64_t(counts[1])) + "}";
  };
  std::string path = options.tracePath;
  uint64_t bytes = 0;
  if (options.tracePerRank || group.size() == 1) {
    if (group.size() > 1)
      path = tracePathOfRank(path, group.rank());
    bytes = trace::writeTraceFile(path, {&events}, metadata(1));
  } else {
    group.sumDoubles(counts, 2, timeout, "the count of the timeline's spans");
    const std::vector<std::string> parts = group.gatherBytes(events, 0, timeout);
    if (group.rank() != 0)
      return;
    std::vector<const std::string *> all;
    for (const std::string &part : parts)
      all.push_back(&part);
    bytes = trace::writeTraceFile(path, all, metadata(group.size()));
  }
  if (!quiet && (group.rank() == 0 || options.tracePerRank))
    out << "timeline " << path << " (" << withCommas(int64_t(counts[0])) << " spans, "
        << sizeText(bytes) << ")\n"
        << std::flush;
}

} // namespace dp::rt
