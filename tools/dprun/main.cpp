// dprun: runs a compiled plan (.dpx). Trains it on an IDX or CIFAR-10 data set and evaluates
// it, or prints a summary of it with --inspect. Only parses the command line; the work is in
// the runtime libraries, and nothing here or there links MLIR or LLVM.
#include "importers/onnx/Export.h"
#include "runtime/backends/Backends.h"
#include "runtime/base/CoreShare.h"
#include "runtime/base/Error.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/Interrupt.h"
#include "runtime/format/Plan.h"
#include "runtime/train/GradCheck.h"
#include "runtime/train/Peak.h"
#include "runtime/train/PlanCheck.h"
#include "runtime/train/PlanInfo.h"
#include "runtime/train/Run.h"
#include "tools/common/CommandLine.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
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
constexpr int64_t kMaxTimeoutSeconds = 1000000;
constexpr int64_t kMaxEpochs = 1000000000, kMaxSteps = 1000000000;

/// What follows the options in --help.
const char *kHelpEnd =
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
  bool measurePeak = false;
  bool help = false, version = false;
  dp::rt::TrainOptions train;
};

/// --threads N|all|auto as TrainOptions::threads: N, -1 for all, 0 for auto.
int parseThreads(const std::string &option, const std::string &value) {
  if (value == "auto")
    return 0;
  if (value == "all")
    return -1;
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
      value.size() > 4 || std::stoi(value) < 1 || std::stoi(value) > 4096)
    throw dp::cli::UsageError(
        option + " expects a thread count from 1 to 4096, all or auto, got '" + value + "'");
  return std::stoi(value);
}

/// dprun's options, each one entry: its names, value, help and what it sets.
void declareOptions(dp::cli::Parser &p, Args &args) {
  using dp::cli::Option;
  using dp::cli::Parser;
  TrainOptions &t = args.train;
  p.text("--data", "DIR", "a directory",
         "directory with the IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, "
         "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, gzipped (.gz) or not; or with "
         "the CIFAR-10 binary batches data_batch_1.bin .. data_batch_5.bin and test_batch.bin "
         "(directly or in cifar-10-batches-bin/), read as 32x32x3 images (HWC). A regression's "
         "plan (dpc --loss mse) reads train-targets-idx2-float and t10k-targets-idx2-float (IDX "
         "floats, samples x K) instead of the labels",
         t.dataDir)
      .inUsage = false;
  p.count("--epochs", "N", 1, kMaxEpochs, "passes over the training set (default 1)", t.epochs);
  p.add({"--seed", "", "S", "seeds the initial parameters and the shuffle (default 1)", true,
         [&t](const std::string &v) {
           t.seed = Parser::parseUnsigned("--seed", v, UINT64_MAX);
           t.seedGiven = true;
         }});
  p.text("--metrics", "FILE", "a file name", "write per-epoch and test figures to FILE as JSON",
         t.metricsPath);
  p.text("--log", "FILE", "a file name",
         "write the run's figures to FILE as JSON lines while it runs, each on disk before the "
         "run goes on (a run killed with -9 leaves every line up to the kill): every --log-every "
         "steps the job's loss, accuracy, learning rate, samples/s, input and allreduce waits "
         "and each rank's step time (a straggler shows), and a line per evaluation and epoch "
         "(rank 0; a resumed run appends)",
         t.logPath);
  p.text("--tensorboard", "DIR", "a directory",
         "write the same figures as TensorBoard event files into DIR (created if missing; "
         "tensorboard --logdir DIR shows them): train/loss, train/accuracy, "
         "train/learning_rate, train/samples_per_sec, validation/ and test/ loss and accuracy, "
         "epoch/loss, epoch/accuracy, by step",
         t.tensorboardDir);
  p.count("--log-every", "N", 1, kMaxSteps,
          "steps per line of --log and point of --tensorboard (default 10)", t.logEvery);
  p.count("--steps-per-epoch", "N", 1, kMaxSteps,
          "at most N train steps per epoch (the first N batches of each shuffled epoch)",
          t.stepsPerEpoch);
  p.count("--max-steps", "N", 1, kMaxSteps,
          "end training after N train steps of the run, in whichever epoch they fall (the last "
          "epoch may be cut short; a resumed run counts the steps before it)",
          t.maxSteps);
  p.flag("--quiet", "print only the test result", t.quiet).alias = "-q";
  p.add({"--collective-timeout", "", "S",
         "seconds a replica waits in a collective (or a rank in the start-up handshake) while "
         "the other ranks make no progress, before the job stops with a report of the missing "
         "rank; a rank that is behind but working is waited for; 0 waits forever (default 20)",
         true, [&t](const std::string &v) {
           t.collectiveTimeout =
               double(Parser::parseCount("--collective-timeout", v, 0, kMaxTimeoutSeconds,
                                         "seconds (11 days; 0 waits forever)"));
         }});
  p.text("--save-params", "FILE", "a file name",
         "after training, write the weights and batch-norm statistics (no optimizer state) to "
         "FILE as safetensors: F32 tensors under the plan's parameter names, with their shapes "
         "(rank 0, atomically); what --params reads, and safetensors' readers",
         t.paramsPath);
  p.text("--save-state", "FILE", "a file name",
         "when training ends, write its whole state to FILE: a checkpoint, with the optimizer "
         "state, the step and the finished epochs (rank 0, atomically; --resume goes on from it "
         "in a --checkpoint-dir under the name dprun prints)",
         t.statePath);
  p.text("--params", "FILE", "a file name",
         "start from the weights in FILE (safetensors of F32 tensors, as --save-params writes "
         "them, or dp's older raw parameters files) instead of the plan's initial values: to "
         "fine-tune, or with --predict to predict with them. Every weight and batch-norm "
         "statistic of the plan must be in FILE under its name, with its shape; every mismatch "
         "is named before anything is set; optimizer state starts afresh",
         t.initParamsPath)
      .alias = "--init-params";
  p.flag("--predict",
         "evaluate the test set only, no training (with --params, with those weights), and "
         "write its predictions to --predictions FILE",
         t.predict);
  p.text("--predictions", "FILE", "a file name",
         "after the final evaluation, write every test sample's prediction to FILE as CSV: "
         "index, label, predicted class, the probabilities (softmax) and the logits (a "
         "regression: index, the targets and the predicted values)",
         t.predictionsPath);
  p.count("--top-k", "K", 1, 256,
          "also report the final test evaluation's top-K accuracy (the label among the K "
          "largest logits), printed and in --metrics (top_k_accuracy)",
          t.topK);
  p.flag("--confusion-matrix",
         "after the final test evaluation, print each class's accuracy and the confusion "
         "matrix (rows: the label, columns: the predicted class), also in --metrics "
         "(per_class_accuracy, confusion_matrix)",
         t.confusionMatrix);
  p.text("--export", "FILE", "a file name",
         "after training, write the model the plan was compiled from (an ONNX model: dpc "
         "compile model.onnx) to FILE with the trained weights and batch-norm statistics, in "
         "ONNX's layouts, so that it runs wherever ONNX runs (rank 0, atomically, after ONNX's "
         "checker where the library knows the model's versions)",
         t.exportPath);
  p.text("--checkpoint-dir", "DIR", "a directory",
         "keep checkpoints of the run in DIR (created if missing): one when training ends and "
         "one when a signal stops it, each with every parameter, the optimizer state, the "
         "step, the epoch and the place in it (written by rank 0, atomically, with a "
         "checksum); rank 0 locks DIR to this run (a second run on it is refused)",
         t.checkpointDir);
  p.add({"--checkpoint-every", "", "N|epoch", "also one every N train steps, or after every epoch",
         true, [&t](const std::string &v) {
           if (v == "epoch")
             t.checkpointEachEpoch = true;
           else
             t.checkpointEvery = Parser::parseCount("--checkpoint-every", v, 1, kMaxSteps);
         }});
  p.add({"--checkpoint-keep", "", "N",
         "keep the run's newest N checkpoints, remove its older ones (default 3); files in DIR "
         "that are not the run's stay",
         true, [&t](const std::string &v) {
           t.checkpointKeep = int(Parser::parseCount("--checkpoint-keep", v, 1, 1000000));
         }});
  p.flag("--resume",
         "continue from the newest checkpoint in --checkpoint-dir that verifies (a newer broken "
         "one is skipped with a warning), with its seed; start afresh when there is none. The "
         "plan may have another layout (R x P) than the run that wrote it, not another model",
         t.resume);
  p.count("--early-stop", "N", 1, kMaxEpochs,
          "stop training when the watched figure (--monitor) has not improved for N epochs; "
          "without a validation set, the test loss (the test set is then evaluated after every "
          "epoch, as it is for a plan compiled with --lr-schedule plateau:...)",
          t.earlyStop);
  p.add({"--validation-split", "", "F",
         "hold out the last fraction F (0 < F < 1) of the training set, before any shuffle, as "
         "the validation set: the same samples on every rank, under every seed and layout and "
         "after a resume. It is evaluated after every epoch (val loss and accuracy); a plateau "
         "schedule, --early-stop and --restore-best watch it, and the test set is evaluated "
         "once, after training",
         true, [&t](const std::string &v) {
           char *end = nullptr;
           const double f = std::strtod(v.c_str(), &end);
           if (v.empty() || *end != '\0' || !(f > 0 && f < 1))
             throw dp::cli::UsageError("--validation-split expects a fraction between 0 and 1 "
                                       "(0.1 holds out a tenth), got '" +
                                       v + "'");
           t.validationSplit = f;
         }});
  p.text("--validation-data", "DIR", "a directory",
         "the validation set is the test split (t10k-*, or CIFAR-10's test_batch.bin) of DIR, "
         "another directory than --data; as --validation-split otherwise",
         t.validationDir);
  p.count("--eval-every", "N", 1, kMaxSteps,
          "also evaluate the validation set every N train steps of the run, within epochs",
          t.evalEvery);
  p.choice("--monitor", {"val_loss", "val_accuracy"},
           "what a plateau schedule, --early-stop and --restore-best watch on the validation "
           "set: its loss (lower is better) or its accuracy (higher is better; default val_loss)",
           t.monitor);
  p.flag("--restore-best",
         "end training with the weights of the best validation evaluation (--monitor), from "
         "after an epoch or from --eval-every, and say which step they came from; the test set, "
         "--save-params, --export and --predictions then use them. Every rank keeps a copy of "
         "the weights (not the optimizer state) in host memory",
         t.restoreBest);
  p.add({"--prefetch", "", "N",
         "batches a loader thread gathers ahead of the steps (shuffled samples scaled to "
         "floats, this process's rows), so that compute does not wait for input; 0 gathers on "
         "the compute threads before each step. Default: 2 when the compute threads leave one "
         "of the process's cores free (always on a GPU), else 0. Memory: N + 2 batches of this "
         "process's rows",
         true, [&t](const std::string &v) {
           t.prefetch = int(Parser::parseCount("--prefetch", v, 0, 64, "batches"));
         }});
  p.add({"--threads", "", "N|all|auto",
         "compute threads of each process of a CPU plan: all takes one per core the process may "
         "run on (its launcher's binding, SLURM's CPUs); auto (the default) leaves out the "
         "cores that other processes kept at least half busy while dprun started, since threads "
         "sharing a core with a busy process stall each other at every barrier. "
         "OMP_NUM_THREADS, when set, is kept under auto and all. The environment variable "
         "DPRUN_THREADS sets the default. Results depend on the thread count (not only in the "
         "last bits): every run prints it, checkpoints record it, and --resume uses the "
         "checkpoint's count unless --threads or DPRUN_THREADS is given",
         true, [&t](const std::string &v) {
           t.threads = parseThreads("--threads", v);
           t.threadsGiven = true;
         }});
  p.text("--trace", "FILE", "a file name",
         "write a timeline of the run to FILE as Chrome trace-event JSON (open it in "
         "https://ui.perfetto.dev or chrome://tracing): per rank and thread, every step and "
         "kernel, allreduce start and wait, input gathering and waits, epochs, evaluations and "
         "checkpoint writes; rank 0 merges the ranks' timelines into FILE. At most 500,000 "
         "spans per process are kept (--max-steps keeps a trace short)",
         t.tracePath);
  p.flag("--trace-per-rank", "with --trace, each rank writes its own FILE.rankN.json instead",
         t.tracePerRank);
  p.text("--profile", "FILE", "a file name",
         "write rank 0's profile to FILE as JSON: the mean and median time of every kernel of "
         "the train step and of the step (device 0, the steps after the first), each bucket's "
         "bytes and allreduce wait; what a communication model reads (--max-steps keeps it "
         "short)",
         t.profilePath);
  p.choice("--allreduce", {"flat", "hierarchical", "tree", "auto"},
           "how gradient sums cross the ranks: one allreduce over all of them (flat), a "
           "reduce within each host, an allreduce across one leader per host and a broadcast "
           "back (hierarchical), or a reduce in the fixed binary tree over the ranks and a "
           "broadcast back down it (tree: the same bits whatever the ranks' order of arrival; "
           "--reproducible takes it); auto takes hierarchical when the ranks span several hosts "
           "and a host has several (default auto)",
           t.allreduce);
  p.flag("--reproducible",
         "the same bits on any layout and thread count: every sum over micro-shards in one "
         "binary tree over their indices (the ranks' sums in the tree, --allreduce tree), and "
         "the weight gradients' sums over rows in chunks of fixed size, one thread each, "
         "instead of oneDNN's partition by the thread count. Parameters after N steps are "
         "then bit for bit those of any layout of the same global batch and power-of-two "
         "counts (docs/micro-shards.md); CPU plans without parameter servers",
         t.reproducible);
  p.choice("--on-worker-loss", {"continue", "end"},
           "parameter servers: what to do with a worker silent past the collective timeout: "
           "end the job naming it, or leave it out and let the other workers train on (worker 0 "
           "excepted: it evaluates); the job then ends with exit 6 after its results, naming it "
           "(default continue under `mpirun --enable-recovery`, else end)",
           t.onWorkerLoss);
  p.flag("--inspect",
         "check the plan as a run does before it trains (every kernel against the kernel "
         "contract, the parameters, the inputs and outputs the training loop uses) and print a "
         "summary of it; needs no data. The machine (a backend and device for the plan, the "
         "memory it needs) and the data set are left to the run",
         args.inspect)
      .inUsage = false;
  p.flag("--measure-peak",
         "measure this machine's peak for the products (matmul and 3x3 convolution, f32 and "
         "bf16) through dprun's own kernels with the compute threads a run takes (--threads), "
         "print it and record it in the peak file ($DP_PEAK_FILE, else "
         "$XDG_CACHE_HOME/dp/peak.tsv or ~/.cache/dp/peak.tsv), from which every later run on "
         "this machine and thread count prints its MFU. With a PLAN, for the plan's device; "
         "without, the CPU's. Needs no data",
         args.measurePeak)
      .inUsage = false;
  p.add({"--peak-tflops", "", "T",
         "the peak TFLOP/s of a process that the run's MFU divides by (default: the peak file's "
         "figure for this machine, backend and thread count; see --measure-peak)",
         true, [&t](const std::string &v) {
           char *end = nullptr;
           const double f = std::strtod(v.c_str(), &end);
           if (v.empty() || *end != '\0' || !(f > 0) || !std::isfinite(f) || f > 1e9)
             throw dp::cli::UsageError("--peak-tflops expects a positive number of TFLOP/s, "
                                       "got '" +
                                       v + "'");
           t.peakTflops = f;
         }});
  p.flag("--check-gradients",
         "after the same checks, compare the train step's gradients with finite differences of "
         "the loss it differentiates (batch statistics, its dropout masks) on random inputs; "
         "needs no data; exit 5 on mismatch",
         args.checkGradients)
      .inUsage = false;
  Option &help = p.flag("--help", "print this help", args.help);
  help.alias = "-h";
  help.inUsage = false;
  help.endsParse = true;
  Option &version = p.flag("--version", "print the version", args.version);
  version.inUsage = false;
  version.endsParse = true;
}

/// The checks between options, after they were parsed.
void checkTogether(const dp::cli::Parser &parser, Args &args) {
  TrainOptions &t = args.train;
  if (const char *env = std::getenv("DPRUN_THREADS"); env && !t.threadsGiven) {
    t.threads = parseThreads("DPRUN_THREADS", env);
    t.threadsGiven = true;
  }
  if (t.reproducible) {
    if (t.allreduce != "auto" && t.allreduce != "tree")
      throw dp::cli::UsageError("--reproducible sums across the ranks in a fixed tree: it "
                                "cannot take --allreduce " +
                                t.allreduce);
    t.allreduce = "tree";
  }
  const bool keepGiven = parser.given("--checkpoint-keep");
  if (t.checkpointDir.empty() &&
      (t.resume || t.checkpointEvery > 0 || t.checkpointEachEpoch || keepGiven))
    throw dp::cli::UsageError(
        std::string(t.resume ? "--resume"
                    : keepGiven && t.checkpointEvery == 0 && !t.checkpointEachEpoch
                        ? "--checkpoint-keep"
                        : "--checkpoint-every") +
        " needs --checkpoint-dir DIR");
  if (t.tracePerRank && t.tracePath.empty())
    throw dp::cli::UsageError("--trace-per-rank needs --trace FILE");
  if (t.predict && t.predictionsPath.empty())
    throw dp::cli::UsageError("--predict needs --predictions FILE (where to write them)");
  if (parser.given("--log-every") && t.logPath.empty() && t.tensorboardDir.empty())
    throw dp::cli::UsageError("--log-every needs --log FILE or --tensorboard DIR");
  if (t.validationSplit > 0 && !t.validationDir.empty())
    throw dp::cli::UsageError("--validation-split and --validation-data both say where the "
                              "validation set comes from: give one");
  const bool validation = t.hasValidation();
  for (const char *needsValidation : {"--eval-every", "--monitor", "--restore-best"})
    if (parser.given(needsValidation) && !validation)
      throw dp::cli::UsageError(std::string(needsValidation) +
                                " needs a validation set: --validation-split F (the last "
                                "fraction of the training set) or --validation-data DIR");
  if (t.predict)
    for (const char *training :
         {"--epochs", "--max-steps", "--steps-per-epoch", "--checkpoint-dir", "--resume",
          "--early-stop", "--save-params", "--save-state", "--validation-split",
          "--validation-data", "--eval-every", "--monitor", "--restore-best"})
      if (parser.given(training))
        throw dp::cli::UsageError(std::string("--predict trains nothing: ") + training +
                                  " does not apply");
  if (t.resume && !t.initParamsPath.empty())
    throw dp::cli::UsageError("--params and --resume both say where the weights come from: "
                              "give one");
  if (!args.inspect && !args.checkGradients && !args.measurePeak && !parser.given("--data"))
    throw dp::cli::UsageError(
        "missing --data DIR (the directory with the IDX files or CIFAR-10 batches)");
}

/// Parses argv; returns false when the command was --help or --version (already answered).
bool parseArgs(int argc, char **argv, Args &args) {
  dp::cli::Parser parser("dprun", "PLAN --data DIR");
  declareOptions(parser, args);
  std::string usage =
      parser.usage({"PLAN --inspect", "PLAN --check-gradients [--seed S]", "--help | --version"});
  usage.pop_back(); // main adds the final newline
  if (argc < 2)
    throw Error(ErrorKind::Usage, "missing the plan file\n" + usage);
  try {
    std::vector<std::string> operands;
    parser.parse(argc, argv, operands, [](const std::vector<std::string> &seen) {
      if (seen.size() > 1)
        throw dp::cli::UsageError("unexpected argument '" + seen.back() +
                                  "' (the plan is already " + seen.front() + ")");
    });
    if (args.help) {
      std::cout << usage << "\n\nTrains a compiled plan (.dpx, made by dpc) and evaluates it "
                << "on the test set.\n\n"
                << parser.help() << "\n"
                << kHelpEnd;
      return false;
    }
    if (args.version) {
      std::cout << "dprun " << kVersion << " (plan format " << dp::rt::kFormatVersion << ")\n";
      return false;
    }
    if (operands.empty() && !args.measurePeak)
      throw dp::cli::UsageError("missing the plan file");
    if (!operands.empty())
      args.plan = operands[0];
    checkTogether(parser, args);
  } catch (const dp::cli::UsageError &e) {
    throw Error(ErrorKind::Usage, std::string(e.what()) + " (see dprun --help)");
  }
  return true;
}

/// dprun [PLAN] --measure-peak: measures the peak of the plan's device (the CPU without one)
/// with the threads a run takes, prints it and records it in the peak file.
int measurePeak(const Args &args) {
  dp::rt::DeviceKind kind = dp::rt::DeviceKind::Cpu;
  if (!args.plan.empty()) {
    dp::rt::Plan plan = dp::rt::Plan::read(args.plan);
    dp::rt::checkRunnable(plan, args.plan);
    kind = plan.deviceKind;
  }
  dp::rt::Backend &backend = dp::rt::BackendRegistry::get(kind);
  int threads = 0;
  std::string device; // a GPU's name: the peak is the device's
  if (kind == dp::rt::DeviceKind::Cpu) {
    const dp::rt::ThreadChoice choice = dp::rt::chooseComputeThreads(args.train.threads);
    backend.setComputeThreads(choice.threads);
    threads = choice.effective();
  } else {
    device = backend.openDevices(1).front()->describe();
  }
  const std::string key = dp::rt::peakKey(backend, threads, device);
  std::cout << "measuring the products' peak on " << key << "\n" << std::flush;
  const dp::rt::PeakFigures peak = dp::rt::measurePeak(backend, &std::cout);
  const std::string path = dp::rt::peakFilePath();
  dp::rt::writePeak(path, key, peak);
  char line[320];
  std::snprintf(
      line, sizeof(line),
      "recorded in %s: runs %s now print their MFU against %.3f "
      "TFLOP/s (f32 plans)",
      path.c_str(),
      threads > 0
          ? ("at " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s")).c_str()
          : "here",
      peak.best(false));
  std::cout << line;
  if (peak.best(true) > 0) {
    std::snprintf(line, sizeof(line), " or %.3f TFLOP/s (bf16 plans)", peak.best(true));
    std::cout << line;
  }
  std::cout << "\n";
  return 0;
}

int run(int argc, char **argv) {
  Args args;
  if (!parseArgs(argc, argv, args))
    return 0;
  if (args.measurePeak)
    return measurePeak(args);
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
  args.train.exportModel = dp::onnx_import::exportTrainedModel;
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
