// A split of an image-classification data set (images and labels) held in memory as bytes, and
// the lookup of its IDX files in a data directory. Conversion to floats happens later, per batch
// (Batcher), so the resident copy is four times smaller than a float copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

/// N single-channel H x W images with one class label each.
class Dataset {
public:
  /// Loads an images file (IDX, N x H x W bytes) and a labels file (IDX, N bytes). Checks that
  /// the counts agree, that there is at least one sample, and that every label is below
  /// `numClasses`. Throws Error(ErrorKind::Data) naming the file at fault.
  static Dataset load(const std::string &imagesPath, const std::string &labelsPath,
                      int numClasses = 10);

  /// Loads `<split>-images-idx3-ubyte` and `<split>-labels-idx1-ubyte` from `dir` (see
  /// findIdxFile for the spellings accepted); `split` is "train" or "t10k".
  static Dataset loadSplit(const std::string &dir, const std::string &split, int numClasses = 10);

  /// Builds a dataset from bytes already in memory, with the same checks as load. `name`
  /// stands for both files in messages.
  static Dataset fromBytes(std::vector<uint8_t> images, std::vector<uint8_t> labels, int64_t height,
                           int64_t width, int numClasses, const std::string &name);

  int64_t size() const { return size_; }
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  /// Pixels per sample (height x width).
  int64_t pixels() const { return height_ * width_; }
  /// The pixels of sample `i`, row-major.
  const uint8_t *image(int64_t i) const { return images_.data() + i * pixels(); }
  uint8_t label(int64_t i) const { return labels_[i]; }
  const std::string &imagesPath() const { return imagesPath_; }
  const std::string &labelsPath() const { return labelsPath_; }
  /// How many samples each class has; the result has `numClasses` entries.
  std::vector<int64_t> classCounts(int numClasses) const;

private:
  void check(int numClasses) const;

  std::vector<uint8_t> images_, labels_;
  int64_t size_ = 0, height_ = 0, width_ = 0;
  std::string imagesPath_, labelsPath_;
};

/// Finds the IDX file `<stem>-<kind>-ubyte` in `dir` ("train-images", "idx3"), trying in order
/// `<stem>-<kind>-ubyte.gz`, `<stem>-<kind>-ubyte`, `<stem>.<kind>-ubyte` and
/// `<stem>.<kind>-ubyte.gz` (the last two are how some mirrors name the files). Throws
/// Error(ErrorKind::Data) listing the names tried when none exists.
std::string findIdxFile(const std::string &dir, const std::string &stem, const std::string &kind);

} // namespace dp::rt
