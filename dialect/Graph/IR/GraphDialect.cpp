// Registration of the graph dialect.
#include "dialect/Graph/IR/GraphDialect.h"

using namespace mlir;
using namespace dp::graph;

#include "dialect/Graph/IR/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/Graph/IR/GraphOps.cpp.inc"
      >();
  registerAttributes();
}
