// The collective schedule check: see Schedule.h.
#include "sim/Schedule.h"

#include <map>

namespace dp::sim {
namespace {

constexpr int kSteps = 2; // a second step catches a bucket slot reused before it finished

/// One collective call a rank posts.
struct Call {
  const char *op = "";
  int bucket = 0;
  int64_t elements = 0;
  const std::string *tensors = nullptr;
  const std::vector<int64_t> *segments = nullptr; // a reduce-scatter's owners' segments
  int owner = 0;     // the rank
  int instance = 0;  // the rank's bucket instance (step * buckets + position)
};

struct Communicator {
  std::string name;
  std::vector<int> members;              // ranks
  std::map<int, std::vector<Call>> posts; // by rank, in order
  size_t matched = 0;
};

struct Event {
  bool wait = false;
  int bucket = 0, position = 0, kernel = 0;
};

struct Stage {
  int comm = 0;
  const char *op = "";
};

struct Rank {
  const rt::Plan *plan = nullptr;
  std::string name;
  std::vector<Event> events;              // the train step's starts and waits
  std::vector<const rt::CollectiveDesc *> manifest; // posting order
  std::vector<std::string> tensors;        // per manifest position: "a, b"
  std::vector<Stage> stages;               // per allreduce bucket, in order
  Stage broadcast;                         // a broadcast bucket over the job: one stage
  Stage scatter;                           // a reduce-scattered bucket under flat sums
  std::vector<Stage> scatterStages;        // one under hierarchical sums, as `stages`
  // State.
  size_t pc = 0;                           // events done, over all steps
  int nextPost = 0;                        // bucket instances posted
  std::vector<char> started, completed;    // per instance
  std::vector<int> stageOf;                // per instance: the stage in flight
};

std::string describe(const Call &c) {
  return std::string(c.op) + " of bucket " + std::to_string(c.bucket) + " (" +
         std::to_string(c.elements) + " f32: " + *c.tensors + ")";
}

std::string ordinal(size_t n) {
  const char *suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                   ? "st"
                       : n % 10 == 2                   ? "nd"
                       : n % 10 == 3                   ? "rd"
                                                       : "th";
  return std::to_string(n) + suffix;
}

class Checker {
public:
  Checker(const std::vector<const rt::Plan *> &plans, const std::vector<std::string> &names,
          int nodes, Layout layout)
      : layout_(layout) {
    const int size = int(plans.size());
    const int perNode = size / nodes;
    // Communicators, as runtime/comm makes them.
    // The tree's messages are tagged by the sum on one communicator: flat's order rules.
    if (layout != Layout::Hierarchical || nodes <= 1 || perNode <= 1) {
      layout_ = Layout::Flat;
      Communicator world{"world", {}, {}, 0};
      for (int r = 0; r < size; ++r)
        world.members.push_back(r);
      comms_.push_back(world);
    } else {
      for (int n = 0; n < nodes; ++n)
        for (const char *what : {"reduce", "broadcast"}) {
          Communicator c{"node " + std::to_string(n) + " " + what, {}, {}, 0};
          for (int i = 0; i < perNode; ++i)
            c.members.push_back(n * perNode + i);
          comms_.push_back(c);
        }
      Communicator leaders{"leaders", {}, {}, 0};
      for (int n = 0; n < nodes; ++n)
        leaders.members.push_back(n * perNode);
      comms_.push_back(leaders);
    }
    // A parameter's broadcast over the job (state sharded over the processes) goes over the
    // whole world, on the sums' communicator, in manifest order with them: with flat sums the
    // world is theirs; hierarchical sums add it.
    worldComm_ = 0;
    bool broadcasts = false;
    for (const rt::Plan *plan : plans)
      for (const rt::CollectiveDesc &c : plan->collectives)
        broadcasts |= isBroadcastOverTheJob(c);
    if (broadcasts && layout_ == Layout::Hierarchical) {
      Communicator world{"world", {}, {}, 0};
      for (int r = 0; r < size; ++r)
        world.members.push_back(r);
      worldComm_ = int(comms_.size());
      comms_.push_back(world);
    }
    for (int r = 0; r < size; ++r) {
      Rank rank;
      rank.plan = plans[r];
      rank.name = names[r];
      std::map<int, int> position;
      for (const rt::CollectiveDesc &c : plans[r]->collectives) {
        // A parameter's broadcast (sharded optimizer state) within the process: no rank waits
        // for another's. One over the job is a collective like the sums.
        if (c.kind == rt::CollectiveKind::Broadcast && !isBroadcastOverTheJob(c))
          continue;
        position[c.bucket] = int(rank.manifest.size());
        rank.manifest.push_back(&c);
        std::string joined;
        for (const std::string &t : c.tensors)
          joined += (joined.empty() ? "" : ", ") + t;
        rank.tensors.push_back(joined);
      }
      const auto &kernels = plans[r]->train.kernels;
      for (size_t i = 0; i < kernels.size(); ++i) {
        const rt::KernelDesc &k = kernels[i];
        if (k.kind != rt::KernelKind::AllReduceStart && k.kind != rt::KernelKind::AllReduceWait &&
            k.kind != rt::KernelKind::BroadcastStart && k.kind != rt::KernelKind::BroadcastWait)
          continue;
        const auto *attrs = std::get_if<rt::CollectiveAttrs>(&k.attrs);
        if (!attrs || !position.count(int(attrs->bucket)))
          continue; // the loader refuses such a plan
        rank.events.push_back(Event{k.kind == rt::KernelKind::AllReduceWait ||
                                        k.kind == rt::KernelKind::BroadcastWait,
                                    int(attrs->bucket), position[int(attrs->bucket)], int(i)});
      }
      if (layout_ == Layout::Flat) {
        rank.stages.push_back({0, "allreduce"});
      } else {
        const int node = r / perNode;
        rank.stages.push_back({2 * node, "reduce"});
        if (r % perNode == 0)
          rank.stages.push_back({2 * nodes, "allreduce"});
        rank.stages.push_back({2 * node + 1, "broadcast"});
        rank.scatterStages = {{2 * node, "reduce"}};
        if (r % perNode == 0)
          rank.scatterStages.push_back({2 * nodes, "reduce_scatter"});
        rank.scatterStages.push_back({2 * node + 1, "scatter"});
      }
      rank.broadcast = {worldComm_, "parameter broadcast"};
      rank.scatter = {0, "reduce_scatter"};
      const size_t instances = rank.manifest.size() * kSteps;
      rank.started.assign(instances, 0);
      rank.completed.assign(instances, 0);
      rank.stageOf.assign(instances, -1);
      ranks_.push_back(std::move(rank));
    }
  }

  ScheduleCheck run() {
    ScheduleCheck check;
    if (ranks_.empty())
      return check;
    bool progress = true;
    while (progress && check.problems.empty()) {
      progress = false;
      for (size_t r = 0; r < ranks_.size(); ++r)
        progress |= advanceRank(int(r));
      for (Communicator &c : comms_)
        progress |= match(c, check);
    }
    size_t perStep = ranks_[0].manifest.size();
    std::string comms =
        layout_ == Layout::Flat
            ? std::string("1 communicator (world)")
            : std::to_string(comms_.size()) +
                  " communicators (per node a reduce "
                  "and a broadcast one, the leaders'" +
                  (worldComm_ > 0 ? ", the world's for the parameters' broadcasts)" : ")");
    if (check.problems.empty())
      for (const Rank &rank : ranks_)
        if (rank.pc < rank.events.size() * kSteps) {
          if (check.problems.empty())
            check.problems.push_back(
                "deadlock: these ranks wait for ever (each replica waits for a bucket that "
                "cannot complete):");
          check.problems.push_back(waitState(rank));
        }
    check.ok = check.problems.empty();
    if (check.ok)
      check.summary = std::to_string(perStep) + " collective(s) per step on " + comms +
                      ", the same order on all " + std::to_string(ranks_.size()) +
                      " rank(s); " + std::to_string(kSteps) +
                      " train steps replayed: every wait is reached and returns";
    else
      check.summary = std::to_string(ranks_.size()) + " rank(s), " + comms;
    return check;
  }

private:
  /// Runs the rank's replica and communication thread as far as they can go.
  bool advanceRank(int r) {
    Rank &rank = ranks_[r];
    bool progress = false;
    const size_t perStep = rank.events.size(), buckets = rank.manifest.size();
    while (perStep && rank.pc < perStep * kSteps) {
      const Event &e = rank.events[rank.pc % perStep];
      const size_t instance = (rank.pc / perStep) * buckets + e.position;
      if (e.wait && !rank.completed[instance])
        break;
      if (!e.wait)
        rank.started[instance] = 1;
      ++rank.pc;
      progress = true;
    }
    // The communication thread posts buckets in manifest order, each once all replicas started
    // it and its previous step's sum finished (runtime/comm/Collectives.cpp).
    while (size_t(rank.nextPost) < buckets * kSteps) {
      const int instance = rank.nextPost;
      if (!rank.started[instance] ||
          (size_t(instance) >= buckets && !rank.completed[instance - buckets]))
        break;
      post(r, instance, 0);
      ++rank.nextPost;
      progress = true;
    }
    return progress;
  }

  /// The stages of `instance` of `rank`: a sum's, or a broadcast's one.
  const Stage &stageFor(const Rank &rank, int instance, int stage) const {
    const rt::CollectiveDesc *c = rank.manifest[instance % rank.manifest.size()];
    if (c->kind == rt::CollectiveKind::Broadcast)
      return rank.broadcast;
    // Flat and tree sums reduce-scatter a bucket of sharded state's owners (MPI_Ireduce_scatter,
    // or the tree's sum sent back down in each subtree's segments); hierarchical ones reduce it
    // within the node, reduce-scatter it over the leaders and scatter it within the node.
    // (layout_ is Flat for the tree: one communicator, flat's order rules.)
    if (!c->segments.empty())
      return layout_ == Layout::Flat ? rank.scatter : rank.scatterStages[stage];
    return rank.stages[stage];
  }
  static int stageCount(const Rank &rank, int instance) {
    const rt::CollectiveDesc *c = rank.manifest[instance % rank.manifest.size()];
    return c->kind == rt::CollectiveKind::Broadcast ? 1 : int(rank.stages.size());
  }

  void post(int r, int instance, int stage) {
    Rank &rank = ranks_[r];
    const size_t position = instance % rank.manifest.size();
    const rt::CollectiveDesc *c = rank.manifest[position];
    rank.stageOf[instance] = stage;
    Call call;
    call.op = stageFor(rank, instance, stage).op;
    call.bucket = c->bucket;
    call.elements = c->elements;
    call.tensors = &rank.tensors[position];
    call.segments = &c->segments;
    call.owner = r;
    call.instance = instance;
    comms_[stageFor(rank, instance, stage).comm].posts[r].push_back(call);
  }

  /// Completes the collectives every member of `c` has posted; false when none.
  bool match(Communicator &c, ScheduleCheck &check) {
    bool progress = false;
    while (true) {
      for (int member : c.members)
        if (c.posts[member].size() <= c.matched)
          return progress;
      const Call &first = c.posts[c.members[0]][c.matched];
      for (int member : c.members) {
        const Call &other = c.posts[member][c.matched];
        const bool sameSegments =
            (std::string(first.op) != "reduce_scatter" && std::string(first.op) != "scatter") ||
            *other.segments == *first.segments;
        if (other.elements == first.elements && std::string(other.op) == first.op && sameSegments &&
            *other.tensors == *first.tensors)
          continue;
        const bool sizes =
            other.elements != first.elements || std::string(other.op) != first.op || !sameSegments;
        check.problems.push_back(
            std::string(sizes ? "deadlock" : "wrong sums") + ": the " + ordinal(c.matched + 1) +
            " collective on " + c.name + " pairs " + describe(first) + " on rank " +
            std::to_string(first.owner) + " (" + ranks_[first.owner].name + ") with " +
            describe(other) + " on rank " + std::to_string(member) + " (" +
            ranks_[member].name + "): MPI pairs a communicator's collectives by their order, " +
            (sizes ? "so these ranks would wait for ever for data that never comes (or fail "
                     "on the size)"
                   : "so different tensors would be summed together, silently"));
        return progress;
      }
      for (int member : c.members) {
        const Call &done = c.posts[member][c.matched];
        Rank &rank = ranks_[done.owner];
        const int next = rank.stageOf[done.instance] + 1;
        if (next < stageCount(rank, done.instance)) {
          post(done.owner, done.instance, next);
        } else {
          rank.completed[done.instance] = 1;
          rank.stageOf[done.instance] = -1;
        }
      }
      ++c.matched;
      progress = true;
    }
  }

  std::string waitState(const Rank &rank) const {
    const int r = int(&rank - ranks_.data());
    const size_t perStep = rank.events.size(), buckets = rank.manifest.size();
    const Event &e = rank.events[rank.pc % perStep];
    const int step = int(rank.pc / perStep);
    const int instance = step * int(buckets) + e.position;
    std::string text = "  rank " + std::to_string(r) + " (" + rank.name + "): train step " +
                       std::to_string(step) + " waits at kernel #" + std::to_string(e.kernel) +
                       " for bucket " + std::to_string(e.bucket) + " (" +
                       rank.tensors[e.position] + "), ";
    if (instance >= rank.nextPost) {
      const int blocker = rank.nextPost;
      const size_t position = blocker % buckets;
      return text + "which its communication thread cannot post: it posts in manifest order " +
             "and bucket " + std::to_string(rank.manifest[position]->bucket) + " of step " +
             std::to_string(blocker / buckets) + " comes first, " +
             (rank.started[blocker] ? "whose previous sum has not finished"
                                    : "which this replica has not started yet");
    }
    const Stage &stage = stageFor(rank, instance, rank.stageOf[instance]);
    const Communicator &c = comms_[stage.comm];
    const auto &mine = c.posts.at(r);
    size_t index = 0;
    while (index < mine.size() && mine[index].instance != instance)
      ++index;
    std::string missing;
    for (int member : c.members)
      if (c.posts.count(member) == 0 || c.posts.at(member).size() <= index)
        missing += (missing.empty() ? "" : ", ") + std::to_string(member);
    return text + "posted as the " + ordinal(index + 1) + " collective on " + c.name +
           (missing.empty() ? "" : ", which rank(s) " + missing + " have not posted");
  }

  static bool isBroadcastOverTheJob(const rt::CollectiveDesc &c) {
    return c.kind == rt::CollectiveKind::Broadcast && c.group == rt::GroupKind::World;
  }

  Layout layout_;
  int worldComm_ = 0; // the communicator of the broadcasts over the job
  std::vector<Communicator> comms_;
  std::vector<Rank> ranks_;
};

} // namespace

ScheduleCheck checkSchedule(const std::vector<const rt::Plan *> &ranks,
                            const std::vector<std::string> &names, int nodes, Layout layout) {
  return Checker(ranks, names, std::max(1, nodes), layout).run();
}

} // namespace dp::sim
