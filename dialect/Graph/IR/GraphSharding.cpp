// Batch-sharding rules of the graph ops that neither keep the rows nor reduce every result
// over them (BatchShardingOpInterface; the others take its default, with or without the
// ReducesBatch trait), and the global statistics of batch normalisation. A rule sees which
// operands carry the batch and says, per result, whether it carries the batch's rows or each
// replica's part of a sum or mean over them.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp;
using namespace dp::graph;

namespace {

/// The layer name of a batch normalisation: the prefix of its gamma's name.
std::string layerOf(Value gamma) {
  if (auto param = gamma.getDefiningOp<ParamOp>())
    return param.getName().rsplit('.').first.str();
  return "batch_norm";
}

} // namespace

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

bool BatchMomentsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchMomentsOp::getStatisticName(unsigned) {
  for (Operation *user : getResult().getUsers())
    if (auto train = dyn_cast<BatchNormTrainOp>(user))
      return layerOf(train.getGamma()) + ".batch_stats";
  return "batch_norm.batch_stats";
}

bool BatchNormGradParamsOp::isGlobalStatistic(unsigned) { return true; }

std::string BatchNormGradParamsOp::getStatisticName(unsigned result) {
  return result == 0 ? "batch_norm.gamma" : "batch_norm.beta";
}
