// dprun: runs a compiled plan (.dpx). Trains it on an IDX or CIFAR-10 data set and evaluates
// it, or prints a summary of it with --inspect. Only parses the command line; the work is in
// the runtime libraries, and nothing here or there links MLIR or LLVM.
#include "runtime/backends/Backends.h"
#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/Interrupt.h"
#include "runtime/format/Plan.h"
#include "runtime/train/GradCheck.h"
#include "runtime/train/PlanCheck.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Run.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

using dp::rt::Error;
using dp::rt::ErrorKind;
using dp::rt::TrainOptions;

namespace {

constexpr const char *kVersion = "0.1.0";

/// The largest value of each count option: far past any real run, and far enough from the
/// 64-bit limits that the products the run forms from them (epochs x steps, step numbers,
/// deadlines in nanoseconds) cannot overflow.
constexpr uint64_t kMaxTimeoutSeconds = 1000000;
constexpr int64_t kMaxEpochs = 1000000000, kMaxSteps = 1000000000;

const char *kUsage = "usage: dprun PLAN --data DIR [--epochs N] [--seed S] [--metrics FILE]\n"
                     "                  [--max-steps N] [--quiet] [--collective-timeout S]\n"
                     "                  [--save-params FILE] [--checkpoint-dir DIR\n"
                     "                  [--checkpoint-every N|epoch] [--checkpoint-keep N] [--resume]]\n"
                     "                  [--early-stop N] [--prefetch N] [--threads N|all|auto]\n"
                     "                  [--trace FILE [--trace-per-rank]]\n"
                     "                  [--allreduce flat|hierarchical|auto] [--profile FILE]\n"
                     "                  [--on-worker-loss continue|end]\n"
                     "       dprun PLAN --inspect\n"
                     "       dprun PLAN --check-gradients [--seed S]\n"
                     "       dprun --help | --version\n";

const char *kHelp =
    "Trains a compiled plan (.dpx, made by dpc) and evaluates it on the test set.\n"
    "\n"
    "  --data DIR       directory with the IDX files train-images-idx3-ubyte,\n"
    "                   train-labels-idx1-ubyte, t10k-images-idx3-ubyte and\n"
    "                   t10k-labels-idx1-ubyte, gzipped (.gz) or not; or with the\n"
    "                   CIFAR-10 binary batches data_batch_1.bin .. data_batch_5.bin and\n"
    "                   test_batch.bin (directly or in cifar-10-batches-bin/), read as\n"
    "                   32x32x3 images (HWC)\n"
    "  --epochs N       passes over the training set (default 1)\n"
    "  --seed S         seeds the initial parameters and the shuffle (default 1)\n"
    "  --metrics FILE   write per-epoch and test figures to FILE as JSON\n"
    "  --max-steps N    at most N train steps per epoch (for quick tests)\n"
    "  --quiet, -q      print only the test result\n"
    "  --collective-timeout S\n"
    "                   seconds a replica waits in a collective (or a rank in the start-up\n"
    "                   handshake) while the other ranks make no progress, before the job\n"
    "                   stops with a report of the missing rank; a rank that is behind but\n"
    "                   working is waited for; 0 waits forever (default 20)\n"
    "  --save-params FILE\n"
    "                   after training, write every parameter to FILE (per parameter: its\n"
    "                   name, NUL, u64 element count, f32 values; little-endian)\n"
    "  --checkpoint-dir DIR\n"
    "                   keep checkpoints of the run in DIR (created if missing): one when\n"
    "                   training ends and one when a signal stops it, each with every\n"
    "                   parameter, the optimizer state, the step, the epoch and the place\n"
    "                   in it (written by rank 0, atomically, with a checksum); rank 0\n"
    "                   locks DIR to this run (a second run on it is refused)\n"
    "  --checkpoint-every N|epoch\n"
    "                   also one every N train steps, or after every epoch\n"
    "  --checkpoint-keep N\n"
    "                   keep the run's newest N checkpoints, remove its older ones\n"
    "                   (default 3); files in DIR that are not the run's stay\n"
    "  --resume         continue from the newest checkpoint in --checkpoint-dir that\n"
    "                   verifies (a newer broken one is skipped with a warning), with its\n"
    "                   seed; start afresh when there is none. The plan may have another\n"
    "                   layout (R x P) than the run that wrote it, not another model\n"
    "  --early-stop N   stop training when the test loss has not improved for N epochs\n"
    "                   (the test set is then evaluated after every epoch, as it is for\n"
    "                   a plan compiled with --lr-schedule plateau:...)\n"
    "  --prefetch N     batches a loader thread gathers ahead of the steps (shuffled\n"
    "                   samples scaled to floats, this process's rows), so that compute\n"
    "                   does not wait for input; 0 gathers on the compute threads before\n"
    "                   each step. Default: 2 when the compute threads leave one of the\n"
    "                   process's cores free (always on a GPU), else 0. Memory: N + 2\n"
    "                   batches of this process's rows\n"
    "  --threads N|all|auto\n"
    "                   compute threads of each process of a CPU plan: all takes one per\n"
    "                   core the process may run on (its launcher's binding, SLURM's\n"
    "                   CPUs); auto (the default) leaves out the cores that other\n"
    "                   processes kept at least half busy while dprun started, since\n"
    "                   threads sharing a core with a busy process stall each other at\n"
    "                   every barrier. OMP_NUM_THREADS, when set, is kept under auto and\n"
    "                   all. The environment variable DPRUN_THREADS sets the default.\n"
    "                   Results depend on the thread count (not only in the last bits):\n"
    "                   every run prints it, checkpoints record it, and --resume uses\n"
    "                   the checkpoint's count unless --threads or DPRUN_THREADS is given\n"
    "  --trace FILE     write a timeline of the run to FILE as Chrome trace-event JSON\n"
    "                   (open it in https://ui.perfetto.dev or chrome://tracing): per rank\n"
    "                   and thread, every step and kernel, allreduce start and wait, input\n"
    "                   gathering and waits, epochs, evaluations and checkpoint writes;\n"
    "                   rank 0 merges the ranks' timelines into FILE. At most 500,000\n"
    "                   spans per process are kept (--max-steps keeps a trace short)\n"
    "  --trace-per-rank with --trace, each rank writes its own FILE.rankN.json instead\n"
    "  --profile FILE   write rank 0's profile to FILE as JSON: the mean and median time\n"
    "                   of every kernel of the train step and of the step (device 0, the\n"
    "                   steps after the first), each bucket's bytes and allreduce wait;\n"
    "                   what a communication model reads (--max-steps keeps it short)\n"
    "  --allreduce flat|hierarchical|auto\n"
    "                   how gradient sums cross the ranks: one allreduce over all of them\n"
    "                   (flat), or a reduce within each host, an allreduce across one\n"
    "                   leader per host and a broadcast back (hierarchical); auto takes\n"
    "                   hierarchical when the ranks span several hosts and a host has\n"
    "                   several (default auto)\n"
    "  --on-worker-loss continue|end\n"
    "                   parameter servers: what to do with a worker silent past the\n"
    "                   collective timeout: end the job naming it, or leave it out and\n"
    "                   let the other workers train on (worker 0 excepted: it evaluates);\n"
    "                   the job then ends with exit 6 after its results, naming it\n"
    "                   (default continue under `mpirun --enable-recovery`, else end)\n"
    "  --inspect        check the plan as a run does before it trains (every kernel against\n"
    "                   the kernel contract, the parameters, the inputs and outputs the\n"
    "                   training loop uses) and print a summary of it; needs no data. The\n"
    "                   machine (a backend and device for the plan, the memory it needs)\n"
    "                   and the data set are left to the run\n"
    "  --check-gradients\n"
    "                   after the same checks, compare the train step's gradients with\n"
    "                   finite differences of the loss it differentiates (batch statistics,\n"
    "                   its dropout masks) on random inputs; needs no data; exit 5 on\n"
    "                   mismatch\n"
    "  --help, -h       print this help\n"
    "  --version        print the version\n"
    "\n"
    "Each epoch visits the training samples in a new shuffled order, in full batches of the\n"
    "plan's batch size; the samples left over after the last full batch are skipped for that\n"
    "epoch. Evaluation uses every test sample (the last batch is padded).\n"
    "\n"
    "Data parallel plans (dpc compile --devices-per-process R --processes P) run R replica\n"
    "threads in each of P processes, launched by `mpirun -n P` or `srun -n P --mpi=pmix`;\n"
    "each replica reads its own shard of every global batch. Before the first step the\n"
    "ranks check that they run the same plan, seed and launch shape; rank 0 prints.\n"
    "\n"
    "Before allocating anything, the plan's arenas are compared with the memory this process\n"
    "can get (its memory cgroup, as `sbatch --mem` sets it; ulimit -v; available memory).\n"
    "\n"
    "Exit status: 0 success, 2 bad command line, 3 bad plan, 4 bad data, 5 runtime failure,\n"
    "6 launch mismatch or a failed peer, 7 the plan does not fit the memory it may have,\n"
    "8 a checkpoint cannot be used (another model's, or none verifies),\n"
    "75 stopped by SIGTERM or SIGUSR1 after writing a checkpoint: resubmit with --resume,\n"
    "130, 143 or 138 stopped by SIGINT, SIGTERM or SIGUSR1 (without a checkpoint for the\n"
    "last two). A signal stops training at the next step boundary, which the ranks of a\n"
    "job agree on; a checkpoint is written there when --checkpoint-dir is given, and the\n"
    "finished epochs' metrics go to --metrics. The same signal again ends dprun at once.\n";

/// Under `ulimit -v`, a library that fails to allocate may crash instead of reporting it
/// (oneDNN and OpenMP's runtime were seen dying with SIGSEGV or SIGABRT a little above a plan's
/// needs). When the address space in use is within 64 MiB of the limit as such a signal
/// arrives, dprun says what happened and exits 7 (out of memory); any other crash takes its
/// default course. Installed only when RLIMIT_AS is set.
rlim_t gAddressLimit = RLIM_INFINITY;

void appendNumber(char *&at, char *end, unsigned long long value) {
  char digits[24];
  int n = 0;
  do
    digits[n++] = char('0' + value % 10);
  while ((value /= 10) > 0 && n < 24);
  while (n > 0 && at < end)
    *at++ = digits[--n];
}

void onCrashNearTheLimit(int signal) {
  unsigned long long pages = 0;
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char text[64] = {};
    if (::read(fd, text, sizeof(text) - 1) > 0)
      for (const char *c = text; *c >= '0' && *c <= '9'; ++c)
        pages = pages * 10 + unsigned(*c - '0');
    ::close(fd);
  }
  const unsigned long long used = pages * static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE));
  if (gAddressLimit != RLIM_INFINITY && used + (64ull << 20) >= gAddressLimit) {
    char message[256];
    char *at = message, *end = message + sizeof(message) - 1;
    auto put = [&](const char *s) {
      while (*s && at < end)
        *at++ = *s++;
    };
    put("dprun: error: out of memory: a library failed to allocate and crashed (");
    put(signal == SIGABRT ? "SIGABRT" : signal == SIGBUS ? "SIGBUS" : "SIGSEGV");
    put(") with ");
    appendNumber(at, end, used >> 20);
    put(" MiB of the ");
    appendNumber(at, end, (unsigned long long)(gAddressLimit) >> 20);
    put(" MiB address space RLIMIT_AS (ulimit -v) allows in use; give the process more memory\n");
    ssize_t ignored = ::write(STDERR_FILENO, message, size_t(at - message));
    (void)ignored;
    ::_exit(static_cast<int>(ErrorKind::Memory));
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void catchCrashesNearTheMemoryLimit() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return;
  gAddressLimit = limit.rlim_cur;
  for (int signal : {SIGSEGV, SIGBUS, SIGABRT})
    ::signal(signal, onCrashNearTheLimit);
}

struct Args {
  std::string plan;
  bool inspect = false;
  bool checkGradients = false;
  dp::rt::TrainOptions train;
};

[[noreturn]] void usageError(const std::string &message) {
  throw Error(ErrorKind::Usage, message + " (see dprun --help)");
}

/// A whole-string non-negative integer, or a usage error naming the option.
uint64_t parseCount(const std::string &option, const std::string &text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    if (text.empty() || text[0] == '-' || text[0] == '+')
      throw std::invalid_argument(text);
    value = std::stoull(text, &used, 10);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    usageError(option + " expects a non-negative integer, got '" + text + "'");
  return value;
}

int64_t parsePositive(const std::string &option, const std::string &text) {
  uint64_t value = parseCount(option, text);
  if (value == 0 || value > static_cast<uint64_t>(INT64_MAX))
    usageError(option + " expects a positive integer, got '" + text + "'");
  return static_cast<int64_t>(value);
}

/// A positive integer of at most `most`.
int64_t parseAtMost(const std::string &option, const std::string &text, int64_t most) {
  const int64_t value = parsePositive(option, text);
  if (value > most)
    usageError(option + " expects at most " + std::to_string(most) + ", got '" + text + "'");
  return value;
}

/// --threads N|all|auto as TrainOptions::threads: N, -1 for all, 0 for auto.
int parseThreads(const std::string &option, const std::string &value) {
  if (value == "auto")
    return 0;
  if (value == "all")
    return -1;
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
      value.size() > 4 || std::stoi(value) < 1 || std::stoi(value) > 4096)
    usageError(option + " expects a thread count from 1 to 4096, all or auto, got '" + value +
               "'");
  return std::stoi(value);
}

/// Parses argv; returns false when the command was --help or --version (already answered).
bool parseArgs(int argc, char **argv, Args &args) {
  if (argc < 2) {
    std::string usage = kUsage;
    usage.pop_back(); // main adds the final newline
    throw Error(ErrorKind::Usage, "missing the plan file\n" + usage);
  }
  bool haveData = false, keepGiven = false, threadsGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool inlineValue = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      inlineValue = true;
    }
    // Takes the option's value from "--opt=value" or the next argument.
    auto next = [&]() -> std::string {
      if (inlineValue)
        return value;
      if (i + 1 >= argc)
        usageError(arg + " needs a value");
      return argv[++i];
    };
    auto noValue = [&] {
      if (inlineValue)
        usageError(arg + " takes no value");
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage << "\n" << kHelp;
      return false;
    }
    if (arg == "--version") {
      std::cout << "dprun " << kVersion << " (plan format " << dp::rt::kFormatVersion << ")\n";
      return false;
    }
    if (arg == "--data") {
      args.train.dataDir = next();
      haveData = true;
    } else if (arg == "--epochs") {
      args.train.epochs = parseAtMost(arg, next(), kMaxEpochs);
    } else if (arg == "--seed") {
      args.train.seed = parseCount(arg, next());
      args.train.seedGiven = true;
    } else if (arg == "--checkpoint-dir") {
      args.train.checkpointDir = next();
      if (args.train.checkpointDir.empty())
        usageError("--checkpoint-dir needs a directory");
    } else if (arg == "--checkpoint-every") {
      const std::string every = next();
      if (every == "epoch")
        args.train.checkpointEachEpoch = true;
      else
        args.train.checkpointEvery = parseAtMost(arg, every, kMaxSteps);
    } else if (arg == "--checkpoint-keep") {
      const int64_t keep = parsePositive(arg, next());
      if (keep > 1000000)
        usageError("--checkpoint-keep expects at most 1000000");
      args.train.checkpointKeep = static_cast<int>(keep);
      keepGiven = true;
    } else if (arg == "--early-stop") {
      args.train.earlyStop = parseAtMost(arg, next(), kMaxEpochs);
    } else if (arg == "--prefetch") {
      const uint64_t ahead = parseCount(arg, next());
      if (ahead > 64)
        usageError("--prefetch expects at most 64 batches");
      args.train.prefetch = static_cast<int>(ahead);
    } else if (arg == "--threads") {
      args.train.threads = parseThreads(arg, next());
      threadsGiven = true;
      args.train.threadsGiven = true;
    } else if (arg == "--trace") {
      args.train.tracePath = next();
      if (args.train.tracePath.empty())
        usageError("--trace needs a file name");
    } else if (arg == "--profile") {
      args.train.profilePath = next();
      if (args.train.profilePath.empty())
        usageError("--profile needs a file name");
    } else if (arg == "--allreduce") {
      args.train.allreduce = next();
      if (args.train.allreduce != "flat" && args.train.allreduce != "hierarchical" &&
          args.train.allreduce != "auto")
        usageError("--allreduce expects flat, hierarchical or auto");
    } else if (arg == "--on-worker-loss") {
      args.train.onWorkerLoss = next();
      if (args.train.onWorkerLoss != "continue" && args.train.onWorkerLoss != "end")
        usageError("--on-worker-loss expects continue or end");
    } else if (arg == "--trace-per-rank") {
      noValue();
      args.train.tracePerRank = true;
    } else if (arg == "--resume") {
      noValue();
      args.train.resume = true;
    } else if (arg == "--metrics") {
      args.train.metricsPath = next();
      if (args.train.metricsPath.empty())
        usageError("--metrics needs a file name");
    } else if (arg == "--max-steps") {
      args.train.maxSteps = parseAtMost(arg, next(), kMaxSteps);
    } else if (arg == "--collective-timeout") {
      const uint64_t seconds = parseCount(arg, next());
      if (seconds > kMaxTimeoutSeconds)
        usageError("--collective-timeout expects at most " + std::to_string(kMaxTimeoutSeconds) +
                   " seconds (11 days; 0 waits forever)");
      args.train.collectiveTimeout = static_cast<double>(seconds);
    } else if (arg == "--save-params") {
      args.train.paramsPath = next();
      if (args.train.paramsPath.empty())
        usageError("--save-params needs a file name");
    } else if (arg == "--quiet" || arg == "-q") {
      noValue();
      args.train.quiet = true;
    } else if (arg == "--check-gradients") {
      noValue();
      args.checkGradients = true;
    } else if (arg == "--inspect") {
      noValue();
      args.inspect = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      usageError("unknown option '" + arg + "'");
    } else if (args.plan.empty()) {
      args.plan = arg;
    } else {
      usageError("unexpected argument '" + arg + "' (the plan is already " + args.plan + ")");
    }
  }
  if (args.plan.empty())
    usageError("missing the plan file");
  if (const char *env = std::getenv("DPRUN_THREADS"); env && !threadsGiven) {
    args.train.threads = parseThreads("DPRUN_THREADS", env);
    args.train.threadsGiven = true;
  }
  const TrainOptions &t = args.train;
  if (t.checkpointDir.empty() && (t.resume || t.checkpointEvery > 0 || t.checkpointEachEpoch ||
                                  keepGiven))
    usageError(std::string(t.resume ? "--resume" : keepGiven && t.checkpointEvery == 0 &&
                                                           !t.checkpointEachEpoch
                                                       ? "--checkpoint-keep"
                                                       : "--checkpoint-every") +
               " needs --checkpoint-dir DIR");
  if (t.tracePerRank && t.tracePath.empty())
    usageError("--trace-per-rank needs --trace FILE");
  if (!args.inspect && !args.checkGradients && !haveData)
    usageError("missing --data DIR (the directory with the IDX files or CIFAR-10 batches)");
  return true;
}

int run(int argc, char **argv) {
  Args args;
  if (!parseArgs(argc, argv, args))
    return 0;
  if (args.inspect || args.checkGradients) {
    dp::rt::Plan plan = dp::rt::Plan::read(args.plan);
    // Every check a run makes of the plan before it trains (a run calls the same function),
    // so that --inspect accepts only a plan that dprun runs and the gradient check runs only
    // such a plan.
    dp::rt::checkRunnable(plan, args.plan);
    if (args.inspect) {
      dp::rt::describePlan(plan, args.plan, std::cout);
      return 0;
    }
    dp::rt::refuseUncheckablePlan(plan, args.plan);
    dp::rt::GradCheckOptions options;
    options.seed = args.train.seed;
    if (dp::rt::checkGradients(std::move(plan), options, std::cout) != 0)
      throw Error(ErrorKind::Runtime, "gradients of " + args.plan + " disagree with finite differences");
    return 0;
  }
  args.train.interactive = ::isatty(STDOUT_FILENO) == 1;
  dp::rt::runTraining(args.plan, args.train, std::cout);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  catchCrashesNearTheMemoryLimit();
  try {
    dp::rt::registerBuiltinBackends();
    return run(argc, argv);
  } catch (const Error &e) {
    std::cout.flush();
    const bool signalled = dp::rt::isSignalStop(e.kind());
    if (!e.reported())
      std::cerr << std::string("dprun: ") + (signalled ? "" : "error: ") + e.what() + "\n";
    return e.exitCode();
  } catch (const std::bad_alloc &) {
    std::cout.flush();
    std::cerr << "dprun: error: " + dp::rt::outOfMemoryMessage("(an allocation failed)") + "\n";
    return static_cast<int>(ErrorKind::Memory);
  } catch (const std::exception &e) {
    std::cout.flush();
    std::cerr << std::string("dprun: error: ") + e.what() + "\n";
    return static_cast<int>(ErrorKind::Runtime);
  }
}
