// --profile FILE: the timeline's train steps as per-kernel and per-bucket times (profileJson),
// written by rank 0 at the end; see Callbacks.h.
#include "runtime/base/Files.h"
#include "runtime/base/Json.h"
#include "runtime/base/Trace.h"
#include "runtime/train/callbacks/Callbacks.h"

#include <algorithm>
#include <map>
#include <ostream>

namespace dp::rt {

std::string profileJson(const Plan &plan, int ranks, const std::string &layout,
                        int computeThreads) {
  std::vector<trace::SpanView> spans = trace::spansOf("device 0 compute");
  // Spans of one thread nest: by begin (an enclosing span first), each kernel and wait
  // follows the step that holds it.
  std::sort(spans.begin(), spans.end(), [](const auto &a, const auto &b) {
    return a.beginNs != b.beginNs ? a.beginNs < b.beginNs : a.endNs > b.endNs;
  });
  struct Stat {
    std::string kind;
    std::vector<double> us;
  };
  std::map<int64_t, Stat> kernels, waits;
  std::vector<double> stepUs;
  const trace::SpanView *step = nullptr;
  bool counted = false; // whether the current step is measured (not the first train step)
  int64_t trainSteps = 0;
  for (const auto &s : spans) {
    if (s.async)
      continue;
    if (s.category == trace::Category::Step) {
      const bool train = std::string(s.name) == "train step";
      step = train ? &s : nullptr;
      counted = train && trainSteps++ > 0;
      if (counted)
        stepUs.push_back(double(s.endNs - s.beginNs) / 1e3);
      continue;
    }
    if (!step || !counted || s.beginNs < step->beginNs || s.endNs > step->endNs)
      continue;
    if (s.category == trace::Category::Kernel) {
      Stat &k = kernels[s.arg];
      k.kind = s.name;
      k.us.push_back(double(s.endNs - s.beginNs) / 1e3);
    } else if (std::string(s.name) == "allreduce wait") {
      waits[s.arg].us.push_back(double(s.endNs - s.beginNs) / 1e3);
    }
  }
  auto mean = [](const std::vector<double> &v) {
    double sum = 0;
    for (double x : v)
      sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
  };
  auto median = [](std::vector<double> v) {
    if (v.empty())
      return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  auto number = [](double x) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", x);
    return std::string(text);
  };
  std::string json =
      "{\n  \"model\": " + jsonString(plan.model) +
      ",\n  \"global_batch\": " + std::to_string(plan.batch) +
      ",\n  \"replicas_per_process\": " + std::to_string(plan.devicesPerProcess) +
      ",\n  \"processes\": " + std::to_string(ranks) +
      ",\n  \"nodes\": " + std::to_string(plan.nodes) +
      ",\n  \"allreduce_layout\": " + jsonString(layout) +
      (computeThreads > 0 ? ",\n  \"compute_threads\": " + std::to_string(computeThreads)
                          : std::string()) +
      ",\n  \"steps_measured\": " + std::to_string(stepUs.size()) +
      ",\n  \"step_us\": {\"mean\": " + number(mean(stepUs)) +
      ", \"median\": " + number(median(stepUs)) + "},\n  \"kernels\": [";
  bool first = true;
  for (const auto &[index, k] : kernels) {
    json += std::string(first ? "\n" : ",\n") + "    {\"index\": " + std::to_string(index) +
            ", \"kind\": " + jsonString(k.kind) + ", \"mean_us\": " + number(mean(k.us)) +
            ", \"median_us\": " + number(median(k.us)) + "}";
    first = false;
  }
  json += "\n  ],\n  \"buckets\": [";
  first = true;
  for (const CollectiveDesc &c : plan.collectives) {
    auto wait = waits.find(c.bucket);
    const double waited = wait == waits.end() ? 0.0 : mean(wait->second.us);
    json += std::string(first ? "\n" : ",\n") + "    {\"bucket\": " + std::to_string(c.bucket) +
            ", \"bytes\": " + std::to_string(c.elements * int64_t(dtypeSize(c.dtype))) +
            ", \"wait_mean_us\": " + number(waited) + "}";
    first = false;
  }
  return json + "\n  ]\n}\n";
}

namespace {

class Profile final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (!s_.printer)
      return;
    ProcessGroup &group = s_.job.group();
    writeFileAtomically(s_.options.profilePath,
                        profileJson(s_.job.program().plan(), group.size(),
                                    group.size() > 1 ? group.allreduceLayout() : "flat",
                                    s_.report.threads));
    if (!s_.quiet)
      s_.out << "profile " << s_.options.profilePath << " (device 0 of rank 0)\n" << std::flush;
  }
};

} // namespace

std::unique_ptr<Callback> makeProfile(RunState &state) { return std::make_unique<Profile>(state); }

} // namespace dp::rt
