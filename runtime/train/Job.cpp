// Launching a job; see Job.h.
#include "runtime/train/Job.h"

#include "runtime/base/Error.h"
#include "runtime/train/PlanCheck.h"

#include <iostream>

namespace dp::rt {
namespace {

/// The f32 bucket that `buffers` averages in place: what the runtime's engines take.
float *inPlaceBucket(int bucket, const CollectiveBuffers &buffers, const char *engine) {
  if (!buffers.inPlace() || buffers.dtype != DType::F32)
    throw Error(ErrorKind::Runtime, std::string(engine) + " exchanges f32 buckets in place; " +
                                        "bucket " + std::to_string(bucket) + " is not one");
  return static_cast<float *>(buffers.receive);
}

/// The executor's view of the collectives engine.
class EngineAdapter final : public CollectiveEngine {
public:
  explicit EngineAdapter(Collectives &engine) : engine_(engine) {}
  void start(int bucket, int replica, const CollectiveBuffers &buffers) override {
    engine_.start(bucket, replica, inPlaceBucket(bucket, buffers, "the MPI engine"));
  }
  void wait(int bucket, int replica) override { engine_.wait(bucket, replica); }
  void abort(const std::string &why) override { engine_.abort(why); }

private:
  Collectives &engine_;
};

/// The executor's view of a parameter-server worker's exchanges: a push at push_start, the
/// pull at pull_wait.
class PushPullAdapter final : public CollectiveEngine {
public:
  explicit PushPullAdapter(PushPull &engine) : engine_(engine) {}
  void start(int bucket, int, const CollectiveBuffers &buffers) override {
    engine_.push(bucket, inPlaceBucket(bucket, buffers, "a parameter-server worker"));
  }
  void wait(int bucket, int) override { engine_.pull(bucket); }
  void abort(const std::string &why) override { engine_.abort(why); }

private:
  PushPull &engine_;
};

/// The buckets of a parameter-server plan's manifest as `program` (a worker's or a server's)
/// holds them: where each one's parameters and (on a server) its gradients are.
std::vector<PsBucketInfo> psBuckets(Program &program, int serverRank) {
  const Plan &plan = program.plan();
  std::vector<PsBucketInfo> buckets;
  for (const CollectiveDesc &c : plan.collectives) {
    PsBucketInfo b;
    b.index = c.bucket;
    b.elements = c.elements;
    b.server = serverRank;
    if (serverRank < 0 && c.group == GroupKind::Server)
      b.server = c.groupId;
    for (const std::string &t : c.tensors) {
      b.tensors += (b.tensors.empty() ? "" : ", ") + t;
      bool found = false;
      for (const ParamDesc &p : plan.params)
        if (p.name == t) {
          b.params.push_back({static_cast<float *>(program.bufferData(p.buffer)),
                              program.buffer(p.buffer).numel});
          found = true;
        }
      if (!found)
        throw Error(ErrorKind::Plan, "bucket " + std::to_string(c.bucket) + " carries '" + t +
                                         "', which is no parameter of the plan");
    }
    for (const KernelDesc &k : plan.train.kernels)
      if (k.kind == KernelKind::ReceivePush &&
          k.attrsAs<CollectiveAttrs>().bucket == c.bucket)
        b.gradients = static_cast<float *>(program.bufferData(k.inputs.at(0)));
    buckets.push_back(std::move(b));
  }
  return buckets;
}

} // namespace

void Job::launchParameterServer(Plan plan, const JobOptions &options) {
  const double timeout = options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9;
  const bool keepGoing = options.onWorkerLoss.empty() ? launcherKeepsJobOnFailure()
                                                      : options.onWorkerLoss == "continue";
  world_ = ProcessGroup::create(true);
  ProcessGroup &world = *world_;
  const int servers = static_cast<int>(plan.servers.size());
  // Every rank runs the same file with the same seed and options, and there are S + W ranks.
  Handshake mine;
  mine.planHash = plan.fileHash;
  mine.manifestHash = plan.manifestHash;
  mine.replicas = 1;
  mine.processes = plan.jobProcesses();
  mine.seed = options.seed;
  mine.epochs = options.epochs;
  mine.stepsPerEpoch = options.stepsPerEpoch;
  mine.maxSteps = options.maxSteps;
  mine.collectiveTimeout = options.collectiveTimeout;
  mine.sharedOptions = options.sharedOptions;
  if (!options.onWorkerLoss.empty())
    mine.sharedOptions += " --on-worker-loss " + options.onWorkerLoss;
  mine.allreduce = "flat";
  mine.planPath = planPath_;
  world.handshake(mine, timeout);
  // Refused once the ranks have met, the handshake having found them alike in these options:
  // rank 0 says why for the job, and the others wait until it has before they exit alike.
  // mpirun ends a job at its first non-zero exit; a rank leaving early would take rank 0 down
  // with its line unsaid.
  auto refuse = [&](const char *message) {
    if (world.rank() == 0)
      std::cerr << std::string("dprun: error: ") + message + "\n" << std::flush;
    double said = 0;
    try {
      world.sumDoubles(&said, 1, timeout, "the meeting after a refusal");
    } catch (const Error &) {
      // A rank gone: the refusal stands.
    }
    return Error(ErrorKind::Usage, message).setReported();
  };
  if (options.checkpoints)
    throw refuse("checkpoints of parameter-server jobs are not supported yet "
                 "(--checkpoint-dir, --resume, --save-state)");
  if (options.earlyStop)
    throw refuse("--early-stop needs every worker to stop together; parameter-server workers "
                 "do not meet between steps");

  const bool server = world.rank() < servers;
  sharesBatches_ = plan.sharesBatches();
  const int firstWorker = servers, workers = plan.processes;
  Plan role = server ? plan.servers[world.rank()] : plan;
  role.fileHash = plan.fileHash;
  role.servers.clear();
  Backend &backend = BackendRegistry::get(role.deviceKind);
  backend.checkMemory(role.arenaBytes, role.devicesPerProcess,
                      server ? "the server's arena" : "the plan's arena");
  if (role.deviceKind == DeviceKind::Cpu) {
    // A server's updates are light loops over its parameters: one thread, unless a number is
    // given, leaves the cores to the workers beside it.
    threads_ = chooseComputeThreads(server && options.threads <= 0 ? 1 : options.threads);
    backend.setComputeThreads(threads_.threads);
  }
  program_ = Program::load(std::move(role), &backend);
  // The workers' own group (each one's index; the timelines' merge) and the servers'.
  group_ = world.split(server ? 0 : 1, timeout);
  if (server) {
    serverIndex_ = world.rank();
    server_ = std::make_unique<ParameterServer>(world, firstWorker, workers, plan.staleness,
                                                plan.sync, psBuckets(*program_, world.rank()),
                                                options.collectiveTimeout, keepGoing,
                                                sharesBatches_ && world.rank() == 0);
  } else {
    pushPull_ = std::make_unique<PushPull>(world, workers, psBuckets(*program_, -1),
                                           options.collectiveTimeout);
    adapter_ = std::make_unique<PushPullAdapter>(*pushPull_);
    program_->attachCollectives(adapter_.get());
  }
}

std::unique_ptr<Job> Job::launch(const std::string &planPath, const JobOptions &options) {
  std::unique_ptr<Job> job(new Job());
  job->planPath_ = planPath;
  Plan plan = Plan::read(planPath);
  // What --inspect checks, before anything is launched or allocated: a plan it accepts is one
  // this gets past (the machine and the data aside).
  checkRunnable(plan, planPath);
  if (plan.parameterServer()) {
    if (options.reproducible)
      throw Error(ErrorKind::Usage,
                  "--reproducible: plan " + planPath +
                      " trains with parameter servers, whose workers' pushes arrive in no "
                      "fixed order; it holds for plans compiled without --parameter-servers");
    job->launchParameterServer(std::move(plan), options);
    return job;
  }
  if (options.reproducible) {
    if (options.allreduce != "auto" && options.allreduce != "tree")
      throw Error(ErrorKind::Usage, "--reproducible sums across the ranks in a fixed tree: it "
                                    "cannot take --allreduce " +
                                        options.allreduce);
    for (const CollectiveDesc &c : plan.collectives)
      if (c.dtype == DType::BF16 && plan.processes > 1)
        throw Error(ErrorKind::Usage,
                    "--reproducible: plan " + planPath +
                        " sends its gradients across the processes as bf16 (dpc compile "
                        "--allreduce-precision bf16), rounding each process's sum before the "
                        "tree, so its bits depend on the layout; compile it with f32 sums");
  }
  Backend &backend = BackendRegistry::get(plan.deviceKind);
  // Before anything is allocated: a plan too big for the machine is refused with the numbers,
  // not killed by the kernel's OOM killer half way into allocating its arenas.
  backend.checkMemory(plan.arenaBytes, plan.devicesPerProcess, "the plan's arena");
  // Before the kernels are made (oneDNN sizes them for the thread count they are created
  // under): as many threads as the cores other processes leave free.
  if (plan.deviceKind == DeviceKind::Cpu) {
    job->threads_ = chooseComputeThreads(options.threads);
    backend.setComputeThreads(job->threads_.threads);
  }
  backend.setReproducible(options.reproducible);
  // MPI only when launched by an MPI launcher or needed; a one-process plan started directly
  // never touches it.
  const bool useMpi = plan.processes > 1 || launchedByMpiLauncher();
  job->group_ = ProcessGroup::create(useMpi);
  // Optimizer state sharded over the processes: this process runs its own updates only.
  if (plan.shardsAcrossProcesses())
    plan.keepProcess(job->group_->rank());
  job->program_ = Program::load(std::move(plan), &backend);
  Program &program = *job->program_;

  // Every rank must run the same plan with the same seed before anything else is exchanged.
  // A difference is seen by every rank, so each reports it and exits on its own (no abort
  // that could kill the others before they print).
  Handshake mine;
  mine.planHash = program.plan().fileHash;
  mine.manifestHash = program.plan().manifestHash;
  mine.replicas = program.devices();
  mine.processes = program.processes();
  mine.seed = options.seed;
  mine.epochs = options.epochs;
  mine.stepsPerEpoch = options.stepsPerEpoch;
  mine.maxSteps = options.maxSteps;
  mine.collectiveTimeout = options.collectiveTimeout;
  mine.sharedOptions = options.sharedOptions;
  mine.allreduce = options.reproducible ? "tree" : options.allreduce;
  mine.nodes = program.plan().nodes;
  mine.planPath = planPath;
  job->group_->handshake(mine, options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9);

  if (program.hasCollectives()) {
    std::vector<BucketInfo> buckets;
    for (const CollectiveDesc &c : program.plan().collectives) {
      BucketInfo b;
      b.index = c.bucket;
      b.kind = c.kind;
      b.group = c.group;
      b.groupId = c.groupId;
      b.root = c.root;
      b.elements = c.elements;
      b.segments = c.segments;
      for (const std::string &t : c.tensors)
        b.tensors += (b.tensors.empty() ? "" : ", ") + t;
      b.loc = c.loc;
      b.wire = c.dtype;
      buckets.push_back(b);
    }
    CollectivesSetup setup;
    for (int d = 0; d < program.devices(); ++d)
      setup.devices.push_back(&program.device(d));
    setup.group = job->group_.get();
    setup.buckets = buckets;
    setup.timeoutSec = options.collectiveTimeout;
    // The backend's own engine where it has one (NCCL on GPUs), else the MPI engine.
    job->adapter_ = program.backend().makeCollectives(setup);
    if (!job->adapter_) {
      if (!program.device(0).hostAccessible())
        throw Error(ErrorKind::Launch, std::string("the plan's ") +
                                           deviceKindName(program.plan().deviceKind) +
                                           " devices have no collectives engine: the MPI engine "
                                           "averages host memory only");
      job->engine_ = std::make_unique<Collectives>(*job->group_, program.devices(),
                                                   std::move(buckets), options.collectiveTimeout);
      job->adapter_ = std::make_unique<EngineAdapter>(*job->engine_);
    }
    program.attachCollectives(job->adapter_.get());
  }
  return job;
}

Job::~Job() {
  // Under a launcher that keeps the job going past a lost process, MPI_Finalize would wait
  // for a worker left out but stopped: parameter-server processes end without it.
  if (world_ && launcherKeepsJobOnFailure())
    world_->leaveWithoutFinalize();
  if (!program_)
    return;
  // A replica still waiting for a bucket is released before its streams are joined.
  if (engine_)
    engine_->abort("the job is ending");
  if (pushPull_)
    pushPull_->abort("the job is ending");
  try {
    program_->synchronize();
  } catch (...) {
    // Reported by whoever ran the step that failed.
  }
  // The step is captured again without the engine before the engine goes (NCCL waits for
  // graphs that captured its communicators); a failure here must not escape a destructor.
  try {
    program_->attachCollectives(nullptr);
  } catch (...) {
  }
}

} // namespace dp::rt
