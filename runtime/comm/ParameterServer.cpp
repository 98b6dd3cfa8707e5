// The parameter-server exchanges (Comm.h: PushPull on a worker, ParameterServer on a server),
// point-to-point on the job group's communication thread.
//
// Messages, on the group's message communicator: a worker's push of bucket b carries its
// gradients (tag pushTag(b)); the server's answer carries the bucket's parameters in the same
// layout (replyTag(b)); a worker that has pushed its last gradient sends its step count
// (kDoneTag). A worker has at most one push of a bucket in flight: it pulls before it pushes the
// bucket again, so each (bucket, worker) pair needs one receive buffer and one reply buffer.
#include "runtime/comm/Internal.h"

#include "runtime/base/Interrupt.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>

namespace dp::rt {

using comm::Clock;
using comm::Progress;
using comm::secondsSince;

namespace {

constexpr int kDoneTag = 7;
int pushTag(int bucket) { return 100 + 2 * bucket; }
int replyTag(int bucket) { return 101 + 2 * bucket; }

/// The parameters of `b` copied into `packed`, each at its slot (64-byte boundaries, as the
/// bucket holds their gradients); or, with `unpack`, the other way.
void copyParams(const PsBucketInfo &b, float *packed, bool unpack) {
  int64_t offset = 0;
  for (const auto &[data, count] : b.params) {
    if (unpack)
      std::memcpy(data, packed + offset, count * sizeof(float));
    else
      std::memcpy(packed + offset, data, count * sizeof(float));
    offset += (count + 15) / 16 * 16;
  }
}

std::string secondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

/// On the communication thread: waits up to `seconds` for the sends of `tokens` (0: done) to
/// complete, zeroing each one that does; whether all did.
bool awaitSends(comm::GroupImpl &group, std::vector<int64_t> &tokens, double seconds) {
  Clock::time_point start = Clock::now();
  comm::Backoff backoff;
  for (;;) {
    bool pending = false;
    for (int64_t &token : tokens)
      if (token && group.testMessage(token))
        token = 0;
      else if (token)
        pending = true;
    if (!pending)
      return true;
    if (secondsSince(start) > seconds)
      return false;
    backoff.pause();
  }
}

/// On the communication thread: gives the sends still in flight a second (each reads a buffer
/// its owner is about to free), then cancels what is left of them and of `receives`.
void endMessages(comm::GroupImpl &group, std::vector<int64_t> sends,
                 const std::vector<int64_t> &receives) {
  awaitSends(group, sends, 1.0);
  for (int64_t token : sends)
    if (token)
      group.cancelMessage(token);
  for (int64_t token : receives)
    if (token)
      group.cancelMessage(token);
}

comm::GroupImpl &groupOf(ProcessGroup &group) {
  auto *impl = dynamic_cast<comm::GroupImpl *>(&group);
  if (!impl)
    throw Error(ErrorKind::Runtime, "parameter servers need a process group made by "
                                    "ProcessGroup::create");
  return *impl;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// A worker.

struct PushPull::Impl final : comm::CommClient {
  enum class State { Idle, Requested, Posted, Answered };
  struct Slot {
    PsBucketInfo info;
    std::vector<float> answer; // the server's parameters, as received
    // Under mu:
    State state = State::Idle;
    const float *outgoing = nullptr;
    int64_t pushes = 0;
    // Communication thread only:
    int64_t sendToken = 0, receiveToken = 0;
    bool sent = false, received = false;
  };

  Impl(ProcessGroup &g, std::vector<PsBucketInfo> buckets, double timeoutSec)
      : group(groupOf(g)), timeoutSec(timeoutSec) {
    for (PsBucketInfo &b : buckets) {
      if (b.index < 0 || b.elements <= 0)
        throw Error(ErrorKind::Runtime, "PushPull: bucket " + std::to_string(b.index) +
                                            " has " + std::to_string(b.elements) + " elements");
      if (static_cast<size_t>(b.index) >= positions.size())
        positions.resize(b.index + 1, -1);
      positions[b.index] = static_cast<int>(slots.size());
      Slot slot;
      slot.info = std::move(b);
      slot.answer.resize(slot.info.elements);
      slots.push_back(std::move(slot));
    }
    group.attach(this);
  }

  Slot &slotOf(int bucket) {
    if (bucket < 0 || static_cast<size_t>(bucket) >= positions.size() || positions[bucket] < 0)
      throw Error(ErrorKind::Runtime,
                  "PushPull: bucket " + std::to_string(bucket) + " is not in the manifest");
    return slots[positions[bucket]];
  }

  std::string describe(const Slot &s) const {
    return "bucket " + std::to_string(s.info.index) + " (" + s.info.tensors + ") of server rank " +
           std::to_string(s.info.server);
  }

  Progress progress() override {
    bool advanced = false, inFlight = false;
    std::lock_guard<std::mutex> lock(mu);
    for (Slot &s : slots) {
      if (s.state == State::Requested) {
        const int64_t bytes = s.info.elements * int64_t(sizeof(float));
        s.receiveToken = group.postReceive(s.answer.data(), bytes, s.info.server,
                                           replyTag(s.info.index));
        s.sendToken = group.postSend(s.outgoing, bytes, s.info.server, pushTag(s.info.index));
        s.sent = s.received = false;
        s.state = State::Posted;
        advanced = true;
      }
      if (s.state != State::Posted)
        continue;
      s.sent = s.sent || group.testMessage(s.sendToken);
      s.received = s.received || group.testMessage(s.receiveToken);
      if (s.sent && s.received) {
        s.state = State::Answered;
        advanced = true;
        cv.notify_all();
      } else {
        inFlight = true;
      }
    }
    if (advanced)
      return Progress::Advanced;
    if (inFlight)
      return waiters > 0 ? Progress::Urgent : Progress::Waiting;
    return Progress::Idle;
  }

  std::string state(int64_t &collective) override {
    collective = group.collectiveSeq();
    std::lock_guard<std::mutex> lock(mu);
    for (const Slot &s : slots)
      if (s.state == State::Posted && waiters > 0)
        return "waiting for the answer to its push of " + describe(s);
    return "";
  }

  void push(int bucket, const float *data) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failed)
        throw Error(ErrorKind::Launch, error);
      Slot &s = slotOf(bucket);
      if (s.state != State::Idle)
        throw Error(ErrorKind::Runtime, "PushPull: " + describe(s) +
                                            " pushed again before its pull");
      s.outgoing = data;
      s.state = State::Requested;
      ++s.pushes;
    }
    group.wake();
  }

  void pull(int bucket) {
    Clock::time_point start = Clock::now();
    std::unique_lock<std::mutex> lock(mu);
    Slot &s = slotOf(bucket);
    if (s.state == State::Idle)
      throw Error(ErrorKind::Runtime, "PushPull: " + describe(s) + " pulled before its push");
    ++waiters;
    group.wake();
    // A server that holds the answer back for a stopped worker names that worker at the
    // timeout; this worker gives it a second more before it blames the server.
    const double deadline = timeoutSec > 0 ? timeoutSec + 1 : 0;
    while (!failed && s.state != State::Answered) {
      if (deadline > 0 && secondsSince(start) > deadline) {
        --waiters;
        failed = true;
        error = "the pull of " + describe(s) + " had no answer after " +
                secondsText(deadline) + " (push #" + std::to_string(s.pushes) +
                "): the server is dead or hung, or holds the answer back for a worker that is";
        cv.notify_all();
        throw Error(ErrorKind::Launch, error);
      }
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    --waiters;
    if (failed)
      throw Error(ErrorKind::Launch, error);
    copyParams(s.info, s.answer.data(), /*unpack=*/true);
    s.state = State::Idle;
  }

  void finish(double timeout) {
    std::vector<int> servers;
    for (const Slot &s : slots)
      if (std::find(servers.begin(), servers.end(), s.info.server) == servers.end())
        servers.push_back(s.info.server);
    int64_t steps = slots.empty() ? 0 : slots.front().pushes;
    group.call([&] {
      std::vector<int64_t> tokens;
      for (int server : servers)
        tokens.push_back(group.postSend(&steps, sizeof(steps), server, kDoneTag));
      if (!awaitSends(group, tokens, timeout > 0 ? timeout : 1e9))
        throw Error(ErrorKind::Launch, "a server did not take this worker's end within " +
                                           secondsText(timeout));
    });
  }

  void abort(const std::string &why) {
    std::lock_guard<std::mutex> lock(mu);
    if (!failed) {
      failed = true;
      error = why;
    }
    cv.notify_all();
  }

  void shutdown() {
    group.detach(this);
    group.call([&] {
      std::vector<int64_t> sends, receives;
      for (Slot &s : slots)
        if (s.state == State::Posted) {
          sends.push_back(s.sent ? 0 : s.sendToken);
          receives.push_back(s.received ? 0 : s.receiveToken);
        }
      endMessages(group, sends, receives);
    });
  }

  comm::GroupImpl &group;
  const double timeoutSec;
  std::vector<Slot> slots;
  std::vector<int> positions;
  std::mutex mu;
  std::condition_variable cv;
  bool failed = false;
  std::string error;
  int waiters = 0;
};

PushPull::PushPull(ProcessGroup &job, std::vector<PsBucketInfo> buckets, double timeoutSec)
    : impl_(std::make_unique<Impl>(job, std::move(buckets), timeoutSec)) {}

PushPull::~PushPull() {
  try {
    impl_->shutdown();
  } catch (...) {
  }
}

void PushPull::push(int bucket, const float *data) { impl_->push(bucket, data); }
void PushPull::pull(int bucket) { impl_->pull(bucket); }
void PushPull::finish(double timeoutSec) { impl_->finish(timeoutSec); }
void PushPull::abort(const std::string &why) { impl_->abort(why); }

// ---------------------------------------------------------------------------------------------
// A server.

struct ParameterServer::Impl final : comm::CommClient {
  /// One worker's side of one bucket.
  struct Lane {
    std::vector<float> gradients; // its last push, as received
    std::vector<float> answer;    // the parameters sent back (asynchronous and stale)
    // Under mu:
    bool arrived = false;  // a push is in `gradients`, not yet consumed
    bool repost = false;   // consumed: receive the next push
    bool waiting = false;  // its answer is held back (the staleness bound)
    bool answerReady = false; // an answer is ready to be sent
    Clock::time_point heldSince;
    int64_t pushes = 0;        // pushes applied
    int64_t pulledVersion = 0; // the bucket's version its last answer carried
    // Communication thread only:
    int64_t receiveToken = 0, sendToken = 0;
  };
  struct Bucket {
    PsBucketInfo info;
    std::vector<Lane> lanes; // by worker
    std::vector<float> shared; // the answer under sync, to every worker
    int64_t version = 0;       // updates applied
    int current = -1;          // the worker whose gradient the updates apply (not sync)
  };

  Impl(ProcessGroup &g, int firstWorker, int workers, int64_t staleness, bool sync,
       std::vector<PsBucketInfo> buckets, double timeoutSec)
      : group(groupOf(g)), firstWorker(firstWorker), workers(workers), staleness(staleness),
        sync(sync), timeoutSec(timeoutSec), started(Clock::now()) {
    for (PsBucketInfo &info : buckets) {
      Bucket b;
      b.info = std::move(info);
      b.lanes.resize(workers);
      for (Lane &lane : b.lanes) {
        lane.gradients.resize(b.info.elements);
        lane.repost = true;
        if (!sync)
          lane.answer.resize(b.info.elements);
      }
      if (sync)
        b.shared.resize(b.info.elements);
      this->buckets.push_back(std::move(b));
    }
    done.assign(workers, false);
    heard.assign(workers, Clock::now());
    doneSteps.assign(workers, 0);
    doneTokens.assign(workers, 0);
    group.attach(this);
    group.wake();
  }

  int worker(int rank) const { return rank - firstWorker; }
  std::string workerName(int w) const {
    return "worker " + std::to_string(w) + " (rank " + std::to_string(firstWorker + w) + ")";
  }

  Progress progress() override {
    bool advanced = false;
    std::lock_guard<std::mutex> lock(mu);
    for (int w = 0; w < workers; ++w) {
      if (!done[w] && !doneTokens[w]) {
        doneTokens[w] = group.postReceive(&doneSteps[w], sizeof(int64_t), firstWorker + w,
                                          kDoneTag);
        advanced = true;
      }
      if (!done[w] && doneTokens[w] && group.testMessage(doneTokens[w])) {
        done[w] = true;
        advanced = true;
        cv.notify_all();
      }
    }
    for (Bucket &b : buckets)
      for (int w = 0; w < workers; ++w) {
        Lane &lane = b.lanes[w];
        if (lane.repost && !done[w]) {
          lane.receiveToken =
              group.postReceive(lane.gradients.data(), b.info.elements * int64_t(sizeof(float)),
                                firstWorker + w, pushTag(b.info.index));
          lane.repost = false;
          advanced = true;
        }
        if (lane.receiveToken && group.testMessage(lane.receiveToken)) {
          lane.receiveToken = 0;
          lane.arrived = true;
          heard[w] = Clock::now();
          arrivals.push_back({static_cast<int>(&b - buckets.data()), w});
          ++gradientsIn;
          advanced = true;
          cv.notify_all();
        }
        if (lane.answerReady) {
          const float *data = sync ? b.shared.data() : lane.answer.data();
          lane.sendToken = group.postSend(data, b.info.elements * int64_t(sizeof(float)),
                                          firstWorker + w, replyTag(b.info.index));
          lane.answerReady = false;
          advanced = true;
        }
        if (lane.sendToken && group.testMessage(lane.sendToken))
          lane.sendToken = 0;
      }
    return advanced ? Progress::Advanced : Progress::Waiting;
  }

  std::string state(int64_t &collective) override {
    collective = group.collectiveSeq();
    return "serving parameters";
  }

  /// Whether an answer to worker w is held back by the staleness bound: it waits for this
  /// server, not the other way round (under mu).
  bool heldBack(int w) const {
    for (const Bucket &b : buckets)
      if (b.lanes[w].waiting)
        return true;
    return false;
  }

  /// Live workers: those that have not finished.
  int live() const { return static_cast<int>(std::count(done.begin(), done.end(), false)); }

  /// Whether worker w's answer for bucket b may go: the staleness bound over live workers.
  bool mayAnswer(const Bucket &b, int w) const {
    if (staleness < 0)
      return true;
    int64_t slowest = INT64_MAX;
    for (int v = 0; v < workers; ++v)
      if (!done[v])
        slowest = std::min(slowest, b.lanes[v].pushes);
    return slowest == INT64_MAX || b.lanes[w].pushes - slowest <= staleness;
  }

  /// Packs the current parameters for worker w and hands them to the thread (under mu).
  void answerLocked(Bucket &b, int w) {
    Lane &lane = b.lanes[w];
    copyParams(b.info, lane.answer.data(), /*unpack=*/false);
    lane.pulledVersion = b.version;
    if (lane.waiting) {
      heldSec += secondsSince(lane.heldSince);
      lane.waiting = false;
    }
    lane.answerReady = true;
  }

  /// Lets go every held answer the bound now allows (under mu).
  bool releaseLocked() {
    bool any = false;
    for (Bucket &b : buckets)
      for (int w = 0; w < workers; ++w)
        if (b.lanes[w].waiting && mayAnswer(b, w)) {
          answerLocked(b, w);
          any = true;
        }
    return any;
  }

  int next(int64_t &updates) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (releaseLocked())
        group.wake();
      if (sync) {
        for (Bucket &b : buckets) {
          const int n = live();
          int arrived = 0;
          for (int w = 0; w < workers; ++w)
            arrived += b.lanes[w].arrived;
          if (n == 0 || arrived < n)
            continue;
          // The mean of every worker's gradient of this step, in worker order.
          bool first = true;
          for (int w = 0; w < workers; ++w) {
            Lane &lane = b.lanes[w];
            if (!lane.arrived)
              continue;
            if (first)
              std::memcpy(b.info.gradients, lane.gradients.data(),
                          b.info.elements * sizeof(float));
            else
              for (int64_t i = 0; i < b.info.elements; ++i)
                b.info.gradients[i] += lane.gradients[i];
            first = false;
            lane.arrived = false;
            lane.repost = true;
          }
          const float scale = 1.0f / static_cast<float>(arrived);
          for (int64_t i = 0; i < b.info.elements; ++i)
            b.info.gradients[i] *= scale;
          arrivals.clear();
          group.wake();
          updates = b.version;
          return static_cast<int>(&b - buckets.data());
        }
      } else if (!arrivals.empty()) {
        auto [index, w] = arrivals.front();
        arrivals.pop_front();
        Bucket &b = buckets[index];
        Lane &lane = b.lanes[w];
        std::memcpy(b.info.gradients, lane.gradients.data(), b.info.elements * sizeof(float));
        lane.arrived = false;
        lane.repost = true;
        const int64_t age = b.version - lane.pulledVersion;
        if (static_cast<size_t>(age) >= histogram.size())
          histogram.resize(age + 1, 0);
        ++histogram[age];
        b.current = w;
        group.wake();
        updates = b.version;
        return index;
      }
      if (live() == 0)
        return -1;
      // A signal (Ctrl-C through the launcher, a scheduler's SIGTERM) ends the server at once:
      // the workers got it too.
      if (const int signal = pendingInterrupt())
        throw Error(signalErrorKind(signal), "interrupted by " + signalName(signal) +
                                                 " while serving " + std::to_string(live()) +
                                                 " worker(s)");
      if (timeoutSec > 0) {
        // Every silent worker, the longest silent first: a worker that waits for a hung one
        // (at the end of an epoch, the workers sum their metrics) is silent too.
        std::vector<int> silent;
        for (int w = 0; w < workers; ++w)
          if (!done[w] && !heldBack(w) && secondsSince(heard[w]) > timeoutSec)
            silent.push_back(w);
        if (!silent.empty()) {
          std::stable_sort(silent.begin(), silent.end(),
                           [&](int a, int b) { return heard[a] < heard[b]; });
          std::string names;
          for (int w : silent) {
            char ago[32];
            std::snprintf(ago, sizeof(ago), "%.1f s", secondsSince(heard[w]));
            names += (names.empty() ? "" : ", ") + workerName(w) + " for " + ago;
          }
          throw Error(ErrorKind::Launch,
                      "no push from " + names + ", past the " + secondsText(timeoutSec) +
                          " timeout, and not finished: dead, hung or cut off (or waiting for "
                          "one that is)");
        }
      }
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
  }

  void updated(int index, double seconds) {
    std::lock_guard<std::mutex> lock(mu);
    Bucket &b = buckets.at(index);
    ++b.version;
    ++updateCount;
    updateSec += seconds;
    if (sync) {
      copyParams(b.info, b.shared.data(), /*unpack=*/false);
      for (int w = 0; w < workers; ++w)
        if (!done[w]) {
          ++b.lanes[w].pushes;
          b.lanes[w].pulledVersion = b.version;
          b.lanes[w].answerReady = true;
          if (histogram.empty())
            histogram.push_back(0);
          ++histogram[0]; // every gradient of the step was computed from these parameters
        }
    } else {
      Lane &lane = b.lanes[b.current];
      ++lane.pushes;
      if (mayAnswer(b, b.current)) {
        answerLocked(b, b.current);
      } else {
        lane.waiting = true;
        lane.heldSince = Clock::now();
        ++held;
      }
      releaseLocked();
    }
    group.wake();
  }

  void shutdown() {
    group.detach(this);
    group.call([&] {
      std::vector<int64_t> sends, receives = doneTokens;
      for (Bucket &b : buckets)
        for (Lane &lane : b.lanes) {
          sends.push_back(lane.sendToken);
          receives.push_back(lane.receiveToken);
        }
      endMessages(group, sends, receives);
    });
  }

  comm::GroupImpl &group;
  const int firstWorker, workers;
  const int64_t staleness;
  const bool sync;
  const double timeoutSec;
  const Clock::time_point started;
  std::vector<Bucket> buckets;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, int>> arrivals; // (bucket position, worker), in arrival order
  std::vector<bool> done;
  std::vector<Clock::time_point> heard;
  std::vector<int64_t> doneSteps, doneTokens;
  std::vector<int64_t> histogram;
  int64_t updateCount = 0, gradientsIn = 0, held = 0;
  double updateSec = 0, heldSec = 0;
};

ParameterServer::ParameterServer(ProcessGroup &job, int firstWorker, int workers,
                                 int64_t staleness, bool sync, std::vector<PsBucketInfo> buckets,
                                 double timeoutSec)
    : impl_(std::make_unique<Impl>(job, firstWorker, workers, staleness, sync, std::move(buckets),
                                   timeoutSec)) {}

ParameterServer::~ParameterServer() {
  try {
    impl_->shutdown();
  } catch (...) {
  }
}

int ParameterServer::next(int64_t &updates) { return impl_->next(updates); }
void ParameterServer::updated(int bucket, double seconds) { impl_->updated(bucket, seconds); }

ServerReport ParameterServer::report() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  ServerReport r;
  r.updates = impl_->updateCount;
  r.gradients = impl_->gradientsIn;
  r.seconds = secondsSince(impl_->started);
  r.updateSeconds = impl_->updateSec;
  r.staleness = impl_->histogram;
  r.pullsHeld = impl_->held;
  r.heldSeconds = impl_->heldSec;
  return r;
}

} // namespace dp::rt
