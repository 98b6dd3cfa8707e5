// graph-inline-calls: repeated blocks written once, called, and inlined with per-call-site
// parameter names (see Passes.td).
#include "passes/Graph/Passes.h"
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#define DEBUG_TYPE "graph-inline-calls"

namespace dp::graph {
#define GEN_PASS_DEF_INLINECALLSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace dp::graph

using namespace mlir;
using namespace dp::graph;

namespace {

class Inliner {
public:
  explicit Inliner(ModuleOp module) : symbols_(module) {}

  /// Inlines every call in `func` (a copy of `origin`, or `origin` itself), recursively,
  /// giving the parameters of each call site's copy the site's scope as a prefix. `stack`
  /// holds the module's functions being inlined, to find cycles.
  LogicalResult inlineCalls(func::FuncOp func, func::FuncOp origin,
                            SmallVectorImpl<func::FuncOp> &stack) {
    stack.push_back(origin);
    llvm::StringMap<unsigned> sitesOf; // default scopes: callee_1, callee_2, ...
    for (func::CallOp call : llvm::make_early_inc_range(func.getOps<func::CallOp>())) {
      auto callee = symbols_.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return call.emitError() << "calls '" << call.getCallee()
                                << "', which is not a function with a body in this module";
      if (llvm::is_contained(stack, callee))
        return call.emitError() << "calls '" << call.getCallee()
                                << "' recursively; blocks cannot call themselves";
      if (!callee.getBody().hasOneBlock())
        return callee.emitError("a called block must have a single block");
      std::string scope;
      if (auto attr = call->getAttrOfType<StringAttr>(kScopeAttr))
        scope = attr.getValue().str();
      else
        scope = (call.getCallee() + "_" + Twine(++sitesOf[call.getCallee()])).str();
      if (scope.empty())
        return call.emitError() << "has an empty '" << kScopeAttr << "'";

      // Inline the callee's own calls first, into a copy, so each level adds its prefix.
      OpBuilder b(call);
      auto copy = cast<func::FuncOp>(callee->clone());
      if (failed(inlineCalls(copy, callee, stack))) {
        copy.erase();
        return failure();
      }
      IRMapping mapping;
      Block &body = copy.getBody().front();
      mapping.map(body.getArguments(), call.getOperands());
      for (Operation &op : body.without_terminator()) {
        Operation *clone = b.clone(op, mapping);
        clone->setLoc(CallSiteLoc::get(op.getLoc(), call.getLoc()));
        if (auto param = dyn_cast<ParamOp>(clone))
          param.setName(b.getStringAttr(scope + "_" + param.getName().str()));
      }
      auto ret = cast<func::ReturnOp>(body.getTerminator());
      for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
        result.replaceAllUsesWith(mapping.lookup(value));
      call.erase();
      copy.erase();
      inlined_.insert(callee);
    }
    stack.pop_back();
    return success();
  }

  /// Private functions that were inlined and are no longer called anywhere.
  void eraseInlined(ModuleOp module) {
    // Callers before their callees: a callee only called from an erased caller goes too.
    for (func::FuncOp callee : llvm::reverse(inlined_))
      if (callee.isPrivate() && SymbolTable::symbolKnownUseEmpty(callee, module))
        callee.erase();
  }

private:
  SymbolTable symbols_;
  llvm::SetVector<func::FuncOp> inlined_;
};

struct InlineCallsPass : dp::graph::impl::InlineCallsPassBase<InlineCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Inliner inliner(module);
    SmallVector<func::FuncOp> stack;
    for (func::FuncOp func : getModelFunctions(module))
      if (failed(inliner.inlineCalls(func, func, stack)))
        return signalPassFailure();
    inliner.eraseInlined(module);
  }
};

} // namespace
