// A split of an image data set (images and class labels, or a regression's float targets) held
// in memory, and the lookup of its files in a data directory: MNIST-style IDX files or CIFAR-10
// binary batches. The images stay bytes until they are converted to floats per batch
// (Batcher), so the resident copy is four times smaller than a float copy.
#pragma once

#include "runtime/data/Idx.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

/// An image size to resize to when loading; {0, 0} keeps the size the files have.
struct ImageSize {
  int64_t height = 0;
  int64_t width = 0;
};

/// The file formats a data directory may hold.
enum class DataFormat { Idx, Cifar10 };

/// The largest data set (in bytes, after any resize) a load may build: a guard against a
/// mistaken resize target asking for an allocation no machine has.
inline constexpr uint64_t kMaxDatasetBytes = uint64_t(16) << 30;

/// The largest side, in pixels, of an image an IDX header may declare (Fashion-MNIST's are 28):
/// a header past it is refused before any body is read.
inline constexpr uint32_t kMaxImageSide = 1 << 14;

/// N images of H x W pixels with C channels (1 for MNIST, 3 for CIFAR-10) and one class label
/// each, or, for a regression, a row of `targetWidth()` float targets each. Each image is stored
/// HWC (height x width x channels, channels fastest), the per-sample layout of the models' NHWC
/// image input; with one channel that is plain row-major H x W.
class Dataset {
public:
  /// Loads an images file (IDX, N x H x W bytes) and a labels file (IDX, N bytes). Both headers
  /// are read and checked before either body: the counts must agree, there must be at least
  /// one sample, each side of an image from 1 to kMaxImageSide; then each body is held to its
  /// header (readIdx), and every label must be below `numClasses`. Throws
  /// Error(ErrorKind::Data) naming the file at fault, or Error(ErrorKind::Memory) when the
  /// declared size is more than this process can get (checkMemoryFits), before allocating it.
  static Dataset load(const std::string &imagesPath, const std::string &labelsPath,
                      int numClasses = 10);

  /// Loads an images file (IDX, N x H x W bytes) and a regression's targets file (IDX of
  /// 32-bit floats, N x `targetWidth`), with load's checks (the counts must agree), and each
  /// target must be finite. Throws as load, and for a targets file of another width.
  static Dataset loadWithTargets(const std::string &imagesPath, const std::string &targetsPath,
                                 int64_t targetWidth);

  /// Loads split `split` from `dir`, detecting the format (detectDataFormat):
  /// - IDX: `<split>-images-idx3-ubyte` and `<split>-labels-idx1-ubyte` (see findIdxFile for the
  ///   spellings accepted); `split` is "train" or "t10k" ("test" is taken as "t10k"). With a
  ///   non-zero `targetWidth` (a regression), `<split>-targets-idx2-float` instead of the
  ///   labels: N x targetWidth floats (loadWithTargets).
  /// - CIFAR-10 binary batches: see loadCifar10; "t10k" is taken as "test". (No targets.)
  /// A non-zero `resize` resizes every image once, at load (see resized).
  static Dataset loadSplit(const std::string &dir, const std::string &split, int numClasses = 10,
                           ImageSize resize = {}, int64_t targetWidth = 0);

  /// Loads a CIFAR-10 split from its binary batches in `dir`, or in `dir/cifar-10-batches-bin` when
  /// `dir` itself holds none: "train" is data_batch_1.bin .. data_batch_5.bin concatenated in that
  /// order, "test" (or "t10k") is test_batch.bin. Each record is 3073 bytes: a label byte (0..9),
  /// then 32x32 red, 32x32 green and 32x32 blue bytes (channel-planar CHW); the pixels are
  /// reordered to HWC on load, giving 32x32x3 images. A file that is missing, empty, not a whole
  /// number of records, cut short while read, or that holds a label above 9 throws
  /// Error(ErrorKind::Data) naming the file, the record and the problem; sizes are checked against
  /// the file, and the total against the memory this process can get (Error(ErrorKind::Memory)),
  /// before anything is allocated. A non-zero `resize` resizes every image once, at load (see
  /// resized).
  static Dataset loadCifar10(const std::string &dir, const std::string &split, int numClasses = 10,
                             ImageSize resize = {});

  /// Builds a dataset from bytes already in memory (each image HWC), with the same checks as
  /// load. `name` stands for both files in messages.
  static Dataset fromBytes(std::vector<uint8_t> images, std::vector<uint8_t> labels, int64_t height,
                           int64_t width, int numClasses, const std::string &name,
                           int64_t channels = 1);
  /// The same with a regression's targets: `targetWidth` floats per image.
  static Dataset fromTargets(std::vector<uint8_t> images, std::vector<float> targets,
                             int64_t targetWidth, int64_t height, int64_t width,
                             const std::string &name, int64_t channels = 1);

  /// A copy with every image resized to `height` x `width` by bilinear interpolation with
  /// half-pixel centres (align_corners=false; the default of tf.image.resize with method
  /// "bilinear" and no antialiasing, and of PyTorch's interpolate(mode="bilinear")): output pixel
  /// (y, x) samples the input at ((y + 0.5) * H / height - 0.5, (x + 0.5) * W / width - 0.5),
  /// clamped to the image. Each channel is interpolated on its own; results are rounded to the
  /// nearest byte (halves up). Throws Error(ErrorKind::Data) for a non-positive size or a result
  /// larger than kMaxDatasetBytes.
  Dataset resized(int64_t height, int64_t width) const;

  /// Moves the last `count` samples (0 < count < size()) out into a data set of their own,
  /// which messages name `name` (a validation split: the same rows whatever the seed, the
  /// layout or a resume). Throws Error(ErrorKind::Usage) for a count out of range.
  Dataset takeLast(int64_t count, const std::string &name);

  int64_t size() const { return size_; }
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  /// Channels per pixel: 1 (grey) for IDX data sets, 3 (RGB) for CIFAR-10.
  int64_t channels() const { return channels_; }
  /// Bytes (and, after Batcher, floats) per sample: height x width x channels.
  int64_t pixels() const { return height_ * width_ * channels_; }
  /// The pixels of sample `i`: HWC, row-major.
  const uint8_t *image(int64_t i) const { return images_.data() + i * pixels(); }
  uint8_t label(int64_t i) const { return labels_[i]; }
  /// Floats per sample of a regression's targets; 0 when the samples have class labels.
  int64_t targetWidth() const { return targetWidth_; }
  /// The targetWidth() targets of sample `i` (a regression's data set only).
  const float *target(int64_t i) const { return targets_.data() + i * targetWidth_; }
  /// Bytes of one sample's targets as a batch holds them: an i32 label, or its floats.
  int64_t targetBytes() const { return targetWidth_ > 0 ? 4 * targetWidth_ : 4; }
  const std::string &imagesPath() const { return imagesPath_; }
  /// The labels' file, or a regression's targets file.
  const std::string &labelsPath() const { return labelsPath_; }
  /// How many samples each class has; the result has `numClasses` entries (zeros for a
  /// regression's data set).
  std::vector<int64_t> classCounts(int numClasses) const;

private:
  /// The images of an IDX images array read from `imagesPath`, without targets yet (labels or
  /// a regression's, read from `targetsPath`).
  static Dataset ofImages(IdxArray images, const std::string &imagesPath,
                          const std::string &targetsPath);
  void check(int numClasses) const;

  std::vector<uint8_t> images_, labels_;
  std::vector<float> targets_;
  int64_t size_ = 0, height_ = 0, width_ = 0, channels_ = 1, targetWidth_ = 0;
  std::string imagesPath_, labelsPath_;
};

/// Which format `dir` holds: Idx when any of the IDX files of loadSplit (train or t10k, images
/// or labels, any accepted spelling) is there (IDX wins when both are), Cifar10 when any of
/// data_batch_1.bin .. data_batch_5.bin or test_batch.bin is in `dir` or in
/// `dir/cifar-10-batches-bin`. Throws Error(ErrorKind::Data) when `dir` is not a directory, or
/// listing the files expected of each format when it holds neither.
DataFormat detectDataFormat(const std::string &dir);

/// Finds the IDX file `<stem>-<kind>-<type>` in `dir` ("train-images", "idx3", "ubyte"), trying
/// in order `<stem>-<kind>-<type>.gz`, `<stem>-<kind>-<type>`, `<stem>.<kind>-<type>` and
/// `<stem>.<kind>-<type>.gz` (the last two are how some mirrors name the files). Throws
/// Error(ErrorKind::Data) listing the names tried when none exists.
std::string findIdxFile(const std::string &dir, const std::string &stem, const std::string &kind,
                        const std::string &type = "ubyte");

} // namespace dp::rt
