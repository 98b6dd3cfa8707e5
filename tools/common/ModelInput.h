// Reading a model or IR dump for dpc and dp-opt: only a regular file (or standard input) of at
// most 64 MiB, and only text that nests no deeper than the parser can take. A FIFO, a device,
// a directory or text nested thousands deep gets a message naming the file, never a hang, an
// unbounded read or a crash.
#pragma once

#include "dialect/Common/Nesting.h"
#include "runtime/base/Files.h"
#include "runtime/format/PlanFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace dp {

/// What dpc and dp-opt say (after "<tool>: ") when the parser runs past its stack
/// (runOnGuardedStack: 256 MiB, half a million levels of recursion).
inline constexpr const char *kParserStackMessage =
    "error: the input makes the parser recurse past its stack (an expression of hundreds of "
    "thousands of terms or signs, such as an affine_map of a million '-'); no model needs that: "
    "refused\n";

/// The most a model file may hold.
inline constexpr uint64_t kMaxModelBytes = uint64_t(64) << 20;

/// The text of `path` ("-": standard input) as a buffer named after it, or null after writing
/// "<tool>: <why>" (or "path:line:col: error: ...") to `errors`.
inline std::unique_ptr<llvm::MemoryBuffer> readModelText(const std::string &path,
                                                          llvm::raw_ostream &errors,
                                                          const char *tool = "dpc") {
  std::string text, error;
  if (!rt::tryReadInputFile(path, kMaxModelBytes, "model", text, error)) {
    errors << tool << ": " << error << "\n";
    return nullptr;
  }
  const std::string name = path == "-" ? "<stdin>" : path;
  // A plan or another binary file is not a model's text: say what it is, not where the
  // parser gave up in its bytes.
  if (text.compare(0, sizeof(rt::kPlanMagic), rt::kPlanMagic, sizeof(rt::kPlanMagic)) == 0) {
    errors << tool << ": " << name << " is a compiled plan (.dpx), not a model: `dprun " << name
           << " --inspect` describes it\n";
    return nullptr;
  }
  if (text.find('\0') != std::string::npos) {
    errors << tool << ": " << name
           << " is binary, not a model's text IR (an ONNX model is read from a file named "
              "*.onnx)\n";
    return nullptr;
  }
  if (auto at = nestingBeyond(text, kMaxNesting)) {
    errors << (path == "-" ? "<stdin>" : path) << ":" << at->line << ":" << at->column
           << ": error: the text nests deeper than " << kMaxNesting
           << " levels here; no model needs that many, and MLIR's parser would run out of stack\n";
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(text, path == "-" ? "<stdin>" : path);
}

} // namespace dp
