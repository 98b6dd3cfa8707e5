// Attribute-parameter classes shared by the dialects (parsed by dialect/Common/AttrParsers.h).
#ifndef DP_COMMON_ATTR_PARAMS
#define DP_COMMON_ATTR_PARAMS

include "mlir/IR/AttrTypeBase.td"

// A real-valued attribute parameter with a default, written as a plain number.
class DP_F64Param<string default> :
    DefaultValuedParameter<"::llvm::APFloat", "::llvm::APFloat(" # default # ")"> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
}

#endif // DP_COMMON_ATTR_PARAMS
