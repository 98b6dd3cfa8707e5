// Launching a job; see Job.h.
#include "runtime/train/Job.h"

#include "runtime/base/Error.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/kernels/Backends.h"
#ifdef DP_HAVE_CUDA
#include "runtime/kernels/cuda/NcclEngine.h"
#endif

namespace dp::rt {
namespace {

/// The executor's view of the collectives engine.
class EngineAdapter final : public CollectiveEngine {
public:
  explicit EngineAdapter(Collectives &engine) : engine_(engine) {}
  void start(int bucket, int replica, float *data) override {
    engine_.start(bucket, replica, data);
  }
  void wait(int bucket, int replica) override { engine_.wait(bucket, replica); }
  void abort(const std::string &why) override { engine_.abort(why); }

private:
  Collectives &engine_;
};

} // namespace

std::unique_ptr<Job> Job::launch(const std::string &planPath, const JobOptions &options) {
  std::unique_ptr<Job> job(new Job());
  job->planPath_ = planPath;
  registerBuiltinBackends();
  Plan plan = Plan::read(planPath);
  refuseParameterServerPlan(plan, planPath);
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
  job->program_ = Program::load(std::move(plan), &backend);
  Program &program = *job->program_;

  // MPI only when launched by an MPI launcher or needed; a one-process plan started directly
  // never touches it.
  const bool useMpi = program.processes() > 1 || launchedByMpiLauncher();
  job->group_ = ProcessGroup::create(useMpi);
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
  mine.maxSteps = options.maxSteps;
  mine.checkpointing = options.checkpointing;
  mine.allreduce = options.allreduce;
  mine.nodes = program.plan().nodes;
  mine.planPath = planPath;
  job->group_->handshake(mine, options.collectiveTimeout > 0 ? options.collectiveTimeout : 1e9);

  if (program.hasCollectives()) {
    std::vector<BucketInfo> buckets;
    for (const CollectiveDesc &c : program.plan().collectives) {
      BucketInfo b;
      b.index = c.bucket;
      b.elements = c.elements;
      for (const std::string &t : c.tensors)
        b.tensors += (b.tensors.empty() ? "" : ", ") + t;
      b.loc = c.loc;
      buckets.push_back(b);
    }
    if (program.plan().deviceKind == DeviceKind::Cuda) {
      // GPUs average their buckets with NCCL, on the devices.
#ifdef DP_HAVE_CUDA
      job->adapter_ = cuda::makeNcclEngine(program, *job->group_, buckets,
                                           options.collectiveTimeout);
#endif
    } else if (!program.device(0).hostAccessible()) {
      throw Error(ErrorKind::Launch, std::string("the plan's ") +
                                         deviceKindName(program.plan().deviceKind) +
                                         " devices have no collectives engine: the MPI engine "
                                         "averages host memory only");
    } else {
      job->engine_ = std::make_unique<Collectives>(*job->group_, program.devices(), buckets,
                                                   options.collectiveTimeout);
      job->adapter_ = std::make_unique<EngineAdapter>(*job->engine_);
    }
    program.attachCollectives(job->adapter_.get());
  }
  return job;
}

Job::~Job() {
  if (!program_)
    return;
  // A replica still waiting for a bucket is released before its streams are joined.
  if (engine_)
    engine_->abort("the job is ending");
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
