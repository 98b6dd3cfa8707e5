// Registration and verifiers of the dist dialect.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dp::dist;

#include "dialect/Dist/IR/DistDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dialect/Dist/IR/DistAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "dialect/Dist/IR/DistTypes.cpp.inc"
#define GET_OP_CLASSES
#include "dialect/Dist/IR/DistOps.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/Dist/IR/DistOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/Dist/IR/DistTypes.cpp.inc"
      >();
}

int64_t dp::dist::getReplica(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(DistDialect::kReplicaAttr);
  return attr ? attr.getInt() : 0;
}

MeshAttr dp::dist::getMesh(Operation *func) {
  return func->getAttrOfType<MeshAttr>(DistDialect::kMeshAttr);
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t devicesPerProcess, int64_t processes, StringRef device,
                               int64_t nodes) {
  if (devicesPerProcess < 1 || processes < 1)
    return emitError() << "devices_per_process and processes must be at least 1, got "
                       << devicesPerProcess << " and " << processes;
  if (nodes < 1 || processes % nodes != 0)
    return emitError() << "nodes must be at least 1 and divide the " << processes
                       << " processes evenly, got " << nodes;
  if (device != "cpu" && device != "cuda")
    return emitError() << "unknown device kind '" << device << "' (expected cpu or cuda)";
  return success();
}

LogicalResult ShardOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  int64_t shards = getShards(), replica = getReplica();
  if (shards < 1 || replica < 0 || replica >= shards)
    return emitOpError() << "needs 0 <= replica < shards, got replica " << replica << " of "
                         << shards;
  if (in.getRank() == 0 || in.getElementType() != out.getElementType() ||
      in.getRank() != out.getRank() || in.getShape().drop_front() != out.getShape().drop_front())
    return emitOpError() << "result must be the input with fewer rows, got " << in << " -> "
                         << out;
  if (in.getDimSize(0) % shards != 0 || out.getDimSize(0) != in.getDimSize(0) / shards)
    return emitOpError() << "splits " << in.getDimSize(0) << " rows into " << shards
                         << " shards, so each has " << in.getDimSize(0) / shards
                         << " rows, not " << out.getDimSize(0)
                         << (in.getDimSize(0) % shards ? " (and rows are left over)" : "");
  return success();
}

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &results) {
  llvm::append_range(results, operands.getTypes());
  return success();
}

/// Operands form `replicas` equal groups of f32 tensors.
static LogicalResult verifyGroups(Operation *op, TypeRange types, int64_t replicas) {
  if (replicas < 1 || types.empty() || types.size() % replicas != 0)
    return op->emitOpError() << "needs a positive multiple of replicas (" << replicas
                             << ") tensors, got " << types.size();
  size_t n = types.size() / replicas;
  for (size_t i = n; i < types.size(); ++i)
    if (types[i] != types[i % n])
      return op->emitOpError() << "tensor " << i % n << " of replica " << i / n << " has type "
                               << types[i] << ", replica 0's has " << types[i % n];
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroups(*this, getGradients().getTypes(), getReplicas())))
    return failure();
  if (getResultTypes() != getGradients().getTypes())
    return emitOpError("results must have the types of the gradients");
  // I64Attr's accessor is unsigned: read the sign from the attribute.
  if (getBucketAttr() && getBucketAttr().getInt() < 0)
    return emitOpError("bucket must be non-negative");
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyGroups(*this, getGradients().getTypes(), getReplicas())))
    return failure();
  if (getBucketAttr().getInt() < 0)
    return emitOpError("bucket must be non-negative");
  return success();
}

int64_t AllReduceOp::bytesPerReplica() {
  int64_t bytes = 0;
  for (Value v : getGradients().take_front(tensorsPerReplica()))
    bytes += cast<RankedTensorType>(v.getType()).getNumElements() * 4;
  return bytes;
}

LogicalResult AllReduceWaitOp::verify() {
  auto start = getStart();
  if (!start)
    return emitOpError("expects the result of a dist.allreduce_start");
  if (failed(verifyGroups(start, start.getGradients().getTypes(), start.getReplicas())))
    return failure();
  if (getResultTypes() != start.getGradients().getTypes())
    return emitOpError("results must have the types of the started gradients");
  return success();
}

mlir::func::FuncOp dp::dist::getReplicatedTrainStep(mlir::ModuleOp module) {
  mlir::func::FuncOp train = graph::getStepFunction(module, "train");
  MeshAttr mesh = train ? getMesh(train) : MeshAttr();
  return mesh && mesh.replicas() > 1 ? train : mlir::func::FuncOp();
}
