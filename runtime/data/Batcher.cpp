// Epoch orders and batch gathering; see Batcher.h.
#include "runtime/data/Batcher.h"

#include "runtime/base/Error.h"
#include "runtime/data/Random.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dp::rt {
namespace {

/// Pixel bytes -> floats in [0, 1], exactly x / 255 (a loop the compiler vectorises; a
/// lookup table measured 25% slower, the random rows' memory traffic being the rest).
void scalePixels(const uint8_t *in, float *out, int64_t n) {
  for (int64_t p = 0; p < n; ++p)
    out[p] = static_cast<float>(in[p]) / 255.0f;
}

// Separates the shuffle's random stream from other users of the same --seed (parameter init).
constexpr uint64_t kShuffleStream = 0x53485546464c4531ull; // "SHUFFLE1"

} // namespace

Batcher::Batcher(const Dataset &data, int64_t batchSize, BatchOrder order, Remainder remainder,
                 uint64_t seed, SampleForm form)
    : data_(data), batchSize_(batchSize), orderKind_(order), remainder_(remainder), seed_(seed),
      form_(form) {
  if (batchSize <= 0)
    throw Error(ErrorKind::Runtime, "batch size " + std::to_string(batchSize) + " is not positive");
  if (data.size() > std::numeric_limits<uint32_t>::max())
    throw Error(ErrorKind::Data, data.imagesPath() + ": too many samples");
  numBatches_ = remainder == Remainder::Drop ? data.size() / batchSize
                                             : (data.size() + batchSize - 1) / batchSize;
  order_.resize(data.size());
  setEpoch(0);
}

void Batcher::setEpoch(int64_t epoch) {
  std::iota(order_.begin(), order_.end(), 0u);
  if (orderKind_ == BatchOrder::Sequential)
    return;
  Rng rng(mixSeed(mixSeed(seed_, kShuffleStream), static_cast<uint64_t>(epoch)));
  for (size_t i = order_.size(); i > 1; --i) {
    size_t j = static_cast<size_t>(rng.below(i));
    std::swap(order_[i - 1], order_[j]);
  }
}

int64_t Batcher::samplesPerEpoch() const {
  return remainder_ == Remainder::Drop ? numBatches_ * batchSize_ : data_.size();
}

int64_t Batcher::validRows(int64_t batch) const {
  int64_t begin = batch * batchSize_;
  return std::max<int64_t>(0, std::min(batchSize_, data_.size() - begin));
}

int64_t Batcher::fillBatch(int64_t batch, int64_t rowBegin, int64_t rowEnd, void *images,
                           void *targets) const {
  if (batch < 0 || batch >= numBatches_ || rowBegin < 0 || rowBegin > rowEnd || rowEnd > batchSize_)
    throw Error(ErrorKind::Runtime, "fillBatch: rows [" + std::to_string(rowBegin) + ", " +
                                        std::to_string(rowEnd) + ") of batch " +
                                        std::to_string(batch) + " are outside " +
                                        std::to_string(numBatches_) + " batches of " +
                                        std::to_string(batchSize_) + " rows");
  const int64_t pixels = data_.pixels();
  const int64_t valid = validRows(batch);
  // A class label per row (i32), or a regression's targetWidth floats.
  const int64_t width = data_.targetWidth();
  auto *labels = static_cast<int32_t *>(targets);
  auto *values = static_cast<float *>(targets);
  int64_t real = 0;
  // Floats and i32 values both take 4 bytes: a padding row is zero bits either way.
  const bool integer = form_ == SampleForm::Integer;
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    float *out = static_cast<float *>(images) + (row - rowBegin) * pixels;
    float *value = width > 0 ? values + (row - rowBegin) * width : nullptr;
    if (row < valid) {
      const int64_t sample = order_[batch * batchSize_ + row];
      if (integer)
        std::copy(data_.image(sample), data_.image(sample) + pixels,
                  reinterpret_cast<int32_t *>(out));
      else
        scalePixels(data_.image(sample), out, pixels);
      if (width > 0)
        std::copy(data_.target(sample), data_.target(sample) + width, value);
      else
        labels[row - rowBegin] = data_.label(sample);
      ++real;
    } else {
      std::fill(out, out + pixels, 0.0f);
      if (width > 0)
        std::fill(value, value + width, 0.0f);
      else
        labels[row - rowBegin] = 0;
    }
  }
  return real;
}

} // namespace dp::rt
