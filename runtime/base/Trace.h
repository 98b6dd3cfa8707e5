// The timeline behind `dprun --trace FILE`: spans (a name, a begin and an end) recorded per
// thread, written as Chrome trace-event JSON (Perfetto, chrome://tracing). Off unless enabled,
// when every recording site costs one relaxed load. When enabled, a span costs two clock reads
// and an append to its thread's buffer; the process keeps at most the enabled number of spans
// and counts the ones past it as dropped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt::trace {

/// What a span is; the trace's "cat" field.
enum class Category : uint8_t {
  Step,       // a train or eval step on a replica's compute stream
  Kernel,     // one kernel of a step
  Collective, // allreduce start and wait on a replica, a bucket's averaging on the comm thread
  Input,      // gathering a batch, and waiting for one
  Host,       // the host's phases: an epoch, an evaluation, a checkpoint write
};
const char *categoryName(Category c);

namespace detail {
extern std::atomic<bool> gEnabled;
}

/// Whether spans are recorded. Set once by enable(), before the threads that record start.
inline bool enabled() { return detail::gEnabled.load(std::memory_order_relaxed); }

/// Starts recording, keeping at most `maxSpans` spans in this process.
void enable(size_t maxSpans);

/// Nanoseconds of the clock the spans use (steady, shared by the processes of one host).
int64_t now();

/// Names the calling thread in the trace ("device 0 compute"); threads of the same name
/// share one row. A thread that records without a name is "thread N".
void nameThread(const std::string &name);

/// A stable copy of `name` for spans whose names are built at run time (kernel kinds).
const char *intern(const std::string &name);

/// Records a span of the calling thread. `name` must outlive the trace (a literal or an
/// intern()ed string); `arg` (>= 0) is shown as its "n" argument (a step, a batch, a bucket).
void record(Category category, const char *name, int64_t arg, int64_t beginNs, int64_t endNs);

/// Records a span that may overlap others of its thread (a bucket averaged while the next
/// is under way): an async span, drawn on a track of its own under the process.
void recordAsync(Category category, const char *name, int64_t arg, int64_t beginNs,
                 int64_t endNs);

/// The span from construction to destruction, when recording is on.
class Span {
public:
  Span(Category category, const char *name, int64_t arg = -1)
      : category_(category), name_(name), arg_(arg), begin_(enabled() ? now() : 0) {}
  ~Span() {
    if (enabled())
      record(category_, name_, arg_, begin_, now());
  }
  Span(const Span &) = delete;
  Span &operator=(const Span &) = delete;

private:
  Category category_;
  const char *name_;
  int64_t arg_;
  int64_t begin_;
};

/// A recorded span, as profile summaries read it.
struct SpanView {
  const char *name;
  int64_t arg, beginNs, endNs;
  Category category;
  bool async;
};
/// The spans recorded so far on the thread row named `thread` (empty when there is none).
std::vector<SpanView> spansOf(const std::string &thread);

/// Spans recorded so far, and those dropped past the limit.
size_t recordedSpans();
size_t droppedSpans();

/// The recorded spans as trace-event JSON objects, one per line, each line ending in ",\n":
/// thread-name metadata first, then per thread its "X" (complete) events, which nest, and
/// its async spans as "b"/"e" pairs; pid `pid`, timestamps in microseconds since `zeroNs`. `processName` names the pid's row group ("rank 1 (node3)").
std::string eventsJson(int pid, const std::string &processName, int64_t zeroNs);

/// A whole trace file around `events` (eventsJson() of one or more processes).
std::string traceFile(const std::string &events, const std::string &metadataJson);

/// The same file written at `path` (atomically) from the events of each process in turn,
/// without a copy of the whole text in memory. Returns its size in bytes.
uint64_t writeTraceFile(const std::string &path, const std::vector<const std::string *> &events,
                        const std::string &metadataJson);

/// Forgets every span and thread name and turns recording off (tests).
void reset();

} // namespace dp::rt::trace
