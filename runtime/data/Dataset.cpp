// Loading data sets from IDX files and CIFAR-10 binary batches, and resizing them; see
// Dataset.h.
#include "runtime/data/Dataset.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"
#include "runtime/base/Heartbeat.h"
#include "runtime/base/HostMemory.h"
#include "runtime/data/Idx.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>

namespace dp::rt {
namespace {

/// Whether something is at `path`: a FIFO or device named like a data file is found here
/// and refused by its reader, with what it is, rather than reported missing.
bool isFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && !S_ISDIR(info.st_mode);
}

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// CIFAR-10 binary format: records of one label byte and 32x32 pixels per channel, planar.
constexpr int64_t kCifarSide = 32;
constexpr int64_t kCifarChannels = 3;
constexpr int64_t kCifarPlane = kCifarSide * kCifarSide;       // 1024
constexpr int64_t kCifarPixels = kCifarPlane * kCifarChannels; // 3072
constexpr int64_t kCifarRecord = 1 + kCifarPixels;             // 3073
constexpr int kCifarClasses = 10;
constexpr int kCifarTrainFiles = 5;
constexpr const char *kCifarFolder = "cifar-10-batches-bin";
constexpr const char *kCifarRecordText = "3073-byte records (a label byte, then 1024 red, 1024 "
                                         "green and 1024 blue pixel bytes)";

std::string cifarTrainName(int i) { return "data_batch_" + std::to_string(i) + ".bin"; }
const char *const kCifarTestName = "test_batch.bin";

bool hasCifarFiles(const std::string &dir) {
  for (int i = 1; i <= kCifarTrainFiles; ++i)
    if (isFile(joinPath(dir, cifarTrainName(i))))
      return true;
  return isFile(joinPath(dir, kCifarTestName));
}

/// The folder holding the batches: `dir`, or its cifar-10-batches-bin (the layout of the
/// official archive) when `dir` has none and that folder exists.
std::string cifarFolder(const std::string &dir) {
  const std::string nested = joinPath(dir, kCifarFolder);
  return !hasCifarFiles(dir) && isDirectory(nested) ? nested : dir;
}

bool hasIdxFiles(const std::string &dir) {
  for (const char *split : {"train", "t10k"})
    for (const char *kind : {"images-idx3", "labels-idx1"}) {
      std::string stem = std::string(split) + "-" + kind;
      std::string dotted = stem;
      dotted[dotted.find('-', std::string(split).size() + 1)] = '.';
      for (const std::string &name :
           {stem + "-ubyte", stem + "-ubyte.gz", dotted + "-ubyte", dotted + "-ubyte.gz"})
        if (isFile(joinPath(dir, name)))
          return true;
    }
  return false;
}

/// Records in the CIFAR-10 batch `path`, from its size: checks that it exists and is a
/// non-empty whole number of records no larger than kMaxIdxBytes, before anything is read.
int64_t cifarRecords(const std::string &path, const std::string &needed) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    throw Error(ErrorKind::Data, path + ": file not found (" + needed + ")");
  checkRegularMode(path, info.st_mode, "data", ErrorKind::Data);
  const uint64_t bytes = static_cast<uint64_t>(info.st_size);
  if (bytes == 0)
    throw Error(ErrorKind::Data,
                path + ": empty file (a CIFAR-10 batch holds " + kCifarRecordText + ")");
  if (bytes > kMaxIdxBytes)
    throw Error(ErrorKind::Data, path + ": " + std::to_string(bytes) +
                                     " bytes, more than the limit of " +
                                     std::to_string(kMaxIdxBytes) + " for one batch file");
  if (bytes % kCifarRecord != 0) {
    const uint64_t whole = bytes / kCifarRecord;
    throw Error(ErrorKind::Data, path + ": " + std::to_string(bytes) +
                                     " bytes is not a whole number of " + kCifarRecordText +
                                     ": truncated, record " + std::to_string(whole) + " (at byte " +
                                     std::to_string(whole * kCifarRecord) + ") has only " +
                                     std::to_string(bytes % kCifarRecord) + " of its " +
                                     std::to_string(kCifarRecord) + " bytes");
  }
  return static_cast<int64_t>(bytes / kCifarRecord);
}

/// Reads the `records` records of `path` into `labels` and `images` (records x 32x32x3 bytes,
/// HWC): pixel (y, x) of channel c moves from c * 1024 + y * 32 + x to (y * 32 + x) * 3 + c.
void readCifarFile(const std::string &path, int64_t records, uint8_t *labels, uint8_t *images) {
  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    throw Error(ErrorKind::Data, path + ": cannot open: " + std::strerror(errno));
  constexpr int64_t kChunk = 1024; // records per read: 3 MB
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min(records, kChunk) * kCifarRecord));
  for (int64_t first = 0; first < records; first += kChunk) {
    const int64_t count = std::min(kChunk, records - first);
    const size_t want = static_cast<size_t>(count * kCifarRecord);
    heartbeat::beat();
    const size_t got = std::fread(buffer.data(), 1, want, file.get());
    if (got != want) {
      const int64_t at = first * kCifarRecord + static_cast<int64_t>(got);
      throw Error(ErrorKind::Data,
                  path + ": " +
                      (std::ferror(file.get())
                           ? std::string("read error (") + std::strerror(errno) + ")"
                           : std::string("file ended early")) +
                      " at byte " + std::to_string(at) + ", in record " +
                      std::to_string(at / kCifarRecord) + " of the " + std::to_string(records) +
                      " its size promised (truncated while being read?)");
    }
    for (int64_t r = 0; r < count; ++r) {
      const uint8_t *record = buffer.data() + r * kCifarRecord;
      const int64_t index = first + r;
      if (record[0] >= kCifarClasses)
        throw Error(ErrorKind::Data, path + ": record " + std::to_string(index) + " (at byte " +
                                         std::to_string(index * kCifarRecord) + ") has label " +
                                         std::to_string(record[0]) +
                                         ", not a CIFAR-10 class (0..9)");
      labels[index] = record[0];
      const uint8_t *planes = record + 1;
      uint8_t *out = images + index * kCifarPixels;
      for (int64_t p = 0; p < kCifarPlane; ++p)
        for (int64_t c = 0; c < kCifarChannels; ++c)
          out[p * kCifarChannels + c] = planes[c * kCifarPlane + p];
    }
  }
}

/// One output coordinate of a bilinear resize along an axis: the two input coordinates it
/// blends and the weight of the second.
struct Tap {
  int64_t lo, hi;
  float frac;
};

/// Half-pixel-centre taps as TensorFlow's ResizeBilinear (half_pixel_centers=true) computes
/// them, in float: source = (o + 0.5) * (in / out) - 0.5, clamped to [0, in - 1].
std::vector<Tap> bilinearTaps(int64_t in, int64_t out) {
  std::vector<Tap> taps(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    const float source = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const float floored = std::floor(source);
    Tap &tap = taps[o];
    tap.lo = std::clamp<int64_t>(static_cast<int64_t>(floored), 0, in - 1);
    tap.hi = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(source)), 0, in - 1);
    tap.frac = source - floored;
  }
  return taps;
}

/// Checks a requested size and returns the bytes a data set of `count` such images takes.
uint64_t resizedBytes(int64_t count, int64_t height, int64_t width, int64_t channels,
                      const std::string &name) {
  const std::string size = std::to_string(height) + "x" + std::to_string(width);
  if (height <= 0 || width <= 0)
    throw Error(ErrorKind::Data, name + ": cannot resize to " + size + " pixels");
  const uint64_t limit = kMaxDatasetBytes;
  // Each factor is bounded before the product so it cannot overflow.
  uint64_t bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(channels);
  for (int64_t factor : {height, width}) {
    if (static_cast<uint64_t>(factor) > limit || bytes > limit / static_cast<uint64_t>(factor))
      throw Error(ErrorKind::Data, name + ": resizing " + std::to_string(count) + " images to " +
                                       size + " would take more than the limit of " +
                                       std::to_string(limit) + " bytes");
    bytes *= static_cast<uint64_t>(factor);
  }
  return bytes;
}

/// The header of an IDX images file, checked: at least one image, each side in range.
IdxHeader readImagesHeader(const std::string &imagesPath) {
  const IdxHeader imagesHeader = readIdxHeader(imagesPath, 3, "images");
  const uint32_t count = imagesHeader.dims[0], height = imagesHeader.dims[1],
                 width = imagesHeader.dims[2];
  if (count == 0)
    throw Error(ErrorKind::Data, imagesPath + ": holds no samples (its header declares 0 images)");
  if (height < 1 || height > kMaxImageSide || width < 1 || width > kMaxImageSide)
    throw Error(ErrorKind::Data, imagesPath + ": header declares images of " +
                                     std::to_string(height) + "x" + std::to_string(width) +
                                     " pixels; each side must be from 1 to " +
                                     std::to_string(kMaxImageSide));
  return imagesHeader;
}

/// Refuses a labels or targets header whose count is not the images'.
void checkPair(const IdxHeader &images, const std::string &imagesPath, const IdxHeader &other,
               const std::string &otherPath, const std::string &items) {
  if (other.dims[0] != images.dims[0])
    throw Error(ErrorKind::Data, otherPath + ": header declares " + std::to_string(other.dims[0]) +
                                     " " + items + " but " + imagesPath + " declares " +
                                     std::to_string(images.dims[0]) +
                                     " images; the two files are not a pair (nothing was read "
                                     "past their headers)");
}

Dataset maybeResize(Dataset data, ImageSize size) {
  if (size.height == 0 && size.width == 0)
    return data;
  if (size.height == data.height() && size.width == data.width())
    return data;
  return data.resized(size.height, size.width);
}

} // namespace

DataFormat detectDataFormat(const std::string &dir) {
  if (!isDirectory(dir))
    throw Error(ErrorKind::Data, dir + ": data directory not found");
  if (hasIdxFiles(dir))
    return DataFormat::Idx;
  if (hasCifarFiles(dir) || hasCifarFiles(joinPath(dir, kCifarFolder)))
    return DataFormat::Cifar10;
  throw Error(ErrorKind::Data,
              dir +
                  ": no data set found: expected the IDX files (MNIST format) "
                  "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte "
                  "and t10k-labels-idx1-ubyte (each may be gzipped, .gz, or spelled "
                  "train-images.idx3-ubyte; a regression's train-targets-idx2-float and "
                  "t10k-targets-idx2-float instead of the labels), or the CIFAR-10 binary "
                  "batches data_batch_1.bin .. "
                  "data_batch_5.bin and test_batch.bin (in the directory or in its " +
                  std::string(kCifarFolder) + "/)");
}

std::string findIdxFile(const std::string &dir, const std::string &stem, const std::string &kind,
                        const std::string &type) {
  if (!isDirectory(dir))
    throw Error(ErrorKind::Data, dir + ": data directory not found");
  const std::string dashed = stem + "-" + kind + "-" + type,
                    dotted = stem + "." + kind + "-" + type;
  const std::string names[] = {dashed + ".gz", dashed, dotted, dotted + ".gz"};
  for (const std::string &name : names)
    if (isFile(joinPath(dir, name)))
      return joinPath(dir, name);
  throw Error(ErrorKind::Data, joinPath(dir, names[0]) + ": file not found (also tried " +
                                   names[1] + ", " + names[2] + " and " + names[3] + ")");
}

Dataset Dataset::load(const std::string &imagesPath, const std::string &labelsPath,
                      int numClasses) {
  // Both headers first, checked against each other before any body is read: a gzipped labels
  // file of 4 MB can hold 4e9 labels, and inflating them (6 GB, 20 s) before the mismatch with
  // the images showed would be the cost of any such file. Labels first: a wrong path or a bad
  // file is reported at once.
  const IdxHeader labelsHeader = readIdxHeader(labelsPath, 1, "labels");
  const IdxHeader imagesHeader = readImagesHeader(imagesPath);
  const uint32_t count = imagesHeader.dims[0], height = imagesHeader.dims[1],
                 width = imagesHeader.dims[2];
  checkPair(imagesHeader, imagesPath, labelsHeader, labelsPath, "labels");
  // What the headers declare is all that will be allocated (readIdx holds each file to its
  // header): refused now if this process cannot get it, rather than failing in malloc.
  checkMemoryFits(imagesHeader.payload + labelsHeader.payload,
                  "the data set " + imagesPath + " (" + std::to_string(count) + " images of " +
                      std::to_string(height) + "x" + std::to_string(width) + " and their labels, " +
                      bytesText(imagesHeader.payload + labelsHeader.payload) + ")");
  IdxArray labels = readIdx(labelsPath, 1, "labels", labelsHeader);
  Dataset data = ofImages(readIdx(imagesPath, 3, "images", imagesHeader), imagesPath, labelsPath);
  data.labels_ = std::move(labels.data);
  data.check(numClasses);
  return data;
}

Dataset Dataset::loadWithTargets(const std::string &imagesPath, const std::string &targetsPath,
                                 int64_t targetWidth) {
  // As load: both headers first, the targets' first.
  const IdxHeader targetsHeader =
      readIdxHeader(targetsPath, 2, "targets", kMaxIdxBytes, IdxElement::F32);
  const IdxHeader imagesHeader = readImagesHeader(imagesPath);
  checkPair(imagesHeader, imagesPath, targetsHeader, targetsPath, "rows of targets");
  if (targetsHeader.dims[1] != targetWidth)
    throw Error(ErrorKind::Data, targetsPath + ": header declares " +
                                     std::to_string(targetsHeader.dims[1]) +
                                     " targets per sample, but the model predicts " +
                                     std::to_string(targetWidth) + " values per sample");
  const uint64_t bytes = imagesHeader.payload + 2 * targetsHeader.payload;
  checkMemoryFits(bytes, "the data set " + imagesPath + " (" +
                             std::to_string(imagesHeader.dims[0]) + " images and their targets, " +
                             bytesText(bytes) + ")");
  const IdxArray targets = readIdx(targetsPath, 2, "targets", targetsHeader);
  Dataset data = ofImages(readIdx(imagesPath, 3, "images", imagesHeader), imagesPath, targetsPath);
  data.targets_ = idxFloats(targets);
  data.targetWidth_ = targetWidth;
  data.check(1);
  return data;
}

Dataset Dataset::ofImages(IdxArray images, const std::string &imagesPath,
                          const std::string &targetsPath) {
  Dataset data;
  data.size_ = images.dims[0];
  data.height_ = images.dims[1];
  data.width_ = images.dims[2];
  data.images_ = std::move(images.data);
  data.imagesPath_ = imagesPath;
  data.labelsPath_ = targetsPath;
  return data;
}

Dataset Dataset::loadSplit(const std::string &dir, const std::string &split, int numClasses,
                           ImageSize resize, int64_t targetWidth) {
  const std::string stem = split == "test" ? "t10k" : split;
  if (targetWidth > 0) {
    // A regression's targets are floats: IDX only (CIFAR-10's records hold class labels).
    if (detectDataFormat(dir) == DataFormat::Cifar10)
      throw Error(ErrorKind::Data,
                  dir +
                      ": holds CIFAR-10 batches, whose records have class labels, but the "
                      "model is a regression: it needs " +
                      stem + "-images-idx3-ubyte and " + stem +
                      "-targets-idx2-float (IDX files of its samples and float targets)");
    std::string targets = findIdxFile(dir, stem + "-targets", "idx2", "float");
    std::string images = findIdxFile(dir, stem + "-images", "idx3");
    return maybeResize(loadWithTargets(images, targets, targetWidth), resize);
  }
  if (detectDataFormat(dir) == DataFormat::Cifar10)
    return loadCifar10(dir, split, numClasses, resize);
  std::string labels = findIdxFile(dir, stem + "-labels", "idx1");
  std::string images = findIdxFile(dir, stem + "-images", "idx3");
  return maybeResize(load(images, labels, numClasses), resize);
}

Dataset Dataset::loadCifar10(const std::string &dir, const std::string &split, int numClasses,
                             ImageSize resize) {
  if (!isDirectory(dir))
    throw Error(ErrorKind::Data, dir + ": data directory not found");
  const std::string folder = cifarFolder(dir);
  std::vector<std::string> paths;
  std::string needed, name;
  if (split == "train") {
    for (int i = 1; i <= kCifarTrainFiles; ++i)
      paths.push_back(joinPath(folder, cifarTrainName(i)));
    needed = "the CIFAR-10 training split is data_batch_1.bin .. data_batch_5.bin";
    name = joinPath(folder, "data_batch_[1-5].bin");
  } else if (split == "test" || split == "t10k") {
    paths.push_back(joinPath(folder, kCifarTestName));
    needed = "the CIFAR-10 test split is test_batch.bin";
    name = paths.back();
  } else {
    throw Error(ErrorKind::Data,
                dir + ": unknown CIFAR-10 split '" + split + "' (expected train or test)");
  }
  // Every file's size is checked before anything is allocated or read.
  std::vector<int64_t> records;
  int64_t total = 0;
  for (const std::string &path : paths) {
    records.push_back(cifarRecords(path, needed));
    total += records.back();
  }
  const uint64_t bytes = resizedBytes(total, kCifarSide, kCifarSide, kCifarChannels, name);
  checkMemoryFits(bytes + static_cast<uint64_t>(total),
                  "the data set " + name + " (" + std::to_string(total) + " CIFAR-10 records, " +
                      bytesText(bytes + static_cast<uint64_t>(total)) + ")");
  Dataset data;
  data.size_ = total;
  data.height_ = data.width_ = kCifarSide;
  data.channels_ = kCifarChannels;
  data.images_.resize(static_cast<size_t>(total * kCifarPixels));
  data.labels_.resize(static_cast<size_t>(total));
  int64_t first = 0;
  for (size_t f = 0; f < paths.size(); ++f) {
    readCifarFile(paths[f], records[f], data.labels_.data() + first,
                  data.images_.data() + first * kCifarPixels);
    first += records[f];
  }
  data.imagesPath_ = data.labelsPath_ = name;
  data.check(numClasses);
  return maybeResize(std::move(data), resize);
}

Dataset Dataset::fromBytes(std::vector<uint8_t> images, std::vector<uint8_t> labels, int64_t height,
                           int64_t width, int numClasses, const std::string &name,
                           int64_t channels) {
  Dataset data;
  const std::string shape = std::to_string(height) + "x" + std::to_string(width) +
                            (channels == 1 ? "" : "x" + std::to_string(channels));
  if (height <= 0 || width <= 0 || channels <= 0 ||
      images.size() % (height * width * channels) != 0)
    throw Error(ErrorKind::Data, name + ": " + std::to_string(images.size()) +
                                     " image bytes are not a whole number of " + shape + " images");
  data.size_ = static_cast<int64_t>(images.size()) / (height * width * channels);
  data.height_ = height;
  data.width_ = width;
  data.channels_ = channels;
  data.images_ = std::move(images);
  data.labels_ = std::move(labels);
  data.imagesPath_ = data.labelsPath_ = name;
  data.check(numClasses);
  return data;
}

Dataset Dataset::fromTargets(std::vector<uint8_t> images, std::vector<float> targets,
                             int64_t targetWidth, int64_t height, int64_t width,
                             const std::string &name, int64_t channels) {
  if (targetWidth <= 0)
    throw Error(ErrorKind::Data, name + ": " + std::to_string(targetWidth) +
                                     " targets per sample; a regression has at least one");
  if (height <= 0 || width <= 0 || channels <= 0 ||
      images.size() % (height * width * channels) != 0)
    throw Error(ErrorKind::Data, name + ": " + std::to_string(images.size()) +
                                     " image bytes are not a whole number of " +
                                     std::to_string(height * width * channels) + "-byte images");
  Dataset data;
  data.size_ = static_cast<int64_t>(images.size()) / (height * width * channels);
  data.height_ = height;
  data.width_ = width;
  data.channels_ = channels;
  data.images_ = std::move(images);
  data.targets_ = std::move(targets);
  data.targetWidth_ = targetWidth;
  data.imagesPath_ = data.labelsPath_ = name;
  data.check(1);
  return data;
}

void Dataset::check(int numClasses) const {
  const int64_t numLabels = static_cast<int64_t>(labels_.size());
  if (targetWidth_ > 0) {
    // A regression's data set.
    if (size_ == 0)
      throw Error(ErrorKind::Data, imagesPath_ + ": holds no samples");
    const int64_t expected = size_ * targetWidth_;
    if (static_cast<int64_t>(targets_.size()) != expected)
      throw Error(ErrorKind::Data, labelsPath_ + ": holds " + std::to_string(targets_.size()) +
                                       " targets but " + imagesPath_ + " holds " +
                                       std::to_string(size_) + " images of " +
                                       std::to_string(targetWidth_) + " targets each");
    for (int64_t i = 0; i < expected; ++i)
      if (!std::isfinite(targets_[i]))
        throw Error(ErrorKind::Data, labelsPath_ + ": target " + std::to_string(i % targetWidth_) +
                                         " of sample " + std::to_string(i / targetWidth_) + " is " +
                                         std::to_string(targets_[i]) + ", not a finite number");
    return;
  }
  if (numLabels != size_)
    throw Error(ErrorKind::Data, labelsPath_ + ": holds " + std::to_string(numLabels) +
                                     " labels but " + imagesPath_ + " holds " +
                                     std::to_string(size_) + " images");
  if (size_ == 0)
    throw Error(ErrorKind::Data, imagesPath_ + ": holds no samples");
  if (height_ == 0 || width_ == 0 || channels_ == 0)
    throw Error(ErrorKind::Data, imagesPath_ + ": images are " + std::to_string(height_) + "x" +
                                     std::to_string(width_) + "x" + std::to_string(channels_) +
                                     " pixels");
  if (numClasses <= 0)
    throw Error(ErrorKind::Data,
                labelsPath_ + ": the model has " + std::to_string(numClasses) + " classes");
  for (int64_t i = 0; i < numLabels; ++i)
    if (labels_[i] >= numClasses)
      throw Error(ErrorKind::Data, labelsPath_ + ": label " + std::to_string(labels_[i]) +
                                       " of sample " + std::to_string(i) +
                                       " is out of range for a model with " +
                                       std::to_string(numClasses) + " classes");
}

Dataset Dataset::takeLast(int64_t count, const std::string &name) {
  if (count <= 0 || count >= size_)
    throw Error(ErrorKind::Usage, imagesPath_ + ": cannot hold out " + std::to_string(count) +
                                      " of its " + std::to_string(size_) + " samples");
  const int64_t kept = size_ - count;
  Dataset out;
  out.size_ = count;
  out.height_ = height_;
  out.width_ = width_;
  out.channels_ = channels_;
  out.targetWidth_ = targetWidth_;
  out.imagesPath_ = out.labelsPath_ = name;
  out.images_.assign(images_.begin() + kept * pixels(), images_.end());
  images_.resize(size_t(kept * pixels()));
  images_.shrink_to_fit();
  if (targetWidth_ > 0) {
    out.targets_.assign(targets_.begin() + kept * targetWidth_, targets_.end());
    targets_.resize(size_t(kept * targetWidth_));
  } else {
    out.labels_.assign(labels_.begin() + kept, labels_.end());
    labels_.resize(size_t(kept));
  }
  size_ = kept;
  return out;
}

Dataset Dataset::resized(int64_t height, int64_t width) const {
  const uint64_t bytes = resizedBytes(size_, height, width, channels_, imagesPath_);
  Dataset out;
  out.size_ = size_;
  out.height_ = height;
  out.width_ = width;
  out.channels_ = channels_;
  out.labels_ = labels_;
  out.targets_ = targets_;
  out.targetWidth_ = targetWidth_;
  out.imagesPath_ = imagesPath_;
  out.labelsPath_ = labelsPath_;
  out.images_.resize(static_cast<size_t>(bytes));
  const std::vector<Tap> rows = bilinearTaps(height_, height);
  const std::vector<Tap> cols = bilinearTaps(width_, width);
  // Separable, in TensorFlow's blend order: each input row is first interpolated across
  // (upper/lower = left + (right - left) * fx), then output rows blend two of those rows
  // (upper + (lower - upper) * fy): the same float operations as blending four pixels per
  // output, with the across pass done once per input row instead of twice per output.
  const int64_t c = channels_, inRow = width_ * c, outRow = width * c;
  std::vector<float> across(static_cast<size_t>(height_ * outRow));
  for (int64_t i = 0; i < size_; ++i) {
    heartbeat::beat();
    const uint8_t *in = image(i);
    for (int64_t y = 0; y < height_; ++y) {
      const uint8_t *src = in + y * inRow;
      float *dst = across.data() + y * outRow;
      for (const Tap &col : cols)
        for (int64_t k = 0; k < c; ++k) {
          const float left = src[col.lo * c + k], right = src[col.hi * c + k];
          *dst++ = left + (right - left) * col.frac;
        }
    }
    uint8_t *dst = out.images_.data() + i * out.pixels();
    for (const Tap &row : rows) {
      const float *upper = across.data() + row.lo * outRow;
      const float *lower = across.data() + row.hi * outRow;
      for (int64_t p = 0; p < outRow; ++p) {
        const float value = upper[p] + (lower[p] - upper[p]) * row.frac;
        *dst++ = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f) + 0.5f);
      }
    }
  }
  return out;
}

std::vector<int64_t> Dataset::classCounts(int numClasses) const {
  std::vector<int64_t> counts(numClasses > 0 ? numClasses : 0, 0);
  for (uint8_t label : labels_)
    if (label < counts.size())
      ++counts[label];
  return counts;
}

} // namespace dp::rt
