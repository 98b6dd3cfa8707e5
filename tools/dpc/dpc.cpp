// dpc: the dp compiler driver. `dpc compile` runs the default pipeline on a model and writes
// the plan; `dpc summary` prints the model's layer table. Diagnostics carry file:line:col.
#include "dialect/Graph/IR/Model.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "passes/Graph/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Target/Plan/PlanWriter.h"
#include "reports/CompileReport.h"
#include "reports/IRDumps.h"
#include "reports/ModelSummary.h"
#include "sim/Simulate.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "tools/common/GuardedStack.h"
#include "tools/common/ModelInput.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;


static cl::OptionCategory dpcCategory("dpc options");
static cl::SubCommand compileCmd("compile", "Compile a model (.mlir) into a plan (.dpx)");
static cl::SubCommand summaryCmd("summary", "Print the model's layers, output shapes and parameters");
static cl::SubCommand simulateCmd(
    "simulate", "Check a plan's collective schedule for deadlock; with a profile and a topology, "
                "predict its step time, hidden communication and scaling efficiency");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir | plan.dpx>"),
                                      cl::Required, cl::sub(compileCmd), cl::sub(summaryCmd),
                                      cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Plan file to write (default: <model>.dpx)"),
                                       cl::value_desc("file"), cl::sub(compileCmd),
                                       cl::cat(dpcCategory));
static cl::opt<std::string> dumpDir(
    "dump-dir", cl::desc("Write the IR after every pass as DIR/NN-<pass>.mlir (00-input.mlir first)"),
    cl::value_desc("dir"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<double> lrScale("lr-scale", cl::desc("Multiply the model's learning rate by this"),
                               cl::init(1.0), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<int64_t> devicesPerProcess(
    "devices-per-process", cl::desc("Replicas per process, one per device (default 1)"),
    cl::init(1), cl::value_desc("R"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<int64_t> processes("processes",
                                  cl::desc("Processes (MPI ranks) of the job (default 1)"),
                                  cl::init(1), cl::value_desc("P"), cl::sub(compileCmd),
                                  cl::cat(dpcCategory));
static cl::opt<int64_t> nodes(
    "nodes",
    cl::desc("Hosts the processes are spread over, evenly (default 1); dprun refuses a launch "
             "placed otherwise, and sums gradients within each host first"),
    cl::init(1), cl::value_desc("N"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<std::string> device("device", cl::desc("Device kind: cpu (default) or cuda"),
                                   cl::init("cpu"), cl::sub(compileCmd), cl::cat(dpcCategory));
enum class Strategy { AllReduce, ParameterServer };
static cl::opt<Strategy> strategy(
    "strategy", cl::desc("How the processes share the training"),
    cl::values(clEnumValN(Strategy::AllReduce, "allreduce",
                          "data parallelism: every process updates its copy of the parameters "
                          "with the gradients averaged by allreduce (default)"),
               clEnumValN(Strategy::ParameterServer, "parameter-server",
                          "--servers S processes hold the parameters and the optimizer; "
                          "--workers W processes push gradients and pull parameters (launch "
                          "S + W ranks: the servers first)")),
    cl::init(Strategy::AllReduce), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<int64_t> servers("servers",
                                cl::desc("Parameter servers (parameter-server; default 1)"),
                                cl::init(1), cl::value_desc("S"), cl::sub(compileCmd),
                                cl::cat(dpcCategory));
static cl::opt<int64_t> workers("workers",
                                cl::desc("Workers (parameter-server; default 2)"), cl::init(2),
                                cl::value_desc("W"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<std::string> staleness(
    "staleness",
    cl::desc("How many steps a worker may run ahead of the slowest (parameter-server): K >= 0 "
             "(stale-synchronous), or inf (asynchronous, the default)"),
    cl::value_desc("K|inf"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<bool> syncUpdates(
    "sync",
    cl::desc("Servers average one gradient from every worker, then update (parameter-server): "
             "synchronous data parallelism over the workers"),
    cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<double> bucketMb(
    "bucket-mb", cl::desc("Largest allreduce bucket in MiB per replica; 0: one per gradient"),
    cl::init(25.0), cl::value_desc("MiB"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("Learning-rate schedule, applied by dprun per step: constant (default), "
             "step:every=E,factor=F, cosine:epochs=T[,min=M], "
             "plateau:patience=N,factor=F[,min=M][,threshold=R] (on the test loss), each "
             "after an optional warmup-linear:epochs=K[,start=S]+ (S defaults to the rate "
             "before --scale-lr linear, else 0.1)"),
    cl::value_desc("SPEC"), cl::sub(compileCmd), cl::cat(dpcCategory));
enum class LrScaling { None, Linear };
static cl::opt<LrScaling> scaleLr(
    "scale-lr", cl::desc("Scale the learning rate with the number of replicas"),
    cl::values(clEnumValN(LrScaling::None, "none", "keep the model's learning rate (default)"),
               clEnumValN(LrScaling::Linear, "linear",
                          "multiply it by R x P (Goyal et al.), on top of --lr-scale")),
    cl::init(LrScaling::None), cl::sub(compileCmd), cl::cat(dpcCategory));
enum class Precision { Fp32, Bf16 };
static cl::opt<Precision> precision(
    "precision", cl::desc("The number type of the products"),
    cl::values(clEnumValN(Precision::Fp32, "fp32", "everything in f32 (default)"),
               clEnumValN(Precision::Bf16, "bf16",
                          "mixed precision: dense, matmul and the convolutions read bf16 "
                          "(casts placed by graph-mixed-precision) and accumulate in f32; "
                          "parameters, gradients, optimizer state, losses and statistics stay "
                          "f32 (CPU only)")),
    cl::init(Precision::Fp32), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<Precision> allreducePrecision(
    "allreduce-precision", cl::desc("The number type the gradients cross the processes in"),
    cl::values(clEnumValN(Precision::Fp32, "fp32", "f32 (default)"),
               clEnumValN(Precision::Bf16, "bf16",
                          "bf16: half the bytes on the network; the replicas of a process are "
                          "summed in f32 first and the mean is f32 again (CPU, allreduce "
                          "strategy)")),
    cl::init(Precision::Fp32), cl::sub(compileCmd), cl::cat(dpcCategory));
enum class BatchNormStats { Global, Local };
static cl::opt<BatchNormStats> batchNormStats(
    "batch-norm-stats", cl::desc("Which batch the statistics of batch normalisation cover"),
    cl::values(clEnumValN(BatchNormStats::Global, "global",
                          "the global batch, averaged across replicas: data parallelism gives "
                          "what one device gives (default)"),
               clEnumValN(BatchNormStats::Local, "local",
                          "each replica's shard, as Keras under a mirrored strategy (no "
                          "collectives in the forward pass)")),
    cl::init(BatchNormStats::Global), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::list<std::string> rankPlans(
    "rank-plan",
    cl::desc("Rank R runs FILE instead of the plan (repeatable): checks a job whose ranks were "
             "given different plans"),
    cl::value_desc("R=FILE"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<std::string> profileFile(
    "profile", cl::desc("Kernel times measured by `dprun PLAN --profile FILE` (this plan's "
                        "rows per replica)"),
    cl::value_desc("file"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<std::string> topologyFile(
    "topology",
    cl::desc("The machine as JSON: latency and bandwidth of the device, host and network "
             "levels, optionally nodes, ranks_per_node, devices_per_rank (examples/topologies/)"),
    cl::value_desc("file"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<int64_t> simNodes("nodes",
                                 cl::desc("Nodes (default: the topology's, else the plan's)"),
                                 cl::init(0), cl::value_desc("N"), cl::sub(simulateCmd),
                                 cl::cat(dpcCategory));
static cl::opt<int64_t> simRanksPerNode(
    "ranks-per-node", cl::desc("Ranks per node (default: the topology's, else the plan's)"),
    cl::init(0), cl::value_desc("L"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<int64_t> simDevicesPerRank(
    "devices-per-rank", cl::desc("Devices per rank (default: the topology's, else the plan's)"),
    cl::init(0), cl::value_desc("R"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<std::string> simAllreduce(
    "allreduce", cl::desc("flat, hierarchical or auto (as dprun --allreduce; default auto)"),
    cl::init("auto"), cl::value_desc("layout"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::list<int64_t> simScale(
    "scale", cl::desc("Also predict these device counts (weak scaling, the node's layout kept)"),
    cl::CommaSeparated, cl::value_desc("N,N,..."), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<double> computeMs(
    "compute-ms",
    cl::desc("Scale the profile's kernel times to a step of this many milliseconds (another "
             "device's measured or published speed)"),
    cl::init(0), cl::value_desc("ms"), cl::sub(simulateCmd), cl::cat(dpcCategory));
static cl::opt<std::string> simJson("json", cl::desc("Also write the predictions as JSON"),
                                    cl::value_desc("file"), cl::sub(simulateCmd),
                                    cl::cat(dpcCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing but errors"), cl::sub(compileCmd),
                           cl::cat(dpcCategory));

namespace {

int failWith(const Twine &message, int code = 1) {
  llvm::errs() << "dpc: " << message << "\n";
  return code;
}

OwningOpRef<ModuleOp> parseModel(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  std::unique_ptr<llvm::MemoryBuffer> file = dp::readModelText(inputFile, llvm::errs());
  if (!file)
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

int runSummary(ModuleOp module) {
  PassManager pm(module->getContext());
  pm.addPass(dp::graph::createInlineCallsPass());
  pm.addPass(dp::graph::createVerifyModelPass());
  if (failed(pm.run(module)))
    return 1;
  dp::reports::printModelSummary(dp::graph::getModelFunctions(module).front(), llvm::outs());
  return 0;
}

int runCompile(ModuleOp module) {
  auto start = std::chrono::steady_clock::now();
  std::string model = "model";
  if (auto funcs = dp::graph::getModelFunctions(module); funcs.size() == 1)
    model = funcs.front().getSymName().str();

  dp::CompileOptions options;
  options.lrScale = lrScale.getValue();
  options.scaleLr = scaleLr == LrScaling::Linear ? "linear" : "none";
  options.devicesPerProcess = devicesPerProcess.getValue();
  options.processes = processes.getValue();
  options.nodes = nodes.getValue();
  options.device = device.getValue();
  options.bucketMb = bucketMb.getValue();
  options.syncBatchNorm = batchNormStats == BatchNormStats::Global;
  options.lrSchedule = lrSchedule.getValue();
  options.precision = precision == Precision::Bf16 ? "bf16" : "fp32";
  options.allreducePrecision = allreducePrecision == Precision::Bf16 ? "bf16" : "fp32";
  options.output = outputFile.empty() ? model + ".dpx" : outputFile.getValue();
  if (strategy == Strategy::ParameterServer) {
    options.strategy = "parameter-server";
    options.servers = servers.getValue();
    options.workers = workers.getValue();
    options.sync = syncUpdates.getValue();
    if (staleness.getNumOccurrences() && syncUpdates)
      return failWith("--staleness and --sync exclude each other (a synchronous step has "
                      "staleness 0)",
                      2);
    if (staleness.getNumOccurrences() && staleness != "inf") {
      int64_t k = 0;
      if (StringRef(staleness).getAsInteger(10, k) || k < 0)
        return failWith("--staleness must be a number of steps >= 0 or inf, not '" +
                            staleness + "'",
                        2);
      options.staleness = k;
    }
  } else {
    for (const char *name : {"servers", "workers", "staleness", "sync"})
      if (cl::getRegisteredOptions(compileCmd).lookup(name)->getNumOccurrences())
        return failWith(std::string("--") + name + " needs --strategy parameter-server", 2);
  }
  if (std::string error = options.verify(); !error.empty())
    return failWith("--" + error, 2);

  PassManager pm(module->getContext());
  const dp::reports::IRDumps *dumpsWritten = nullptr; // owned by pm
  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      return failWith("cannot create dump directory '" + dumpDir + "': " + ec.message());
    auto dumps = std::make_unique<dp::reports::IRDumps>(dumpDir);
    dumps->write(module, "00-input.mlir");
    dumpsWritten = dumps.get();
    pm.addInstrumentation(std::move(dumps));
  }
  dp::buildCompilePipeline(pm, options);
  if (failed(pm.run(module)))
    return 1;
  if (dumpsWritten && dumpsWritten->failed())
    return failWith("some IR dumps in '" + dumpDir + "' could not be written (see above)");

  if (!quiet) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    auto program = *module.getOps<dp::plan::ProgramOp>().begin();
    dp::reports::printCompileReport(program, options.replicaLrFactor(), ms, llvm::outs());
    uint64_t size = 0;
    (void)llvm::sys::fs::file_size(options.output.getValue(), size);
    llvm::outs() << "wrote " << options.output << " (" << size << " bytes)\n";
    if (!dumpDir.empty())
      llvm::outs() << "IR after each pass in " << dumpDir << "/\n";
  }
  return 0;
}

} // namespace

int runSimulate() {
  dp::sim::SimulateOptions options;
  options.plan = inputFile;
  for (const std::string &spec : rankPlans) {
    llvm::StringRef rank, path;
    std::tie(rank, path) = llvm::StringRef(spec).split('=');
    int value = 0;
    if (path.empty() || rank.getAsInteger(10, value))
      return failWith("--rank-plan expects R=FILE, not '" + spec + "'", 2);
    options.rankPlans.emplace_back(value, path.str());
  }
  options.profile = profileFile;
  options.topology = topologyFile;
  options.nodes = simNodes;
  options.ranksPerNode = simRanksPerNode;
  options.devicesPerRank = simDevicesPerRank;
  options.allreduce = simAllreduce;
  options.scale.assign(simScale.begin(), simScale.end());
  options.computeMs = computeMs;
  options.json = simJson;
  return dp::sim::simulate(options, llvm::outs(), llvm::errs());
}

static int dpcMain(int argc, char **argv) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << dp::plan::kProducer << "\n"; });
  cl::HideUnrelatedOptions(dpcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "dpc: the dp compiler\n\n"
      "  dpc summary model.mlir                 print the layer table and parameter counts\n"
      "  dpc compile model.mlir -o model.dpx    compile to a plan that dprun executes\n"
      "  dpc compile model.mlir -o m.dpx --devices-per-process 2 --processes 4\n"
      "                                         data parallel: 2 replicas in each of 4\n"
      "                                         processes (mpirun -n 4 / srun -n 4 dprun m.dpx)\n"
      "  dpc simulate m.dpx                     check the plan's collective schedule\n"
      "  dpc simulate m.dpx --profile p.json --topology t.json [--scale 8,64,512]\n"
      "                                         predict its step on a machine\n");
  if (!compileCmd && !summaryCmd && !simulateCmd) {
    llvm::errs() << "dpc: missing command: use 'dpc compile', 'dpc summary' or 'dpc simulate' "
                    "(see dpc --help)\n";
    return 2;
  }
  if (simulateCmd)
    return runSimulate();

  DialectRegistry registry;
  dp::registerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the model's source line; a dump of the whole op would drown them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseModel(context, sourceMgr);
  if (!module)
    return 1;
  return summaryCmd ? runSummary(*module) : runCompile(*module);
}

int main(int argc, char **argv) {
  // MLIR's parser recurses once per sign or term of an expression: on a guarded stack, input
  // of any shape ends with a message, never a crash.
  static const std::string message = std::string("dpc: ") + dp::kParserStackMessage;
  return dp::runOnGuardedStack([&] { return dpcMain(argc, argv); }, message.c_str());
}
