// Span recording and the trace-event JSON; see Trace.h.
#include "runtime/base/Trace.h"

#include "runtime/base/Files.h"
#include "runtime/base/Json.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace dp::rt::trace {

namespace detail {
std::atomic<bool> gEnabled{false};
}

namespace {

struct SpanRecord {
  int64_t begin, end;
  const char *name;
  int64_t arg;
  Category category;
  bool async;
};

/// The spans of the threads of one name.
struct Row {
  std::string name;
  int tid = 0;
  std::mutex mutex;
  std::vector<SpanRecord> spans;
};

struct State {
  std::mutex mutex;
  std::vector<std::unique_ptr<Row>> rows;
  std::unordered_set<std::string> names;
  size_t limit = 0;
  std::atomic<size_t> taken{0}, dropped{0};
  /// Bumped by reset(): a thread's cached row of an older generation is looked up again.
  std::atomic<uint64_t> generation{1};
  int unnamed = 0;
};

State &state() {
  static State s;
  return s;
}

thread_local Row *tRow = nullptr;
thread_local uint64_t tGeneration = 0;

Row *rowNamed(State &s, const std::string &name) {
  // The caller holds s.mutex.
  for (auto &row : s.rows)
    if (row->name == name)
      return row.get();
  auto row = std::make_unique<Row>();
  row->name = name;
  row->tid = static_cast<int>(s.rows.size()) + 1;
  s.rows.push_back(std::move(row));
  return s.rows.back().get();
}

Row *currentRow() {
  State &s = state();
  const uint64_t generation = s.generation.load(std::memory_order_acquire);
  if (!tRow || tGeneration != generation) {
    std::lock_guard<std::mutex> lock(s.mutex);
    tRow = rowNamed(s, "thread " + std::to_string(++s.unnamed));
    tGeneration = generation;
  }
  return tRow;
}

void appendMicros(std::string &out, int64_t nanos) {
  char text[40];
  std::snprintf(text, sizeof(text), "%lld.%03lld", static_cast<long long>(nanos / 1000),
                static_cast<long long>(std::abs(nanos % 1000)));
  if (nanos < 0 && nanos > -1000)
    out += '-';
  out += text;
}

} // namespace

const char *categoryName(Category c) {
  switch (c) {
  case Category::Step:
    return "step";
  case Category::Kernel:
    return "kernel";
  case Category::Collective:
    return "collective";
  case Category::Input:
    return "input";
  case Category::Host:
    return "host";
  }
  return "other";
}

void enable(size_t maxSpans) {
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.limit = maxSpans;
  }
  detail::gEnabled = true;
}

int64_t now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void nameThread(const std::string &name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  tRow = rowNamed(s, name);
  tGeneration = s.generation.load(std::memory_order_acquire);
}

const char *intern(const std::string &name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.names.insert(name).first->c_str();
}

namespace {

void append(Category category, const char *name, int64_t arg, int64_t beginNs, int64_t endNs,
            bool async) {
  State &s = state();
  if (s.taken.fetch_add(1, std::memory_order_relaxed) >= s.limit) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Row *row = currentRow();
  std::lock_guard<std::mutex> lock(row->mutex);
  row->spans.push_back({beginNs, std::max(beginNs, endNs), name, arg, category, async});
}

} // namespace

void record(Category category, const char *name, int64_t arg, int64_t beginNs, int64_t endNs) {
  append(category, name, arg, beginNs, endNs, false);
}

void recordAsync(Category category, const char *name, int64_t arg, int64_t beginNs,
                 int64_t endNs) {
  append(category, name, arg, beginNs, endNs, true);
}

std::vector<SpanView> spansOf(const std::string &thread) {
  State &s = state();
  Row *found = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto &row : s.rows)
      if (row->name == thread)
        found = row.get();
  }
  std::vector<SpanView> out;
  if (!found)
    return out;
  std::lock_guard<std::mutex> lock(found->mutex);
  for (const SpanRecord &r : found->spans)
    out.push_back({r.name, r.arg, r.begin, r.end, r.category, r.async});
  return out;
}

size_t recordedSpans() {
  State &s = state();
  return std::min(s.taken.load(), s.limit);
}

size_t droppedSpans() { return state().dropped.load(); }

std::string eventsJson(int pid, const std::string &processName, int64_t zeroNs) {
  State &s = state();
  std::vector<Row *> rows;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto &row : s.rows)
      rows.push_back(row.get());
  }
  const std::string pidText = std::to_string(pid);
  std::string out;
  // One allocation: a growing string would hold twice the text at its last doubling.
  size_t spans = 0;
  for (Row *row : rows) {
    std::lock_guard<std::mutex> lock(row->mutex);
    spans += row->spans.size();
  }
  out.reserve(256 * (rows.size() + 2) + spans * 130);
  auto metadata = [&](const char *what, int tid, const std::string &key,
                      const std::string &value) {
    out += "{\"name\":\"";
    out += what;
    out += "\",\"ph\":\"M\",\"pid\":" + pidText + ",\"tid\":" + std::to_string(tid) +
           ",\"args\":{\"" + key + "\":" + value + "}},\n";
  };
  std::string quoted = "\"";
  appendJsonEscaped(quoted, processName);
  quoted += "\"";
  int64_t asyncIds = 0;
  metadata("process_name", 0, "name", quoted);
  metadata("process_sort_index", 0, "sort_index", pidText);
  for (Row *row : rows) {
    std::lock_guard<std::mutex> lock(row->mutex);
    if (row->spans.empty())
      continue;
    std::string name = "\"";
    appendJsonEscaped(name, row->name);
    name += "\"";
    metadata("thread_name", row->tid, "name", name);
    metadata("thread_sort_index", row->tid, "sort_index", std::to_string(row->tid));
    // By begin, and an enclosing span before the spans it holds.
    std::vector<SpanRecord> spans = row->spans;
    std::stable_sort(spans.begin(), spans.end(), [](const SpanRecord &a, const SpanRecord &b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    const std::string where = ",\"pid\":" + pidText + ",\"tid\":" + std::to_string(row->tid);
    auto event = [&](const SpanRecord &span, const char *phase, int64_t at,
                     const std::string &extra) {
      out += "{\"name\":\"";
      appendJsonEscaped(out, span.name);
      out += "\",\"cat\":\"";
      out += categoryName(span.category);
      out += "\",\"ph\":\"";
      out += phase;
      out += "\"" + where + ",\"ts\":";
      appendMicros(out, at - zeroNs);
      out += extra;
      if (span.arg >= 0)
        out += ",\"args\":{\"n\":" + std::to_string(span.arg) + "}";
      out += "},\n";
    };
    for (const SpanRecord &span : spans) {
      if (span.async) {
        // A pair matched by its id, unique across the processes of a merged trace.
        const std::string id = ",\"id\":\"" + pidText + "." + std::to_string(++asyncIds) + "\"";
        event(span, "b", span.begin, id);
        event(span, "e", span.end, id);
        continue;
      }
      std::string duration = ",\"dur\":";
      appendMicros(duration, span.end - span.begin);
      event(span, "X", span.begin, duration);
    }
  }
  return out;
}

uint64_t writeTraceFile(const std::string &path, const std::vector<const std::string *> &events,
                        const std::string &metadataJson) {
  // Streamed from the parts: no copy of the whole text is made.
  AtomicFileWriter file(path);
  const std::string head = "{\"traceEvents\":[\n";
  file.write(head.data(), head.size());
  uint64_t written = head.size();
  size_t last = events.size();
  for (size_t i = 0; i < events.size(); ++i)
    if (!events[i]->empty())
      last = i;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string &part = *events[i];
    size_t bytes = part.size();
    if (i == last) // the array's last element takes no comma
      while (bytes > 0 && (part[bytes - 1] == '\n' || part[bytes - 1] == ','))
        --bytes;
    file.write(part.data(), bytes);
    written += bytes;
  }
  const std::string tail = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" +
                           (metadataJson.empty() ? std::string("{}") : metadataJson) + "}\n";
  file.write(tail.data(), tail.size());
  file.commit();
  return written + tail.size();
}

std::string traceFile(const std::string &events, const std::string &metadataJson) {
  std::string body = events;
  while (!body.empty() && (body.back() == '\n' || body.back() == ','))
    body.pop_back();
  return "{\"traceEvents\":[\n" + body + "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":" +
         (metadataJson.empty() ? std::string("{}") : metadataJson) + "}\n";
}

void reset() {
  State &s = state();
  detail::gEnabled = false;
  std::lock_guard<std::mutex> lock(s.mutex);
  s.rows.clear();
  s.limit = 0;
  s.taken = 0;
  s.dropped = 0;
  s.unnamed = 0;
  s.generation.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace dp::rt::trace
