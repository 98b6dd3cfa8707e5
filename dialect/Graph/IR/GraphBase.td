// The graph dialect: the model-level tensor ops that users write (see docs/ir.md, and
// docs/architecture.md for how the passes use them).
#ifndef DP_GRAPH_BASE
#define DP_GRAPH_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::dp::graph";
  let summary = "Model-level tensor ops: layers, losses, parameters, optimizers";
  let description = [{
    The text IR in which models are written, for one device and the global batch. Values are
    ranked f32 tensors (i32 for labels). Parameters are `graph.param` ops naming persistent
    tensors with an initialiser; inputs are function arguments marked `graph.input`; the
    function returns the scalar loss and carries its optimizer as `graph.optimizer`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []> :
    Op<Graph_Dialect, mnemonic, traits>;

class Graph_Attr<string name, string attrMnemonic, list<Trait> traits = []> :
    AttrDef<Graph_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // DP_GRAPH_BASE
