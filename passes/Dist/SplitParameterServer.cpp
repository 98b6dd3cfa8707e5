// dist-split-parameter-server: the train step becomes a worker's step (push gradients, pull
// parameters) and one function per server (receive, update, reply); see Passes.td.
#include "dialect/Common/TensorBytes.h"
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/GraphDialect.h"
#include "dialect/Graph/IR/Model.h"
#include "dialect/Interfaces/ParameterUpdateOpInterface.h"
#include "passes/Dist/Bucketing.h"
#include "passes/Dist/Passes.h"
#include "passes/Pipelines/CompileOptions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "dist-split-parameter-server"

namespace dp::dist {
#define GEN_PASS_DEF_SPLITPARAMETERSERVERPASS
#include "passes/Dist/Passes.h.inc"
} // namespace dp::dist

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

/// A bucket: the updates of some parameters of one server, whose gradients travel together.
struct Bucket {
  int64_t server = 0;
  SmallVector<ParameterUpdateOpInterface> updates;
  Operation *ready = nullptr; // the definition of its last gradient
};

struct SplitParameterServerPass
    : dist::impl::SplitParameterServerPassBase<SplitParameterServerPass> {
  using SplitParameterServerPassBase::SplitParameterServerPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp train = g::requireStepFunction(module, "train");
    if (!train)
      return signalPassFailure();
    dist::ParameterServerAttr strategy = dist::getParameterServer(train);
    if (!strategy) {
      train.emitError("the train step has no parameter-server strategy (run "
                      "dist-place-parameters first)");
      return signalPassFailure();
    }
    if (std::string problem = CompileOptions::check("bucket-mb", double(bucketMb));
        !problem.empty()) {
      module.emitError() << "dist-split-parameter-server: " << problem;
      return signalPassFailure();
    }
    const int64_t cap = static_cast<int64_t>(bucketMb * 1024 * 1024);
    Block &body = train.getBody().front();

    // Buckets per server, filled in the order the gradients are ready.
    SmallVector<Bucket> buckets;
    dist::BucketPacker packer(cap);
    for (auto update : llvm::to_vector(train.getOps<ParameterUpdateOpInterface>())) {
      auto param = update.getUpdatedParameter().getDefiningOp<g::ParamOp>();
      int64_t server = param ? dist::getServer(param) : -1;
      if (server < 0 || server >= strategy.getServers()) {
        update->emitOpError() << "updates a parameter that no server holds (run "
                                 "dist-place-parameters first)";
        return signalPassFailure();
      }
      for (OpOperand &operand : update->getOpOperands())
        if (&operand != &update.getGradientOperand() &&
            !operand.get().getDefiningOp<g::ParamOp>()) {
          update->emitOpError() << "reads operand #" << operand.getOperandNumber()
                                << ", computed in the step: only parameters and the gradient "
                                   "can move to a server";
          return signalPassFailure();
        }
      const int64_t index = packer.add(tensorBytes(param.getType()), server);
      if (index == static_cast<int64_t>(buckets.size()))
        buckets.push_back({server, {}, nullptr});
      Bucket &bucket = buckets[index];
      bucket.updates.push_back(update);
      Operation *def = update.getGradientOperand().get().getDefiningOp();
      if (def && def->getBlock() == &body &&
          (!bucket.ready || bucket.ready->isBeforeInBlock(def)))
        bucket.ready = def;
    }
    // Indices in the order the buckets leave: the order of their pushes in the step.
    llvm::stable_sort(buckets, [](const Bucket &a, const Bucket &b) {
      if (!a.ready || !b.ready)
        return !a.ready && b.ready;
      return a.ready->isBeforeInBlock(b.ready);
    });

    OpBuilder b(module.getContext());
    // One function per server, after the steps.
    SmallVector<func::FuncOp> servers;
    SmallVector<IRMapping> mappings(strategy.getServers());
    SymbolTable symbols(module);
    for (int64_t s = 0; s < strategy.getServers(); ++s) {
      b.setInsertionPointToEnd(module.getBody());
      auto func = b.create<func::FuncOp>(train.getLoc(), "server" + std::to_string(s),
                                         b.getFunctionType({}, {}));
      func.setPrivate();
      symbols.insert(func);
      func->setAttr(dist::DistDialect::kServerAttr, b.getI64IntegerAttr(s));
      func->setAttr(dist::DistDialect::kParameterServerAttr, strategy);
      if (Attribute model = train->getAttr(g::kModelAttr))
        func->setAttr(g::kModelAttr, model);
      if (Attribute schedule = train->getAttr(g::kLrScheduleAttr))
        func->setAttr(g::kLrScheduleAttr, schedule);
      Block *block = func.addEntryBlock();
      b.setInsertionPointToEnd(block);
      b.create<func::ReturnOp>(train.getLoc());
      servers.push_back(func);
    }

    Operation *ret = body.getTerminator();
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      SmallVector<Value> grads, params;
      SmallVector<Attribute> names;
      SmallVector<Location> locs;
      for (auto update : bucket.updates) {
        grads.push_back(update.getGradientOperand().get());
        params.push_back(update.getUpdatedParameter());
        names.push_back(update.getUpdatedParameter().getDefiningOp<g::ParamOp>().getNameAttr());
        locs.push_back(update->getLoc());
      }
      Location loc = b.getFusedLoc(locs);
      auto bucketAttr = b.getI64IntegerAttr(index);
      auto serverAttr = b.getI64IntegerAttr(bucket.server);
      auto tensors = b.getArrayAttr(names);
      // The worker: push right after the last gradient, pull at the end of the step (after
      // every read of the parameters, where the updates were).
      if (bucket.ready)
        b.setInsertionPointAfter(bucket.ready);
      else
        b.setInsertionPointToStart(&body);
      b.create<dist::PushOp>(loc, grads, bucketAttr, serverAttr, tensors);
      b.setInsertionPoint(ret);
      b.create<dist::PullOp>(loc, params, bucketAttr, serverAttr, tensors);

      // The server: receive, the updates on the received gradients, reply.
      func::FuncOp server = servers[bucket.server];
      IRMapping &map = mappings[bucket.server];
      b.setInsertionPoint(server.getBody().front().getTerminator());
      SmallVector<Type> types;
      for (Value g : grads)
        types.push_back(g.getType());
      auto receive = b.create<dist::ReceiveOp>(loc, types, bucketAttr, tensors);
      SmallVector<Value> served;
      for (auto [i, update] : llvm::enumerate(bucket.updates)) {
        for (Value operand : update->getOperands())
          if (auto param = operand.getDefiningOp<g::ParamOp>(); param && !map.contains(operand))
            map.map(operand, b.clone(*param)->getResult(0));
        map.map(update.getGradientOperand().get(), receive.getResult(i));
        b.clone(*update, map);
        served.push_back(map.lookup(update.getUpdatedParameter()));
      }
      b.create<dist::ReplyOp>(loc, served, bucketAttr, tensors);
    }

    // The updates now run on the servers; state only they read goes with them.
    SmallVector<g::ParamOp> maybeUnused;
    for (const Bucket &bucket : buckets)
      for (auto update : bucket.updates) {
        for (Value operand : update->getOperands())
          if (auto param = operand.getDefiningOp<g::ParamOp>())
            maybeUnused.push_back(param);
        update->erase();
      }
    for (g::ParamOp param : maybeUnused)
      if (param && param->use_empty())
        param->erase();
  }
};

} // namespace
