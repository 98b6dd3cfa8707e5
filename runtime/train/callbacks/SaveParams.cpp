// --save-params FILE: the trained parameters, written by the printing process at the end; see
// Callbacks.h and Run.h (dumpParams); and --params FILE, read back (loadParams).
#include "runtime/train/callbacks/Callbacks.h"

#include "runtime/base/Files.h"
#include "runtime/base/ParamsFile.h"

#include <map>
#include <ostream>
#include <set>

namespace dp::rt {

std::vector<ParamsEntry> readParams(Program &program, bool weightsOnly) {
  std::vector<ParamsEntry> out;
  for (const ParamDesc &p : program.plan().params) {
    const BufferDesc &b = program.buffer(p.buffer);
    if (b.device != 0 || (weightsOnly && p.kind != ParamKind::Weight))
      continue;
    ParamsEntry &e = out.emplace_back();
    e.name = p.name;
    e.values.resize(static_cast<size_t>(b.numel));
    program.read(p.buffer, e.values.data());
  }
  return out;
}

void dumpParams(Program &program, const std::string &path) {
  std::string image;
  for (const ParamsEntry &e : readParams(program, /*weightsOnly=*/false))
    appendParamsEntry(image, e.name, e.values.data(), e.values.size());
  writeFileAtomically(path, image);
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
  std::set<std::string> known;
  int64_t loaded = 0;
  for (const ParamDesc &p : plan.params) {
    known.insert(p.name);
    if (p.kind != ParamKind::Weight)
      continue; // optimizer state starts afresh
    const BufferDesc &b = program.buffer(p.buffer);
    auto found = byName.find(p.name);
    if (found == byName.end())
      throw Error(ErrorKind::Data, path + ": holds no parameter '" + p.name + "' of the plan " +
                                       "(saved from another model?)");
    if (b.dtype != DType::F32)
      throw Error(ErrorKind::Plan, "parameter '" + p.name + "' is " + b.text() +
                                       "; parameters files hold f32 values");
    if (int64_t(found->second->values.size()) != b.numel)
      throw Error(ErrorKind::Data, path + ": '" + p.name + "' has " +
                                       std::to_string(found->second->values.size()) +
                                       " values, the plan's parameter " + b.text());
    program.write(p.buffer, found->second->values.data());
    loaded += b.device == 0;
  }
  for (const ParamsEntry &e : entries)
    // Optimizer state of a weight ("<weight>/<slot>": from a run with another optimizer) is
    // not needed; any other name is another model's.
    if (!known.count(e.name) && !known.count(e.name.substr(0, e.name.rfind('/'))))
      throw Error(ErrorKind::Data, path + ": parameter '" + e.name + "' is not the plan's " +
                                       "(saved from another model?)");
  if (loaded == 0)
    throw Error(ErrorKind::Data, path + ": the plan has no parameters to load");
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
