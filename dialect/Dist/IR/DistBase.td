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
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Name of the discardable attribute placing an op on a replica.
    static constexpr llvm::StringLiteral kReplicaAttr = "dist.replica";
    /// Name of the function attribute holding the mesh.
    static constexpr llvm::StringLiteral kMeshAttr = "dist.mesh";
  }];
}

class Dist_Op<string mnemonic, list<Trait> traits = []> : Op<Dist_Dialect, mnemonic, traits>;


#endif // DP_DIST_BASE
