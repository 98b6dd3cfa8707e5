// The dist dialect: replicas, batch shards and gradient allreduces (see DistOps.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/Dist/IR/DistDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/Dist/IR/DistAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/Dist/IR/DistTypes.h.inc"

#define GET_OP_CLASSES
#include "dialect/Dist/IR/DistOps.h.inc"

namespace dp::dist {
/// Marks a dist.allreduce that the step waits for before going on (batch statistics
/// averaged across replicas) rather than a gradient averaged for the optimizer.
inline constexpr llvm::StringLiteral kSyncAttr = "dist.sync";
/// On a train step whose gradient buckets cross the processes as bf16: "bf16"
/// (dist-insert-allreduce precision=bf16; none means f32).
inline constexpr llvm::StringLiteral kAllReducePrecisionAttr = "dist.allreduce_precision";
/// On a train step whose optimizer state is sharded (dist-shard-optimizer): the ZeRO
/// stage, 1; over the replicas of a process, or of the job when it has several processes.
inline constexpr llvm::StringLiteral kShardOptimizerAttr = "dist.shard_optimizer";
/// On an op that runs on one process of the job only (an update whose optimizer state is
/// sharded over the processes, and that state's `graph.param`s): its rank.
inline constexpr llvm::StringLiteral kProcessAttr = "dist.process";
/// The replica an op was placed on (0 when it carries no `dist.replica`).
int64_t getReplica(mlir::Operation *op);
/// The process an op runs on alone (`dist.process`), or -1 when every process runs it.
int64_t getProcess(mlir::Operation *op);
/// The mesh of a step function, or null when it was not distributed.
MeshAttr getMesh(mlir::Operation *func);
/// The train step of `module` when it runs on more than one replica (R x P > 1), else null.
mlir::func::FuncOp getReplicatedTrainStep(mlir::ModuleOp module);
/// The parameter-server strategy of a function (the train step, a server function), or null.
ParameterServerAttr getParameterServer(mlir::Operation *func);
/// The server functions of `module` (`dist.server` on a function), by server index.
llvm::SmallVector<mlir::func::FuncOp> getServerFunctions(mlir::ModuleOp module);
/// The server a server function or a `graph.param` is on, or -1.
int64_t getServer(mlir::Operation *op);
} // namespace dp::dist
