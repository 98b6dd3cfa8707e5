// Loading data sets from IDX files; see Dataset.h.
#include "runtime/data/Dataset.h"

#include "runtime/core/Error.h"
#include "runtime/data/Idx.h"

#include <sys/stat.h>

namespace dp::rt {
namespace {

bool isFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
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

} // namespace

std::string findIdxFile(const std::string &dir, const std::string &stem, const std::string &kind) {
  if (!isDirectory(dir))
    throw Error(ErrorKind::Data, dir + ": data directory not found");
  const std::string names[] = {stem + "-" + kind + "-ubyte.gz", stem + "-" + kind + "-ubyte",
                               stem + "." + kind + "-ubyte", stem + "." + kind + "-ubyte.gz"};
  for (const std::string &name : names)
    if (isFile(joinPath(dir, name)))
      return joinPath(dir, name);
  throw Error(ErrorKind::Data, joinPath(dir, names[0]) + ": file not found (also tried " +
                                   names[1] + ", " + names[2] + " and " + names[3] + ")");
}

Dataset Dataset::load(const std::string &imagesPath, const std::string &labelsPath,
                      int numClasses) {
  // Labels first: the file is small, so a wrong path or a bad file is reported at once.
  IdxArray labels = readIdx(labelsPath, 1, "labels");
  IdxArray images = readIdx(imagesPath, 3, "images");
  Dataset data;
  data.size_ = images.dims[0];
  data.height_ = images.dims[1];
  data.width_ = images.dims[2];
  data.images_ = std::move(images.data);
  data.labels_ = std::move(labels.data);
  data.imagesPath_ = imagesPath;
  data.labelsPath_ = labelsPath;
  data.check(numClasses);
  return data;
}

Dataset Dataset::loadSplit(const std::string &dir, const std::string &split, int numClasses) {
  std::string labels = findIdxFile(dir, split + "-labels", "idx1");
  std::string images = findIdxFile(dir, split + "-images", "idx3");
  return load(images, labels, numClasses);
}

Dataset Dataset::fromBytes(std::vector<uint8_t> images, std::vector<uint8_t> labels, int64_t height,
                           int64_t width, int numClasses, const std::string &name) {
  Dataset data;
  if (height <= 0 || width <= 0 || images.size() % (height * width) != 0)
    throw Error(ErrorKind::Data, name + ": " + std::to_string(images.size()) +
                                     " image bytes are not a whole number of " +
                                     std::to_string(height) + "x" + std::to_string(width) +
                                     " images");
  data.size_ = static_cast<int64_t>(images.size()) / (height * width);
  data.height_ = height;
  data.width_ = width;
  data.images_ = std::move(images);
  data.labels_ = std::move(labels);
  data.imagesPath_ = data.labelsPath_ = name;
  data.check(numClasses);
  return data;
}

void Dataset::check(int numClasses) const {
  const int64_t numLabels = static_cast<int64_t>(labels_.size());
  if (numLabels != size_)
    throw Error(ErrorKind::Data, labelsPath_ + ": holds " + std::to_string(numLabels) +
                                     " labels but " + imagesPath_ + " holds " +
                                     std::to_string(size_) + " images");
  if (size_ == 0)
    throw Error(ErrorKind::Data, imagesPath_ + ": holds no samples");
  if (height_ == 0 || width_ == 0)
    throw Error(ErrorKind::Data, imagesPath_ + ": images are " + std::to_string(height_) + "x" +
                                     std::to_string(width_) + " pixels");
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

std::vector<int64_t> Dataset::classCounts(int numClasses) const {
  std::vector<int64_t> counts(numClasses > 0 ? numClasses : 0, 0);
  for (uint8_t label : labels_)
    if (label < counts.size())
      ++counts[label];
  return counts;
}

} // namespace dp::rt
