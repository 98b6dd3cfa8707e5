// Attributes of the graph dialect: activations, parameter initialisers, optimizers.
#ifndef DP_GRAPH_ATTRS
#define DP_GRAPH_ATTRS

include "dialect/Graph/IR/GraphBase.td"
include "dialect/Common/AttrParams.td"

def Graph_Activation : I32EnumAttr<"Activation", "an activation function", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"relu", 1>, I32EnumAttrCase<"sigmoid", 2>,
    I32EnumAttrCase<"tanh", 3>, I32EnumAttrCase<"softmax", 4>]> {
  let cppNamespace = "::dp::graph";
  let genSpecializedAttr = 0;
}
def Graph_ActivationAttr : EnumAttr<Graph_Dialect, Graph_Activation, "act"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Initialisers: how a parameter's first value is drawn (Keras semantics).
//===----------------------------------------------------------------------===//

class Graph_InitAttr<string name, string attrMnemonic, string desc>
    : Graph_Attr<name, attrMnemonic> {
  let summary = desc;
}
def Graph_ZerosAttr : Graph_InitAttr<"Zeros", "zeros", "all zeros">;
def Graph_OnesAttr : Graph_InitAttr<"Ones", "ones", "all ones">;
def Graph_ConstantAttr : Graph_InitAttr<"Constant", "constant", "every element `value`"> {
  let parameters = (ins "::llvm::APFloat":$value);
  let assemblyFormat = "`<` $value `>`";
}
def Graph_UniformAttr : Graph_InitAttr<"Uniform", "uniform", "uniform in [low, high)"> {
  let parameters = (ins DP_F64Param<"-0.05">:$low,
                        DP_F64Param<"0.05">:$high);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}
def Graph_NormalAttr : Graph_InitAttr<"Normal", "normal", "normal with mean and stddev"> {
  let parameters = (ins DP_F64Param<"0.0">:$mean,
                        DP_F64Param<"0.05">:$stddev);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}
def Graph_GlorotUniformAttr : Graph_InitAttr<"GlorotUniform", "glorot_uniform",
    "uniform in +-sqrt(6 / (fan_in + fan_out))">;
def Graph_GlorotNormalAttr : Graph_InitAttr<"GlorotNormal", "glorot_normal",
    "truncated normal, stddev sqrt(2 / (fan_in + fan_out))">;
def Graph_HeNormalAttr : Graph_InitAttr<"HeNormal", "he_normal",
    "truncated normal, stddev sqrt(2 / fan_in)">;
def Graph_HeUniformAttr : Graph_InitAttr<"HeUniform", "he_uniform",
    "uniform in +-sqrt(6 / fan_in)">;
def Graph_OrthogonalAttr : Graph_InitAttr<"Orthogonal", "orthogonal",
    "gain times a matrix with orthonormal rows or columns (Keras's Orthogonal), the tensor "
    "seen as [product of all axes but the last, last axis]"> {
  let parameters = (ins DP_F64Param<"1.0">:$gain);
  let assemblyFormat = "(`<` struct(params)^ `>`)?";
}
def Graph_UnitForgetBiasAttr : Graph_InitAttr<"UnitForgetBias", "unit_forget_bias",
    "an LSTM bias [4U]: zeros, ones for the forget gate (Keras's unit_forget_bias)">;

//===----------------------------------------------------------------------===//
// Optimizers, attached to the model function as `graph.optimizer` (Keras defaults). Each takes
// a `weight_decay` (default 0): decoupled, w -= lr * weight_decay * w before the update (Keras
// 3's weight_decay; with adam, AdamW).
//===----------------------------------------------------------------------===//

def Graph_SgdAttr : Graph_Attr<"Sgd", "sgd"> {
  let summary = "plain gradient descent: w -= lr * g";
  let parameters = (ins DP_F64Param<"0.01">:$lr, DP_F64Param<"0.0">:$weight_decay);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}
def Graph_MomentumAttr : Graph_Attr<"Momentum", "momentum"> {
  let summary = "gradient descent with (Nesterov) momentum";
  let parameters = (ins DP_F64Param<"0.01">:$lr,
                        DP_F64Param<"0.9">:$momentum,
                        DefaultValuedParameter<"bool", "false">:$nesterov,
                        DP_F64Param<"0.0">:$weight_decay);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}
def Graph_AdamAttr : Graph_Attr<"Adam", "adam"> {
  let summary = "Adam with Keras's defaults";
  let description = [{
    Keras adds `epsilon` to sqrt(v) before the bias correction; with `torch_epsilon = true` it
    is added to the bias-corrected sqrt(v_hat), as `torch.optim.Adam` and the paper's
    algorithm do (the same as Keras's form with epsilon * sqrt(1 - beta2^t)).
  }];
  let parameters = (ins DP_F64Param<"0.001">:$lr,
                        DP_F64Param<"0.9">:$beta1,
                        DP_F64Param<"0.999">:$beta2,
                        DP_F64Param<"1.0e-7">:$epsilon,
                        DefaultValuedParameter<"bool", "false">:$torch_epsilon,
                        DP_F64Param<"0.0">:$weight_decay);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // DP_GRAPH_ATTRS
