// What the fuzz targets that run dp's compiler share. Include it in the target's one source
// file: it defines the sanitizer options of the program.
#pragma once

#include "passes/Pipelines/Pipelines.h"
#include "passes/Target/Plan/PlanWriter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

// LLVM's allocators poison their free memory when the code that inlines them is built with
// ASan: dp's code is, Debian's libMLIR is not, so memory the library's own inlined copy hands out
// stays poisoned for dp's and every later use would be reported. Manual poisoning is ignored
// (ASan's own checks are unaffected); ASAN_OPTIONS set by the user still come first.
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

namespace dp::fuzz {

/// dp's dialects, registered once for every input's context.
inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *r = [] {
    auto *registry = new mlir::DialectRegistry;
    dp::registerDialects(*registry);
    return registry;
  }();
  return *r;
}

/// The whole compile pipeline for two devices per process, then the plan writer, in memory;
/// failures are expected answers.
inline void compileAndWrite(mlir::ModuleOp module) {
  dp::CompileOptions options;
  options.devicesPerProcess = 2;
  mlir::PassManager pm(module.getContext());
  dp::buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(module)))
    return;
  std::string plan;
  (void)dp::plan::writePlan(module, "fuzz", plan);
}

} // namespace dp::fuzz
