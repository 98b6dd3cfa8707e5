// Cuts a Dataset into batches for the training and evaluation loops. The sample order of an
// epoch is a pure function of (seed, epoch), and any row range of a batch can be gathered on its
// own, so data-parallel replicas each fill only their shard of the same global batch.
#pragma once

#include "runtime/data/Dataset.h"

#include <cstdint>
#include <vector>

namespace dp::rt {

/// Whether an epoch visits the samples shuffled (training) or in file order (evaluation).
enum class BatchOrder { Shuffled, Sequential };
/// What happens to the samples that do not fill a last batch: dropped (training: every step
/// sees a full batch) or kept in a padded batch (evaluation: every sample counts).
enum class Remainder { Drop, Pad };
/// How a sample's bytes are fed: as floats scaled to [0, 1] (pixels), or as the integers they
/// are (i32: token ids an embedding looks up).
enum class SampleForm { Scaled, Integer };

class Batcher {
public:
  /// `data` must outlive the batcher. The order of epoch 0 is drawn at once.
  Batcher(const Dataset &data, int64_t batchSize, BatchOrder order, Remainder remainder,
          uint64_t seed = 0, SampleForm form = SampleForm::Scaled);

  /// Draws the sample order of `epoch` (0-based) by a Fisher-Yates shuffle with xoshiro256**
  /// seeded from (seed, epoch) alone: the same on every platform and replica, and independent of
  /// which epochs ran before (a resumed run sees the same order). A no-op for Sequential.
  void setEpoch(int64_t epoch);

  int64_t batchSize() const { return batchSize_; }
  const Dataset &data() const { return data_; }
  SampleForm sampleForm() const { return form_; }
  /// Batches per epoch.
  int64_t numBatches() const { return numBatches_; }
  /// Samples the batches of an epoch cover (the data set minus any dropped remainder).
  int64_t samplesPerEpoch() const;
  /// Rows of batch `batch` that hold real samples: the batch size, except in a padded last batch.
  int64_t validRows(int64_t batch) const;

  /// Gathers rows [rowBegin, rowEnd) of global batch `batch` of the current epoch: `images`
  /// receives (rowEnd - rowBegin) x pixels() floats scaled to [0, 1] (each sample HWC, as the
  /// Dataset holds it; i32 values of the bytes for SampleForm::Integer), `targets` one i32 label
  /// per row, or a regression's targetWidth() floats per row (Dataset::targetBytes() per row either
  /// way). Padding rows (past the data, in a padded last batch) get zero pixels and label 0 (zero
  /// targets). Returns how many of the rows written are real samples. Throws Error(Runtime)
  /// on a bad range.
  int64_t fillBatch(int64_t batch, int64_t rowBegin, int64_t rowEnd, void *images,
                    void *targets) const;

  /// The sample indices of the current epoch in visiting order (covers the whole data set,
  /// including samples a dropped remainder leaves out).
  const std::vector<uint32_t> &order() const { return order_; }

private:
  const Dataset &data_;
  int64_t batchSize_;
  int64_t numBatches_;
  BatchOrder orderKind_;
  Remainder remainder_;
  uint64_t seed_;
  SampleForm form_;
  std::vector<uint32_t> order_;
};

} // namespace dp::rt
