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
    spread evenly over `nodes` (N, dividing P; 1 when absent) hosts. With `accumulation`
    M > 1 (1 when absent), each device runs the train step on M micro-shards of its rows one
    after another, summing the gradients, and the optimizer steps once (gradient
    accumulation, `dpc compile --micro-batch`): the global batch is cut into R x P x M
    micro-shards.

    ```mlir
    #dist.mesh<devices_per_process = 2, processes = 4, device = "cpu", nodes = 2>
    #dist.mesh<devices_per_process = 1, processes = 1, device = "cpu", accumulation = 4>
    ```
  }];
  let parameters = (ins "int64_t":$devices_per_process, "int64_t":$processes,
                        StringRefParameter<"device kind">:$device,
                        DefaultValuedParameter<"int64_t", "1">:$nodes,
                        DefaultValuedParameter<"int64_t", "1">:$accumulation);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Replicas of the whole job (R x P).
    int64_t replicas() const { return getDevicesPerProcess() * getProcesses(); }
    /// Micro-shards of the global batch (R x P x M): the pieces dist-split-batch cuts.
    int64_t microShards() const { return replicas() * getAccumulation(); }
  }];
}

def Dist_ParameterServerAttr : AttrDef<Dist_Dialect, "ParameterServer"> {
  let mnemonic = "parameter_server";
  let summary = "the parameter-server strategy: S servers, W workers, how stale a worker may be";
  let description = [{
    On the train step and every server function of a parameter-server compilation. The job
    has S + W processes: ranks 0 to S - 1 are the servers, the next W the workers (the
    train step's mesh has W processes). `staleness` K >= 0 lets a worker run at most K steps
    ahead of the slowest worker (stale-synchronous parallel); -1 leaves workers unbounded
    (asynchronous). With `sync`, a server averages one gradient from every worker before it
    updates, so the job computes what synchronous data parallelism over W processes does
    (`staleness` is then 0).

    ```mlir
    #dist.parameter_server<servers = 1, workers = 2, staleness = -1, sync = false>
    ```
  }];
  let parameters = (ins "int64_t":$servers, "int64_t":$workers, "int64_t":$staleness,
                        "bool":$sync);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// "1 server, 2 workers, asynchronous" / "... staleness 4" / "... synchronous".
    std::string describe() const;
  }];
}

#endif // DP_DIST_ATTRS
