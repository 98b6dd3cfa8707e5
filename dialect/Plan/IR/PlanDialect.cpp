// Registration of the plan dialect and its attribute.
#include "dialect/Plan/IR/PlanDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialect/Common/AttrParsers.h"

using namespace mlir;
using namespace dp::plan;

#include "dialect/Plan/IR/PlanDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/Plan/IR/PlanAttrs.cpp.inc"

void PlanDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/Plan/IR/PlanOps.cpp.inc"
      >();
  registerAttributes();
}

void PlanDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/Plan/IR/PlanAttrs.cpp.inc"
      >();
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef kind,
                               APFloat, APFloat, int64_t fanIn, int64_t fanOut, ElementsAttr data) {
  bool known = llvm::StringSwitch<bool>(kind)
                   .Cases("zeros", "ones", "constant", "uniform", "normal", true)
                   .Cases("glorot_uniform", "glorot_normal", "he_normal", "he_uniform", true)
                   .Cases("orthogonal", "unit_forget_bias", "data", true)
                   .Default(false);
  if (!known)
    return emitError() << "unknown initialiser kind '" << kind << "'";
  if ((kind == "data") != static_cast<bool>(data))
    return emitError() << (data ? "only a 'data' initialiser takes data, not '" + kind.str() + "'"
                                : std::string("initialiser 'data' needs its data"));
  if (data && !data.getElementType().isF32())
    return emitError() << "initialiser data must be f32, found " << data.getType();
  if (kind.starts_with("glorot") && (fanIn <= 0 || fanOut <= 0))
    return emitError() << "initialiser '" << kind << "' needs positive fan_in and fan_out";
  if (kind == "orthogonal" && (fanIn <= 0 || fanOut <= 0))
    return emitError() << "initialiser 'orthogonal' needs positive rows (fan_in) and columns "
                          "(fan_out)";
  if (kind.starts_with("he") && fanIn <= 0)
    return emitError() << "initialiser '" << kind << "' needs a positive fan_in";
  return success();
}

int64_t dp::plan::bufferBytes(MemRefType type) {
  return type.getNumElements() * (type.getElementTypeBitWidth() / 8); // f32, i32, bf16
}
