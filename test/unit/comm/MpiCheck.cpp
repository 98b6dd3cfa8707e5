// dprt_comm_mpi_check: one rank of an MPI job that exercises the process group and the replica
// engine; MpiJobTest.cpp starts it under mpirun. Modes:
//   allreduce           R replica threads average buckets over R x P copies; checks the means,
//                       sumDoubles and gatherDoubles; prints "rank N: allreduce ok".
//   handshake-mismatch  rank 1 runs another plan (/tmp/b.dpx, hash 0x1234): the handshake fails.
//   size-mismatch       the plan says P = --compiled-p, whatever the job's size.
//   kill                like allreduce, but rank 1 SIGKILLs itself at step 3.
//   hang                like allreduce, but rank 1's replica 0 sleeps forever at step 3.
//   slow                like allreduce, but rank 1's replica 0 works (counts in the process's
//                       heartbeat, without starting a bucket) for 4 timeouts at step 3.
//   stop                like allreduce, but rank 1 stops (SIGSTOP) at step 3.
//   shard               like allreduce, but buckets 1 and 4 are broadcasts over the job (state
//                       sharded over the processes): from the job's last replica and from
//                       process 1's replica 0; every copy must end as the root's; bucket 2
//                       is reduce-scattered: each replica's own segment must hold the means.
//   ps                  rank 0 serves one bucket to the other ranks, the workers, which push
//                       --steps gradients each (asynchronous); rank 0 prints the updates.
//   ps-slow             like ps, but worker 0 (rank 1) works for 4 timeouts before its second
//                       push (counting in its heartbeat, pushing nothing).
//   ps-slow-sync        like ps-slow, but synchronous (each step's pulls wait for both
//                       gradients) and worker 0 works for 8 timeouts: worker 1's pull waits.
//   ps-stop             like ps, but worker 1 (rank 2) stops (SIGSTOP) before its second push.
//   bench               times --iterations allreduces of --elements floats through the engine
//                       (R = 1) and through plain MPI_Allreduce; rank 0 prints both means.
// Errors of the handshake are raised on every rank: each prints its message, finalises MPI and
// exits with the error's code. Later errors end the job with abortJob, as dprun does.
#include "runtime/comm/Internal.h"

#include "runtime/base/Heartbeat.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using dp::rt::BucketInfo;
using dp::rt::Collectives;
using dp::rt::Error;
using dp::rt::ErrorKind;
using dp::rt::ProcessGroup;
using dp::rt::PsBucketInfo;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string mode;
  int replicas = 2;
  int steps = 5;
  double timeout = 10;
  int compiledP = 0; // 0: the job's size
  int64_t elements = 80000;
  int iterations = 200;
  std::string allreduce = "auto"; // the handshake's --allreduce: flat, hierarchical, tree, auto
};

Options parse(int argc, char **argv) {
  Options o;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s MODE [--replicas R] [--steps N] [--timeout S] "
                 "[--compiled-p P] [--elements N] [--iterations N] [--allreduce MODE]\n",
                 argv[0]);
    std::exit(2);
  }
  o.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    const char *value = argv[i + 1];
    if (flag == "--replicas")
      o.replicas = std::atoi(value);
    else if (flag == "--steps")
      o.steps = std::atoi(value);
    else if (flag == "--timeout")
      o.timeout = std::atof(value);
    else if (flag == "--compiled-p")
      o.compiledP = std::atoi(value);
    else if (flag == "--elements")
      o.elements = std::atoll(value);
    else if (flag == "--iterations")
      o.iterations = std::atoi(value);
    else if (flag == "--allreduce")
      o.allreduce = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

std::vector<BucketInfo> checkBuckets() {
  const int64_t sizes[] = {1000, 3, 25000, 0, 4097};
  std::vector<BucketInfo> buckets;
  for (int i = 0; i < 5; ++i) {
    BucketInfo b;
    b.index = i;
    b.elements = sizes[i];
    b.tensors = "layer" + std::to_string(i) + ".kernel, layer" + std::to_string(i) + ".bias";
    b.loc = "check.mlir:" + std::to_string(i + 2) + ":3";
    buckets.push_back(b);
  }
  return buckets;
}

/// A copy's value: in [-1, 1], different for every rank, replica, bucket, step and element.
float valueOf(int rank, int replica, int bucket, int step, int64_t i) {
  uint64_t h = (uint64_t(rank) * 7919 + uint64_t(replica) * 104729 + uint64_t(bucket) * 1299709 +
                uint64_t(step) * 15485863 + uint64_t(i)) * 0x9e3779b97f4a7c15ull;
  return static_cast<float>(static_cast<int>((h >> 40) % 2001) - 1000) / 1000.0f;
}

/// Works (counts in the process's heartbeat) for `seconds`, with no collective.
void workFor(double seconds) {
  for (Clock::time_point begin = Clock::now();
       std::chrono::duration<double>(Clock::now() - begin).count() < seconds;) {
    dp::rt::heartbeat::beat();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Modes ps, ps-slow and ps-stop: rank 0 serves a bucket of 8 parameters; every other rank is
/// a worker pushing --steps gradients of ones and pulling the parameters after each; worker 0
/// takes the final parameters.
void runParameterServer(ProcessGroup &group, const Options &o) {
  const int rank = group.rank(), workers = group.size() - 1;
  std::vector<float> params(8, 1.0f), gradients(8, 0.0f);
  PsBucketInfo b;
  b.elements = 8;
  b.tensors = "w";
  b.params = {{params.data(), 8}};
  if (rank == 0) {
    b.gradients = gradients.data();
    const bool sync = o.mode == "ps-slow-sync";
    dp::rt::ParameterServer server(group, 1, workers, -1, sync, {b}, o.timeout, false, false);
    int64_t updates = 0;
    for (int at; (at = server.next(updates)) >= 0;) {
      for (int i = 0; i < 8; ++i)
        params[i] -= 0.01f * gradients[i];
      server.updated(at, 0);
    }
    std::printf("rank 0: served %lld updates\n", static_cast<long long>(server.report().updates));
    return;
  }
  dp::rt::PushPull worker(group, workers, {b}, o.timeout);
  const std::vector<float> ones(8, 1.0f);
  for (int step = 0; step < o.steps; ++step) {
    if (step == 1 && o.mode == "ps-slow" && rank == 1)
      workFor(4 * o.timeout);
    if (step == 1 && o.mode == "ps-slow-sync" && rank == 1)
      workFor(8 * o.timeout);
    if (step == 1 && o.mode == "ps-stop" && rank == 2)
      std::raise(SIGSTOP);
    worker.push(0, ones.data());
    worker.pull(0);
  }
  worker.finish(o.timeout);
  if (rank == 1)
    worker.ask(true);
  std::printf("rank %d: pushed %d gradients\n", rank, o.steps);
}

/// The averaging job of modes allreduce, kill, hang, slow and stop. Returns the replicas' first
/// error.
std::string runAverages(ProcessGroup &group, const Options &o) {
  const int rank = group.rank(), P = group.size(), R = o.replicas;
  std::vector<BucketInfo> buckets = checkBuckets();
  if (o.mode == "shard") {
    buckets[1].kind = buckets[4].kind = dp::rt::CollectiveKind::Broadcast;
    buckets[1].root = R * P - 1;
    buckets[4].root = R; // process 1's replica 0
    // Bucket 2 is reduce-scattered to the job's R x P owners, in segments of uneven sizes
    // (the first owner's empty): each replica needs only its own means.
    const int64_t owners = int64_t(R) * P, n = buckets[2].elements;
    for (int64_t o = 0; o <= owners; ++o)
      buckets[2].segments.push_back(n * o * o / (owners * owners));
  }
  Collectives engine(group, R, buckets, o.timeout);
  std::vector<std::string> errors(R);
  std::vector<std::thread> threads;
  for (int r = 0; r < R; ++r)
    threads.emplace_back([&, r] {
      try {
        std::vector<std::vector<float>> data(buckets.size());
        for (int step = 0; step < o.steps; ++step) {
          for (const BucketInfo &b : buckets) {
            if (rank == 1 && step == 3 && b.index == 1) {
              if (o.mode == "kill" && r == 0)
                std::raise(SIGKILL);
              if (o.mode == "stop" && r == 0)
                std::raise(SIGSTOP);
              if (o.mode == "hang" && r == 0)
                for (;;)
                  std::this_thread::sleep_for(std::chrono::seconds(1));
              if (o.mode == "slow" && r == 0)
                workFor(4 * o.timeout);
            }
            std::vector<float> &d = data[b.index];
            d.resize(b.elements);
            for (int64_t i = 0; i < b.elements; ++i)
              d[i] = valueOf(rank, r, b.index, step, i);
            engine.start(b.index, r, d.data());
          }
          for (const BucketInfo &b : buckets) {
            engine.wait(b.index, r);
            const int64_t owner = int64_t(rank) * R + r;
            const int64_t first = b.segments.empty() ? 0 : b.segments[owner],
                          end = b.segments.empty() ? b.elements : b.segments[owner + 1];
            for (int64_t i = first; i < end; ++i) {
              double sum = 0;
              for (int q = 0; q < P; ++q)
                for (int s = 0; s < R; ++s)
                  sum += valueOf(q, s, b.index, step, i);
              double mean = b.kind == dp::rt::CollectiveKind::Broadcast
                                ? valueOf(b.root / R, b.root % R, b.index, step, i)
                                : sum / (R * P);
              if (std::fabs(data[b.index][i] - mean) > 1e-6)
                throw Error(ErrorKind::Runtime,
                            "bucket " + std::to_string(b.index) + " step " + std::to_string(step) +
                                " element " + std::to_string(i) + ": " +
                                std::to_string(data[b.index][i]) + " instead of " +
                                std::to_string(mean));
            }
          }
        }
      } catch (const std::exception &e) {
        errors[r] = e.what();
        engine.abort(e.what());
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::string &e : errors)
    if (!e.empty())
      return e;
  return "";
}

void checkMetrics(ProcessGroup &group, double timeout) {
  const int rank = group.rank(), P = group.size();
  double values[2] = {double(rank), 1.0};
  group.sumDoubles(values, 2, timeout);
  if (values[0] != P * (P - 1) / 2.0 || values[1] != P)
    throw Error(ErrorKind::Runtime, "sumDoubles gave " + std::to_string(values[0]) + ", " +
                                        std::to_string(values[1]));
  std::vector<double> all = group.gatherDoubles(10.0 * rank, timeout);
  for (int q = 0; q < P; ++q)
    if (all.size() != size_t(P) || all[q] != 10.0 * q)
      throw Error(ErrorKind::Runtime, "gatherDoubles is wrong at rank " + std::to_string(q));
}

/// Mean microseconds of the engine's and of plain MPI_Allreduce's averages.
void bench(ProcessGroup &group, const Options &o) {
  auto &impl = dynamic_cast<dp::rt::comm::GroupImpl &>(group);
  const int64_t n = o.elements;
  std::vector<float> data(n, 1.0f);
  BucketInfo bucket;
  bucket.elements = n;
  Collectives engine(group, 1, {bucket}, 60);
  auto engineRound = [&] {
    double sync = 0;
    group.sumDoubles(&sync, 1, 60); // lines the ranks up
    Clock::time_point begin = Clock::now();
    for (int i = 0; i < o.iterations; ++i) {
      engine.start(0, 0, data.data());
      engine.wait(0, 0);
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - begin).count() / o.iterations;
  };
  auto plainRound = [&] {
    double micros = 0;
    impl.call([&] { // every MPI call on the communication thread
      MPI_Barrier(MPI_COMM_WORLD);
      Clock::time_point begin = Clock::now();
      for (int i = 0; i < o.iterations; ++i)
        MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      micros = std::chrono::duration<double, std::micro>(Clock::now() - begin).count() /
               o.iterations;
    });
    return micros;
  };
  // The engine's own MPI path without the hand-offs: MPI_Iallreduce polled with MPI_Test.
  auto polledRound = [&] {
    double micros = 0;
    impl.call([&] {
      MPI_Barrier(MPI_COMM_WORLD);
      Clock::time_point begin = Clock::now();
      for (int i = 0; i < o.iterations; ++i) {
        MPI_Request request;
        MPI_Iallreduce(MPI_IN_PLACE, data.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                       MPI_COMM_WORLD, &request);
        for (int done = 0; !done;)
          MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      }
      micros = std::chrono::duration<double, std::micro>(Clock::now() - begin).count() /
               o.iterations;
    });
    return micros;
  };
  engineRound(); // warm up every path
  plainRound();
  polledRound();
  double engineMicros = 0, plainMicros = 0, polledMicros = 0;
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    plainMicros += plainRound() / rounds;
    polledMicros += polledRound() / rounds;
    engineMicros += engineRound() / rounds;
  }
  if (group.rank() == 0)
    std::printf("allreduce of %lld floats (%.1f KiB) over %d ranks, %d x %d iterations: "
                "engine %.1f us, MPI_Allreduce %.1f us, MPI_Iallreduce+MPI_Test %.1f us\n",
                static_cast<long long>(n), n * 4 / 1024.0, group.size(), rounds, o.iterations,
                engineMicros, plainMicros, polledMicros);
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::unique_ptr<ProcessGroup> group;
  try {
    group = ProcessGroup::create(true);
  } catch (const Error &e) {
    std::fprintf(stderr, "dprun: %s\n", e.what());
    return e.exitCode();
  }
  const int rank = group->rank();

  dp::rt::Handshake h;
  h.planHash = 0xabcd;
  h.manifestHash = 0x5678;
  h.replicas = o.mode == "bench" ? 1 : o.replicas;
  h.processes = o.compiledP > 0 ? o.compiledP : group->size();
  h.seed = 42;
  h.planPath = "/tmp/a.dpx";
  h.allreduce = o.allreduce;
  if (o.mode == "handshake-mismatch" && rank == 1) {
    h.planHash = 0x1234;
    h.planPath = "/tmp/b.dpx";
  }
  try {
    group->handshake(h, o.timeout);
  } catch (const Error &e) {
    std::fprintf(stderr, "dprun: [rank %d] %s\n", rank, e.what());
    std::fflush(stderr);
    std::printf("rank %d exits with code %d\n", rank, e.exitCode());
    group.reset();
    return e.exitCode();
  }
  if (o.mode == "handshake-mismatch" || o.mode == "size-mismatch") {
    std::printf("rank %d: the handshake passed\n", rank);
    return 1;
  }

  try {
    if (o.mode == "bench") {
      bench(*group, o);
    } else if (o.mode == "broadcast") {
      // 128 bytes (an NCCL unique id's size) from the last rank, which differs from every
      // other rank's.
      const int root = group->size() - 1;
      unsigned char id[128];
      for (int i = 0; i < 128; ++i)
        id[i] = static_cast<unsigned char>(rank == root ? 255 - i : rank);
      group->broadcast(id, sizeof(id), root, o.timeout);
      for (int i = 0; i < 128; ++i)
        if (id[i] != 255 - i)
          group->abortJob("byte " + std::to_string(i) + " of the broadcast is " +
                              std::to_string(id[i]), 6);
      std::printf("rank %d: broadcast ok (from rank %d)\n", rank, root);
    } else if (o.mode == "ps" || o.mode == "ps-slow" || o.mode == "ps-slow-sync" ||
               o.mode == "ps-stop") {
      runParameterServer(*group, o);
    } else if (o.mode == "allreduce" || o.mode == "kill" || o.mode == "hang" || o.mode == "slow" ||
               o.mode == "stop" || o.mode == "shard") {
      std::string error = runAverages(*group, o);
      if (!error.empty())
        group->abortJob(error, 6);
      checkMetrics(*group, o.timeout);
      std::printf("rank %d: allreduce ok (R=%d, P=%d, %d steps, %s)\n", rank, o.replicas,
                  group->size(), o.steps, group->allreduceLayout().c_str());
    } else {
      std::fprintf(stderr, "unknown mode %s\n", o.mode.c_str());
      return 2;
    }
  } catch (const Error &e) {
    group->abortJob(e.what(), e.exitCode());
  }
  return 0;
}
