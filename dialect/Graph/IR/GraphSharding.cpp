// Batch-sharding rules of the graph ops that reduce over the batch (BatchShardingOpInterface);
// row-wise ops use the interface's default. A rule sees which operands carry the batch and
// says, per result, whether it carries the batch's rows or each replica's part of a sum or
// mean over them.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

LogicalResult allReduced(Operation *op, SmallVectorImpl<BatchSharding> &results) {
  results.assign(op->getNumResults(), BatchSharding::Reduced);
  return success();
}

/// The layer name of a batch normalisation: the prefix of its gamma's name.
std::string layerOf(Value gamma) {
  if (auto param = gamma.getDefiningOp<ParamOp>())
    return param.getName().rsplit('.').first.str();
  return "batch_norm";
}

} // namespace

// Losses and accuracy counts are means or sums over the shard's rows.
LogicalResult SoftmaxCrossEntropyOp::getResultSharding(ArrayRef<bool>,
                                                       SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

LogicalResult CountCorrectOp::getResultSharding(ArrayRef<bool>,
                                                SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

LogicalResult ReduceRowsOp::getResultSharding(ArrayRef<bool>,
                                              SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

// A filter gradient sums over the batch.
LogicalResult Conv2DGradFilterOp::getResultSharding(ArrayRef<bool>,
                                                    SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

// Rows of a product come from the left operand unless it is transposed; a transposed left
// operand that carries the batch contracts over it (a weight gradient), and so does a right
// operand that carries it untransposed. A transposed right operand carrying the batch would
// put the batch in the columns: no rule splits that.
LogicalResult MatMulOp::getResultSharding(ArrayRef<bool> batched,
                                          SmallVectorImpl<BatchSharding> &results) {
  if (batched[1] && getTransposeRhs())
    return failure();
  results.assign(1, batched[0] && !getTransposeLhs() ? BatchSharding::Rows
                                                     : BatchSharding::Reduced);
  return success();
}

// An LSTM's input gradient has the input's rows; its weight gradients sum over them.
LogicalResult LstmGradOp::getResultSharding(ArrayRef<bool>,
                                            SmallVectorImpl<BatchSharding> &results) {
  results.assign({BatchSharding::Rows, BatchSharding::Reduced, BatchSharding::Reduced,
                  BatchSharding::Reduced});
  return success();
}

// Batch normalisation's moments are means over the rows: the mean of equal shards' moments is
// the global batch's.
LogicalResult BatchMomentsOp::getResultSharding(ArrayRef<bool>,
                                                SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

bool BatchMomentsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchMomentsOp::getStatisticName(unsigned) {
  for (Operation *user : getResult().getUsers())
    if (auto train = dyn_cast<BatchNormTrainOp>(user))
      return layerOf(train.getGamma()) + ".batch_stats";
  return "batch_norm.batch_stats";
}

// The sums of the parameter gradients feed the input gradient, which needs the whole batch's:
// averaged over replicas (divided by the shard's rows in batch_norm_grad_input) they give it,
// and they are then also gamma's and beta's averaged gradients.
LogicalResult BatchNormGradParamsOp::getResultSharding(ArrayRef<bool>,
                                                       SmallVectorImpl<BatchSharding> &results) {
  return allReduced(*this, results);
}

bool BatchNormGradParamsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchNormGradParamsOp::getStatisticName(unsigned result) {
  return result == 0 ? "batch_norm.gamma" : "batch_norm.beta";
}
