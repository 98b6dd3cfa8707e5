// Attributes of the dist dialect: the mesh a step is compiled for.
#ifndef DP_DIST_ATTRS
#define DP_DIST_ATTRS

include "dialect/Dist/IR/DistBase.td"

def Dist_MeshAttr : AttrDef<Dist_Dialect, "Mesh"> {
  let mnemonic = "mesh";
  let summary = "the devices a step runs on: R per process, P processes, on N nodes";
  let description = [{
    On each step function as `dist.mesh`: `devices_per_process` (R) replicas in each of
    `processes` (P) processes, on devices of kind `device` (cpu or cuda), the processes
    spread evenly over `nodes` (N, dividing P; 1 when absent) hosts.

    ```mlir
    #dist.mesh<devices_per_process = 2, processes = 4, device = "cpu", nodes = 2>
    ```
  }];
  let parameters = (ins "int64_t":$devices_per_process, "int64_t":$processes,
                        StringRefParameter<"device kind">:$device,
                        DefaultValuedParameter<"int64_t", "1">:$nodes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Replicas of the whole job (R x P).
    int64_t replicas() const { return getDevicesPerProcess() * getProcesses(); }
  }];
}

#endif // DP_DIST_ATTRS
