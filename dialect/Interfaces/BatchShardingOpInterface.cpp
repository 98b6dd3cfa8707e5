// The generated definitions of the batch-sharding op interface.
#include "dialect/Interfaces/BatchShardingOpInterface.h"

#include "dialect/Interfaces/BatchShardingOpInterface.cpp.inc"
