// Which rows of a loss's input hold real samples, for every backend (host-and-device code).
#pragma once

#include "runtime/base/HostDevice.h"
#include "runtime/device/StepContext.h"

#include <cstdint>

namespace dp::rt {

/// The batch's valid rows come first in each block of `batchRows` rows: one block normally,
/// several when the batch was stacked along its axis (graph.concat on axis 0), each block a
/// copy of the batch's row layout.
struct ValidRows {
  int64_t block, valid;
  DP_HOST_DEVICE ValidRows(const StepContext &ctx, int64_t rows)
      : block(ctx.batchRows > 0 && rows % ctx.batchRows == 0 ? ctx.batchRows : rows),
        valid(ctx.validRows < 0 ? 0 : ctx.validRows > block ? block : ctx.validRows) {}
  DP_HOST_DEVICE bool operator()(int64_t r) const { return block > 0 && r % block < valid; }
  /// How many of `rows` rows are valid.
  DP_HOST_DEVICE int64_t count(int64_t rows) const { return block > 0 ? rows / block * valid : 0; }
  /// How many copies of the batch the rows hold (1 unless stacked).
  DP_HOST_DEVICE int64_t blocks(int64_t rows) const { return block > 0 ? rows / block : 0; }
  /// The mean of a sum over the valid rows' elements of [rows, cols] (0 without one).
  DP_HOST_DEVICE float elementMean(double sum, int64_t rows, int64_t cols) const {
    const int64_t n = count(rows) * cols;
    return n > 0 ? static_cast<float>(sum / double(n)) : 0.0f;
  }
};

} // namespace dp::rt
