// The parameter-server exchanges (Comm.h: PushPull on a worker, ParameterServer on a server),
// point-to-point on the job group's communication thread.
//
// Messages, on the group's message communicator: a worker's push of bucket b carries its
// gradients (tag pushTag(b)); the server's answer carries the bucket's parameters in the same
// layout (replyTag(b)); a worker that has pushed its last gradient sends its step count
// (kDoneTag). A worker has at most one push of a bucket in flight: it pulls before it pushes the
// bucket again, so each (bucket, worker) pair needs one receive buffer and one reply buffer.
// Worker 0 asks the servers questions (kQueryTag: 0 for the figures, 1 for the final
// parameters) one at a time; a server answers (kAnswerTag) with its figures as doubles
// (kHeader, then the workers' lostAfter, then the staleness histogram) and, to a final
// question once every worker has finished or was left out, its buckets' parameters after them
// (in ascending bucket order, each laid out as a reply). A server that leaves a worker out
// tells it so (kLostTag, with the steps after which it did). Under shared batches a worker asks
// the first server for its next shard (kUnitTag: the epoch and its shards), which answers with
// the shard's number or -1 (kUnitAnswerTag).
#include "runtime/comm/Internal.h"

#include "runtime/base/Interrupt.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

namespace dp::rt {

using comm::Clock;
using comm::Progress;
using comm::secondsSince;
using comm::secondsText;

namespace {

constexpr int kDoneTag = 7;
constexpr int kQueryTag = 8;
constexpr int kAnswerTag = 9;
constexpr int kLostTag = 10;
constexpr int kUnitTag = 11;
constexpr int kUnitAnswerTag = 12;
constexpr int kHeader = 8; // final, seconds, updates, gradients, update s, held, held s, workers
int pushTag(int bucket) { return 100 + 2 * bucket; }
int replyTag(int bucket) { return 101 + 2 * bucket; }

/// The floats a parameter of `count` takes in a packed bucket: each starts on a 64-byte
/// boundary, as the bucket holds their gradients.
int64_t paddedCount(int64_t count) { return (count + 15) / 16 * 16; }

/// The parameters of `b` copied into `packed`, each at its slot.
void packParams(const PsBucketInfo &b, float *packed) {
  for (const auto &[data, count] : b.params) {
    std::memcpy(packed, data, count * sizeof(float));
    packed += paddedCount(count);
  }
}

/// The other way: `packed` copied into the parameters of `b`.
void unpackParams(const PsBucketInfo &b, const float *packed) {
  for (const auto &[data, count] : b.params) {
    std::memcpy(data, packed, count * sizeof(float));
    packed += paddedCount(count);
  }
}

/// On the communication thread: waits up to `seconds` for the operations of `tokens` (0:
/// done) to finish, zeroing each one that does; the positions of those that did not, each
/// cancelled.
std::vector<size_t> awaitOrCancel(comm::GroupImpl &group, std::vector<int64_t> &tokens,
                                  double seconds) {
  Clock::time_point start = Clock::now();
  comm::Backoff backoff;
  for (;;) {
    bool pending = false;
    for (int64_t &token : tokens)
      if (token && group.testMessage(token))
        token = 0;
      else if (token)
        pending = true;
    if (!pending || secondsSince(start) > seconds)
      break;
    group.answerQueries(); // a server looking at this worker's silence gets its answer
    backoff.pause();
  }
  std::vector<size_t> late;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i]) {
      group.cancelMessage(tokens[i]);
      late.push_back(i);
    }
  return late;
}

/// On the communication thread: gives the sends still in flight a second (each reads a buffer
/// its owner is about to free), then cancels what is left of them and of `receives`.
void endMessages(comm::GroupImpl &group, std::vector<int64_t> sends,
                 std::vector<int64_t> receives) {
  awaitOrCancel(group, sends, 1.0);
  awaitOrCancel(group, receives, 0.0);
}

/// Doubles of an answer before its parameters.
size_t answerDoubles(int workers) { return kHeader + workers + kStalenessBins; }

/// "server 0 (rank 0)": servers are ranks 0 to S - 1.
std::string serverName(int rank) {
  return "server " + std::to_string(rank) + " (rank " + std::to_string(rank) + ")";
}

/// What /proc says of a process: gone (none, or ended and not yet reaped), ending (killed or
/// exiting: another process may have ended it a moment ago), stopped, or running.
enum class ProcessState { Gone, Ending, Stopped, Running };

ProcessState processState(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(in, text);
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses; the fields follow the
  // last ')', from field 3 (the state letter) on.
  const size_t close = text.rfind(')');
  if (close == std::string::npos)
    return ProcessState::Gone;
  std::istringstream line(text.substr(close + 1));
  const std::vector<std::string> fields{std::istream_iterator<std::string>(line), {}};
  if (fields.size() < 29 || fields[0] == "Z" || fields[0] == "X")
    return ProcessState::Gone;
  constexpr unsigned long kExiting = 0x4; // PF_EXITING
  const unsigned long flags = std::strtoul(fields[6].c_str(), nullptr, 10);    // field 9
  const unsigned long pending = std::strtoul(fields[28].c_str(), nullptr, 10); // field 31
  if ((flags & kExiting) || (pending & (1ul << (SIGKILL - 1))))
    return ProcessState::Ending;
  return fields[0] == "T" || fields[0] == "t" ? ProcessState::Stopped : ProcessState::Running;
}

/// Where the launcher keeps the job going past a lost process (`mpirun --enable-recovery`),
/// nothing else ends a peer that is stopped or hung, and the launcher waits for it for ever:
/// ends the process of job rank `rank` (its pid from the handshake) when it runs on this host;
/// with `onlyStopped`, only if it is stopped (one that runs ends on its own timeouts, and may
/// still have work that keeps the job going: a server holding an answer back, past a stopped
/// worker it is about to leave out). What became of it, for the message ("; ended it (pid
/// N)"); empty under other launchers, which end the whole job themselves.
std::string endPeer(comm::GroupImpl &group, int rank, bool onlyStopped) {
  const int pid = group.peerPid(rank);
  if (!launcherKeepsJobOnFailure() || pid <= 0 || rank == group.rank())
    return "";
  const std::string host = group.peerHost(rank), which = "pid " + std::to_string(pid);
  if (host != group.launch().host)
    return "; if it is still running, it is " + which + " on " + host;
  switch (processState(pid)) {
  case ProcessState::Gone:
    return "; it is gone (" + which + ")";
  case ProcessState::Ending:
    return "; it is ending (" + which + ")";
  case ProcessState::Running:
    if (onlyStopped)
      return "; it is not stopped (" + which + "): its own timeouts end it";
    break;
  case ProcessState::Stopped:
    break;
  }
  return ::kill(pid, SIGKILL) == 0 ? "; ended it (" + which + ")" : "; it is gone (" + which + ")";
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
  /// A server and the slots of its buckets, in ascending bucket order.
  struct Server {
    int rank;
    std::vector<int> slots;
    int64_t floats; // of its buckets
    // The server's word that it left this worker out (communication thread).
    int64_t lostAfter = 0, lostToken = 0;
    bool lostPosted = false;
  };

  Impl(ProcessGroup &g, int workers, std::vector<PsBucketInfo> buckets, double timeoutSec)
      : group(groupOf(g)), workers(workers), timeoutSec(timeoutSec) {
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
    // The servers, by rank, each with its slots in ascending bucket order (its answers' order).
    for (size_t i = 0; i < slots.size(); ++i) {
      const int rank = slots[i].info.server;
      auto it = std::find_if(servers.begin(), servers.end(),
                             [&](const Server &s) { return s.rank == rank; });
      if (it == servers.end())
        it = servers.insert(std::upper_bound(servers.begin(), servers.end(), rank,
                                             [](int r, const Server &s) { return r < s.rank; }),
                            Server{rank, {}, 0});
      it->slots.push_back(static_cast<int>(i));
      it->floats += slots[i].info.elements;
    }
    for (Server &server : servers)
      std::sort(server.slots.begin(), server.slots.end(), [&](int a, int b) {
        return slots[a].info.index < slots[b].info.index;
      });
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
    for (Server &server : servers) {
      if (!server.lostToken && !server.lostPosted) {
        server.lostToken = group.postReceive(&server.lostAfter, sizeof(int64_t), server.rank,
                                             kLostTag);
        server.lostPosted = true;
      }
      if (server.lostToken && group.testMessage(server.lostToken)) {
        server.lostToken = 0;
        leftOut(server);
        advanced = true;
      }
    }
    if (unitState == State::Requested) {
      unitReceive = group.postReceive(&unitAnswer, sizeof(int64_t), unitServer, kUnitAnswerTag);
      unitSend = group.postSend(unitRequest, sizeof(unitRequest), unitServer, kUnitTag);
      unitState = State::Posted;
      advanced = true;
    }
    if (unitState == State::Posted) {
      if (unitSend && group.testMessage(unitSend))
        unitSend = 0;
      if (unitReceive && group.testMessage(unitReceive))
        unitReceive = 0;
      if (!unitSend && !unitReceive) {
        unitState = State::Answered;
        advanced = true;
        cv.notify_all();
      } else {
        inFlight = true;
      }
    }
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

  /// A server left this worker out (under mu, on the communication thread). Where the
  /// launcher keeps the job going this process ends now, whatever its compute does; otherwise
  /// it waits, training no more, for the job's end (its own exit would end the whole job).
  void leftOut(const Server &server) {
    const std::string message =
        "dprun: [rank " + std::to_string(group.rank()) + "] the server at rank " +
        std::to_string(server.rank) + " left this worker out after its " +
        std::to_string(server.lostAfter) +
        " step(s): it was silent past the timeout (hung, stopped or too slow)";
    std::cout.flush();
    if (launcherKeepsJobOnFailure()) {
      std::cerr << message + "; it ends\n" << std::flush;
      std::_Exit(static_cast<int>(ErrorKind::Launch));
    }
    std::cerr << message + "; it waits for the job's end\n" << std::flush;
    parked = true;
    cv.notify_all();
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
    // A server that holds the answer back for a stopped worker names that worker first.
    awaitAnswer(
        lock, start, answerSeconds(), s.info.server, [&] { return s.state == State::Answered; },
        [&](double deadline) {
          return serverName(s.info.server) + " did not answer the pull of bucket " +
                 std::to_string(s.info.index) + " (" + s.info.tensors + ") for " +
                 secondsText(deadline) + " (push #" + std::to_string(s.pushes) +
                 "): dead, hung or cut off, or holding the answer back for a worker "
                 "that is (or it left this one out)";
        });
    unpackParams(s.info, s.answer.data());
    s.state = State::Idle;
  }

  int64_t nextUnit(int64_t epoch, int64_t units) {
    Clock::time_point start = Clock::now();
    std::unique_lock<std::mutex> lock(mu);
    if (failed)
      throw Error(ErrorKind::Launch, error);
    if (unitState == State::Idle || unitRequest[0] != epoch) {
      if (unitState != State::Idle)
        throw Error(ErrorKind::Runtime, "PushPull: a shard of epoch " +
                                            std::to_string(unitRequest[0]) +
                                            " is still asked for in epoch " +
                                            std::to_string(epoch));
      requestUnit(epoch, units);
    }
    awaitAnswer(
        lock, start, answerSeconds(), unitServer, [&] { return unitState == State::Answered; },
        [&](double deadline) {
          return serverName(unitServer) +
                 " did not answer the request for a shard of "
                 "epoch " +
                 std::to_string(epoch) + " for " + secondsText(deadline) +
                 ": dead, hung or cut off";
        });
    const int64_t unit = unitAnswer;
    unitState = State::Idle;
    if (unit >= 0)
      requestUnit(epoch, units); // the next one, while this one trains
    return unit;
  }

  /// How long this worker waits for a server's answer (0: no bound): the timeout, plus what a
  /// server takes to decide that a worker silent past it does not work (its status query's
  /// grace, or a second look: ParameterServer's lookAtSilentWorkers, which holds the server's
  /// communication thread meanwhile), plus a second. A server that holds an answer back for a
  /// stopped worker names that worker before this one blames the server.
  double answerSeconds() const {
    if (timeoutSec <= 0)
      return 0;
    return timeoutSec +
           std::max(comm::kQueryGraceSeconds, comm::StallWatch::recheckSeconds(timeoutSec)) + 1;
  }

  /// Waits (under mu, as a waiter the communication thread hurries for) until `answered`,
  /// parked if a server left this worker out. Past `deadline` seconds from `start` (0: none)
  /// it asks the job's ranks how much they work (StallWatch's looks): while some rank's count
  /// grows (a worker the server holds this answer for, slow on a loaded machine) it waits on,
  /// and while the server answers but another rank does not (a stopped worker the server
  /// holds the answer for, and will leave out), up to two deadlines more; else the job fails
  /// with `message(seconds waited)`, blaming the server at rank `server` (ended if stopped,
  /// endPeer).
  template <typename Answered, typename Message>
  void awaitAnswer(std::unique_lock<std::mutex> &lock, Clock::time_point start, double deadline,
                   int server, Answered answered, Message message) {
    ++waiters;
    group.wake();
    parkIfLeftOut(lock);
    comm::StallWatch watch;
    int holds = 0;
    while (!failed && !answered()) {
      if (deadline > 0 && secondsSince(start) > deadline) {
        // The looks run on the communication thread, without mu (its turns take it).
        comm::Diagnosis diagnosis;
        lock.unlock();
        try {
          group.call([&] { diagnosis = group.diagnose(); });
        } catch (...) {
          lock.lock();
          --waiters;
          throw;
        }
        lock.lock();
        if (failed || answered())
          break;
        // The server answered but another rank did not: the server holds this answer for a
        // worker that stopped (a synchronous round, a staleness bound), and its own look at
        // silent workers leaves that one out (or ends the job naming it), then answers. Its
        // decision is bounded by the same timeout: give it that time again, twice at most,
        // instead of racing it on a loaded machine.
        const auto &work = diagnosis.work;
        if (holds < 2 && size_t(server) < work.size() && work[size_t(server)] >= 0 &&
            std::count(work.begin(), work.end(), int64_t(-1)) > 1) {
          ++holds;
          deadline = secondsSince(start) + answerSeconds();
          continue;
        }
        if (const double more = watch.next(diagnosis, timeoutSec); more > 0) {
          deadline = secondsSince(start) + more;
          continue;
        }
        --waiters;
        failed = true;
        error = message(deadline) + endPeer(group, server, true);
        cv.notify_all();
        throw Error(ErrorKind::Launch, error);
      }
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    --waiters;
    if (failed)
      throw Error(ErrorKind::Launch, error);
  }

  /// Hands a request for a shard of `epoch` to the communication thread (under mu).
  void requestUnit(int64_t epoch, int64_t units) {
    unitRequest[0] = epoch;
    unitRequest[1] = units;
    unitState = State::Requested;
    group.wake();
  }

  /// Once a server has left this worker out: waits, training no more, until a signal (the
  /// job's end) stops it (under mu).
  void parkIfLeftOut(std::unique_lock<std::mutex> &lock) {
    while (parked) {
      if (const int signal = pendingInterrupt())
        throw Error(signalErrorKind(signal), "interrupted by " + signalName(signal) +
                                                 " after the servers left this worker out");
      cv.wait_for(lock, std::chrono::milliseconds(100));
    }
  }

  void finish(double timeout) {
    {
      std::unique_lock<std::mutex> lock(mu);
      parkIfLeftOut(lock);
    }
    int64_t steps = slots.empty() ? 0 : slots.front().pushes;
    group.call([&] {
      std::vector<int64_t> tokens;
      for (const Server &server : servers)
        tokens.push_back(group.postSend(&steps, sizeof(steps), server.rank, kDoneTag));
      const std::vector<size_t> late = awaitOrCancel(group, tokens, timeout > 0 ? timeout : 1e9);
      if (!late.empty())
        throw Error(ErrorKind::Launch, blame(late, [&](size_t i) { return servers[i].rank; }) +
                                           " did not take this worker's end within " +
                                           secondsText(timeout) + ": dead, hung or cut off" +
                                           ended(late, [&](size_t i) { return servers[i].rank; }));
    });
  }

  /// The servers `rankOf(i)` of `late` (each i a position), named: "server 0 (rank 0), ...".
  template <typename RankOf>
  static std::string blame(const std::vector<size_t> &late, RankOf rankOf) {
    std::string names;
    for (size_t i : late)
      names += (names.empty() ? "" : ", ") + serverName(rankOf(i));
    return names;
  }

  /// What became of the servers of `late` this worker gave up on (endPeer: each ended if it
  /// is stopped on this host), for the message.
  template <typename RankOf> std::string ended(const std::vector<size_t> &late, RankOf rankOf) {
    std::string fates;
    for (size_t i : late) {
      const std::string fate = endPeer(group, rankOf(i), true);
      if (!fate.empty())
        fates += late.size() == 1 ? fate : "; " + serverName(rankOf(i)) + ":" + fate.substr(1);
    }
    return fates;
  }

  /// One question to every server in `asked` (positions in `servers`), on the communication
  /// thread; the answers in `answers`.
  void question(bool final, const std::vector<size_t> &asked,
                std::vector<std::vector<char>> &answers) {
    const int64_t kind = final ? 1 : 0;
    group.call([&] {
      std::vector<int64_t> receives, sends;
      for (size_t i : asked) {
        const Server &server = servers[i];
        answers[i].assign(answerDoubles(workers) * sizeof(double) + server.floats * sizeof(float),
                          0);
        receives.push_back(group.postReceive(answers[i].data(), int64_t(answers[i].size()),
                                             server.rank, kAnswerTag));
        sends.push_back(group.postSend(&kind, sizeof(kind), server.rank, kQueryTag));
      }
      const double wait = timeoutSec > 0 ? answerSeconds() : 1e9;
      const std::vector<size_t> late = awaitOrCancel(group, receives, wait);
      awaitOrCancel(group, sends, late.empty() ? wait : 0.0);
      if (!late.empty()) {
        auto rank = [&](size_t i) { return servers[asked[i]].rank; };
        throw Error(ErrorKind::Launch, blame(late, rank) + " did not answer " +
                                           std::string(final ? "the question for the final "
                                                               "parameters"
                                                             : "the question for their figures") +
                                           " for " + secondsText(wait) +
                                           ": dead, hung or cut off" + ended(late, rank));
      }
    });
  }

  std::vector<ServerReport> ask(bool final) {
    std::vector<ServerReport> reports(servers.size());
    std::vector<std::vector<char>> answers(servers.size());
    std::vector<size_t> asked(servers.size());
    for (size_t i = 0; i < servers.size(); ++i)
      asked[i] = i;
    while (!asked.empty()) {
      question(final, asked, answers);
      std::vector<size_t> again;
      for (size_t i : asked) {
        const double *h = reinterpret_cast<const double *>(answers[i].data());
        if (h[7] != workers)
          throw Error(ErrorKind::Launch, "the server at rank " + std::to_string(servers[i].rank) +
                                             " answered for " + std::to_string(int64_t(h[7])) +
                                             " workers; this job has " + std::to_string(workers));
        ServerReport &r = reports[i];
        r.final = h[0] != 0;
        r.seconds = h[1];
        r.updates = static_cast<int64_t>(h[2]);
        r.gradients = static_cast<int64_t>(h[3]);
        r.updateSeconds = h[4];
        r.pullsHeld = static_cast<int64_t>(h[5]);
        r.heldSeconds = h[6];
        r.lostAfter.assign(h + kHeader, h + kHeader + workers);
        r.staleness.assign(h + kHeader + workers, h + kHeader + workers + kStalenessBins);
        while (!r.staleness.empty() && r.staleness.back() == 0)
          r.staleness.pop_back();
        if (!final)
          continue;
        if (!r.final) {
          again.push_back(i);
          continue;
        }
        // The server's parameters, bucket by bucket as it laid them out.
        const float *params = reinterpret_cast<const float *>(h + answerDoubles(workers));
        for (int slot : servers[i].slots) {
          unpackParams(slots[slot].info, params);
          params += slots[slot].info.elements;
        }
      }
      asked = std::move(again);
      if (!asked.empty()) {
        // Other workers still train: ask again in a moment (each question proves the server
        // alive; a dead one fails to answer within the timeout).
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (const int signal = pendingInterrupt())
          throw Error(signalErrorKind(signal), "interrupted by " + signalName(signal) +
                                                   " while waiting for the other workers");
      }
    }
    return reports;
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
      for (const Server &server : servers)
        receives.push_back(server.lostToken);
      if (unitState == State::Posted) {
        sends.push_back(unitSend);
        receives.push_back(unitReceive);
      }
      endMessages(group, sends, receives);
    });
  }

  comm::GroupImpl &group;
  const int workers;
  const double timeoutSec;
  std::vector<Slot> slots;
  std::vector<Server> servers;
  std::vector<int> positions;
  std::mutex mu;
  std::condition_variable cv;
  bool failed = false;
  std::string error;
  int waiters = 0;
  bool parked = false; // a server left this worker out
  // Shared batches: one request for a shard in flight at a time (under mu).
  const int unitServer = 0; // the first server's job rank
  State unitState = State::Idle;
  int64_t unitRequest[2] = {0, 0}; // epoch, its shards
  int64_t unitAnswer = -1;
  int64_t unitSend = 0, unitReceive = 0;
};

PushPull::PushPull(ProcessGroup &job, int workers, std::vector<PsBucketInfo> buckets,
                   double timeoutSec)
    : impl_(std::make_unique<Impl>(job, workers, std::move(buckets), timeoutSec)) {}

PushPull::~PushPull() {
  try {
    impl_->shutdown();
  } catch (...) {
  }
}

void PushPull::push(int bucket, const float *data) { impl_->push(bucket, data); }
void PushPull::pull(int bucket) { impl_->pull(bucket); }
void PushPull::finish(double timeoutSec) { impl_->finish(timeoutSec); }
std::vector<ServerReport> PushPull::ask(bool final) { return impl_->ask(final); }
int64_t PushPull::nextUnit(int64_t epoch, int64_t units) {
  return impl_->nextUnit(epoch, units);
}
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
       std::vector<PsBucketInfo> buckets, double timeoutSec, bool keepGoing, bool sharesBatches)
      : group(groupOf(g)), firstWorker(firstWorker), workers(workers), staleness(staleness),
        sync(sync), timeoutSec(timeoutSec), keepGoing(keepGoing), sharesBatches(sharesBatches),
        started(Clock::now()) {
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
    for (size_t i = 0; i < this->buckets.size(); ++i)
      order.push_back(static_cast<int>(i));
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return this->buckets[a].info.index < this->buckets[b].info.index;
    });
    done.assign(workers, false);
    heard.assign(workers, Clock::now());
    looks.assign(workers, Looks());
    doneSteps.assign(workers, 0);
    doneTokens.assign(workers, 0);
    lostAfter.assign(workers, -1);
    cancelled.assign(workers, false);
    units.resize(workers);
    group.attach(this);
    group.wake();
  }

  std::string workerName(int w) const {
    return "worker " + std::to_string(w) + " (rank " + std::to_string(firstWorker + w) + ")";
  }

  /// Whether worker w still trains: neither finished nor left out (under mu).
  bool active(int w) const { return !done[w] && lostAfter[w] < 0; }

  Progress progress() override {
    const Progress progress = progressLocked();
    if (timeoutSec > 0)
      lookAtSilentWorkers();
    return progress;
  }

  /// A worker silent past the timeout is asked (the status query) for its work count before it
  /// is blamed, by the rule every wait for other ranks follows (comm::StallWatch, one per
  /// worker): one that does not answer, or whose count stands still between two looks, is
  /// confirmed silent (checkSilence acts on it); one whose count grew (a loaded machine, a long
  /// data load, a checkpoint) has its silence counted again from now. Communication thread,
  /// without mu (the query waits for answers).
  void lookAtSilentWorkers() {
    std::vector<int> silent;
    {
      std::lock_guard<std::mutex> lock(mu);
      const Clock::time_point now = Clock::now();
      for (int w = 0; w < workers; ++w) {
        Looks &l = looks[w];
        if (!active(w) || waitsForUs(w) || silentSeconds(w) <= timeoutSec) {
          // Heard from, done or waiting for us: its next silence is looked at afresh.
          const Clock::time_point worked = l.worked;
          l = Looks();
          l.worked = worked;
        } else if (!l.confirmed && now >= l.next) {
          silent.push_back(w);
        }
      }
    }
    if (silent.empty())
      return;
    const comm::Diagnosis diagnosis = group.diagnose();
    std::lock_guard<std::mutex> lock(mu);
    const Clock::time_point now = Clock::now();
    for (int w : silent) {
      const size_t rank = static_cast<size_t>(firstWorker + w);
      // The watch's view of one worker: this rank (-1) and the worker's answer (-1: none).
      comm::Diagnosis one;
      one.work = {-1, rank < diagnosis.work.size() ? diagnosis.work[rank] : -1};
      Looks &l = looks[w];
      const double wait = l.watch.next(one, timeoutSec);
      if (wait <= 0) {
        l.confirmed = true;
      } else {
        if (l.looked)
          l.worked = now; // it works: its silence counts from now
        l.looked = true;
        l.next = comm::after(now, wait);
      }
    }
    cv.notify_all();
  }

  Progress progressLocked() {
    bool advanced = false;
    std::lock_guard<std::mutex> lock(mu);
    polled = Clock::now();
    for (int w = 0; w < workers; ++w) {
      if (lostAfter[w] >= 0 && !cancelled[w]) {
        // Left out: nothing more is taken from it (answers on their way may still go).
        for (Bucket &b : buckets) {
          Lane &lane = b.lanes[w];
          if (lane.receiveToken)
            group.cancelMessage(lane.receiveToken);
          lane.receiveToken = 0;
        }
        if (doneTokens[w])
          group.cancelMessage(doneTokens[w]);
        doneTokens[w] = 0;
        if (units[w].receive)
          group.cancelMessage(units[w].receive);
        units[w].receive = 0;
        cancelled[w] = true;
        // Told, in case it is alive: it stops (or ends) rather than wait for answers.
        lostTokens.push_back(group.postSend(&lostAfter[w], sizeof(int64_t), firstWorker + w,
                                            kLostTag));
        advanced = true;
      }
      if (active(w) && !doneTokens[w]) {
        doneTokens[w] = group.postReceive(&doneSteps[w], sizeof(int64_t), firstWorker + w,
                                          kDoneTag);
        advanced = true;
      }
      if (active(w) && doneTokens[w] && group.testMessage(doneTokens[w])) {
        doneTokens[w] = 0;
        done[w] = true;
        advanced = true;
        cv.notify_all();
      }
    }
    for (Bucket &b : buckets)
      for (int w = 0; w < workers; ++w) {
        Lane &lane = b.lanes[w];
        if (lane.repost && active(w)) {
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
        // (One answer in flight per lane: the next waits for the last to be sent.)
        if (lane.sendToken && group.testMessage(lane.sendToken))
          lane.sendToken = 0;
        if (lane.answerReady && !lane.sendToken) {
          const float *data = sync ? b.shared.data() : lane.answer.data();
          lane.sendToken = group.postSend(data, b.info.elements * int64_t(sizeof(float)),
                                          firstWorker + w, replyTag(b.info.index));
          lane.answerReady = false;
          advanced = true;
        }
      }
    // Shared batches: each worker's request for its next shard, answered here.
    for (int w = 0; sharesBatches && w < workers; ++w) {
      UnitLane &u = units[w];
      if (u.send && group.testMessage(u.send))
        u.send = 0;
      if (!active(w))
        continue;
      if (!u.receive && !u.pending) {
        u.receive = group.postReceive(u.request, sizeof(u.request), firstWorker + w, kUnitTag);
        advanced = true;
      }
      if (u.receive && group.testMessage(u.receive)) {
        u.receive = 0;
        u.pending = true;
        heard[w] = Clock::now();
      }
      if (u.pending && !u.send) {
        int64_t &next = nextUnit[u.request[0]];
        u.answer = next < u.request[1] ? next++ : -1;
        u.send = group.postSend(&u.answer, sizeof(int64_t), firstWorker + w, kUnitAnswerTag);
        u.pending = false;
        advanced = true;
      }
    }
    // Worker 0's questions: one at a time, each answered by the main thread (next()).
    if (!queryToken && !queryArrived && !answerToken && !finalDelivered && lostAfter[0] < 0) {
      queryToken = group.postReceive(&queryKind, sizeof(queryKind), firstWorker, kQueryTag);
      advanced = true;
    }
    if (queryToken && group.testMessage(queryToken)) {
      queryToken = 0;
      heard[0] = Clock::now(); // worker 0 asks: it is alive
      queryArrived = true;
      advanced = true;
      cv.notify_all();
    }
    if (answerReady) {
      answerToken = group.postSend(answerBytes.data(), int64_t(answerBytes.size()), firstWorker,
                                   kAnswerTag);
      answerReady = false;
      advanced = true;
    }
    if (answerToken && group.testMessage(answerToken)) {
      answerToken = 0;
      finalDelivered = finalAnswered;
      cv.notify_all();
      advanced = true;
    }
    return advanced ? Progress::Advanced : Progress::Waiting;
  }

  std::string state(int64_t &collective) override {
    collective = group.collectiveSeq();
    return "serving parameters";
  }

  /// Whether worker w waits for this server, not the other way round: an answer held back by
  /// the staleness bound, or (sync) its gradient in, waiting for the others' (under mu).
  bool waitsForUs(int w) const {
    for (const Bucket &b : buckets)
      if (b.lanes[w].waiting || (sync && b.lanes[w].arrived))
        return true;
    return false;
  }

  /// Workers still training.
  int live() const {
    int n = 0;
    for (int w = 0; w < workers; ++w)
      n += active(w);
    return n;
  }

  /// Whether worker w's answer for bucket b may go: the staleness bound over the workers
  /// still training.
  bool mayAnswer(const Bucket &b, int w) const {
    if (staleness < 0)
      return true;
    int64_t slowest = INT64_MAX;
    for (int v = 0; v < workers; ++v)
      if (active(v))
        slowest = std::min(slowest, b.lanes[v].pushes);
    return slowest == INT64_MAX || b.lanes[w].pushes - slowest <= staleness;
  }

  /// Packs the current parameters for worker w and hands them to the thread (under mu).
  void answerLocked(Bucket &b, int w) {
    Lane &lane = b.lanes[w];
    packParams(b.info, lane.answer.data());
    lane.pulledVersion = b.version;
    heard[w] = Clock::now(); // its silence counts from its answer
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

  ServerReport reportLocked() const {
    ServerReport r;
    r.updates = updateCount;
    r.gradients = gradientsIn;
    r.seconds = secondsSince(started);
    r.updateSeconds = updateSec;
    r.staleness = histogram;
    r.pullsHeld = held;
    r.heldSeconds = heldSec;
    r.lostAfter = lostAfter;
    r.final = live() == 0;
    return r;
  }

  /// Worker 0's question, answered on the main thread (no update runs): the figures and, once
  /// every worker has finished or was left out, to a final question, the parameters (under mu).
  void answerLocked() {
    const bool final = queryKind == 1 && live() == 0;
    int64_t floats = 0;
    if (final)
      for (const Bucket &b : buckets)
        floats += b.info.elements;
    answerBytes.assign(answerDoubles(workers) * sizeof(double) + floats * sizeof(float), 0);
    double *h = reinterpret_cast<double *>(answerBytes.data());
    const ServerReport r = reportLocked();
    const double header[kHeader] = {final ? 1.0 : 0.0,     r.seconds,
                                     double(r.updates),    double(r.gradients),
                                     r.updateSeconds,      double(r.pullsHeld),
                                     r.heldSeconds,        double(workers)};
    std::copy(header, header + kHeader, h);
    for (int w = 0; w < workers; ++w)
      h[kHeader + w] = double(lostAfter[w]);
    for (size_t k = 0; k < histogram.size() && k < size_t(kStalenessBins); ++k)
      h[kHeader + workers + k] = double(histogram[k]);
    float *params = reinterpret_cast<float *>(h + answerDoubles(workers));
    if (final)
      for (int index : order) {
        packParams(buckets[index].info, params);
        params += buckets[index].info.elements;
      }
    finalAnswered = final;
    queryArrived = false;
    answerReady = true;
  }

  /// Leaves worker w out: it has been silent past the timeout (under mu).
  void loseLocked(int w) {
    int64_t pushes = 0;
    for (Bucket &b : buckets) {
      pushes = std::max(pushes, b.lanes[w].pushes);
      b.lanes[w].arrived = false;
      b.lanes[w].waiting = false;
    }
    lostAfter[w] = pushes;
    arrivals.erase(std::remove_if(arrivals.begin(), arrivals.end(),
                                  [&](const auto &a) { return a.second == w; }),
                   arrivals.end());
    char ago[32];
    std::snprintf(ago, sizeof(ago), "%.1f s", secondsSince(heard[w]));
    // Where the launcher keeps the job going, nothing else ends a worker that is stopped or
    // hung, and the launcher would wait for it: one on this host is ended here (one that is
    // merely slow was told, and ends itself); elsewhere the message says where it is.
    const std::string fate = endPeer(group, firstWorker + w, false);
    std::cerr << "dprun: [rank " + std::to_string(group.rank()) + "] server: no push from " +
                     workerName(w) + " for " + ago + ", past the " + secondsText(timeoutSec) +
                     " timeout: left out after its " + std::to_string(pushes) +
                     " step(s); the other workers train on" + fate + "\n"
              << std::flush;
  }

  int next(int64_t &updates) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (queryArrived && !answerToken && !answerReady) {
        answerLocked();
        group.wake();
      }
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
        const int64_t age =
            std::min<int64_t>(b.version - lane.pulledVersion, kStalenessBins - 1);
        if (static_cast<size_t>(age) >= histogram.size())
          histogram.resize(age + 1, 0);
        ++histogram[age];
        b.current = w;
        group.wake();
        updates = b.version;
        return index;
      }
      if (live() == 0) {
        // Every worker finished or was left out: worker 0 takes the final parameters.
        if (finalDelivered)
          return -1;
        if (endedAt == Clock::time_point())
          endedAt = Clock::now();
        if (timeoutSec > 0 && secondsSince(endedAt) > timeoutSec)
          throw Error(ErrorKind::Launch,
                      workerName(0) + " finished but did not take the final parameters within " +
                          secondsText(timeoutSec));
      }
      // A signal (Ctrl-C through the launcher, a scheduler's SIGTERM) ends the server at once:
      // the workers got it too.
      if (const int signal = pendingInterrupt())
        throw Error(signalErrorKind(signal), "interrupted by " + signalName(signal) +
                                                 " while serving " + std::to_string(live()) +
                                                 " worker(s)");
      if (timeoutSec > 0)
        checkSilence();
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
  }

  /// How long worker w has been silent as far as this server knows: from its last message (or
  /// the last look that saw it work) to the communication thread's last look for messages
  /// (under mu).
  double silentSeconds(int w) const {
    return std::chrono::duration<double>(polled - std::max(heard[w], looks[w].worked)).count();
  }

  /// Every worker silent past the timeout, the longest silent first, ends the job naming
  /// them; or, keeping going, is left out, unless worker 0 is one (under mu).
  void checkSilence() {
    std::vector<int> silent;
    for (int w = 0; w < workers; ++w)
      if (active(w) && !waitsForUs(w) && silentSeconds(w) > timeoutSec && looks[w].confirmed)
        silent.push_back(w);
    if (silent.empty())
      return;
    if (keepGoing && silent.front() != 0) {
      for (int w : silent)
        loseLocked(w);
      releaseLocked();
      group.wake();
      return;
    }
    std::stable_sort(silent.begin(), silent.end(),
                     [&](int a, int b) { return heard[a] < heard[b]; });
    std::string names, fates;
    for (int w : silent) {
      char ago[32];
      std::snprintf(ago, sizeof(ago), "%.1f s", secondsSince(heard[w]));
      names += (names.empty() ? "" : ", ") + workerName(w) + " for " + ago;
      // The job ends with this server; where the launcher keeps it going, a silent worker
      // that is stopped or hung would keep the launcher waiting for ever (worker 0 above all,
      // whose report nobody else waits for): one on this host is ended here.
      const std::string fate = endPeer(group, firstWorker + w, false);
      if (!fate.empty())
        fates += silent.size() == 1 ? fate : "; " + workerName(w) + ":" + fate.substr(1);
    }
    throw Error(ErrorKind::Launch,
                "no push from " + names + ", past the " + secondsText(timeoutSec) +
                    " timeout, and not finished: dead, hung or cut off" +
                    (keepGoing ? std::string("; worker 0 evaluates and reports the run: the job "
                                             "cannot go on without it")
                               : std::string(" (or waiting for one that is)")) +
                    fates);
  }

  void updated(int index, double seconds) {
    std::lock_guard<std::mutex> lock(mu);
    Bucket &b = buckets.at(index);
    ++b.version;
    ++updateCount;
    updateSec += seconds;
    if (sync) {
      packParams(b.info, b.shared.data());
      for (int w = 0; w < workers; ++w)
        if (active(w)) {
          ++b.lanes[w].pushes;
          b.lanes[w].pulledVersion = b.version;
          b.lanes[w].answerReady = true;
          heard[w] = Clock::now();
          if (histogram.empty())
            histogram.push_back(0);
          ++histogram[0]; // every gradient of the step was computed from these parameters
        }
    } else {
      Lane &lane = b.lanes[b.current];
      ++lane.pushes;
      if (lostAfter[b.current] >= 0) {
        // Left out while its gradient was applied: no answer.
      } else if (mayAnswer(b, b.current)) {
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
      std::vector<int64_t> sends = lostTokens, receives = doneTokens;
      sends.push_back(answerToken);
      for (const UnitLane &u : units) {
        sends.push_back(u.send);
        receives.push_back(u.receive);
      }
      receives.push_back(queryToken);
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
  const bool keepGoing, sharesBatches;
  const Clock::time_point started;
  std::vector<Bucket> buckets;
  std::vector<int> order; // bucket positions in ascending bucket index
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<int, int>> arrivals; // (bucket position, worker), in arrival order
  std::vector<bool> done, cancelled;
  /// By worker: its last push, or this server's last answer to it if later.
  std::vector<Clock::time_point> heard;
  /// Silence past the timeout, looked at (lookAtSilentWorkers), by worker: when a look last saw
  /// it work, the watch, when to look next, whether it was looked at and is confirmed silent.
  struct Looks {
    Clock::time_point worked;
    comm::StallWatch watch;
    Clock::time_point next;
    bool looked = false, confirmed = false;
  };
  std::vector<Looks> looks;
  /// When the communication thread last began to look for messages (progress()). A worker's
  /// silence is measured up to then, not up to now: on a loaded machine this process's threads
  /// may not run for seconds, and a push waiting unreceived is no silence.
  Clock::time_point polled = Clock::now();
  std::vector<int64_t> doneSteps, doneTokens, lostAfter, lostTokens;
  std::vector<int64_t> histogram;
  int64_t updateCount = 0, gradientsIn = 0, held = 0;
  double updateSec = 0, heldSec = 0;
  // Worker 0's questions.
  int64_t queryKind = 0, queryToken = 0, answerToken = 0;
  std::vector<char> answerBytes;
  bool queryArrived = false, answerReady = false, finalAnswered = false, finalDelivered = false;
  Clock::time_point endedAt;
  // Shared batches: per worker its request in flight and the answer; per epoch the next shard.
  struct UnitLane {
    int64_t request[2] = {0, 0}; // epoch, its shards
    int64_t answer = -1;
    int64_t receive = 0, send = 0;
    bool pending = false; // a request in, not yet answered
  };
  std::vector<UnitLane> units;
  std::map<int64_t, int64_t> nextUnit;
};

ParameterServer::ParameterServer(ProcessGroup &job, int firstWorker, int workers,
                                 int64_t staleness, bool sync, std::vector<PsBucketInfo> buckets,
                                 double timeoutSec, bool keepGoing, bool sharesBatches)
    : impl_(std::make_unique<Impl>(job, firstWorker, workers, staleness, sync, std::move(buckets),
                                   timeoutSec, keepGoing, sharesBatches)) {}

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
  return impl_->reportLocked();
}

} // namespace dp::rt
