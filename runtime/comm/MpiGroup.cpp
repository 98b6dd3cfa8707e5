// The MPI process group: initialisation, the handshake and metric collectives, the status
// queries that name a missing rank when a collective times out, and aborting the job.
//
// After MPI_Init_thread every MPI call is made by the communication thread (abortJob excepted
// where MPI provides MPI_THREAD_MULTIPLE). All operations are non-blocking and polled against a
// deadline; between polls the thread answers other ranks' status queries, so a rank whose
// replicas are busy or stuck still says what it is doing.
#include "runtime/base/Bf16.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/comm/Internal.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>

namespace dp::rt::comm {
namespace {

// Tags on the query communicator.
constexpr int kQueryTag = 1;
constexpr int kReplyTag = 2;
// The largest count of one MPI call; longer buckets are reduced in pieces.
constexpr int64_t kMaxCount = int64_t(1) << 30;

/// A reduce-scatter's segments as offsets: rank r's begin at [r], and [P] is their end.
std::vector<int64_t> segmentOffsets(const std::vector<int64_t> &counts) {
  std::vector<int64_t> offsets(1, 0);
  for (int64_t c : counts)
    offsets.push_back(offsets.back() + c);
  return offsets;
}

/// A rank's answer to a status query.
struct StatusReply {
  int64_t queryId = 0;
  int64_t seq = 0;     // the collective it waits in, else the last one it started
  int64_t work = 0;    // its work count (heartbeat::count())
  char state[240] = {}; // what it is doing, NUL-terminated
};

std::string mpiErrorText(int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(rc);
  return std::string(text, length);
}

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  default:
    return "MPI_THREAD_MULTIPLE";
  }
}

class MpiGroup final : public GroupImpl {
public:
  MpiGroup();
  /// A group of the ranks of `base` (a communicator this process is in, made from the job's):
  /// MPI is already up and stays up after it (the group that initialised it finalises it).
  MpiGroup(MPI_Comm base, const LaunchInfo &job, int threadLevel);
  ~MpiGroup() override;

  std::unique_ptr<ProcessGroup> split(int color, double timeoutSec) override;
  int64_t postSend(const void *data, int64_t bytes, int peer, int tag) override;
  int64_t postReceive(void *data, int64_t bytes, int peer, int tag) override;
  bool testMessage(int64_t token) override;
  void cancelMessage(int64_t token) override;

  void handshake(const Handshake &mine, double timeoutSec) override;
  void sumDoubles(double *data, int n, double timeoutSec, const std::string &what) override;
  std::vector<double> gatherDoubles(double x, double timeoutSec) override;
  std::vector<std::string> gatherBytes(const std::string &mine, int root,
                                       double timeoutSec) override;
  void broadcast(void *data, size_t bytes, int root, double timeoutSec) override;
  [[noreturn]] void abortJob(const std::string &message, int exitCode) override;

  std::string allreduceLayout() const override { return layout_; }
  std::string peerHost(int r) const override {
    return r >= 0 && r < static_cast<int>(hosts_.size()) ? hosts_[r] : "";
  }
  int peerPid(int r) const override {
    return r >= 0 && r < static_cast<int>(pids_.size()) ? pids_[r] : 0;
  }
  void leaveWithoutFinalize() override { broken_ = true; }
  int64_t postSum(void *data, int64_t n, DType dtype) override;
  int64_t postScatterSum(void *data, int64_t n, DType dtype,
                         const std::vector<int64_t> &counts) override;
  /// A sum in the fixed binary tree (--allreduce tree); with `counts`, a reduce-scatter.
  int64_t postTree(void *data, int64_t n, DType dtype, const std::vector<int64_t> &counts);
  int64_t postBroadcast(void *data, int64_t bytes, int root) override;
  bool testSum(int64_t token) override;
  void abandonSum(int64_t token) override;
  Diagnosis diagnose() override;

protected:
  void service() override;
  std::chrono::microseconds idlePoll() const override { return std::chrono::microseconds(1000); }

private:
  /// Throws Error(Launch) naming `what` when `rc` is an error.
  void check(int rc, const char *what) const;
  /// Polls `request` until it completes. Past `timeoutSec` (> 0) gives it up (keeping `keep`,
  /// which owns its buffers, alive), asks the other ranks what they do and throws.
  void await(MPI_Request &request, double timeoutSec, const std::string &what,
             std::shared_ptr<void> keep);
  void postQueryReceive();
  [[noreturn]] void abortNow(int exitCode);
  void releaseMpi(); // frees the communicators and finalises MPI

  /// " (node3)": the hosts of `ranks` when any is not this rank's host (a job on one host
  /// names none); empty before the handshake.
  std::string nodesOf(const std::vector<int> &ranks) const;

  /// Every rank's host, from the handshake (empty before it).
  std::vector<std::string> hosts_;
  std::vector<int> pids_;

  /// Throws Error(Launch) when the plan says N > 1 nodes and the ranks' hosts are not N
  /// with P / N ranks each (the same message on every rank).
  void checkPlacement(const Handshake &mine) const;
  /// Decides the allreduce's layout from `mode` (Handshake::allreduce) and the ranks' hosts,
  /// and makes the communicators a hierarchical one needs (a collective).
  void setUpAllreduce(const std::string &mode);
  /// A gradient sum in three stages: reduce within the host to its leader (nodeReduce_),
  /// allreduce across the leaders (leaders_), broadcast within the host (nodeBcast_). Each
  /// stage has its own communicator, and a sum posts a stage only after every earlier sum has
  /// posted it, so that every rank issues each communicator's operations in the same order.
  struct StagedSum {
    void *data = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_FLOAT;
    size_t size = sizeof(float); // of an element
    MPI_Op op = MPI_SUM;
    int stage = 0; // the stage in flight (0, 1, 2); 3: done
    MPI_Request request = MPI_REQUEST_NULL;
    /// A reduce-scatter (scatter): across the hosts the leaders reduce-scatter when every
    /// host's ranks are contiguous (each leader receiving its host's segments, at the front
    /// and then moved to `hostBegin`), else they allreduce; within the host the leader
    /// scatters each rank its segment (MPI_Iscatterv) instead of broadcasting the sum.
    bool scatter = false;
    int64_t mine = 0, mineCount = 0;           // this rank's segment (elements)
    int64_t hostBegin = 0, hostCount = 0;      // its host's segments
    bool moved = false; // the leaders' reduce-scatter's segments are in place
    std::vector<int> leaderCounts;             // per leader: its host's elements (contiguous hosts)
    std::vector<int> localCounts, localDispls; // per rank of the host: its segment
  };
  /// Tests `sum`'s stage and posts its next ones while the earlier sums allow (`floor`: the
  /// lowest stage an earlier sum has posted).
  void advance(StagedSum &sum, int floor);
  /// Whether sums are staged: the host's communicators exist.
  bool hierarchical() const { return nodeReduce_ != MPI_COMM_NULL; }
  /// A gradient sum in the fixed binary tree over the ranks (--allreduce tree): at level l, a
  /// rank whose index has its low l + 1 bits clear receives the sum of the 2^l ranks above it
  /// and adds it to its own (2^l ranks to the right), so rank 0 ends with
  /// ((x0 + x1) + (x2 + x3)) + ..., the tree the engine sums a process's replicas in and the
  /// accumulate kernel a device's micro-shards; rank 0 then sends the sum back down the same
  /// tree. A reduce-scatter sends each child only the segments of the ranks below it (its
  /// subtree, ranks c to c + 2^l - 1, whose segments are contiguous): rank 0 sends about the
  /// bucket once in log2(P) messages, and every rank receives its subtree's part once.
  /// Point-to-point messages on their own communicator, tagged by the sum, so sums in flight
  /// need no common order beyond the one they are posted in.
  struct TreeSum {
    void *data = nullptr;
    int count = 0;
    DType dtype = DType::F32;
    int tag = 0;
    int level = 0;       // the reduce's level in flight
    int stage = 0;       // 0: reducing, 1: receiving the sum, 2: sending it down, 3: done
    bool adding = false; // the request in flight is a receive into `partner`
    /// A reduce-scatter's segments: rank r's elements begin at offsets[r], and offsets[P]
    /// is their end; down the tree (stages 1 and 2) only the subtrees' segments travel.
    /// Empty: every rank receives the whole sum.
    std::vector<int64_t> offsets;
    std::vector<MPI_Request> requests;
    /// The partner's partial sum: shared, so that a sum given up on while its receive is
    /// pending leaves the buffer to orphans_ (MPI may still write it).
    std::shared_ptr<std::vector<char>> partner = std::make_shared<std::vector<char>>();
  };
  /// Forgets tree sum `it`; with messages still pending, keeps its buffer for MPI and marks
  /// the group broken (MPI_Finalize could wait for them).
  void dropTree(std::map<int64_t, TreeSum>::iterator it);
  /// Tests `sum`'s messages and posts its next ones.
  void advance(TreeSum &sum);
  std::map<int64_t, TreeSum> trees_;
  bool tree_ = false;
  MPI_Comm tree_comm_ = MPI_COMM_NULL;
  std::string layout_ = "flat";
  bool leader_ = false; // rank 0 of its host, in leaders_
  /// The ranks of this rank's host, in order (nodeReduce_'s), and each rank's host, as the
  /// leaders are ordered (by their first rank); whether every host's ranks are contiguous.
  std::vector<int> hostRanks_, hostOf_;
  bool hostsContiguous_ = false;
  MPI_Comm nodeReduce_ = MPI_COMM_NULL, nodeBcast_ = MPI_COMM_NULL, leaders_ = MPI_COMM_NULL;
  int leaderCount_ = 0;
  std::map<int64_t, StagedSum> staged_;
  MPI_Comm ctrl_ = MPI_COMM_NULL;  // handshake and metrics
  MPI_Comm data_ = MPI_COMM_NULL;  // gradient buckets
  MPI_Comm query_ = MPI_COMM_NULL; // status queries and answers
  MPI_Comm messages_ = MPI_COMM_NULL; // point-to-point (parameter servers)
  int threadLevel_ = MPI_THREAD_SINGLE;
  /// Whether this group initialised MPI (and so finalises it).
  bool ownsMpi_ = true;
  /// Duplicates `base` into the group's communicators and reads this rank's place in it.
  void setUpCommunicators(MPI_Comm base);
  std::unordered_map<int64_t, MPI_Request> messageRequests_; // point-to-point, by token
  std::set<int64_t> sends_;                                   // the tokens that are sends
  int64_t nextMessage_ = 0;

  MPI_Request queryReceive_ = MPI_REQUEST_NULL;
  int64_t queryIn_ = 0;
  struct PendingReply {
    MPI_Request request;
    std::unique_ptr<StatusReply> reply;
  };
  std::vector<PendingReply> replies_;
  /// Forgets the status replies whose sends have completed.
  void reapReplies();
  int64_t nextQueryId_ = 0;

  std::unordered_map<int64_t, std::vector<MPI_Request>> sums_;
  /// A reduce-scatter's segment, which MPI leaves at the front of the buffer, and where it
  /// belongs: moved there when its sum completes; and the counts MPI reads until then.
  struct SegmentMove {
    char *data = nullptr;
    int64_t offset = 0, bytes = 0;
    std::vector<int> counts;
  };
  std::unordered_map<int64_t, SegmentMove> moves_;
  /// The sum of bf16 gradients (made at its first use, freed with the communicators).
  MPI_Op bf16Sum_ = MPI_OP_NULL;
  /// The MPI type, its size and the sum of `dtype` (F32 or BF16).
  struct SumType {
    MPI_Datatype type;
    size_t size;
    MPI_Op op;
  };
  SumType sumType(DType dtype);
  /// Posts the first stage of a hierarchical sum (with `counts`, a reduce-scatter).
  int64_t postStaged(int64_t token, void *data, int64_t n, const SumType &t,
                     const std::vector<int64_t> &counts);
  int64_t nextToken_ = 0;

  /// Buffers of operations given up on, which MPI may still write.
  std::vector<std::shared_ptr<void>> orphans_;
  /// An operation was given up on: MPI_Finalize could wait for it forever.
  bool broken_ = false;
  /// abortJob's request to the thread (under MPI_THREAD_SERIALIZED); -1 for none.
  std::atomic<int> abortCode_{-1};
};

MpiGroup::MpiGroup() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized || finalized)
    throw Error(ErrorKind::Launch, "MPI was already initialised in this process: only one MPI "
                                   "process group can be created per process");
  // Before MPI_Init: a process started directly becomes an MPI singleton, and Open MPI then
  // sets the launcher variables (OMPI_COMM_WORLD_SIZE, ...) in its own environment.
  const std::string launcher = detectLauncher();
  // Open MPI's non-blocking allreduce (coll/libnbc) takes a binomial reduce and broadcast for
  // every in-place call, whatever its size: each link carries the whole bucket twice, one
  // direction at a time, where a ring carries 2(p-1)/p of it in both directions at once. The
  // gradient sums are in place and large, so ask for the ring (1.7x faster for 2.7 MB over a
  // 100 Mbit/s link, docs/scaling.md) unless the launch chose an algorithm itself. Other MPIs
  // ignore the variable.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
  int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &threadLevel_);
  if (rc != MPI_SUCCESS)
    throw Error(ErrorKind::Launch, "MPI_Init_thread failed: " + mpiErrorText(rc));
  if (threadLevel_ < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw Error(ErrorKind::Launch,
                std::string("the MPI library provides only ") + threadLevelName(threadLevel_) +
                    "; dprun needs MPI_THREAD_SERIALIZED or better (an MPI built with thread "
                    "support)");
  }
  setUpCommunicators(MPI_COMM_WORLD);
  launch_.launcher = launcher;
  launch_.host = hostName();
  launch_.slurm = slurmVariables();
  std::string mismatch = slurmMismatch(launch_.rank, launch_.size);
  if (!mismatch.empty()) {
    releaseMpi();
    throw Error(ErrorKind::Launch, mismatch);
  }
  postQueryReceive();
  startThread();
}

void MpiGroup::setUpCommunicators(MPI_Comm base) {
  MPI_Comm_rank(base, &launch_.rank);
  MPI_Comm_size(base, &launch_.size);
  for (MPI_Comm *comm : {&ctrl_, &data_, &query_, &messages_}) {
    MPI_Comm_dup(base, comm);
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
  }
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(base, MPI_COMM_TYPE_SHARED, launch_.rank, MPI_INFO_NULL, &node) ==
          MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_rank(node, &launch_.localRank);
    MPI_Comm_size(node, &launch_.localSize);
    MPI_Comm_free(&node);
  }
}

MpiGroup::MpiGroup(MPI_Comm base, const LaunchInfo &job, int threadLevel)
    : threadLevel_(threadLevel), ownsMpi_(false) {
  launch_ = job;
  setUpCommunicators(base);
  postQueryReceive();
  startThread();
}

std::unique_ptr<ProcessGroup> MpiGroup::split(int color, double timeoutSec) {
  if (threadLevel_ < MPI_THREAD_MULTIPLE)
    throw Error(ErrorKind::Launch,
                std::string("the MPI library provides only ") + threadLevelName(threadLevel_) +
                    "; a parameter-server job needs MPI_THREAD_MULTIPLE (its workers' group "
                    "and the job's make MPI calls from two threads)");
  MPI_Comm part = MPI_COMM_NULL;
  call([&] {
    activity_ = "waiting for every rank to split the job";
    // MPI_Comm_split blocks: a barrier with a deadline first, so that a missing rank is
    // reported instead of waited for.
    MPI_Request request;
    check(MPI_Ibarrier(ctrl_, &request), "MPI_Ibarrier (split)");
    ++seq_;
    await(request, timeoutSec, "the split of the job into servers and workers", nullptr);
    check(MPI_Comm_split(ctrl_, color, rank(), &part), "MPI_Comm_split");
  });
  std::unique_ptr<MpiGroup> group(new MpiGroup(part, launch_, threadLevel_));
  MPI_Comm_free(&part);
  return group;
}

int64_t MpiGroup::postSend(const void *data, int64_t bytes, int peer, int tag) {
  if (bytes < 0 || bytes > INT_MAX)
    throw Error(ErrorKind::Runtime, "a message of " + std::to_string(bytes) +
                                        " bytes is more than one MPI send carries");
  MPI_Request request;
  check(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, peer, tag, messages_, &request),
        "MPI_Isend");
  messageRequests_[++nextMessage_] = request;
  sends_.insert(nextMessage_);
  return nextMessage_;
}

int64_t MpiGroup::postReceive(void *data, int64_t bytes, int peer, int tag) {
  if (bytes < 0 || bytes > INT_MAX)
    throw Error(ErrorKind::Runtime, "a message of " + std::to_string(bytes) +
                                        " bytes is more than one MPI receive carries");
  MPI_Request request;
  check(MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, tag, messages_, &request),
        "MPI_Irecv");
  messageRequests_[++nextMessage_] = request;
  return nextMessage_;
}

bool MpiGroup::testMessage(int64_t token) {
  auto it = messageRequests_.find(token);
  if (it == messageRequests_.end())
    return true;
  int done = 0;
  check(MPI_Test(&it->second, &done, MPI_STATUS_IGNORE), "MPI_Test (message)");
  if (!done)
    return false;
  messageRequests_.erase(it);
  sends_.erase(token);
  return true;
}

void MpiGroup::cancelMessage(int64_t token) {
  auto it = messageRequests_.find(token);
  if (it == messageRequests_.end())
    return;
  MPI_Cancel(&it->second);
  MPI_Request_free(&it->second);
  messageRequests_.erase(it);
  // A send given up on may never complete (its peer is gone): MPI_Finalize could wait for it.
  if (sends_.erase(token))
    broken_ = true;
}

MpiGroup::~MpiGroup() {
  stopThread();
  // A given-up operation may never complete (its peer is dead): MPI_Finalize could then wait
  // forever. The job is failing anyway; leave MPI as it is.
  if (broken_)
    return;
  if (queryReceive_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&queryReceive_);
    MPI_Wait(&queryReceive_, MPI_STATUS_IGNORE); // a cancelled receive completes locally
  }
  // Answers still on their way get a moment to leave, then are dropped.
  Clock::time_point start = Clock::now();
  while (!replies_.empty() && secondsSince(start) < 0.5) {
    reapReplies();
  }
  for (PendingReply &pending : replies_) {
    MPI_Cancel(&pending.request);
    MPI_Request_free(&pending.request);
    orphans_.push_back(std::shared_ptr<StatusReply>(std::move(pending.reply)));
  }
  replies_.clear();
  releaseMpi();
}

void MpiGroup::releaseMpi() {
  for (auto &[token, request] : messageRequests_) {
    MPI_Cancel(&request);
    MPI_Request_free(&request);
  }
  messageRequests_.clear();
  for (MPI_Comm *comm :
       {&ctrl_, &data_, &query_, &messages_, &nodeReduce_, &nodeBcast_, &leaders_, &tree_comm_})
    if (*comm != MPI_COMM_NULL)
      MPI_Comm_free(comm);
  if (bf16Sum_ != MPI_OP_NULL)
    MPI_Op_free(&bf16Sum_);
  if (ownsMpi_)
    MPI_Finalize();
}

void MpiGroup::check(int rc, const char *what) const {
  if (rc != MPI_SUCCESS)
    throw Error(ErrorKind::Launch,
                std::string(what) + " failed on rank " + std::to_string(rank()) + ": " +
                    mpiErrorText(rc));
}

// ---------------------------------------------------------------------------------------------
// Status queries.

void MpiGroup::postQueryReceive() {
  int rc = MPI_Irecv(&queryIn_, 1, MPI_INT64_T, MPI_ANY_SOURCE, kQueryTag, query_, &queryReceive_);
  if (rc != MPI_SUCCESS) {
    queryReceive_ = MPI_REQUEST_NULL;
    std::fprintf(stderr, "dprun: [rank %d] cannot receive status queries: %s\n", rank(),
                 mpiErrorText(rc).c_str());
  }
}

void MpiGroup::service() {
  int code = abortCode_.load();
  if (code >= 0)
    abortNow(code);
  while (queryReceive_ != MPI_REQUEST_NULL) {
    int arrived = 0;
    MPI_Status status;
    if (MPI_Test(&queryReceive_, &arrived, &status) != MPI_SUCCESS || !arrived)
      break;
    auto reply = std::make_unique<StatusReply>();
    reply->queryId = queryIn_;
    std::string state = currentState(reply->seq);
    reply->work = static_cast<int64_t>(heartbeat::count());
    std::strncpy(reply->state, state.c_str(), sizeof(reply->state) - 1);
    MPI_Request request;
    if (MPI_Isend(reply.get(), sizeof(StatusReply), MPI_BYTE, status.MPI_SOURCE, kReplyTag, query_,
                  &request) == MPI_SUCCESS)
      replies_.push_back({request, std::move(reply)});
    postQueryReceive();
  }
  reapReplies();
}

void MpiGroup::reapReplies() {
  for (size_t i = 0; i < replies_.size();) {
    int done = 0;
    MPI_Test(&replies_[i].request, &done, MPI_STATUS_IGNORE);
    if (done)
      replies_.erase(replies_.begin() + i);
    else
      ++i;
  }
}

Diagnosis MpiGroup::diagnose() {
  const int n = size(), me = rank();
  if (n == 1)
    return {"no other process", {}};
  const int64_t id = ++nextQueryId_;
  // The queries are never waited for (a dead peer never takes them): their buffer stays alive.
  auto query = std::make_shared<int64_t>(id);
  orphans_.push_back(query);
  std::vector<StatusReply> answers(n);
  std::vector<MPI_Request> receives(n, MPI_REQUEST_NULL);
  std::vector<bool> answered(n, false);
  int pending = 0;
  for (int r = 0; r < n; ++r) {
    if (r == me)
      continue;
    MPI_Request send;
    if (MPI_Isend(query.get(), 1, MPI_INT64_T, r, kQueryTag, query_, &send) == MPI_SUCCESS)
      MPI_Request_free(&send);
    if (MPI_Irecv(&answers[r], sizeof(StatusReply), MPI_BYTE, r, kReplyTag, query_,
                  &receives[r]) == MPI_SUCCESS)
      ++pending;
  }
  // An answer with another id is a late one to an earlier query: wait for the next.
  auto accept = [&](int r) {
    if (answers[r].queryId == id) {
      answered[r] = true;
      --pending;
    } else if (MPI_Irecv(&answers[r], sizeof(StatusReply), MPI_BYTE, r, kReplyTag, query_,
                         &receives[r]) != MPI_SUCCESS) {
      receives[r] = MPI_REQUEST_NULL;
      --pending;
    }
  };
  Clock::time_point start = Clock::now();
  while (pending > 0 && secondsSince(start) < kQueryGraceSeconds) {
    for (int r = 0; r < n; ++r) {
      if (receives[r] == MPI_REQUEST_NULL)
        continue;
      int done = 0;
      if (MPI_Test(&receives[r], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done)
        accept(r);
    }
    service(); // others may be diagnosing too: answer them
    if (pending > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  for (int r = 0; r < n; ++r) {
    if (receives[r] == MPI_REQUEST_NULL)
      continue;
    MPI_Cancel(&receives[r]);
    MPI_Status status;
    MPI_Wait(&receives[r], &status); // a cancelled receive completes locally
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    if (!cancelled && answers[r].queryId == id)
      answered[r] = true;
  }

  // Group the ranks by what they said, in the order of their lowest rank.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int r = 0; r < n; ++r) {
    if (r == me)
      continue;
    std::string said;
    if (!answered[r]) {
      said = "did not answer (dead, hung or cut off)";
    } else {
      answers[r].state[sizeof(answers[r].state) - 1] = '\0';
      said = "at collective #" + std::to_string(answers[r].seq) + " (" + answers[r].state + ")";
    }
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto &group) { return group.first == said; });
    if (it == groups.end())
      groups.push_back({said, {r}});
    else
      it->second.push_back(r);
  }
  Diagnosis diagnosis;
  for (const auto &[said, ranks] : groups) {
    bool plural = ranks.size() > 1;
    std::string verb = said.rfind("at ", 0) == 0 ? (plural ? " are " : " is ") : " ";
    diagnosis.text +=
        (diagnosis.text.empty() ? "" : "; ") + rankList(ranks) + nodesOf(ranks) + verb + said;
  }
  diagnosis.work.assign(n, -1);
  for (int r = 0; r < n; ++r)
    if (r != me && answered[r])
      diagnosis.work[r] = answers[r].work;
  return diagnosis;
}

// ---------------------------------------------------------------------------------------------
// Operations.

void MpiGroup::await(MPI_Request &request, double timeoutSec, const std::string &what,
                     std::shared_ptr<void> keep) {
  Clock::time_point deadline = after(Clock::now(), timeoutSec);
  StallWatch watch;
  Backoff backoff;
  for (;;) {
    int done = 0;
    int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      broken_ = true;
      orphans_.push_back(std::move(keep));
      check(rc, what.c_str());
    }
    if (done)
      return;
    service();
    if (timeoutSec > 0 && Clock::now() > deadline) {
      Diagnosis diagnosis = diagnose();
      if (double more = watch.next(diagnosis, timeoutSec); more > 0) {
        deadline = after(Clock::now(), more);
        continue;
      }
      broken_ = true;
      orphans_.push_back(std::move(keep));
      throw Error(ErrorKind::Launch, what + " timed out after " + secondsText(timeoutSec) +
                                         " on rank " + std::to_string(rank()) + " (collective #" +
                                         std::to_string(seq_) + ")" + watch.stalled() + ": " +
                                         diagnosis.text);
    }
    backoff.pause();
  }
}

std::string MpiGroup::nodesOf(const std::vector<int> &ranks) const {
  std::vector<std::string> names;
  bool elsewhere = false;
  for (int r : ranks) {
    if (r < 0 || r >= static_cast<int>(hosts_.size()) || hosts_[r].empty())
      return "";
    elsewhere |= hosts_[r] != launch_.host;
    if (std::find(names.begin(), names.end(), hosts_[r]) == names.end())
      names.push_back(hosts_[r]);
  }
  if (!elsewhere)
    return "";
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? " (" : ", ") + name;
  return text + ")";
}

void MpiGroup::handshake(const Handshake &mine, double timeoutSec) {
  if (mine.replicas < 1 || mine.processes < 1)
    throw Error(ErrorKind::Launch, "plan " + mine.planPath + " asks for R=" +
                                       std::to_string(mine.replicas) + " replicas and P=" +
                                       std::to_string(mine.processes) + " processes");
  // A rank whose job size is not its plan's P still joins the exchange, so that the others
  // learn of the difference instead of waiting for it; then it reports its own view.
  const std::string local = size() != mine.processes ? sizeMismatch(mine, launch_) : "";
  struct Buffers {
    HandshakeRecord mine;
    std::vector<HandshakeRecord> all;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->mine = toRecord(mine);
  std::strncpy(buffers->mine.host, launch_.host.c_str(), sizeof(buffers->mine.host) - 1);
  buffers->mine.pid = static_cast<int32_t>(getpid());
  buffers->all.resize(size());
  try {
    call([&] {
      activity_ = "waiting in the handshake";
      MPI_Request request;
      check(MPI_Iallgather(&buffers->mine, sizeof(HandshakeRecord), MPI_BYTE, buffers->all.data(),
                           sizeof(HandshakeRecord), MPI_BYTE, ctrl_, &request),
            "MPI_Iallgather (handshake)");
      ++seq_;
      await(request, timeoutSec, "the handshake (plan " + mine.planPath + ")", buffers);
    });
  } catch (const Error &) {
    if (!local.empty())
      throw Error(ErrorKind::Launch, local);
    throw;
  }
  if (!local.empty())
    throw Error(ErrorKind::Launch, local);
  hosts_.clear();
  pids_.clear();
  for (HandshakeRecord &r : buffers->all) {
    r.host[sizeof(r.host) - 1] = '\0';
    hosts_.push_back(r.host);
    pids_.push_back(r.pid);
  }
  std::string difference = compareHandshakes(buffers->all);
  if (!difference.empty())
    throw Error(ErrorKind::Launch, difference);
  checkPlacement(mine);
  setUpAllreduce(mine.allreduce);
}

/// The distinct hosts of `ranks` (indexed by rank) in order of their first rank, and how many
/// ranks each has.
static void countHosts(const std::vector<std::string> &ranks, std::vector<std::string> &hosts,
                       std::vector<int> &perHost) {
  for (const std::string &h : ranks) {
    auto it = std::find(hosts.begin(), hosts.end(), h);
    if (it == hosts.end()) {
      hosts.push_back(h);
      perHost.push_back(1);
    } else {
      ++perHost[it - hosts.begin()];
    }
  }
}

void MpiGroup::checkPlacement(const Handshake &mine) const {
  if (mine.nodes <= 1)
    return;
  std::vector<std::string> hosts;
  std::vector<int> perHost;
  countHosts(hosts_, hosts, perHost);
  const int each = size() / mine.nodes;
  if (static_cast<int>(hosts.size()) == mine.nodes &&
      std::all_of(perHost.begin(), perHost.end(), [&](int n) { return n == each; }))
    return;
  std::string placed;
  for (size_t i = 0; i < hosts.size(); ++i)
    placed += (i ? ", " : "") + hosts[i] + ": " + std::to_string(perHost[i]);
  throw Error(ErrorKind::Launch,
              "plan " + mine.planPath + " was compiled for " + std::to_string(mine.nodes) +
                  " nodes x " + std::to_string(each) + " process(es), but the job's " +
                  std::to_string(size()) + " ranks run on " + std::to_string(hosts.size()) +
                  " host(s) (" + placed + "); launch it as compiled (mpirun --map-by ppr:" +
                  std::to_string(each) + ":node, srun -N " + std::to_string(mine.nodes) +
                  " --ntasks-per-node " + std::to_string(each) + ") or recompile with --nodes");
}

void MpiGroup::setUpAllreduce(const std::string &mode) {
  if (mode != "flat" && mode != "hierarchical" && mode != "auto" && mode != "tree")
    throw Error(ErrorKind::Usage,
                "--allreduce expects flat, hierarchical, tree or auto, not '" + mode + "'");
  if (mode == "tree") {
    tree_ = true;
    layout_ = "tree over " + std::to_string(size()) + " ranks";
    call([&] {
      check(MPI_Comm_dup(data_, &tree_comm_), "MPI_Comm_dup (tree)");
      MPI_Comm_set_errhandler(tree_comm_, MPI_ERRORS_RETURN);
    });
    return;
  }
  std::vector<std::string> hosts;
  std::vector<int> perHost;
  countHosts(hosts_, hosts, perHost);
  const bool shared = std::any_of(perHost.begin(), perHost.end(), [](int n) { return n > 1; });
  const bool hierarchical =
      mode == "hierarchical" || (mode == "auto" && hosts.size() > 1 && shared);
  if (!hierarchical || hosts_.empty()) {
    layout_ = "flat";
    return;
  }
  const int color = static_cast<int>(std::find(hosts.begin(), hosts.end(), launch_.host) -
                                     hosts.begin());
  // countHosts lists the hosts in the order of their first ranks, which is the leaders' order.
  hostOf_.clear();
  hostRanks_.clear();
  for (int r = 0; r < size(); ++r) {
    hostOf_.push_back(
        static_cast<int>(std::find(hosts.begin(), hosts.end(), hosts_[r]) - hosts.begin()));
    if (hostOf_.back() == color)
      hostRanks_.push_back(r);
  }
  hostsContiguous_ = true;
  for (int r = 1; r < size(); ++r)
    hostsContiguous_ =
        hostsContiguous_ && hostOf_[r] >= hostOf_[r - 1] && hostOf_[r] <= hostOf_[r - 1] + 1;
  layout_ = "hierarchical over " + std::to_string(hosts.size()) + " host" +
            (hosts.size() == 1 ? "" : "s") + " (";
  for (size_t i = 0; i < perHost.size(); ++i)
    layout_ += (i ? " + " : "") + std::to_string(perHost[i]);
  layout_ += " ranks)";
  // Comm splits have no deadline; every rank just finished the handshake, so all are here.
  call([&] {
    check(MPI_Comm_split(data_, color, rank(), &nodeReduce_), "MPI_Comm_split (host)");
    check(MPI_Comm_dup(nodeReduce_, &nodeBcast_), "MPI_Comm_dup (host)");
    int local = 0;
    MPI_Comm_rank(nodeReduce_, &local);
    leader_ = local == 0;
    check(MPI_Comm_split(data_, leader_ ? 0 : MPI_UNDEFINED, rank(), &leaders_),
          "MPI_Comm_split (leaders)");
    for (MPI_Comm comm : {nodeReduce_, nodeBcast_, leaders_})
      if (comm != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    leaderCount_ = 0;
    if (leaders_ != MPI_COMM_NULL)
      MPI_Comm_size(leaders_, &leaderCount_);
  });
}

void MpiGroup::sumDoubles(double *data, int n, double timeoutSec, const std::string &what) {
  if (n <= 0)
    return;
  auto buffer = std::make_shared<std::vector<double>>(data, data + n);
  const std::string name = what.empty() ? "the sum of " + std::to_string(n) + " metrics" : what;
  call([&] {
    activity_ = "waiting in " + name;
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, buffer->data(), n, MPI_DOUBLE, MPI_SUM, ctrl_, &request),
          "MPI_Iallreduce (metrics)");
    ++seq_;
    await(request, timeoutSec, name, buffer);
  });
  std::copy(buffer->begin(), buffer->end(), data);
}

std::vector<double> MpiGroup::gatherDoubles(double x, double timeoutSec) {
  struct Buffers {
    double mine;
    std::vector<double> all;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->mine = x;
  buffers->all.resize(size());
  call([&] {
    activity_ = "waiting in a gather of metrics";
    MPI_Request request;
    check(MPI_Iallgather(&buffers->mine, 1, MPI_DOUBLE, buffers->all.data(), 1, MPI_DOUBLE, ctrl_,
                         &request),
          "MPI_Iallgather (metrics)");
    ++seq_;
    await(request, timeoutSec, "the gather of a metric", buffers);
  });
  return buffers->all;
}

std::vector<std::string> MpiGroup::gatherBytes(const std::string &mine, int root,
                                               double timeoutSec) {
  if (root < 0 || root >= size())
    throw Error(ErrorKind::Runtime, "a gather to rank " + std::to_string(root) + " in a job of " +
                                        std::to_string(size()));
  // Every rank checks its own size; the sizes then tell the root whether the total fits.
  const int64_t tooLarge = mine.size() > size_t(INT_MAX) ? 1 : 0;
  struct Buffers {
    std::string mine, all;
    int64_t mySize = 0;
    std::vector<int64_t> sizes;
    std::vector<int> counts, offsets;
  };
  auto buffers = std::make_shared<Buffers>();
  buffers->mine = tooLarge ? std::string() : mine;
  buffers->sizes.assign(size(), 0);
  buffers->mySize = tooLarge ? -1 : static_cast<int64_t>(mine.size());
  call([&] {
    activity_ = "waiting in a gather of " + std::to_string(mine.size()) + " bytes to rank " +
                std::to_string(root);
    MPI_Request request;
    check(MPI_Iallgather(&buffers->mySize, 1, MPI_INT64_T, buffers->sizes.data(), 1, MPI_INT64_T, ctrl_,
                         &request),
          "MPI_Iallgather (sizes)");
    ++seq_;
    await(request, timeoutSec, "the gather of sizes to rank " + std::to_string(root), buffers);
  });
  int64_t total = 0;
  for (int64_t n : buffers->sizes) {
    if (n < 0)
      throw Error(ErrorKind::Runtime, "a rank's part of a gather exceeds MPI's count of " +
                                          std::to_string(INT_MAX) + " bytes");
    total += n;
  }
  if (total > INT_MAX)
    throw Error(ErrorKind::Runtime, "a gather of " + std::to_string(total) +
                                        " bytes exceeds MPI's count of " +
                                        std::to_string(INT_MAX));
  const bool isRoot = rank() == root;
  if (isRoot) {
    buffers->all.resize(static_cast<size_t>(total));
    int offset = 0;
    for (int64_t n : buffers->sizes) {
      buffers->counts.push_back(static_cast<int>(n));
      buffers->offsets.push_back(offset);
      offset += static_cast<int>(n);
    }
  }
  call([&] {
    MPI_Request request;
    check(MPI_Igatherv(buffers->mine.data(), static_cast<int>(buffers->mine.size()), MPI_BYTE,
                       isRoot ? buffers->all.data() : nullptr,
                       isRoot ? buffers->counts.data() : nullptr,
                       isRoot ? buffers->offsets.data() : nullptr, MPI_BYTE, root, ctrl_,
                       &request),
          "MPI_Igatherv");
    ++seq_;
    await(request, timeoutSec, "the gather of " + std::to_string(total) + " bytes to rank " +
                                   std::to_string(root), buffers);
  });
  std::vector<std::string> parts;
  if (isRoot)
    for (int r = 0; r < size(); ++r)
      parts.push_back(buffers->all.substr(buffers->offsets[r], buffers->counts[r]));
  return parts;
}

void MpiGroup::broadcast(void *data, size_t bytes, int root, double timeoutSec) {
  if (bytes > size_t(INT_MAX))
    throw Error(ErrorKind::Runtime, "a broadcast of " + std::to_string(bytes) +
                                        " bytes exceeds MPI's count");
  if (root < 0 || root >= size())
    throw Error(ErrorKind::Runtime, "a broadcast from rank " + std::to_string(root) +
                                        " in a job of " + std::to_string(size()));
  auto buffer = std::make_shared<std::vector<uint8_t>>(static_cast<uint8_t *>(data),
                                                       static_cast<uint8_t *>(data) + bytes);
  call([&] {
    activity_ = "waiting in a broadcast of " + std::to_string(bytes) + " bytes from rank " +
                std::to_string(root);
    MPI_Request request;
    check(MPI_Ibcast(buffer->data(), static_cast<int>(bytes), MPI_BYTE, root, ctrl_, &request),
          "MPI_Ibcast");
    ++seq_;
    await(request, timeoutSec, "the broadcast from rank " + std::to_string(root), buffer);
  });
  std::copy(buffer->begin(), buffer->end(), static_cast<uint8_t *>(data));
}

/// MPI's user operation for bf16 sums: inout += in, each addition in f32, rounded to bf16.
static void sumBf16(void *in, void *inout, int *len, MPI_Datatype *) {
  addBf16Into(static_cast<uint16_t *>(inout), static_cast<const uint16_t *>(in), *len);
}

MpiGroup::SumType MpiGroup::sumType(DType dtype) {
  if (dtype == DType::F32)
    return {MPI_FLOAT, sizeof(float), MPI_SUM};
  if (dtype != DType::BF16)
    throw Error(ErrorKind::Runtime, std::string("internal: no sum of ") + dtypeName(dtype));
  if (bf16Sum_ == MPI_OP_NULL)
    check(MPI_Op_create(&sumBf16, /*commute=*/1, &bf16Sum_), "MPI_Op_create (bf16 sum)");
  return {MPI_UINT16_T, sizeof(uint16_t), bf16Sum_};
}

int64_t MpiGroup::postTree(void *data, int64_t n, DType dtype, const std::vector<int64_t> &counts) {
  if (n > kMaxCount)
    throw Error(ErrorKind::Runtime, "a tree allreduce of " + std::to_string(n) +
                                        " elements exceeds one message's " +
                                        std::to_string(kMaxCount));
  sumType(dtype); // refuses a dtype it cannot sum
  const int64_t token = ++nextToken_;
  TreeSum &sum = trees_[token];
  sum.data = data;
  sum.count = static_cast<int>(n);
  sum.dtype = dtype;
  if (!counts.empty())
    sum.offsets = segmentOffsets(counts);
  // Every rank posts the sums in the same order: the same token, the same tag.
  sum.tag = static_cast<int>(token % 32768);
  ++seq_;
  try {
    advance(sum);
  } catch (...) {
    dropTree(trees_.find(token));
    throw;
  }
  return token;
}

int64_t MpiGroup::postSum(void *data, int64_t n, DType dtype) {
  if (tree_)
    return postTree(data, n, dtype, {});
  const SumType t = sumType(dtype);
  const int64_t token = ++nextToken_;
  if (hierarchical() && n <= kMaxCount)
    return postStaged(token, data, n, t, {});
  std::vector<MPI_Request> &requests = sums_[token];
  for (int64_t offset = 0; offset < n; offset += kMaxCount) {
    MPI_Request request;
    int count = static_cast<int>(std::min(n - offset, kMaxCount));
    check(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char *>(data) + offset * t.size, count,
                         t.type, t.op, data_, &request),
          "MPI_Iallreduce");
    requests.push_back(request);
  }
  ++seq_;
  return token;
}

int64_t MpiGroup::postScatterSum(void *data, int64_t n, DType dtype,
                                 const std::vector<int64_t> &counts) {
  if (int64_t(counts.size()) != size())
    throw Error(ErrorKind::Runtime, "a reduce-scatter over " + std::to_string(counts.size()) +
                                        " segments in a job of " + std::to_string(size()));
  // The tree's order up to rank 0, which sends each rank its segment.
  if (tree_)
    return postTree(data, n, dtype, counts);
  // A bucket past one message's count is summed whole (a superset), in pieces.
  if (n > kMaxCount)
    return postSum(data, n, dtype);
  const SumType t = sumType(dtype);
  const int64_t token = ++nextToken_;
  if (hierarchical())
    return postStaged(token, data, n, t, counts);
  SegmentMove &move = moves_[token];
  for (int64_t c : counts)
    move.counts.push_back(static_cast<int>(c));
  MPI_Request request;
  check(MPI_Ireduce_scatter(MPI_IN_PLACE, data, move.counts.data(), t.type, t.op, data_, &request),
        "MPI_Ireduce_scatter");
  sums_[token].push_back(request);
  move.data = static_cast<char *>(data);
  move.offset = segmentOffsets(counts)[rank()] * int64_t(t.size);
  move.bytes = counts[rank()] * int64_t(t.size);
  ++seq_;
  return token;
}

int64_t MpiGroup::postStaged(int64_t token, void *data, int64_t n, const SumType &t,
                             const std::vector<int64_t> &counts) {
  StagedSum &sum = staged_[token];
  sum.data = data;
  sum.count = static_cast<int>(n);
  sum.type = t.type;
  sum.size = t.size;
  sum.op = t.op;
  if (!counts.empty()) {
    sum.scatter = true;
    const std::vector<int64_t> offsets = segmentOffsets(counts);
    sum.mine = offsets[rank()];
    sum.mineCount = counts[rank()];
    sum.hostBegin = offsets[hostRanks_.front()];
    sum.hostCount = offsets[hostRanks_.back() + 1] - sum.hostBegin;
    if (leader_) {
      for (int r : hostRanks_) {
        sum.localCounts.push_back(static_cast<int>(counts[r]));
        sum.localDispls.push_back(static_cast<int>(offsets[r]));
      }
      if (hostsContiguous_) {
        sum.leaderCounts.assign(leaderCount_, 0);
        for (int r = 0; r < size(); ++r)
          sum.leaderCounts[hostOf_[r]] += static_cast<int>(counts[r]);
      }
    }
  }
  check(MPI_Ireduce(leader_ ? MPI_IN_PLACE : data, leader_ ? data : nullptr, sum.count, sum.type,
                    sum.op, 0, nodeReduce_, &sum.request),
        "MPI_Ireduce (within the host)");
  ++seq_;
  return token;
}

int64_t MpiGroup::postBroadcast(void *data, int64_t bytes, int root) {
  // On the sums' communicator, in their order: every rank posts its collectives there in the
  // manifest's order, whatever path (flat, hierarchical, tree) the sums take.
  const int64_t token = ++nextToken_;
  std::vector<MPI_Request> &requests = sums_[token];
  for (int64_t offset = 0; offset < bytes; offset += kMaxCount) {
    MPI_Request request;
    const int count = static_cast<int>(std::min(bytes - offset, kMaxCount));
    check(MPI_Ibcast(static_cast<char *>(data) + offset, count, MPI_BYTE, root, data_, &request),
          "MPI_Ibcast");
    requests.push_back(request);
  }
  ++seq_;
  return token;
}

void MpiGroup::advance(StagedSum &sum, int floor) {
  while (sum.stage < 3) {
    int done = 0;
    const int rc = MPI_Test(&sum.request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      broken_ = true;
      check(rc, sum.stage == 0 ? "MPI_Ireduce (within the host)"
                : sum.stage == 1
                    ? (sum.leaderCounts.empty() ? "MPI_Iallreduce (across the hosts)"
                                                : "MPI_Ireduce_scatter (across the hosts)")
                : sum.scatter ? "MPI_Iscatterv (within the host)"
                              : "MPI_Ibcast (within the host)");
    }
    if (!done)
      return;
    int next = sum.stage + 1;
    if (next == 1 && !(leader_ && leaderCount_ > 1))
      next = 2;
    if (next == 3) {
      sum.stage = 3;
      return;
    }
    if (floor < next)
      return; // an earlier sum has not posted this stage yet; the request stays complete
    if (sum.stage == 1 && !sum.leaderCounts.empty() && !sum.moved) {
      // The leaders' reduce-scatter left this host's segments at the front. Once only: the
      // completed request may be tested again while an earlier sum holds the next stage back.
      char *data = static_cast<char *>(sum.data);
      if (sum.hostBegin > 0 && sum.hostCount > 0)
        std::memmove(data + sum.hostBegin * sum.size, data, size_t(sum.hostCount) * sum.size);
      sum.moved = true;
    }
    if (next == 1 && !sum.leaderCounts.empty())
      check(MPI_Ireduce_scatter(MPI_IN_PLACE, sum.data, sum.leaderCounts.data(), sum.type, sum.op,
                                leaders_, &sum.request),
            "MPI_Ireduce_scatter (across the hosts)");
    else if (next == 1)
      check(MPI_Iallreduce(MPI_IN_PLACE, sum.data, sum.count, sum.type, sum.op, leaders_,
                           &sum.request),
            "MPI_Iallreduce (across the hosts)");
    else if (sum.scatter)
      check(MPI_Iscatterv(sum.data, sum.localCounts.data(), sum.localDispls.data(), sum.type,
                          leader_ ? MPI_IN_PLACE
                                  : static_cast<char *>(sum.data) + sum.mine * sum.size,
                          static_cast<int>(sum.mineCount), sum.type, 0, nodeBcast_, &sum.request),
            "MPI_Iscatterv (within the host)");
    else
      check(MPI_Ibcast(sum.data, sum.count, sum.type, 0, nodeBcast_, &sum.request),
            "MPI_Ibcast (within the host)");
    sum.stage = next;
  }
}

void MpiGroup::dropTree(std::map<int64_t, TreeSum>::iterator it) {
  if (it == trees_.end())
    return;
  if (!it->second.requests.empty()) {
    broken_ = true;
    orphans_.push_back(it->second.partner);
  }
  trees_.erase(it);
}

/// inout[i] += in[i] for n floats (a float addition gives the same bits in either order).
static void addFloatsInto(float *inout, const float *in, int n) {
  for (int i = 0; i < n; ++i)
    inout[i] += in[i];
}

void MpiGroup::advance(TreeSum &sum) {
  const int me = rank(), ranks = size();
  const size_t elementSize = dtypeSize(sum.dtype), bytes = size_t(sum.count) * elementSize;
  const MPI_Datatype type = sumType(sum.dtype).type;
  // A reduce-scatter's part for the subtree of ranks [first, first + 2^level), cut at P: its
  // first element and its count.
  auto subtree = [&](int first, int level, int64_t &begin) {
    const int end =
        static_cast<int>(std::min<int64_t>(int64_t(first) + (int64_t(1) << level), ranks));
    begin = sum.offsets[first];
    return static_cast<int>(sum.offsets[end] - begin);
  };
  // The lowest set bit of this rank's index: the level at which it hands its partial sum to
  // its parent (rank 0 has none and reduces over every level).
  int top = 0;
  while ((int64_t(1) << top) < ranks && !(me & (1 << top)))
    ++top;
  while (sum.stage < 3) {
    if (!sum.requests.empty()) {
      int done = 0;
      const int rc = MPI_Testall(static_cast<int>(sum.requests.size()), sum.requests.data(), &done,
                                 MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) {
        broken_ = true;
        check(rc, "the tree allreduce's messages");
      }
      if (!done)
        return;
      sum.requests.clear();
      if (sum.adding) {
        if (sum.dtype == DType::BF16)
          addBf16Into(static_cast<uint16_t *>(sum.data),
                      reinterpret_cast<const uint16_t *>(sum.partner->data()), sum.count);
        else
          addFloatsInto(static_cast<float *>(sum.data),
                        reinterpret_cast<const float *>(sum.partner->data()), sum.count);
        sum.adding = false;
        ++sum.level;
      } else if (sum.stage == 0) {
        sum.stage = 1; // the partial sum went up: the whole sum comes down
      } else {
        ++sum.stage;
      }
      continue;
    }
    MPI_Request request;
    if (sum.stage == 0) {
      if (sum.level == top && me != 0) { // hand the partial sum to the parent
        check(MPI_Isend(sum.data, sum.count, type, me - (1 << top), sum.tag, tree_comm_, &request),
              "MPI_Isend (tree allreduce)");
        sum.requests.push_back(request);
      } else if ((int64_t(1) << sum.level) >= ranks) {
        sum.stage = 2; // rank 0 holds the sum
      } else if (me + (1 << sum.level) < ranks) {
        sum.partner->resize(bytes);
        check(MPI_Irecv(sum.partner->data(), sum.count, type, me + (1 << sum.level), sum.tag,
                        tree_comm_, &request),
              "MPI_Irecv (tree allreduce)");
        sum.requests.push_back(request);
        sum.adding = true;
      } else {
        ++sum.level; // no rank to the right at this level
      }
    } else if (sum.stage == 1 && !sum.offsets.empty()) {
      // A reduce-scatter: this rank's subtree's segments of the sum, from its parent.
      int64_t begin = 0;
      const int count = subtree(me, top, begin);
      if (count == 0) {
        sum.stage = 2;
        continue;
      }
      check(MPI_Irecv(static_cast<char *>(sum.data) + begin * elementSize, count, type,
                      me - (1 << top), sum.tag, tree_comm_, &request),
            "MPI_Irecv (tree reduce-scatter)");
      sum.requests.push_back(request);
    } else if (sum.stage == 1) {
      check(MPI_Irecv(sum.data, sum.count, type, me - (1 << top), sum.tag, tree_comm_, &request),
            "MPI_Irecv (tree allreduce)");
      sum.requests.push_back(request);
    } else {
      // Down the tree: to the children, the farthest first; under a reduce-scatter, each
      // child's subtree's segments only.
      for (int l = top - 1; l >= 0; --l) {
        const int child = me + (1 << l);
        if (child >= ranks)
          continue;
        int64_t begin = 0;
        const int count = sum.offsets.empty() ? sum.count : subtree(child, l, begin);
        if (count == 0 && !sum.offsets.empty())
          continue; // the child receives nothing either (an empty bucket still sends)
        check(MPI_Isend(static_cast<char *>(sum.data) + begin * elementSize, count, type, child,
                        sum.tag, tree_comm_, &request),
              "MPI_Isend (tree allreduce)");
        sum.requests.push_back(request);
      }
      if (sum.requests.empty())
        sum.stage = 3;
    }
  }
}

bool MpiGroup::testSum(int64_t token) {
  if (auto tree = trees_.find(token); tree != trees_.end()) {
    try {
      advance(tree->second);
    } catch (...) {
      dropTree(tree);
      throw;
    }
    if (tree->second.stage < 3)
      return false;
    trees_.erase(tree);
    return true;
  }
  if (!staged_.empty() && staged_.begin()->first <= token) {
    // The earlier sums first: a stage is posted in the order of the sums.
    int floor = 3;
    for (auto it = staged_.begin(); it != staged_.end() && it->first <= token; ++it) {
      try {
        advance(it->second, floor);
      } catch (...) {
        staged_.erase(it);
        throw;
      }
      floor = std::min(floor, it->second.stage);
    }
    auto it = staged_.find(token);
    if (it != staged_.end()) {
      if (it->second.stage < 3)
        return false;
      staged_.erase(it);
      return true;
    }
  }
  auto it = sums_.find(token);
  if (it == sums_.end())
    return true;
  int done = 0;
  int rc = MPI_Testall(static_cast<int>(it->second.size()), it->second.data(), &done,
                       MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    sums_.erase(it);
    moves_.erase(token);
    broken_ = true;
    check(rc, "MPI_Iallreduce, MPI_Ireduce_scatter or MPI_Ibcast");
  }
  if (done) {
    sums_.erase(it);
    if (auto move = moves_.find(token); move != moves_.end()) {
      const SegmentMove &m = move->second;
      std::memmove(m.data + m.offset, m.data, static_cast<size_t>(m.bytes));
      moves_.erase(move);
    }
  }
  return done != 0;
}

void MpiGroup::abandonSum(int64_t token) {
  if (auto tree = trees_.find(token); tree != trees_.end())
    dropTree(tree);
  moves_.erase(token);
  if (sums_.erase(token) + staged_.erase(token))
    broken_ = true;
}

// ---------------------------------------------------------------------------------------------
// Aborting.

void MpiGroup::abortNow(int exitCode) {
  // MPI_Abort ends every process of the job. Should it block (the communication thread may be
  // inside MPI), this process still ends in a few seconds, and the launcher then ends the job.
  std::thread([exitCode] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::_Exit(exitCode);
  }).detach();
  MPI_Abort(MPI_COMM_WORLD, exitCode);
  std::_Exit(exitCode); // MPI_Abort does not return; should it, end this process at least
}

void MpiGroup::abortJob(const std::string &message, int exitCode) {
  std::cout.flush();
  std::fflush(stdout);
  std::fprintf(stderr, "dprun: [rank %d] %s\n", rank(), message.c_str());
  std::fflush(stderr);
  // MPI_Abort would end no other process there (and MPI_Finalize could wait for a stopped one).
  if (launcherKeepsJobOnFailure())
    std::_Exit(exitCode);
  if (onCommThread() || !threadRunning() || threadLevel_ == MPI_THREAD_MULTIPLE)
    abortNow(exitCode);
  // Under MPI_THREAD_SERIALIZED only the communication thread may call MPI: it aborts on its
  // next turn (every loop and wait of the thread checks). Should it not, end this process.
  abortCode_.store(exitCode);
  wake();
  std::this_thread::sleep_for(std::chrono::seconds(5));
  std::_Exit(exitCode);
}

} // namespace

std::unique_ptr<ProcessGroup> createMpiGroup() { return std::make_unique<MpiGroup>(); }

} // namespace dp::rt::comm
