// Types of the dist dialect: an allreduce in flight.
#ifndef DP_DIST_TYPES
#define DP_DIST_TYPES

include "dialect/Dist/IR/DistBase.td"

def Dist_PendingType : TypeDef<Dist_Dialect, "Pending"> {
  let mnemonic = "pending";
  let summary = "an allreduce in flight";
  let description = [{
    The result of `dist.allreduce_start`, consumed by the `dist.allreduce_wait` that yields
    the means.
  }];
}

#endif // DP_DIST_TYPES
