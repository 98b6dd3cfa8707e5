// The dist dialect's definition and op base class (see DistOps.td for the ops).
#ifndef DP_DIST_BASE
#define DP_DIST_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::dp::dist";
  let summary = "Data parallelism: replicas, batch shards and gradient allreduces";
  let description = [{
    A step function compiled for a mesh of R devices per process and P processes carries
    `dist.mesh`. Its graph ops are replicated R times; each copy's ops carry
    `dist.replica = r` (the device of this process they run on). Every process runs the
    same function (SPMD across processes, explicit replicas within one).
    `dist.shard` gives each replica its rows of the global batch, and `dist.allreduce`
    averages a gradient over all R x P replicas. The schedule splits allreduces into
    `dist.allreduce_start` / `dist.allreduce_wait` so that communication overlaps compute.

    Under the parameter-server strategy (`dist.parameter_server` on the train step) the
    processes are W workers running the step on their shards and S servers holding the
    parameters: a worker `dist.push`es each bucket of gradients to the server holding those
    parameters and `dist.pull`s them back fresh; each server function (`dist.server = s`)
    `dist.receive`s a bucket, applies the optimizer and `dist.reply`s with the parameters.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute placing an op on a replica.
    static constexpr llvm::StringLiteral kReplicaAttr = "dist.replica";
    /// Name of the function attribute holding the mesh.
    static constexpr llvm::StringLiteral kMeshAttr = "dist.mesh";
    /// Name of the function attribute holding the parameter-server strategy (on the train
    /// step and on every server function).
    static constexpr llvm::StringLiteral kParameterServerAttr = "dist.parameter_server";
    /// Name of the attribute naming a server: on a `graph.param` (the server that holds the
    /// parameter) and on a server function (the server it is the program of).
    static constexpr llvm::StringLiteral kServerAttr = "dist.server";
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []> : Op<Dist_Dialect, mnemonic, traits>;


#endif // DP_DIST_BASE
