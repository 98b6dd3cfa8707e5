// The parts of a process group that do not need MPI: the communication thread, handshake
// records and their comparison, the single-process group, and ProcessGroup::create.
#include "runtime/comm/Internal.h"

#include "runtime/base/Trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include <unistd.h>

namespace dp::rt {
namespace comm {

// The MPI group lives in MpiGroup.cpp.
std::unique_ptr<ProcessGroup> createMpiGroup();

// ---------------------------------------------------------------------------------------------
// The communication thread.

GroupImpl::~GroupImpl() { stopThread(); }

void GroupImpl::startThread() {
  if (thread_.joinable())
    return;
  stop_ = false;
  thread_ = std::thread([this] {
    threadId_.store(std::this_thread::get_id());
    trace::nameThread("communication");
    loop();
  });
}

void GroupImpl::stopThread() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wakeCv_.notify_all();
  thread_.join();
  threadId_.store(std::thread::id());
}

void GroupImpl::wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  wakeCv_.notify_one();
}

void GroupImpl::call(const std::function<void()> &fn) {
  if (!thread_.joinable() || onCommThread()) {
    fn();
    return;
  }
  Job job;
  job.fn = fn;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(&job);
  }
  wakeCv_.notify_one();
  std::unique_lock<std::mutex> lock(mu_);
  doneCv_.wait(lock, [&] { return job.done; });
  if (job.error)
    std::rethrow_exception(job.error);
}

void GroupImpl::attach(CommClient *client) {
  startThread();
  call([&] { clients_.push_back(client); });
}

void GroupImpl::detach(CommClient *client) {
  call([&] { clients_.erase(std::remove(clients_.begin(), clients_.end(), client), clients_.end()); });
}

double StallWatch::recheckSeconds(double timeoutSec) {
  // A quarter of the timeout, at least a second (two looks closer than that may see no kernel
  // finish on a working rank) unless the timeout itself is shorter.
  return std::max(std::min(timeoutSec, 1.0), timeoutSec / 4);
}

std::string StallWatch::stalled() const {
  return looks_ > 1 ? ", with no progress on the other ranks in the last " + secondsText(waited_)
                    : "";
}

double StallWatch::next(const Diagnosis &diagnosis, double timeoutSec) {
  const bool first = looks_++ == 0;
  // Every rank but this one (whose entry is -1 too) must have answered.
  size_t answers = 0;
  bool progressed = false;
  for (size_t r = 0; r < diagnosis.work.size(); ++r) {
    const int64_t work = diagnosis.work[r];
    if (work < 0)
      continue;
    ++answers;
    progressed |= !first && r < last_.size() && last_[r] >= 0 && work > last_[r];
  }
  const bool everyOneAnswered = !diagnosis.work.empty() && answers + 1 == diagnosis.work.size();
  last_ = diagnosis.work;
  if (!everyOneAnswered)
    return 0;
  waited_ = first ? recheckSeconds(timeoutSec) : progressed ? timeoutSec : waited_;
  if (first || progressed)
    return waited_;
  return 0;
}

std::string GroupImpl::currentState(int64_t &collective) {
  collective = seq_;
  if (!activity_.empty())
    return activity_;
  for (CommClient *client : clients_) {
    std::string state = client->state(collective);
    if (!state.empty())
      return state;
  }
  return "computing, no collective in progress";
}

void GroupImpl::loop() {
  Backoff backoff;
  for (;;) {
    Job *job = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!jobs_.empty()) {
        job = jobs_.front();
        jobs_.pop_front();
      } else if (stop_) {
        return;
      }
    }
    if (job) {
      try {
        job->fn();
      } catch (...) {
        job->error = std::current_exception();
      }
      activity_.clear();
      {
        std::lock_guard<std::mutex> lock(mu_);
        job->done = true;
      }
      doneCv_.notify_all();
      continue;
    }

    Progress progress = Progress::Idle;
    try {
      service();
      for (CommClient *client : clients_)
        progress = std::max(progress, client->progress());
    } catch (const std::exception &e) {
      // Clients report their own failures to their waiters; this is a last resort.
      std::fprintf(stderr, "dprun: [rank %d] communication thread: %s\n", rank(), e.what());
    }
    if (progress == Progress::Advanced) {
      backoff.reset();
      continue;
    }
    if (progress == Progress::Urgent) {
      backoff.pause();
      continue;
    }
    // Nothing in flight, or operations in flight while the replicas compute: poll now and
    // then (MPI progresses only inside its calls) without taking their cores; a replica that
    // blocks on a result wakes the thread.
    backoff.reset();
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return woken_ || stop_ || !jobs_.empty(); };
    std::chrono::microseconds poll =
        progress == Progress::Waiting ? std::chrono::microseconds(50) : idlePoll();
    if (poll.count() > 0)
      wakeCv_.wait_for(lock, poll, ready);
    else
      wakeCv_.wait(lock, ready);
    woken_ = false;
  }
}

void Backoff::pause() {
  Clock::time_point now = Clock::now();
  if (since_ == Clock::time_point())
    since_ = now;
  auto waited = now - since_;
  // Collectives of a few hundred kilobytes take tens of microseconds and need both sides to
  // poll: spin briefly; then leave the core to the replicas.
  if (waited < std::chrono::milliseconds(2))
    std::this_thread::yield();
  else if (waited < std::chrono::milliseconds(100))
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  else
    std::this_thread::sleep_for(std::chrono::microseconds(500));
}

// ---------------------------------------------------------------------------------------------
// Handshakes.

HandshakeRecord toRecord(const Handshake &h) {
  HandshakeRecord record;
  record.planHash = h.planHash;
  record.manifestHash = h.manifestHash;
  record.seed = h.seed;
  record.epochs = h.epochs;
  record.stepsPerEpoch = h.stepsPerEpoch;
  record.maxSteps = h.maxSteps;
  record.collectiveTimeout = h.collectiveTimeout;
  record.replicas = h.replicas;
  record.processes = h.processes;
  const size_t room = sizeof(record.planPath) - 1;
  std::string path = h.planPath;
  if (path.size() > room)
    path = "..." + path.substr(path.size() - (room - 3));
  std::memcpy(record.planPath, path.data(), path.size());
  const std::string shared =
      h.sharedOptions.substr(0, std::min(h.sharedOptions.size(), sizeof(record.sharedOptions) - 1));
  std::memcpy(record.sharedOptions, shared.data(), shared.size());
  return record;
}

namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, value);
  return text;
}

/// One field of the handshake: how to compare it and how to describe a group of ranks that
/// share a value. `first` is true for the first group named in the message.
struct Field {
  const char *topic;
  std::string (*key)(const HandshakeRecord &);
  std::string (*say)(const std::string &ranks, bool plural, bool first, const HandshakeRecord &);
};

const char *verb(bool plural, const char *one, const char *many) { return plural ? many : one; }

const Field kFields[] = {
    {"the plan", [](const HandshakeRecord &r) { return hex(r.planHash); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "runs ", "run ") + (first ? "plan " : "") + r.planPath +
              " (plan hash " + hex(r.planHash) + ")";
     }},
    {"the collective manifest", [](const HandshakeRecord &r) { return hex(r.manifestHash); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "has ", "have ") + (first ? "manifest hash " : "") +
              hex(r.manifestHash) + " (plan " + r.planPath + ")";
     }},
    {"replicas per process", [](const HandshakeRecord &r) { return std::to_string(r.replicas); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "runs ", "run ") + (first ? "a plan for R=" : "one for R=") +
              std::to_string(r.replicas) + (first ? " replicas per process" : "");
     }},
    {"the number of processes",
     [](const HandshakeRecord &r) { return std::to_string(r.processes); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "runs ", "run ") + (first ? "a plan for P=" : "one for P=") +
              std::to_string(r.processes) + (first ? " processes" : "");
     }},
    {"the seed", [](const HandshakeRecord &r) { return std::to_string(r.seed); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "has ", "have ") + "--seed " + std::to_string(r.seed);
     }},
    {"the number of steps",
     [](const HandshakeRecord &r) {
       return std::to_string(r.epochs) + "/" + std::to_string(r.stepsPerEpoch) + "/" +
              std::to_string(r.maxSteps);
     },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       std::string caps;
       if (r.stepsPerEpoch > 0)
         caps += " --steps-per-epoch " + std::to_string(r.stepsPerEpoch);
       if (r.maxSteps > 0)
         caps += " --max-steps " + std::to_string(r.maxSteps);
       return ranks + " " + verb(plural, "runs ", "run ") + "--epochs " + std::to_string(r.epochs) +
              (caps.empty() ? std::string(" without step limits") : caps);
     }},
    {"the collective timeout",
     [](const HandshakeRecord &r) { return secondsText(r.collectiveTimeout); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       char seconds[32];
       std::snprintf(seconds, sizeof(seconds), "%g", r.collectiveTimeout);
       return ranks + " " + verb(plural, "runs ", "run ") + "--collective-timeout " + seconds +
              (r.collectiveTimeout > 0 ? "" : " (forever)");
     }},
    {"the options the ranks share",
     [](const HandshakeRecord &r) { return std::string(r.sharedOptions); },
     [](const std::string &ranks, bool plural, bool first, const HandshakeRecord &r) {
       return ranks + " " + verb(plural, "runs ", "run ") +
              (r.sharedOptions[0] ? std::string("with ") + r.sharedOptions
                                  : std::string("without checkpoint, early-stop or trace options"));
     }},
};

} // namespace

std::string compareHandshakes(const std::vector<HandshakeRecord> &records) {
  std::string message;
  for (const Field &field : kFields) {
    // Ranks grouped by value, in the order of their lowest rank.
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (size_t rank = 0; rank < records.size(); ++rank) {
      std::string key = field.key(records[rank]);
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto &group) { return group.first == key; });
      if (it == groups.end())
        groups.push_back({key, {static_cast<int>(rank)}});
      else
        it->second.push_back(static_cast<int>(rank));
    }
    if (groups.size() <= 1)
      continue;
    // The largest group (the lowest rank's on a tie) is the norm; the others are named first.
    size_t norm = 0;
    for (size_t g = 1; g < groups.size(); ++g)
      if (groups[g].second.size() > groups[norm].second.size())
        norm = g;
    std::vector<size_t> order;
    for (size_t g = 0; g < groups.size(); ++g)
      if (g != norm)
        order.push_back(g);
    order.push_back(norm);
    std::string text;
    for (size_t i = 0; i < order.size(); ++i) {
      const auto &group = groups[order[i]];
      text += (i ? ", " : "") + field.say(rankList(group.second), group.second.size() > 1, i == 0,
                                          records[group.second.front()]);
    }
    message += (message.empty() ? "" : "; ") + std::string("ranks disagree on ") + field.topic +
               ": " + text;
  }
  return message;
}

std::string sizeMismatch(const Handshake &mine, const LaunchInfo &launch) {
  const std::string p = std::to_string(mine.processes);
  const std::string fix = "; launch it with `mpirun -n " + p + "` or `srun -n " + p + " --mpi=pmix`";
  const std::string plan = mine.planPath.empty() ? "plan" : "plan " + mine.planPath;
  if (launch.size == 1 && launch.launcher == "direct")
    return plan + " compiled for " + p + " processes but dprun was started directly as a single "
                                         "process" + fix;
  if (launch.size == 1 && launch.launcher == "srun")
    return plan + " compiled for " + p + " processes but srun started dprun as a single MPI "
           "process (" + launch.slurm + "); use `srun -n " + p + " --mpi=pmix`";
  return plan + " was compiled for " + p + " processes (R=" + std::to_string(mine.replicas) +
         " replicas each) but the job has " + std::to_string(launch.size) + " ranks (" +
         launch.describe() + ")" + fix;
}

// ---------------------------------------------------------------------------------------------
// The group of one process.

namespace {

/// A job of one process: no MPI at all. Its communication thread only runs when a Collectives
/// engine needs it (more than one replica).
class SingleProcessGroup final : public GroupImpl {
public:
  SingleProcessGroup() {
    launch_.launcher = detectLauncher();
    launch_.host = hostName();
    launch_.slurm = slurmVariables();
  }
  ~SingleProcessGroup() override { stopThread(); }

  void handshake(const Handshake &mine, double timeoutSec) override {
    if (mine.processes != 1)
      throw Error(ErrorKind::Launch, sizeMismatch(mine, launch_));
  }
  void sumDoubles(double *, int, double, const std::string &) override {}
  std::vector<double> gatherDoubles(double x, double timeoutSec) override { return {x}; }
  std::vector<std::string> gatherBytes(const std::string &mine, int root, double) override {
    if (root != 0)
      throw Error(ErrorKind::Runtime, "a gather to rank " + std::to_string(root) +
                                          " in a job of one process");
    return {mine};
  }
  void broadcast(void *, size_t, int root, double) override {
    if (root != 0)
      throw Error(ErrorKind::Runtime, "a broadcast from rank " + std::to_string(root) +
                                          " in a job of one process");
  }

  [[noreturn]] void abortJob(const std::string &message, int exitCode) override {
    std::cout.flush();
    std::fflush(stdout);
    std::fprintf(stderr, "dprun: [rank %d] %s\n", rank(), message.c_str());
    std::fflush(stderr);
    std::_Exit(exitCode);
  }

  int64_t postSum(void *data, int64_t n, DType dtype) override {
    throw Error(ErrorKind::Runtime, "internal: a single-process group has no cross-process sums");
  }
  bool testSum(int64_t token) override { return true; }
  void abandonSum(int64_t token) override {}
  Diagnosis diagnose() override { return {"no other process", {}}; }
  std::unique_ptr<ProcessGroup> split(int, double) override {
    return std::make_unique<SingleProcessGroup>();
  }
};

} // namespace
} // namespace comm

int64_t comm::GroupImpl::postSend(const void *, int64_t, int, int) {
  throw Error(ErrorKind::Runtime, "internal: this process group sends no messages");
}
int64_t comm::GroupImpl::postReceive(void *, int64_t, int, int) {
  throw Error(ErrorKind::Runtime, "internal: this process group receives no messages");
}
int64_t comm::GroupImpl::postScatterSum(void *data, int64_t n, DType dtype,
                                        const std::vector<int64_t> &) {
  return postSum(data, n, dtype);
}

int64_t comm::GroupImpl::postBroadcast(void *, int64_t, int) {
  throw Error(ErrorKind::Runtime, "internal: this process group has no other process to copy to");
}
bool comm::GroupImpl::testMessage(int64_t) { return true; }
void comm::GroupImpl::cancelMessage(int64_t) {}

int ProcessGroup::peerPid(int r) const { return r == rank() ? static_cast<int>(getpid()) : 0; }

std::unique_ptr<ProcessGroup> ProcessGroup::create(bool useMpi) {
  if (useMpi)
    return comm::createMpiGroup();
  return std::make_unique<comm::SingleProcessGroup>();
}

} // namespace dp::rt
