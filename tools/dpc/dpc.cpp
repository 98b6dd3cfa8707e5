// dpc: the dp compiler driver. `dpc compile` runs the default pipeline on a model and writes
// the plan; `dpc summary` prints the model's layer table. Diagnostics carry file:line:col.
#include "dialect/Common/AtomicFile.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Plan/IR/PlanDialect.h"
#include "importers/onnx/Export.h"
#include "importers/onnx/Import.h"
#include "passes/Graph/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Target/Plan/PlanWriter.h"
#include "reports/CompileReport.h"
#include "reports/IRDumps.h"
#include "reports/ModelSummary.h"
#include "runtime/base/ParamsFile.h"
#include "sim/Simulate.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "tools/common/GuardedStack.h"
#include "tools/common/ModelInput.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <optional>
#include <set>

using namespace mlir;
namespace cl = llvm::cl;


static cl::OptionCategory dpcCategory("dpc options");
static cl::SubCommand compileCmd("compile", "Compile a model (.mlir) into a plan (.dpx)");
static cl::SubCommand summaryCmd("summary", "Print the model's layers, output shapes and parameters");
static cl::SubCommand
    importCmd("import",
              "Import an ONNX model (.onnx) as dp's text IR (.mlir), with a loss and optimizer");
static cl::SubCommand
    exportCmd("export",
              "Write an ONNX model (.onnx) back with the weights dprun trained (--save-params)");
static cl::SubCommand simulateCmd(
    "simulate", "Check a plan's collective schedule for deadlock; with a profile and a topology, "
                "predict its step time, hidden communication and scaling efficiency");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir | model.onnx | plan.dpx>"),
                                      cl::Required, cl::sub(compileCmd), cl::sub(summaryCmd),
                                      cl::sub(importCmd), cl::sub(exportCmd), cl::sub(simulateCmd),
                                      cl::cat(dpcCategory));
static cl::opt<std::string> outputFile(
    "o",
    cl::desc("File to write (compile: the plan, default <model>.dpx; import: the IR, default "
             "<model>.mlir, - for standard output; export: the model, default "
             "<model>-trained.onnx)"),
    cl::value_desc("file"), cl::sub(compileCmd), cl::sub(importCmd), cl::sub(exportCmd),
    cl::cat(dpcCategory));
static cl::opt<std::string>
    exportParams("params", cl::desc("The trained parameters: the file of dprun --save-params"),
                 cl::value_desc("file"), cl::sub(exportCmd), cl::cat(dpcCategory));
// How an ONNX model becomes a model to train (compile, summary and import of a .onnx file).
static cl::OptionCategory onnxCategory("ONNX models (a .onnx input)");
static cl::opt<int64_t> onnxBatch(
    "batch",
    cl::desc("Batch size of the model (default: the model's own, where its input fixes one)"),
    cl::init(0), cl::value_desc("N"), cl::sub(compileCmd), cl::sub(summaryCmd), cl::sub(importCmd),
    cl::sub(exportCmd), cl::cat(onnxCategory));
static cl::opt<std::string>
    onnxLoss("loss",
             cl::desc("Loss on the model's output: softmax-cross-entropy (the default: integer "
                      "class labels, the output the logits), mean-squared-error, also mse (a "
                      "regression: float targets, the output's values as computed), or "
                      "binary-cross-entropy, also bce (yes/no outputs: float targets in [0, 1], "
                      "the output the logits)"),
             cl::init("softmax-cross-entropy"), cl::value_desc("name"), cl::sub(compileCmd),
             cl::sub(summaryCmd), cl::sub(importCmd), cl::sub(exportCmd), cl::cat(onnxCategory));
static cl::opt<double> onnxLabelSmoothing(
    "label-smoothing",
    cl::desc("Label smoothing S of softmax-cross-entropy, in [0, 1]: each row's target is "
             "(1 - S) onehot(label) + S / classes (PyTorch's and Keras's label_smoothing; "
             "default 0)"),
    cl::init(0.0), cl::value_desc("S"), cl::sub(compileCmd), cl::sub(summaryCmd),
    cl::sub(importCmd), cl::cat(onnxCategory));
static cl::opt<std::string>
    onnxOptimizer("optimizer",
                  cl::desc("Optimizer as NAME[:key=value,...]: sgd:lr=0.01 (default), "
                           "momentum:lr=0.1,momentum=0.9, adam:lr=1e-3 (the keys of #graph.sgd, "
                           "#graph.momentum, #graph.adam in docs/ir.md)"),
                  cl::init("sgd:lr=0.01"), cl::value_desc("spec"), cl::sub(compileCmd),
                  cl::sub(summaryCmd), cl::sub(importCmd), cl::cat(onnxCategory));
static cl::opt<std::string> importSaveParams(
    "save-params",
    cl::desc("Also write the model's weights (its initializers, with the batch norms' running "
             "statistics) as dp's parameters, in dp's names and layouts, to a safetensors file "
             "that dprun --init-params (fine-tuning a plan of this model or of an edit of it) "
             "and --params read"),
    cl::value_desc("file"), cl::sub(importCmd), cl::cat(onnxCategory));
static cl::opt<std::string> dumpDir(
    "dump-dir", cl::desc("Write the IR after every pass as DIR/NN-<pass>.mlir (00-input.mlir first)"),
    cl::value_desc("dir"), cl::sub(compileCmd), cl::cat(dpcCategory));
// The options of CompileOptions.def; a choice option's value is its index in the table.
enum class Choice : unsigned {};
namespace {
/// cl::opt modifier: the values of a choice option, from its table entry.
template <size_t N> struct ChoiceValues {
  const dp::OptionChoice (&choices)[N];
  template <class Opt> void apply(Opt &option) const {
    for (size_t i = 0; i < N; ++i)
      option.getParser().addLiteralOption(choices[i].name, Choice(i), choices[i].help);
  }
};
template <size_t N> ChoiceValues<N> choiceValues(const dp::OptionChoice (&choices)[N]) {
  return {choices};
}
} // namespace
namespace compileFlags {
#define DP_INT(Field, Name, Value, Default, Min, Max, WhyMax, Help)                                \
  static cl::opt<int64_t> Field(Name, cl::desc(Help), cl::init(Default), cl::value_desc(Value),    \
                                cl::sub(compileCmd), cl::cat(dpcCategory));
#define DP_REAL(Field, Name, Value, Default, Min, MinExcluded, Max, WhyMax, Help)                  \
  static cl::opt<double> Field(Name, cl::desc(Help), cl::init(Default), cl::value_desc(Value),     \
                               cl::sub(compileCmd), cl::cat(dpcCategory));
#define DP_TEXT(Field, Name, Value, Default, Help)                                                 \
  static cl::opt<std::string> Field(Name, cl::desc(Help), cl::init(Default),                       \
                                    cl::value_desc(*Value ? Value : "string"),                     \
                                    cl::sub(compileCmd), cl::cat(dpcCategory));
#define DP_FLAG(Field, Name, Help)                                                                 \
  static cl::opt<bool> Field(Name, cl::desc(Help), cl::sub(compileCmd), cl::cat(dpcCategory));
#define DP_CHOICE(Field, Name, Help, ...)                                                          \
  static cl::opt<Choice> Field(Name, cl::desc(Help), choiceValues(dp::compile_choices::Field),     \
                               cl::init(Choice(0)), cl::sub(compileCmd), cl::cat(dpcCategory));
#include "passes/Pipelines/CompileOptions.def"
} // namespace compileFlags
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
    "allreduce", cl::desc("flat, hierarchical, tree or auto (as dprun --allreduce; default auto)"),
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
                           cl::sub(importCmd), cl::sub(exportCmd), cl::cat(dpcCategory));

namespace {

int failWith(const Twine &message, int code = 1) {
  llvm::errs() << "dpc: " << message << "\n";
  return code;
}

bool isOnnx() { return llvm::StringRef(inputFile).ends_with_insensitive(".onnx"); }

/// Prints a diagnostic about an imported ONNX model: the file, the node (from the op's
/// location), the message.
void printOnnxDiagnostic(Diagnostic &d) {
  std::string node;
  std::string file = inputFile;
  d.getLocation()->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l); name && node.empty())
      node = name.getName().str();
    if (auto at = dyn_cast<FileLineColLoc>(l))
      file = at.getFilename().str();
    return WalkResult::advance();
  });
  std::string message = d.str();
  llvm::errs() << file << ": "
               << (d.getSeverity() == DiagnosticSeverity::Error     ? "error: "
                   : d.getSeverity() == DiagnosticSeverity::Warning ? "warning: "
                                                                    : "note: ");
  if (!node.empty() && message.find("node '") == std::string::npos)
    llvm::errs() << "at node '" << node << "': ";
  llvm::errs() << message << "\n";
  for (Diagnostic &n : d.getNotes())
    printOnnxDiagnostic(n);
}

/// `file` read from the input and imported as the command line says, or null after printing
/// why; `origins` receives where each parameter came from. With `anyBatch` (export) any batch
/// does.
OwningOpRef<ModuleOp> importOnnx(MLIRContext &context, dp::onnx_import::OnnxFile &file,
                                 std::vector<dp::onnx_import::ParamOrigin> &origins,
                                 bool anyBatch) {
  if (std::string problem = dp::onnx_import::readOnnxFile(inputFile, file); !problem.empty()) {
    llvm::errs() << "dpc: " << problem << "\n";
    return nullptr;
  }
  dp::onnx_import::ImportOptions options;
  options.batch = onnxBatch;
  options.loss = onnxLoss;
  options.labelSmoothing = onnxLabelSmoothing;
  options.optimizer = onnxOptimizer;
  options.anyBatch = anyBatch;
  return dp::onnx_import::importModel(context, file, options, &origins);
}

/// The model of the input file, or null after printing why; an ONNX model's source for the
/// plan (dprun --export) into `source`.
OwningOpRef<ModuleOp> parseModel(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                 std::shared_ptr<const dp::rt::ExportSourceDesc> &source) {
  if (isOnnx()) {
    dp::onnx_import::OnnxFile file;
    std::vector<dp::onnx_import::ParamOrigin> origins;
    OwningOpRef<ModuleOp> module = importOnnx(context, file, origins, /*anyBatch=*/false);
    if (module)
      source = std::make_shared<const dp::rt::ExportSourceDesc>(
          dp::onnx_import::exportSource(file, origins));
    return module;
  }
  for (cl::Option *o :
       {static_cast<cl::Option *>(&onnxBatch), static_cast<cl::Option *>(&onnxLoss),
        static_cast<cl::Option *>(&onnxLabelSmoothing), static_cast<cl::Option *>(&onnxOptimizer)})
    if (o->getNumOccurrences()) {
      llvm::errs() << "dpc: --" << o->ArgStr
                   << " applies to ONNX models (.onnx): a .mlir model gives its batch, loss and "
                      "optimizer in its text\n";
      return nullptr;
    }
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

/// `dpc import --save-params FILE`: every parameter the model gives values (its initializers)
/// as a safetensors file of dp's parameters; 1 after saying why it could not.
int saveImportedParams(ModuleOp module) {
  std::vector<dp::rt::ParamsEntry> entries;
  std::set<std::string> seen;
  WalkResult walk = module.walk([&](dp::graph::ParamOp param) {
    auto values = dyn_cast<ElementsAttr>(param.getInit());
    if (!values || !seen.insert(param.getName().str()).second)
      return WalkResult::advance();
    FailureOr<std::vector<float>> floats = dp::graph::initialValues(param, values);
    if (failed(floats))
      return WalkResult::interrupt();
    auto type = cast<RankedTensorType>(param.getType());
    entries.push_back({param.getName().str(),
                       std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
                       std::move(*floats)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return 1;
  if (entries.empty())
    return failWith(inputFile + " gives no weights (no initializers) to save");
  const std::string image =
      dp::rt::safetensorsImage(entries, {{"source", llvm::sys::path::filename(inputFile).str()}});
  if (std::string error = dp::writeFileAtomically(importSaveParams, image); !error.empty())
    return failWith(error);
  if (!quiet)
    llvm::outs() << "wrote " << importSaveParams << ": " << entries.size()
                 << " parameters from the model's initializers\n";
  return 0;
}

/// `dpc import`: the imported model as text IR, each op located at its ONNX node.
int runImport(ModuleOp module) {
  if (!importSaveParams.empty())
    if (int status = saveImportedParams(module))
      return status;
  std::string out = outputFile;
  if (out.empty())
    out = llvm::sys::path::stem(inputFile).str() + ".mlir";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Imported from " << llvm::sys::path::filename(inputFile) << " by `dpc import`: the "
     << "forward graph, with the loss and optimizer\n// given (`dpc compile` takes it as it is, "
     << "or as edited). Weights: the params' dense<...> initialisers.\n";
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module.print(os, flags);
  // `-o -`: the text IR on standard output, to read or pipe.
  if (out == "-") {
    llvm::outs() << text;
    return 0;
  }
  if (std::string error = dp::writeFileAtomically(out, text); !error.empty())
    return failWith(error);
  if (!quiet)
    llvm::outs() << "wrote " << out << " (" << text.size() << " bytes)\n";
  return 0;
}

/// `dpc export`: the model with the trained weights, in ONNX's layouts.
int runExport(MLIRContext &context) {
  if (exportParams.empty())
    return failWith("dpc export needs the trained parameters (--params FILE, from dprun "
                    "--save-params)",
                    2);
  dp::onnx_import::OnnxFile file;
  std::vector<dp::onnx_import::ParamOrigin> origins;
  if (!importOnnx(context, file, origins, /*anyBatch=*/true))
    return 1;
  std::map<std::string, std::vector<float>> params;
  if (std::string problem = dp::onnx_import::readParamsFile(exportParams, params); !problem.empty())
    return failWith(problem);
  onnx::ModelProto model;
  if (std::string problem = dp::onnx_import::withTrainedWeights(file, origins, params, model);
      !problem.empty())
    return failWith(exportParams + ": " + problem);
  std::string out = outputFile;
  if (out.empty())
    out = llvm::sys::path::stem(inputFile).str() + "-trained.onnx";
  if (std::string problem = dp::onnx_import::writeOnnxFile(out, model); !problem.empty())
    return failWith(problem);
  if (!quiet) {
    uint64_t values = 0;
    for (const auto &o : origins) {
      uint64_t n = 1;
      for (int64_t d : o.layout.onnxDims)
        n *= uint64_t(d);
      values += n;
    }
    llvm::outs() << "wrote " << out << ": " << origins.size() << " initializers (" << values
                 << " values) from " << exportParams << "\n";
  }
  return 0;
}

int runCompile(ModuleOp module, std::shared_ptr<const dp::rt::ExportSourceDesc> source) {
  auto start = std::chrono::steady_clock::now();
  std::string model = "model";
  if (auto funcs = dp::graph::getModelFunctions(module); funcs.size() == 1)
    model = funcs.front().getSymName().str();

  dp::CompileOptions options;
#define DP_SET(Field, Name, Value)                                                                 \
  options.Field = Value;                                                                           \
  if (compileFlags::Field.getNumOccurrences())                                                     \
    options.given.insert(Name);
#define DP_INT(Field, Name, ...) DP_SET(Field, Name, compileFlags::Field.getValue())
#define DP_REAL(Field, Name, ...) DP_SET(Field, Name, compileFlags::Field.getValue())
#define DP_TEXT(Field, Name, ...) DP_SET(Field, Name, compileFlags::Field.getValue())
#define DP_FLAG(Field, Name, ...) DP_SET(Field, Name, compileFlags::Field.getValue())
#define DP_CHOICE(Field, Name, ...)                                                                \
  DP_SET(Field, Name, dp::compile_choices::Field[unsigned(compileFlags::Field.getValue())].name)
#include "passes/Pipelines/CompileOptions.def"
#undef DP_SET
  options.output = outputFile.empty() ? model + ".dpx" : outputFile.getValue();
  options.exportSource = std::move(source);
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
  cl::HideUnrelatedOptions({&dpcCategory, &onnxCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "dpc: the dp compiler\n\n"
      "  dpc summary model.mlir                 print the layer table and parameter counts\n"
      "  dpc compile model.mlir -o model.dpx    compile to a plan that dprun executes\n"
      "  dpc compile model.onnx --batch 128 --optimizer adam:lr=1e-3 -o m.dpx\n"
      "                                         the same from an ONNX model (PyTorch, Keras)\n"
      "  dpc import model.onnx -o model.mlir    the ONNX model as text IR, to read or edit\n"
      "  dpc export model.onnx --params p -o trained.onnx\n"
      "                                         the model with the weights dprun trained\n"
      "                                         (dprun m.dpx ... --save-params p)\n"
      "  dpc compile model.mlir -o m.dpx --devices-per-process 2 --processes 4\n"
      "                                         data parallel: 2 replicas in each of 4\n"
      "                                         processes (mpirun -n 4 / srun -n 4 dprun m.dpx)\n"
      "  dpc simulate m.dpx                     check the plan's collective schedule\n"
      "  dpc simulate m.dpx --profile p.json --topology t.json [--scale 8,64,512]\n"
      "                                         predict its step on a machine\n");
  if (!compileCmd && !summaryCmd && !importCmd && !exportCmd && !simulateCmd) {
    llvm::errs() << "dpc: missing command: use 'dpc compile', 'dpc summary', 'dpc import', "
                    "'dpc export' or 'dpc simulate' (see dpc --help)\n";
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
  std::optional<ScopedDiagnosticHandler> onnxDiagnostics;
  if (isOnnx())
    onnxDiagnostics.emplace(&context, [](Diagnostic &d) {
      printOnnxDiagnostic(d);
      return success();
    });
  else if (importCmd || exportCmd)
    return failWith(std::string("dpc ") + (importCmd ? "import" : "export") +
                        " takes an ONNX model (.onnx), not '" + inputFile + "'",
                    2);
  if (exportCmd)
    return runExport(context);
  std::shared_ptr<const dp::rt::ExportSourceDesc> source;
  OwningOpRef<ModuleOp> module = parseModel(context, sourceMgr, source);
  if (!module)
    return 1;
  if (importCmd)
    return runImport(*module);
  return summaryCmd ? runSummary(*module) : runCompile(*module, std::move(source));
}

int main(int argc, char **argv) {
  // MLIR's parser recurses once per sign or term of an expression: on a guarded stack, input
  // of any shape ends with a message, never a crash.
  static const std::string message = std::string("dpc: ") + dp::kParserStackMessage;
  return dp::runOnGuardedStack([&] { return dpcMain(argc, argv); }, message.c_str());
}
