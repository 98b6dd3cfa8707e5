// dist-place-parameters: which server holds each trainable parameter, balanced by bytes.
#include "dialect/Common/TensorBytes.h"
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "dist-place-parameters"

namespace dp::dist {
#define GEN_PASS_DEF_PLACEPARAMETERSPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

std::vector<int64_t> dp::dist::placeByBytes(ArrayRef<int64_t> bytes, int64_t servers) {
  // Largest first, each onto the server holding the fewest bytes so far (the lowest index on
  // a tie): a greedy bound within 4/3 of the best balance, and the same on every run.
  SmallVector<size_t> order(bytes.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<int64_t> load(servers, 0), placement(bytes.size(), 0);
  for (size_t i : order) {
    int64_t s = std::min_element(load.begin(), load.end()) - load.begin();
    placement[i] = s;
    load[s] += bytes[i];
  }
  return placement;
}

namespace {

struct PlaceParametersPass : dist::impl::PlaceParametersPassBase<PlaceParametersPass> {
  using PlaceParametersPassBase::PlaceParametersPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp train = g::requireStepFunction(module, "train");
    if (!train)
      return signalPassFailure();
    dist::MeshAttr mesh = dist::getMesh(train);
    if (!mesh) {
      train.emitError("the train step has no mesh (run dist-replicate first)");
      return signalPassFailure();
    }
    if (mesh.getDevicesPerProcess() != 1) {
      train.emitError() << "parameter servers take one device per worker process, but the "
                           "mesh has "
                        << mesh.getDevicesPerProcess() << " per process";
      return signalPassFailure();
    }
    if (mesh.getNodes() != 1) {
      train.emitError("parameter servers are compiled for one node layout only (nodes = 1)");
      return signalPassFailure();
    }
    auto strategy = dist::ParameterServerAttr::getChecked(
        [&] { return train.emitError(); }, train.getContext(), int64_t(servers), mesh.getProcesses(),
        sync ? int64_t(0) : int64_t(staleness), bool(sync));
    if (!strategy)
      return signalPassFailure();
    train->setAttr(dist::DistDialect::kParameterServerAttr, strategy);

    // The trainable parameters, in the order their gradients are ready (the updates' order).
    SmallVector<StringRef> names;
    SmallVector<int64_t> bytes;
    for (auto update : train.getOps<ParameterUpdateOpInterface>()) {
      auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
      if (!param) {
        update->emitOpError("expects its parameter from a graph.param");
        return signalPassFailure();
      }
      if (llvm::is_contained(names, param.getName())) {
        update->emitOpError() << "is the second update of '" << param.getName() << "'";
        return signalPassFailure();
      }
      names.push_back(param.getName());
      bytes.push_back(tensorBytes(param.getType()));
    }
    if (names.empty()) {
      train.emitError("the train step updates no parameter: nothing for a server to hold");
      return signalPassFailure();
    }
    if (static_cast<int64_t>(names.size()) < servers) {
      train.emitError() << "the model has " << names.size()
                        << " trainable parameter(s), fewer than the " << int64_t(servers)
                        << " servers: a server would hold nothing";
      return signalPassFailure();
    }
    std::vector<int64_t> placement = dist::placeByBytes(bytes, servers);
    Builder b(module.getContext());
    llvm::StringMap<int64_t> serverOf;
    for (size_t i = 0; i < names.size(); ++i)
      serverOf[names[i]] = placement[i];
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](g::ParamOp param) {
        auto it = serverOf.find(param.getName());
        if (it != serverOf.end())
          param->setAttr(dist::DistDialect::kServerAttr, b.getI64IntegerAttr(it->second));
      });
  }
};

} // namespace
