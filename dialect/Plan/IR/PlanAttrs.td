// Attributes of the plan dialect: how a parameter's first value is drawn.
#ifndef DP_PLAN_ATTRS
#define DP_PLAN_ATTRS

include "dialect/Plan/IR/PlanBase.td"
include "dialect/Common/AttrParams.td"

def Plan_InitAttr : AttrDef<Plan_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "how a parameter's first value is drawn";
  let description = [{
    `kind` is one of zeros, ones, constant (a), uniform (a, b), normal (mean a, stddev b),
    glorot_uniform, glorot_normal, he_normal, he_uniform, orthogonal, unit_forget_bias; the
    fans are the parameter's, as the compiler computed them from the layer it belongs to.
    `data` takes its values from `data`, f32 elements of the parameter's shape (an imported
    model's weights); plan-write stores each distinct one once.
  }];
  let parameters = (ins StringRefParameter<"initialiser kind">:$kind,
                        DP_F64Param<"0.0">:$a, DP_F64Param<"0.0">:$b,
                        DefaultValuedParameter<"int64_t", "0">:$fan_in,
                        DefaultValuedParameter<"int64_t", "0">:$fan_out,
                        OptionalParameter<"::mlir::ElementsAttr">:$data);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // DP_PLAN_ATTRS
