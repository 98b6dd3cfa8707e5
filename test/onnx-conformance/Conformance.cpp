// ONNX's operator conformance tests (Debian's libonnx-testdata, data/node/*) through dp: each
// case whose model is one node of an op type the importer accepts is imported, compiled and
// run on the CPU, and its outputs compared with the expected ones.
//
// A case is a model (model.onnx) and data sets (test_data_set_N/input_K.pb, output_K.pb). dp
// feeds one samples input whose first axis is the batch, so the harness makes the model's
// first input the samples and every other input an initializer holding the case's values
// (the form in which exporters write weights and shape arguments). dp reads a model's result
// as the eval step's predictions, so each float output is compiled on its own, imported with
// ImportOptions::flattenOutput ([batch, features] in ONNX's order) and compared elementwise:
// |dp - expected| <= 1e-4 + 1e-3 |expected|.
//
// Each case passes, is refused by the importer (the reason is printed: an attribute dp does
// not take, an op along the batch axis, a second input with the batch, ...) or fails (the
// importer took it, and the compiler, the runtime or the numbers disagree: always an error).
// The statuses are compared with a committed list (--expected FILE), so that a case that
// passed cannot silently become refused; --update rewrites the list.
#include "dialect/Graph/IR/GraphDialect.h"
#include "importers/onnx/Import.h"
#include "passes/Pipelines/Pipelines.h"
#include "test/onnx-conformance/RunPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace mlir;
namespace oi = dp::onnx_import;

namespace {

/// A case's status, from best to worst: dp computed every output right (passed); the importer
/// folded some on the host, as it folds shape arithmetic, and the rest passed (folded); the
/// importer refused an output; dp's result differs or a later stage failed (failed).
enum class Status { Passed, Folded, Refused, Failed };
const char *statusName(Status s) {
  const char *names[] = {"passed", "folded", "refused", "failed"};
  return names[int(s)];
}

struct Outcome {
  Status status = Status::Passed;
  std::string why;
};

bool readBytes(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return bool(in) || in.eof();
}

/// A numeric tensor's values (float, double, the integer types, bool), or an empty optional
/// for another type or data that does not match the shape.
std::optional<std::vector<double>> numbers(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  if (n < 0)
    return std::nullopt;
  std::vector<double> v;
  v.reserve(size_t(n));
  auto raw = [&](auto zero) -> bool {
    using T = decltype(zero);
    if (t.raw_data().size() != size_t(n) * sizeof(T))
      return false;
    for (int64_t k = 0; k < n; ++k) {
      T x;
      std::memcpy(&x, t.raw_data().data() + k * sizeof(T), sizeof(T));
      v.push_back(double(x));
    }
    return true;
  };
  auto typed = [&](const auto &field) -> bool {
    if (field.size() != n)
      return false;
    for (auto x : field)
      v.push_back(double(x));
    return true;
  };
  using TP = onnx::TensorProto;
  const bool hasRaw = t.has_raw_data();
  bool ok = false;
  switch (t.data_type()) {
  case TP::FLOAT:
    ok = hasRaw ? raw(float()) : typed(t.float_data());
    break;
  case TP::DOUBLE:
    ok = hasRaw ? raw(double()) : typed(t.double_data());
    break;
  case TP::INT64:
    ok = hasRaw ? raw(int64_t()) : typed(t.int64_data());
    break;
  case TP::UINT64:
    ok = hasRaw ? raw(uint64_t()) : typed(t.uint64_data());
    break;
  case TP::INT32:
    ok = hasRaw ? raw(int32_t()) : typed(t.int32_data());
    break;
  case TP::UINT32:
    ok = hasRaw ? raw(uint32_t()) : typed(t.uint64_data());
    break;
  case TP::INT16:
    ok = hasRaw ? raw(int16_t()) : typed(t.int32_data());
    break;
  case TP::UINT16:
    ok = hasRaw ? raw(uint16_t()) : typed(t.int32_data());
    break;
  case TP::INT8:
    ok = hasRaw ? raw(int8_t()) : typed(t.int32_data());
    break;
  case TP::UINT8:
  case TP::BOOL:
    ok = hasRaw ? raw(uint8_t()) : typed(t.int32_data());
    break;
  default:
    return std::nullopt;
  }
  if (!ok)
    return std::nullopt;
  return v;
}

/// A FLOAT tensor's values, or an empty optional for another type.
std::optional<std::vector<float>> floats(const onnx::TensorProto &t) {
  if (t.data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  std::optional<std::vector<double>> v = numbers(t);
  if (!v)
    return std::nullopt;
  return std::vector<float>(v->begin(), v->end());
}

/// Whether dp's `got` is ONNX's `want`: |got - want| <= 1e-4 + 1e-3 |want|, NaN for NaN, the
/// same infinity; else the first difference.
std::string compare(const std::vector<double> &got, const std::vector<double> &want, int k) {
  if (got.size() != want.size())
    return "dp computed " + std::to_string(got.size()) + " values of output " + std::to_string(k) +
           ", the case expects " + std::to_string(want.size());
  for (size_t e = 0; e < got.size(); ++e) {
    const double a = got[e], b = want[e];
    const bool same = std::isnan(b)   ? std::isnan(a)
                      : std::isinf(b) ? a == b
                                      : std::abs(a - b) <= 1e-4 + 1e-3 * std::abs(b);
    if (!same) {
      std::ostringstream s;
      s << "output " << k << " element " << e << ": dp " << a << ", expected " << b;
      return s.str();
    }
  }
  return "";
}

/// `x` of ONNX shape `shape` with its axes in `layout` (axis j of the result is axis
/// layout[j] of x).
std::vector<float> permuted(const std::vector<float> &x, const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &layout) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1), outShape(rank);
  for (size_t k = rank; k-- > 1;)
    strides[k - 1] = strides[k] * shape[k];
  for (size_t j = 0; j < rank; ++j)
    outShape[j] = shape[layout[j]];
  std::vector<float> y(x.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t out = 0; out < y.size(); ++out) {
    int64_t from = 0;
    for (size_t j = 0; j < rank; ++j)
      from += index[j] * strides[layout[j]];
    y[out] = x[size_t(from)];
    for (size_t j = rank; j-- > 0;) {
      if (++index[j] < outShape[j])
        break;
      index[j] = 0;
    }
  }
  return y;
}

struct Case {
  std::string name, dir, opType;
  oi::OnnxFile file;
};

/// The case's model with its first input kept as the samples (all inputs initializers when
/// `fold`), the other inputs initializers holding the data set's values, and output `k` alone.
oi::OnnxFile prepared(const Case &c, const std::vector<onnx::TensorProto> &inputs, int k,
                      bool fold) {
  oi::OnnxFile file = c.file;
  onnx::GraphProto &g = *file.model.mutable_graph();
  std::vector<onnx::ValueInfoProto> keep;
  for (int i = 0; i < g.input_size(); ++i) {
    if (i == 0 && !fold) {
      keep.push_back(g.input(i));
      continue;
    }
    onnx::TensorProto *t = g.add_initializer();
    *t = inputs[size_t(i)];
    t->set_name(g.input(i).name());
  }
  g.clear_input();
  for (auto &v : keep)
    *g.add_input() = v;
  onnx::ValueInfoProto out = g.output(k);
  g.clear_output();
  *g.add_output() = out;
  return file;
}

/// A context with dp's dialects.
std::unique_ptr<MLIRContext> newContext() {
  DialectRegistry registry;
  dp::registerDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  context->printOpOnDiagnostic(false);
  return context;
}

/// Output `k` of a data set folded by the importer (every input a constant).
Outcome foldOutput(const Case &c, const std::vector<onnx::TensorProto> &inputs,
                   const onnx::TensorProto &expected, int k) {
  oi::OnnxFile file = prepared(c, inputs, k, true);
  std::unique_ptr<MLIRContext> context = newContext();
  std::vector<double> got;
  std::vector<int64_t> dims;
  bool isFloat = false;
  if (std::string e = oi::foldedOutput(*context, file, got, dims, isFloat); !e.empty())
    return {Status::Refused, e};
  using TP = onnx::TensorProto;
  const int32_t type = expected.data_type();
  const bool wantFloat =
      type == TP::FLOAT || type == TP::DOUBLE || type == TP::FLOAT16 || type == TP::BFLOAT16;
  if (isFloat != wantFloat)
    return {Status::Failed, "the importer folded output " + std::to_string(k) + " to " +
                                (isFloat ? "floats" : "integers") +
                                ", the case expects data type " + std::to_string(type)};
  std::optional<std::vector<double>> want = numbers(expected);
  if (!want)
    return {Status::Failed, "the importer folded output " + std::to_string(k) +
                                ", whose expected data type " +
                                std::to_string(expected.data_type()) + " the harness cannot read"};
  if (!std::equal(dims.begin(), dims.end(), expected.dims().begin(), expected.dims().end()))
    return {Status::Failed, "the importer folded output " + std::to_string(k) +
                                " to another shape than the case's"};
  if (std::string d = compare(got, *want, k); !d.empty())
    return {Status::Failed, "folded " + d};
  return {Status::Folded, ""};
}

/// Output `k` of a data set computed by dp: imported, compiled, run.
Outcome runOutput(const Case &c, const std::vector<onnx::TensorProto> &inputs,
                  const onnx::TensorProto &expected, int k, const std::string &planPath) {
  oi::OnnxFile file = prepared(c, inputs, k, false);
  std::vector<int64_t> sampleShape;
  if (!inputs.empty())
    sampleShape.assign(inputs[0].dims().begin(), inputs[0].dims().end());

  std::unique_ptr<MLIRContext> owned = newContext();
  MLIRContext &context = *owned;
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = d.str();
    return success();
  });
  oi::ImportOptions options;
  options.batch = sampleShape.empty() ? 0 : sampleShape[0];
  options.flattenOutput = true;
  std::vector<std::vector<int64_t>> layouts;
  OwningOpRef<ModuleOp> module = oi::importModel(context, file, options, nullptr, &layouts);
  if (!module)
    return {Status::Refused, firstError};
  std::optional<std::vector<double>> want = numbers(expected);
  if (!want || (expected.data_type() != onnx::TensorProto::FLOAT &&
                expected.data_type() != onnx::TensorProto::DOUBLE))
    return {Status::Failed,
            "the importer took output " + std::to_string(k) + ", which is not a float tensor"};
  const std::optional<std::vector<float>> samples =
      inputs.empty() ? std::nullopt : floats(inputs[0]);
  if (!samples)
    return {Status::Failed, "the importer took a samples input that is not float"};

  // dp compiles models it can train: the loss takes the output plus a trainable bias of
  // zeros (adding 0 changes no value), the one parameter of a case whose op has none.
  module->walk([&](dp::graph::SoftmaxCrossEntropyOp loss) {
    OpBuilder b(loss);
    Value logits = loss->getOperand(0);
    auto rowType = RankedTensorType::get(
        {llvm::cast<RankedTensorType>(logits.getType()).getShape()[1]}, b.getF32Type());
    Value zero = b.create<dp::graph::ParamOp>(loss.getLoc(), rowType, "conformance.zero",
                                              DenseElementsAttr::get(rowType, 0.0f), true);
    loss->setOperand(0,
                     b.create<dp::graph::BiasAddOp>(loss.getLoc(), logits.getType(), logits, zero));
  });
  dp::CompileOptions compile;
  compile.output = planPath;
  if (std::string e = compile.verify(); !e.empty())
    return {Status::Failed, "compile options: " + e};
  PassManager pm(&context);
  dp::buildCompilePipeline(pm, compile);
  if (failed(pm.run(*module)))
    return {Status::Failed, "dpc compile: " + firstError};

  if (layouts.size() != 1 || layouts[0].size() != sampleShape.size())
    return {Status::Failed, "the importer gave no layout of the samples' rank"};
  const std::vector<float> fed = permuted(*samples, sampleShape, layouts[0]);
  std::vector<float> got;
  if (std::string e = dp::conformance::runEval(planPath, fed, got); !e.empty())
    return {Status::Failed, "dprun: " + e};
  if (std::string d = compare(std::vector<double>(got.begin(), got.end()), *want, k); !d.empty())
    return {Status::Failed, d};
  return {Status::Passed, ""};
}

Outcome runCase(const Case &c, const std::string &planPath) {
  std::error_code ec;
  std::vector<std::string> sets;
  for (llvm::sys::fs::directory_iterator it(c.dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(llvm::sys::path::filename(it->path())).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    return {Status::Failed, "no test_data_set_* folder"};
  const onnx::GraphProto &g = c.file.model.graph();
  Outcome worst{Status::Passed, ""};
  for (const std::string &set : sets) {
    auto tensor = [&](const std::string &kind, int k, onnx::TensorProto &t) {
      std::string bytes;
      return readBytes(set + "/" + kind + "_" + std::to_string(k) + ".pb", bytes) &&
             t.ParseFromString(bytes);
    };
    std::vector<onnx::TensorProto> inputs(size_t(g.input_size()));
    for (int k = 0; k < g.input_size(); ++k)
      if (!tensor("input", k, inputs[size_t(k)]))
        return {Status::Failed, set + ": input_" + std::to_string(k) + ".pb is unreadable"};
    for (int k = 0; k < g.output_size(); ++k) {
      onnx::TensorProto expected;
      if (!tensor("output", k, expected))
        return {Status::Failed, set + ": output_" + std::to_string(k) + ".pb is unreadable"};
      Outcome o = runOutput(c, inputs, expected, k, planPath);
      if (o.status == Status::Refused) {
        // What dp refuses to compute, the importer may fold on constants (shape arithmetic).
        Outcome folded = foldOutput(c, inputs, expected, k);
        if (folded.status != Status::Refused)
          o = folded;
      }
      if (int(o.status) > int(worst.status))
        worst = o;
    }
  }
  return worst;
}

/// The reason without the model file's location (every case's file is model.onnx).
std::string shortReason(std::string why) {
  for (const char *cut : {"model.onnx:0:0: ", "model.onnx:0:0:"})
    if (size_t at = why.find(cut); at != std::string::npos)
      why.erase(at, std::strlen(cut));
  std::replace(why.begin(), why.end(), '\n', ' ');
  return why;
}

int usage() {
  llvm::errs() << "usage: dp_onnx_conformance NODE_DIR --expected FILE [--update] "
                  "[--filter SUBSTRING] [--verbose]\n"
                  "Runs ONNX's operator conformance cases (NODE_DIR: libonnx-testdata's "
                  "data/node) of the op types dp imports and compares each case's status with "
                  "FILE (--update writes FILE instead).\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::string nodeDir, expectedPath, filter;
  bool update = false, verbose = false;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--expected" && a + 1 < argc)
      expectedPath = argv[++a];
    else if (arg == "--filter" && a + 1 < argc)
      filter = argv[++a];
    else if (arg == "--update")
      update = true;
    else if (arg == "--verbose")
      verbose = true;
    else if (arg == "--help" || arg == "-h")
      return usage(), 0;
    else if (nodeDir.empty() && !arg.empty() && arg[0] != '-')
      nodeDir = arg;
    else
      return usage();
  }
  if (nodeDir.empty() || expectedPath.empty())
    return usage();

  llvm::StringMap<bool> accepted;
  for (const oi::OpSupport &op : oi::supportedOps())
    accepted[op.opType] = true;

  std::vector<std::string> dirs;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(nodeDir, ec), end; it != end && !ec; it.increment(ec))
    dirs.push_back(it->path());
  if (ec || dirs.empty()) {
    llvm::errs() << "dp_onnx_conformance: cannot list '" << nodeDir << "'"
                 << (ec ? ": " + ec.message() : std::string(": empty")) << "\n";
    return 1;
  }
  std::sort(dirs.begin(), dirs.end());

  llvm::SmallString<128> tmp;
  if (llvm::sys::fs::createUniqueDirectory("dp-conformance", tmp)) {
    llvm::errs() << "dp_onnx_conformance: cannot make a temporary folder\n";
    return 1;
  }
  const std::string planPath = (tmp + "/case.dpx").str();

  struct Counts {
    int cases = 0, passed = 0, folded = 0, refused = 0, failed = 0;
  };
  std::map<std::string, Counts> byOp;
  std::map<std::string, std::string> statuses; // case -> status
  std::vector<std::string> refusedLines, failedLines;
  for (const std::string &dir : dirs) {
    Case c;
    c.name = llvm::sys::path::filename(dir).str();
    c.dir = dir;
    if (!filter.empty() && c.name.find(filter) == std::string::npos)
      continue;
    if (!oi::readOnnxFile(dir + "/model.onnx", c.file).empty())
      continue; // not a model the library reads: no op type to count it under
    const onnx::GraphProto &g = c.file.model.graph();
    if (g.node_size() != 1 || !accepted.count(g.node(0).op_type()) ||
        !(g.node(0).domain().empty() || g.node(0).domain() == "ai.onnx"))
      continue; // of an op type dp does not import, or several nodes (a function expanded)
    c.opType = g.node(0).op_type();
    Outcome o = runCase(c, planPath);
    Counts &n = byOp[c.opType];
    ++n.cases;
    int *counts[] = {&n.passed, &n.folded, &n.refused, &n.failed};
    ++*counts[int(o.status)];
    statuses[c.name] = statusName(o.status);
    if (o.status == Status::Refused)
      refusedLines.push_back(c.name + ": " + shortReason(o.why));
    if (o.status == Status::Failed)
      failedLines.push_back(c.name + ": " + shortReason(o.why));
    if (verbose)
      llvm::outs() << c.name << " " << statusName(o.status)
                   << (o.why.empty() ? "" : ": " + shortReason(o.why)) << "\n";
  }
  llvm::sys::fs::remove_directories(tmp);

  Counts total;
  auto row = [](const std::string &what, const std::string &a, const std::string &b,
                const std::string &c, const std::string &d, const std::string &e) {
    llvm::outs() << llvm::left_justify(what, 20) << llvm::right_justify(a, 7)
                 << llvm::right_justify(b, 8) << llvm::right_justify(c, 8)
                 << llvm::right_justify(d, 9) << llvm::right_justify(e, 8) << "\n";
  };
  auto counts = [&](const std::string &what, const Counts &n) {
    row(what, std::to_string(n.cases), std::to_string(n.passed), std::to_string(n.folded),
        std::to_string(n.refused), std::to_string(n.failed));
  };
  row("op type", "cases", "passed", "folded", "refused", "failed");
  for (auto &[op, n] : byOp) {
    counts(op, n);
    total.cases += n.cases;
    total.passed += n.passed;
    total.folded += n.folded;
    total.refused += n.refused;
    total.failed += n.failed;
  }
  counts("all", total);
  if (!refusedLines.empty()) {
    llvm::outs() << "\nrefused by the importer:\n";
    for (const std::string &l : refusedLines)
      llvm::outs() << "  " << l << "\n";
  }
  if (!failedLines.empty()) {
    llvm::outs() << "\nFAILED (the importer took the case, the result is wrong):\n";
    for (const std::string &l : failedLines)
      llvm::outs() << "  " << l << "\n";
  }

  if (update) {
    std::string text = "# dp_onnx_conformance --update: each case of an op type dp imports, and "
                       "its status\n";
    for (auto &[name, status] : statuses)
      text += name + " " + status + "\n";
    std::ofstream f(expectedPath, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) {
      llvm::errs() << "dp_onnx_conformance: cannot write '" << expectedPath << "'\n";
      return 1;
    }
    llvm::outs() << "\nwrote " << expectedPath << "\n";
    return total.failed ? 1 : 0;
  }

  // Compare with the committed statuses.
  std::string text;
  if (!readBytes(expectedPath, text)) {
    llvm::errs() << "dp_onnx_conformance: cannot read '" << expectedPath << "'\n";
    return 1;
  }
  std::map<std::string, std::string> expected;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    std::string name, status;
    words >> name >> status;
    if (filter.empty() || name.find(filter) != std::string::npos)
      expected[name] = status;
  }
  int differ = 0;
  for (auto &[name, status] : statuses) {
    auto found = expected.find(name);
    if (found == expected.end() || found->second != status) {
      llvm::outs() << (differ++ ? "" : "\nstatuses that differ from " + expectedPath + ":\n")
                   << "  " << name << ": " << status << ", expected "
                   << (found == expected.end() ? "no such case" : found->second) << "\n";
    }
  }
  for (auto &[name, status] : expected)
    if (!statuses.count(name))
      llvm::outs() << (differ++ ? "" : "\nstatuses that differ from " + expectedPath + ":\n")
                   << "  " << name << ": not run, expected " << status << "\n";
  if (differ)
    llvm::outs() << "(a case that now passes: rerun with --update and commit the list)\n";
  return total.failed || differ ? 1 : 0;
}
