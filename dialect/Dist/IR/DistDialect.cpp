// Registration and verifiers of the dist dialect.
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Common/TensorBytes.h"
#include "dialect/Graph/IR/Model.h"
#include "runtime/format/Enums.h"

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

int64_t dp::dist::getProcess(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(kProcessAttr);
  return attr ? attr.getInt() : -1;
}

MeshAttr dp::dist::getMesh(Operation *func) {
  return func->getAttrOfType<MeshAttr>(DistDialect::kMeshAttr);
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t devicesPerProcess, int64_t processes, StringRef device,
                               int64_t nodes, int64_t accumulation) {
  if (devicesPerProcess < 1 || processes < 1)
    return emitError() << "devices_per_process and processes must be at least 1, got "
                       << devicesPerProcess << " and " << processes;
  if (nodes < 1 || processes % nodes != 0)
    return emitError() << "nodes must be at least 1 and divide the " << processes
                       << " processes evenly, got " << nodes;
  if (dp::rt::DeviceKind kind; !dp::rt::deviceKindByName(device, kind))
    return emitError() << "unknown device kind '" << device << "' (expected "
                       << dp::rt::deviceKindNames() << ")";
  if (accumulation < 1)
    return emitError() << "accumulation must be at least 1, got " << accumulation;
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

LogicalResult AccumulateOp::verify() {
  if (getCount() < 2)
    return emitOpError() << "sums at least 2 micro-shards, got " << getCount();
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
  if (auto owners = getOwnersAttr()) {
    const int64_t n = static_cast<int64_t>(getGradients().size()) / getReplicas();
    if (owners.size() != n)
      return emitOpError() << "names " << owners.size() << " owner(s) for " << n
                           << " tensor(s) a replica";
    for (int64_t i = 0; i < n; ++i) {
      if (owners[i] < 0)
        return emitOpError() << "owner " << owners[i] << " of tensor " << i << " is not a replica";
      if (i > 0 && owners[i] < owners[i - 1])
        return emitOpError() << "orders its tensors by owner, but tensor " << i << "'s ("
                             << owners[i] << ") comes after tensor " << i - 1 << "'s ("
                             << owners[i - 1] << ")";
    }
  }
  return success();
}

int64_t AllReduceOp::bytesPerReplica() {
  int64_t bytes = 0;
  for (Value v : getGradients().take_front(tensorsPerReplica()))
    bytes += dp::tensorBytes(v.getType());
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

LogicalResult BroadcastStartOp::verify() {
  const auto params = getParams();
  const bool acrossProcesses = getProcessAttr() != nullptr;
  const int64_t n = static_cast<int64_t>(getTensors().size());
  if (n == 0)
    return emitOpError("names no parameter in `tensors`");
  if (params.size() % n != 0)
    return emitOpError() << "has " << params.size() << " operand(s) for " << n
                         << " parameter(s): one group of the parameters' copies per replica";
  const int64_t replicas = static_cast<int64_t>(params.size()) / n;
  if (replicas < (acrossProcesses ? 1 : 2))
    return emitOpError() << "copies parameters between replicas: it needs at least "
                         << (acrossProcesses ? 1 : 2) << " replica(s), found " << replicas;
  if (acrossProcesses && getProcessAttr().getInt() < 0)
    return emitOpError() << "process " << getProcessAttr().getInt() << " is negative";
  for (int64_t i = n; i < static_cast<int64_t>(params.size()); ++i)
    if (params[i].getType() != params[i % n].getType())
      return emitOpError() << "operand " << i << " must be a copy of parameter " << i % n
                           << " (one type in every replica's group)";
  const int64_t root = getRootAttr().getInt();
  if (root < 0 || root >= replicas)
    return emitOpError() << "root " << root << " is not one of the " << replicas << " replicas";
  if (getBucketAttr().getInt() < 0)
    return emitOpError("bucket must be non-negative");
  return success();
}

LogicalResult BroadcastWaitOp::verify() {
  if (!getStart())
    return emitOpError("expects the result of a dist.broadcast_start");
  return success();
}

LogicalResult ParameterServerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                          int64_t servers, int64_t workers, int64_t staleness,
                                          bool sync) {
  if (servers < 1 || workers < 1)
    return emitError() << "servers and workers must be at least 1, got " << servers << " and "
                       << workers;
  if (staleness < -1)
    return emitError() << "staleness must be -1 (unbounded) or at least 0, got " << staleness;
  if (sync && staleness != 0)
    return emitError() << "a synchronous strategy has staleness 0, got " << staleness;
  return success();
}

std::string ParameterServerAttr::describe() const {
  std::string text = std::to_string(getServers()) +
                     (getServers() == 1 ? " server, " : " servers, ") +
                     std::to_string(getWorkers()) + (getWorkers() == 1 ? " worker, " : " workers, ");
  if (getSync())
    return text + "synchronous";
  if (getStaleness() < 0)
    return text + "asynchronous";
  return text + "staleness " + std::to_string(getStaleness());
}

/// `names` holds one string per tensor and each `params` operand is the graph.param of that
/// name: pulls and replies name what they write and send.
static LogicalResult verifyNamedParams(Operation *op, ValueRange params, ArrayAttr names) {
  if (params.empty() || names.size() != params.size())
    return op->emitOpError() << "needs one name in tensors per parameter, got " << names.size()
                             << " for " << params.size();
  for (auto [i, v] : llvm::enumerate(params)) {
    auto param = v.getDefiningOp<dp::graph::ParamOp>();
    if (!param)
      return op->emitOpError() << "operand " << i << " must be a graph.param";
    if (param.getName() != cast<StringAttr>(names[i]).getValue())
      return op->emitOpError() << "operand " << i << " is parameter '" << param.getName()
                               << "' but tensors names '"
                               << cast<StringAttr>(names[i]).getValue() << "'";
  }
  return success();
}

/// One name per tensor, a non-negative bucket (and server).
static LogicalResult verifyBucket(Operation *op, StringRef what, size_t tensors,
                                  ArrayAttr names, IntegerAttr bucket, IntegerAttr server = {}) {
  if (tensors == 0 || names.size() != tensors)
    return op->emitOpError() << "needs one name in tensors per " << what << ", got "
                             << names.size() << " for " << tensors;
  if (bucket.getInt() < 0)
    return op->emitOpError("bucket must be non-negative");
  if (server && server.getInt() < 0)
    return op->emitOpError("server must be non-negative");
  return success();
}

LogicalResult PushOp::verify() {
  return verifyBucket(*this, "gradient", getGradients().size(), getTensors(), getBucketAttr(),
                      getServerAttr());
}

int64_t PushOp::bytes() {
  int64_t bytes = 0;
  for (Value v : getGradients())
    bytes += dp::tensorBytes(v.getType());
  return bytes;
}

LogicalResult PullOp::verify() {
  if (failed(verifyBucket(*this, "parameter", getParams().size(), getTensors(),
                          getBucketAttr(), getServerAttr())))
    return failure();
  return verifyNamedParams(*this, getParams(), getTensors());
}

LogicalResult ReceiveOp::verify() {
  return verifyBucket(*this, "gradient", getGradients().size(), getTensors(), getBucketAttr());
}

LogicalResult ReplyOp::verify() {
  if (failed(verifyBucket(*this, "parameter", getParams().size(), getTensors(),
                          getBucketAttr())))
    return failure();
  return verifyNamedParams(*this, getParams(), getTensors());
}

ParameterServerAttr dp::dist::getParameterServer(Operation *func) {
  return func->getAttrOfType<ParameterServerAttr>(DistDialect::kParameterServerAttr);
}

int64_t dp::dist::getServer(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(DistDialect::kServerAttr);
  return attr ? attr.getInt() : -1;
}

SmallVector<func::FuncOp> dp::dist::getServerFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> servers;
  for (auto func : module.getOps<func::FuncOp>())
    if (getServer(func) >= 0)
      servers.push_back(func);
  llvm::stable_sort(servers, [](func::FuncOp a, func::FuncOp b) {
    return getServer(a) < getServer(b);
  });
  return servers;
}

mlir::func::FuncOp dp::dist::getReplicatedTrainStep(mlir::ModuleOp module) {
  mlir::func::FuncOp train = graph::getStepFunction(module, "train");
  MeshAttr mesh = train ? getMesh(train) : MeshAttr();
  return mesh && mesh.replicas() > 1 ? train : mlir::func::FuncOp();
}
