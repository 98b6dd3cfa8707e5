// Parsers for attribute parameters written as plain numbers and booleans (`lr = 0.1`,
// `nesterov = true`), which MLIR's generated attribute parsers do not provide. Include before the
// generated attribute definitions (.cpp.inc) of a dialect whose attributes use them.
#pragma once

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/APFloat.h"

namespace mlir {
template <> struct FieldParser<llvm::APFloat> {
  static FailureOr<llvm::APFloat> parse(AsmParser &parser) {
    double value;
    if (parser.parseFloat(value))
      return failure();
    return llvm::APFloat(value);
  }
};
template <> struct FieldParser<bool> {
  static FailureOr<bool> parse(AsmParser &parser) {
    if (succeeded(parser.parseOptionalKeyword("true")))
      return true;
    if (succeeded(parser.parseOptionalKeyword("false")))
      return false;
    return parser.emitError(parser.getCurrentLocation(), "expected 'true' or 'false'");
  }
};
} // namespace mlir
