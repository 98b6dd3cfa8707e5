// The batch-sharding op interface (see BatchShardingOpInterface.td).
#pragma once

#include "mlir/IR/OpDefinition.h"

#include <string>

namespace dp {

/// How a result relates to the batch axis under data parallelism.
enum class BatchSharding {
  /// Independent of the batch: every replica computes the same value.
  None,
  /// The leading axis is the batch's rows: each replica holds its shard's rows.
  Rows,
  /// A reduction over the batch's rows: each replica holds its shard's part.
  Reduced,
};

namespace OpTrait {
/// Every result of the op reduces over the batch's rows (BatchShardingOpInterface's default).
template <typename ConcreteType>
class ReducesBatch : public mlir::OpTrait::TraitBase<ConcreteType, ReducesBatch> {};
} // namespace OpTrait

} // namespace dp

#include "dialect/Interfaces/BatchShardingOpInterface.h.inc"
