// dpc: the dp compiler driver. `dpc compile` runs the default pipeline on a model and writes
// the plan; `dpc summary` prints the model's layer table. Diagnostics carry file:line:col.
#include "dialect/Graph/IR/GraphDialect.h"
#include "passes/Dist/Report.h"
#include "passes/Graph/Passes.h"
#include "passes/Graph/Summary.h"
#include "dialect/Graph/IR/Model.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Plan/Passes.h"
#include "passes/Target/Plan/PlanWriter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

static constexpr const char *kVersion = "dpc 0.1.0";

static cl::OptionCategory dpcCategory("dpc options");
static cl::SubCommand compileCmd("compile", "Compile a model (.mlir) into a plan (.dpx)");
static cl::SubCommand summaryCmd("summary", "Print the model's layers, output shapes and parameters");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"), cl::Required,
                                      cl::sub(compileCmd), cl::sub(summaryCmd),
                                      cl::cat(dpcCategory));
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
static cl::opt<std::string> device("device", cl::desc("Device kind: cpu (default) or cuda"),
                                   cl::init("cpu"), cl::sub(compileCmd), cl::cat(dpcCategory));
static cl::opt<double> bucketMb(
    "bucket-mb", cl::desc("Largest allreduce bucket in MiB per replica; 0: one per gradient"),
    cl::init(25.0), cl::value_desc("MiB"), cl::sub(compileCmd), cl::cat(dpcCategory));
enum class LrScaling { None, Linear };
static cl::opt<LrScaling> scaleLr(
    "scale-lr", cl::desc("Scale the learning rate with the number of replicas"),
    cl::values(clEnumValN(LrScaling::None, "none", "keep the model's learning rate (default)"),
               clEnumValN(LrScaling::Linear, "linear",
                          "multiply it by R x P (Goyal et al.), on top of --lr-scale")),
    cl::init(LrScaling::None), cl::sub(compileCmd), cl::cat(dpcCategory));
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
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing but errors"), cl::sub(compileCmd),
                           cl::cat(dpcCategory));

namespace {

/// Writes the IR after each pass to the dump directory, numbered in pipeline order.
class DumpInstrumentation : public PassInstrumentation {
public:
  explicit DumpInstrumentation(std::string dir) : dir_(std::move(dir)) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (auto module = dyn_cast<ModuleOp>(op))
      before_ = dp::dist::collectCollectives(module);
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    auto module = dyn_cast<ModuleOp>(op);
    if (!module)
      return;
    std::string name = llvm::formatv("{0:d2}-{1}.mlir", ++index_, pass->getArgument()).str();
    write(op, name, dp::dist::describeCollectiveChanges(before_, dp::dist::collectCollectives(module)));
  }

  /// Writes `op` as DIR/name, after `notes` as comment lines; failures to write are
  /// reported, not fatal.
  void write(Operation *op, StringRef name, const std::vector<std::string> &notes = {}) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      llvm::errs() << "dpc: cannot write " << path << ": " << ec.message() << "\n";
      return;
    }
    for (const std::string &note : notes)
      os << "// collectives: " << note << "\n";
    op->print(os);
    os << "\n";
  }

private:
  std::vector<dp::dist::CollectiveRecord> before_;
  std::string dir_;
  unsigned index_ = 0;
};

int failWith(const Twine &message, int code = 1) {
  llvm::errs() << "dpc: " << message << "\n";
  return code;
}

OwningOpRef<ModuleOp> parseModel(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file) {
    failWith("cannot read '" + inputFile + "': " + error);
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

int runSummary(ModuleOp module) {
  PassManager pm(module->getContext());
  pm.addPass(dp::graph::createInlineCallsPass());
  pm.addPass(dp::graph::createVerifyModelPass());
  if (failed(pm.run(module)))
    return 1;
  dp::graph::printModelSummary(dp::graph::getModelFunctions(module).front(), llvm::outs());
  return 0;
}

int runCompile(ModuleOp module) {
  auto start = std::chrono::steady_clock::now();
  std::string model = "model";
  if (auto funcs = dp::graph::getModelFunctions(module); funcs.size() == 1)
    model = funcs.front().getSymName().str();

  PassManager pm(module->getContext());
  DumpInstrumentation *dumps = nullptr;
  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      return failWith("cannot create dump directory '" + dumpDir + "': " + ec.message());
    auto instrumentation = std::make_unique<DumpInstrumentation>(dumpDir);
    dumps = instrumentation.get();
    dumps->write(module, "00-input.mlir");
    pm.addInstrumentation(std::move(instrumentation));
  }
  if (devicesPerProcess < 1 || processes < 1)
    return failWith("--devices-per-process and --processes must be at least 1", 2);
  if (device != "cpu" && device != "cuda")
    return failWith("--device must be cpu or cuda, not '" + device + "'", 2);
  if (bucketMb < 0)
    return failWith("--bucket-mb must not be negative", 2);
  dp::CompileOptions options;
  options.lrScale = lrScale.getValue();
  options.scaleLr = scaleLr == LrScaling::Linear ? "linear" : "none";
  options.devicesPerProcess = devicesPerProcess.getValue();
  options.processes = processes.getValue();
  options.device = device.getValue();
  options.bucketMb = bucketMb.getValue();
  options.syncBatchNorm = batchNormStats == BatchNormStats::Global;
  dp::buildCompilePipeline(pm, options);
  if (failed(pm.run(module)))
    return 1;

  std::string image;
  if (failed(dp::plan::writePlan(module, kVersion, image)))
    return 1;
  std::string path = outputFile.empty() ? model + ".dpx" : outputFile.getValue();
  // Write beside the target and rename, so an interrupted compile never leaves half a plan.
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out)
    return failWith("cannot write '" + path + "': " + error);
  out->os() << image;
  out->os().flush();
  if (out->os().has_error())
    return failWith("cannot write '" + path + "': " + out->os().error().message());
  out->keep();

  if (!quiet) {
    auto program = *module.getOps<dp::plan::ProgramOp>().begin();
    unsigned kernels[2] = {0, 0};
    for (auto step : program.getOps<dp::plan::StepOp>())
      kernels[step.getName() == "eval"] = llvm::range_size(step.getOps<dp::plan::KernelOp>());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    llvm::outs() << "compiled '" << model << "' (global batch " << program.getBatch()
                 << "): train step " << kernels[0] << " kernels, eval step " << kernels[1]
                 << " kernels, in " << llvm::format("%.0f", ms) << " ms\n";
    int64_t replicas = devicesPerProcess * processes;
    if (replicas > 1)
      llvm::outs() << "data parallel: " << devicesPerProcess << " " << device
                   << " device(s) per process x " << processes << " process(es) = " << replicas
                   << " replicas of " << program.getBatch() / replicas << " samples each"
                   << (scaleLr == LrScaling::Linear
                           ? ", learning rate x " + std::to_string(replicas)
                           : std::string())
                   << "\n";
    dp::plan::printBucketPlan(program, llvm::outs());
    dp::plan::printMemoryReport(dp::plan::computeMemoryReport(program), llvm::outs());
    llvm::outs() << "wrote " << path << " (" << image.size() << " bytes)\n";
    if (dumps)
      llvm::outs() << "IR after each pass in " << dumpDir << "/\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << kVersion << "\n"; });
  cl::HideUnrelatedOptions(dpcCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "dpc: the dp compiler\n\n"
      "  dpc summary model.mlir                 print the layer table and parameter counts\n"
      "  dpc compile model.mlir -o model.dpx    compile to a plan that dprun executes\n"
      "  dpc compile model.mlir -o m.dpx --devices-per-process 2 --processes 4\n"
      "                                         data parallel: 2 replicas in each of 4\n"
      "                                         processes (mpirun -n 4 / srun -n 4 dprun m.dpx)\n");
  if (!compileCmd && !summaryCmd) {
    llvm::errs() << "dpc: missing command: use 'dpc compile' or 'dpc summary' (see dpc --help)\n";
    return 2;
  }

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
