// --save-params FILE: the trained weights and batch-norm statistics as safetensors, written by
// the printing process at the end; see Callbacks.h and Run.h (dumpParams); and --params FILE,
// read back (loadParams), checked by name, shape and count.
#include "runtime/train/callbacks/Callbacks.h"

#include "runtime/base/Files.h"
#include "runtime/base/ParamsFile.h"

#include <map>
#include <ostream>
#include <set>

namespace dp::rt {

std::vector<ParamsEntry> readParams(Program &program, bool weightsOnly) {
  std::vector<ParamsEntry> out;
  for (size_t i : program.plan().logicalParams()) {
    const ParamDesc &p = program.plan().params[i];
    const BufferDesc &b = program.buffer(p.buffer);
    if ((weightsOnly && p.kind != ParamKind::Weight) || !program.plan().holds(p))
      continue;
    ParamsEntry &e = out.emplace_back();
    e.name = p.name;
    e.shape = b.shape;
    e.values.resize(static_cast<size_t>(b.numel));
    program.read(p.buffer, e.values.data());
  }
  return out;
}

void dumpParams(Program &program, const std::string &path) {
  const std::map<std::string, std::string> metadata = {{"producer", "dp"},
                                                       {"model", program.plan().model}};
  writeFileAtomically(path, safetensorsImage(readParams(program, /*weightsOnly=*/true), metadata));
}

void loadParams(Program &program, const std::string &path) {
  std::vector<ParamsEntry> entries;
  if (std::string problem = readParamsFile(path, entries); !problem.empty())
    throw Error(ErrorKind::Data, problem);
  setWeights(program, entries, path);
}

void setWeights(Program &program, const std::vector<ParamsEntry> &entries,
                const std::string &path) {
  std::map<std::string, const ParamsEntry *> byName;
  for (const ParamsEntry &e : entries)
    byName[e.name] = &e;
  const Plan &plan = program.plan();
  // Every mismatch is named before anything is written: the weights are the file's, or the
  // plan's as they were.
  std::vector<std::string> problems;
  std::set<std::string> known;
  std::vector<std::pair<uint32_t, const ParamsEntry *>> writes;
  for (const ParamDesc &p : plan.params) {
    known.insert(p.name);
    if (p.kind != ParamKind::Weight)
      continue; // optimizer state starts afresh
    const BufferDesc &b = program.buffer(p.buffer);
    if (b.dtype != DType::F32)
      throw Error(ErrorKind::Plan, "parameter '" + p.name + "' is " + b.text() +
                                       "; parameters files hold f32 values");
    auto found = byName.find(p.name);
    const bool first = b.device == 0; // each logical weight named once
    if (found == byName.end()) {
      if (first)
        problems.push_back("no tensor '" + p.name + "' (the plan's " + b.text() + ")");
      continue;
    }
    const ParamsEntry &e = *found->second;
    // A raw file records no shape: its count must be the plan's.
    if (!e.shape.empty() && e.shape != b.shape) {
      BufferDesc theirs = b;
      theirs.shape = e.shape;
      if (first)
        problems.push_back("'" + p.name + "' is " + theirs.text() + ", the plan's " + b.text());
      continue;
    }
    if (int64_t(e.values.size()) != b.numel) {
      if (first)
        problems.push_back("'" + p.name + "' has " + std::to_string(e.values.size()) +
                           " values, the plan's " + b.text());
      continue;
    }
    writes.push_back({p.buffer, &e});
  }
  for (const ParamsEntry &e : entries)
    // Optimizer state of a weight ("<weight>/<slot>": from a run with another optimizer) is
    // not needed; any other name is another model's.
    if (!known.count(e.name) && !known.count(e.name.substr(0, e.name.rfind('/'))))
      problems.push_back("'" + e.name + "' is not a parameter of the plan");
  if (!problems.empty()) {
    std::string text = path + ": does not fit the plan " + plan.model + " (" +
                       std::to_string(problems.size()) + " problem" +
                       (problems.size() == 1 ? "" : "s") + "; saved from another model?):";
    for (size_t i = 0; i < problems.size() && i < 20; ++i)
      text += "\n  " + problems[i];
    if (problems.size() > 20)
      text += "\n  and " + std::to_string(problems.size() - 20) + " more";
    throw Error(ErrorKind::Data, text);
  }
  if (writes.empty())
    throw Error(ErrorKind::Data, path + ": the plan has no parameters to load");
  for (const auto &[buffer, e] : writes)
    program.write(buffer, e->values.data());
}

namespace {

/// --save-params FILE: the trained parameters (dumpParams), written by the printing process.
class SaveParams final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (s_.printer)
      dumpParams(s_.job.program(), s_.options.paramsPath);
  }
};

/// --export FILE: the plan's source model with the trained weights (and statistics), written
/// by the printing process through TrainOptions::exportModel.
class ExportModel final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (!s_.printer)
      return;
    Program &program = s_.job.program();
    std::map<std::string, std::vector<float>> weights;
    for (ParamsEntry &e : readParams(program, /*weightsOnly=*/true))
      weights[e.name] = std::move(e.values);
    const std::string &path = s_.options.exportPath;
    if (std::string problem = s_.options.exportModel(*program.plan().exportSource, weights, path);
        !problem.empty())
      throw Error(ErrorKind::Runtime, "--export " + path + ": " + problem);
    if (!s_.options.quiet)
      s_.out << "wrote " << path << ": the model with the trained weights ("
             << program.plan().exportSource->params.size() << " initializers)\n"
             << std::flush;
  }
};

} // namespace

std::unique_ptr<Callback> makeSaveParams(RunState &state) {
  return std::make_unique<SaveParams>(state);
}

std::unique_ptr<Callback> makeExportModel(RunState &state) {
  return std::make_unique<ExportModel>(state);
}

} // namespace dp::rt
