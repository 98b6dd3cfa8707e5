// Checkpoint files; see Checkpoint.h and docs/checkpoints.md for the layout.
#include "runtime/train/Checkpoint.h"

#include "runtime/base/TestEvents.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

namespace dp::rt {
namespace {

constexpr uint32_t kMaxNameBytes = 4096;
constexpr uint32_t kMaxRank = 8;
constexpr uint64_t kAlign = 64;
const char *const kPrefix = "ckpt-";
const char *const kSuffix = ".dpk";
constexpr size_t kStepDigits = 12;

uint64_t alignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// CRC-32 (zlib's) continued over `size` more bytes.
uint32_t crcUpdate(uint32_t crc, const void *data, uint64_t size) {
  const auto *p = static_cast<const Bytef *>(data);
  while (size > 0) {
    const uInt chunk = static_cast<uInt>(std::min<uint64_t>(size, 1u << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, chunk));
    p += chunk;
    size -= chunk;
  }
  return crc;
}

/// The CRC-32 a payload's starts from: from version 3 on it covers the header's version too,
/// so that a flipped version bit (3 to 2: the same records read another way) is caught.
uint32_t crcStart(uint32_t version) {
  const uint32_t empty = crcUpdate(0, nullptr, 0);
  if (version < 3)
    return empty;
  const uint8_t bytes[4] = {uint8_t(version), uint8_t(version >> 8), uint8_t(version >> 16),
                            uint8_t(version >> 24)};
  return crcUpdate(empty, bytes, 4);
}

/// Little-endian records appended to a string.
class Writer {
public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(static_cast<uint64_t>(v), 8); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    le(bits, 8);
  }
  void f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    le(bits, 4);
  }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  std::string &bytes() { return out_; }

private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

/// A bounds-checked cursor over the records; every problem is an Error(Checkpoint) naming the
/// file and the byte.
class Reader {
public:
  Reader(const std::string &bytes, uint64_t begin, uint64_t end, const std::string &what)
      : bytes_(bytes), at_(begin), end_(end), what_(what) {}

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(ErrorKind::Checkpoint, what_ + ": not a valid checkpoint: " + problem +
                                           " (at byte " + std::to_string(at_) + ")");
  }
  uint64_t le(int n, const char *field) {
    if (end_ - at_ < uint64_t(n))
      fail(std::string("truncated in ") + field);
    uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= uint64_t(static_cast<uint8_t>(bytes_[at_ + i])) << (8 * i);
    at_ += n;
    return v;
  }
  uint8_t u8(const char *f) { return static_cast<uint8_t>(le(1, f)); }
  uint32_t u32(const char *f) { return static_cast<uint32_t>(le(4, f)); }
  uint64_t u64(const char *f) { return le(8, f); }
  int64_t i64(const char *f) { return static_cast<int64_t>(le(8, f)); }
  /// A count that must not be negative.
  int64_t count(const char *f) {
    int64_t v = i64(f);
    if (v < 0)
      fail(std::string(f) + " is negative (" + std::to_string(v) + ")");
    return v;
  }
  double f64(const char *f) {
    uint64_t bits = le(8, f);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  float f32(const char *f) {
    uint32_t bits = static_cast<uint32_t>(le(4, f));
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  std::string str(const char *f, uint32_t maxBytes) {
    uint32_t n = u32(f);
    if (n > maxBytes)
      fail(std::string(f) + " of " + std::to_string(n) + " bytes (at most " +
           std::to_string(maxBytes) + ")");
    if (end_ - at_ < n)
      fail(std::string("truncated in ") + f);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  /// A record count whose records take at least `minBytes` each: refused before anything is
  /// allocated when the remaining bytes cannot hold them.
  uint32_t records(const char *f, uint64_t minBytes) {
    uint32_t n = u32(f);
    if (uint64_t(n) * minBytes > end_ - at_)
      fail(std::to_string(n) + " " + f + " cannot fit in the " + std::to_string(end_ - at_) +
           " bytes left");
    return n;
  }
  /// The next `n` bytes, as they are.
  const char *take(uint64_t n, const char *f) {
    if (end_ - at_ < n)
      fail(std::string("truncated in ") + f);
    const char *data = bytes_.data() + at_;
    at_ += n;
    return data;
  }
  uint64_t at() const { return at_; }

private:
  const std::string &bytes_;
  uint64_t at_, end_;
  const std::string &what_;
};

void putMeta(Writer &w, const CheckpointMeta &m) {
  const TrainPosition &p = m.position;
  w.i64(p.step);
  w.i64(p.epochsDone);
  w.i64(p.stepsInEpoch);
  w.i64(p.samplesInEpoch);
  w.u64(m.seed);
  w.i64(m.globalBatch);
  w.u64(m.planHash);
  w.u32(static_cast<uint32_t>(m.replicas));
  w.u32(static_cast<uint32_t>(m.processes));
  w.f64(p.epochLossSum);
  w.f64(p.epochCorrect);
  w.f64(p.epochSeconds);
  for (const PlateauState *state : {&p.plateau, &p.earlyStop}) {
    w.f64(state->scale);
    w.f64(state->best);
    w.u32(state->haveBest ? 1 : 0);
    w.i64(state->badEpochs);
  }
  w.str(m.model);
  w.u32(static_cast<uint32_t>(p.epochStepLosses.size()));
  for (float loss : p.epochStepLosses)
    w.f32(loss);
  w.u32(static_cast<uint32_t>(m.epochs.size()));
  for (const EpochStats &e : m.epochs) {
    w.i64(e.epoch);
    w.i64(e.steps);
    w.i64(e.samples);
    w.f64(e.loss);
    w.f64(e.trainAccuracy);
    w.f64(e.seconds);
    w.f64(e.samplesPerSec);
    w.f64(e.lrScale);
    w.f64(e.testLoss);
    w.f64(e.testAccuracy);
    w.u32(static_cast<uint32_t>(e.stepLosses.size()));
    for (float loss : e.stepLosses)
      w.f32(loss);
  }
  w.u32(static_cast<uint32_t>(m.threads)); // since version 2
  for (const EpochStats &e : m.epochs) {   // since version 3
    w.f64(e.valLoss);
    w.f64(e.valAccuracy);
  }
  w.u32(static_cast<uint32_t>(m.validations.size())); // since version 4
  for (const Evaluation &e : m.validations) {
    w.i64(e.epoch);
    w.i64(e.step);
    w.i64(e.stats.samples);
    w.f64(e.stats.loss);
    w.f64(e.stats.accuracy);
    w.u32(e.epochEnd ? 1 : 0);
  }
  w.u32(m.best >= 0 ? 1 : 0);
  w.u32(m.best >= 0 ? static_cast<uint32_t>(m.best) : 0);
  w.str(m.bestMonitor);
}

CheckpointMeta getMeta(Reader &r, uint32_t version) {
  CheckpointMeta m;
  TrainPosition &p = m.position;
  p.step = r.count("the step");
  p.epochsDone = r.count("the finished epochs");
  p.stepsInEpoch = r.count("the steps of the epoch");
  p.samplesInEpoch = r.count("the samples of the epoch");
  m.seed = r.u64("the seed");
  m.globalBatch = r.count("the global batch");
  if (m.globalBatch == 0)
    r.fail("the global batch is 0");
  m.planHash = r.u64("the plan hash");
  m.replicas = static_cast<int32_t>(r.u32("the replicas"));
  m.processes = static_cast<int32_t>(r.u32("the processes"));
  if (m.replicas < 1 || m.processes < 1)
    r.fail("a layout of " + std::to_string(m.replicas) + " x " + std::to_string(m.processes) +
           " replicas");
  p.epochLossSum = r.f64("the epoch's loss sum");
  p.epochCorrect = r.f64("the epoch's correct count");
  p.epochSeconds = r.f64("the epoch's seconds");
  for (PlateauState *state : {&p.plateau, &p.earlyStop}) {
    state->scale = r.f64("a plateau's scale");
    state->best = r.f64("a plateau's best loss");
    const uint32_t have = r.u32("a plateau's flag");
    if (have > 1)
      r.fail("a plateau's flag is " + std::to_string(have));
    state->haveBest = have == 1;
    state->badEpochs = r.count("a plateau's epochs");
  }
  m.model = r.str("the model name", kMaxNameBytes);
  p.epochStepLosses.resize(r.records("step losses", 4));
  for (float &loss : p.epochStepLosses)
    loss = r.f32("a step loss");
  m.epochs.resize(r.records("epoch records", 10 * 8 + 4));
  for (EpochStats &e : m.epochs) {
    e.epoch = r.count("an epoch number");
    e.steps = r.count("an epoch's steps");
    e.samples = r.count("an epoch's samples");
    e.loss = r.f64("an epoch's loss");
    e.trainAccuracy = r.f64("an epoch's accuracy");
    e.seconds = r.f64("an epoch's seconds");
    e.samplesPerSec = r.f64("an epoch's samples per second");
    e.lrScale = r.f64("an epoch's learning-rate factor");
    e.testLoss = r.f64("an epoch's test loss");
    e.testAccuracy = r.f64("an epoch's test accuracy");
    e.stepLosses.resize(r.records("step losses", 4));
    for (float &loss : e.stepLosses)
      loss = r.f32("a step loss");
  }
  if (version >= 2) {
    const uint32_t threads = r.u32("the compute threads");
    if (threads > 65536)
      r.fail("the compute threads are " + std::to_string(threads));
    m.threads = static_cast<int32_t>(threads);
  }
  if (version >= 3)
    for (EpochStats &e : m.epochs) {
      e.valLoss = r.f64("an epoch's validation loss");
      e.valAccuracy = r.f64("an epoch's validation accuracy");
    }
  if (version >= 4) {
    auto flag = [&](const char *field) {
      const uint32_t v = r.u32(field);
      if (v > 1)
        r.fail(std::string(field) + " is " + std::to_string(v));
      return v == 1;
    };
    m.validations.resize(r.records("validations", 5 * 8 + 4));
    for (Evaluation &e : m.validations) {
      e.set = Evaluation::Set::Validation;
      e.epoch = r.count("a validation's epoch");
      e.step = r.count("a validation's step");
      e.stats.samples = r.count("a validation's samples");
      e.stats.loss = r.f64("a validation's loss");
      e.stats.accuracy = r.f64("a validation's accuracy");
      e.epochEnd = flag("a validation's epoch-end flag");
    }
    const bool haveBest = flag("the best validation's flag");
    const uint32_t best = r.u32("the best validation");
    m.bestMonitor = r.str("the best validation's figure", 64);
    if (haveBest)
      m.best = best;
  }
  return m;
}

/// The bounds the records of every checkpoint dprun writes keep, whatever run reads them: a
/// file crafted with a valid checksum (or written by a broken tool) is refused here, before
/// any of its figures is used. A resumed run adds the bounds that need its data
/// (checkCheckpointPosition). Each bound is one dprun's writer keeps; why, beside it.
void checkMeta(const CheckpointMeta &m, const std::string &what) {
  auto refuse = [&](const std::string &problem) {
    throw Error(ErrorKind::Checkpoint, what + ": not a valid checkpoint: " + problem);
  };
  auto n = [](auto v) { return std::to_string(v); };
  auto real = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  const TrainPosition &p = m.position;
  // The next checkpoint's name must hold the step; the run adds steps to it without overflow.
  if (p.step > kMaxCheckpointStep)
    refuse("step " + n(p.step) + " is past " + n(kMaxCheckpointStep) +
           ", the last step a checkpoint's name holds");
  // Each finished epoch adds one record, which a resumed run carries on: the records bound
  // the epoch number a resumed run starts from.
  if (uint64_t(p.epochsDone) != m.epochs.size())
    refuse(n(p.epochsDone) + " finished epochs, but " + n(m.epochs.size()) +
           " epoch records (one per finished epoch)");
  for (size_t i = 0; i < m.epochs.size(); ++i) {
    const EpochStats &e = m.epochs[i];
    const std::string name = "the record of epoch " + n(i + 1);
    if (e.epoch != int64_t(i + 1))
      refuse(name + " is numbered " + n(e.epoch));
    if (e.steps < 1 || e.samples < e.steps)
      refuse(name + " has " + n(e.steps) + " steps of " + n(e.samples) +
             " samples (an epoch takes at least one step of at least one sample)");
    if (!(std::isfinite(e.seconds) && e.seconds >= 0) ||
        !(std::isfinite(e.samplesPerSec) && e.samplesPerSec >= 0))
      refuse(name + " has " + real(e.seconds) + " seconds and " + real(e.samplesPerSec) +
             " samples per second (not finite and >= 0)");
    if (!(std::isfinite(e.lrScale) && e.lrScale >= 0))
      refuse(name + " has a learning-rate factor of " + real(e.lrScale) + " (not finite and >= 0)");
  }
  // Every step run adds one loss, to the unfinished epoch or a finished one.
  uint64_t losses = p.epochStepLosses.size();
  for (const EpochStats &e : m.epochs)
    losses += e.stepLosses.size();
  if (losses > uint64_t(p.step))
    refuse(n(losses) + " step losses recorded for step " + n(p.step) +
           " (at most one loss per step)");
  // The unfinished epoch's place is counted in the writer's global batches (a divisor: the
  // product might overflow).
  if (p.samplesInEpoch % m.globalBatch != 0 || p.samplesInEpoch / m.globalBatch != p.stepsInEpoch)
    refuse(n(p.stepsInEpoch) + " steps of the unfinished epoch in batches of " +
           n(m.globalBatch) + " do not make its " + n(p.samplesInEpoch) + " samples");
  // Each replica holds at least one sample of the global batch.
  if (int64_t(m.replicas) * m.processes > m.globalBatch)
    refuse("a layout of " + n(m.processes) + " process(es) x " + n(m.replicas) +
           " replica(s) cannot share a global batch of " + n(m.globalBatch));
  if (!std::isfinite(p.epochLossSum))
    refuse("the unfinished epoch's loss sum is " + real(p.epochLossSum) + " (not finite)");
  if (!(std::isfinite(p.epochCorrect) && p.epochCorrect >= 0))
    refuse("the unfinished epoch's correct count is " + real(p.epochCorrect) +
           " (not finite and >= 0)");
  if (!(std::isfinite(p.epochSeconds) && p.epochSeconds >= 0))
    refuse("the unfinished epoch's seconds are " + real(p.epochSeconds) +
           " (not finite and >= 0)");
  // Each validation follows a step of the run (or its start), in order, in an epoch begun.
  int64_t lastStep = 0;
  for (size_t i = 0; i < m.validations.size(); ++i) {
    const Evaluation &e = m.validations[i];
    const std::string name = "validation " + n(i + 1);
    if (e.step < lastStep || e.step > p.step)
      refuse(name + " is after step " + n(e.step) +
             " (the validations are in order, none after step " + n(p.step) + ")");
    lastStep = e.step;
    if (e.epoch < 1 || e.epoch > p.epochsDone + 1)
      refuse(name + " is in epoch " + n(e.epoch) + " (of " + n(p.epochsDone) +
             " finished and one begun)");
    if (e.stats.samples < 1)
      refuse(name + " has " + n(e.stats.samples) + " samples");
  }
  // --restore-best's weights are those of one of the validations, chosen by a known figure.
  if (m.best >= 0 && uint64_t(m.best) >= m.validations.size())
    refuse("the best weights are those of validation " + n(m.best + 1) + " of " +
           n(m.validations.size()));
  if ((m.best >= 0) != !m.bestMonitor.empty() ||
      (m.best >= 0 && m.bestMonitor != "val_loss" && m.bestMonitor != "val_accuracy"))
    refuse("the best validation was chosen by '" + m.bestMonitor +
           "' (val_loss or val_accuracy with best weights, nothing without)");
  for (const auto &[state, name] : {std::pair{&p.plateau, "the plateau schedule's"},
                                    std::pair{&p.earlyStop, "early stopping's"}}) {
    // The scale starts at 1 and only falls, by factors in (0, 1), never to 0.
    if (!(state->scale > 0 && state->scale <= 1))
      refuse(std::string(name) + " learning-rate scale is " + real(state->scale) +
             " (not in (0, 1])");
    if (!std::isfinite(state->best))
      refuse(std::string(name) + " best test loss is " + real(state->best) + " (not finite)");
    // Each epoch without an improvement adds one.
    if (state->badEpochs > p.epochsDone)
      refuse(std::string(name) + " count of epochs without improvement is " +
             n(state->badEpochs) + ", more than the " + n(p.epochsDone) + " finished");
  }
}

/// The bytes of a header for a payload of `payloadBytes` with `crc`.
std::string header(uint64_t payloadBytes, uint32_t crc) {
  Writer w;
  w.bytes().append(kCheckpointMagic, 8);
  w.u32(kCheckpointVersion);
  w.u32(kCheckpointHeaderBytes);
  w.u64(payloadBytes);
  w.u32(crc);
  w.bytes().resize(kCheckpointHeaderBytes, '\0');
  return w.bytes();
}

std::string shapeText(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

bool isCheckpointName(const std::string &name, int64_t &step) {
  const size_t prefix = std::strlen(kPrefix), suffix = std::strlen(kSuffix);
  if (name.size() != prefix + kStepDigits + suffix || name.compare(0, prefix, kPrefix) != 0 ||
      name.compare(prefix + kStepDigits, suffix, kSuffix) != 0)
    return false;
  step = 0;
  for (size_t i = prefix; i < prefix + kStepDigits; ++i) {
    if (name[i] < '0' || name[i] > '9')
      return false;
    step = step * 10 + (name[i] - '0');
  }
  return true;
}

} // namespace

std::string CheckpointTensor::text() const { return shapeText(dtype, shape); }

Checkpoint Checkpoint::fromBytes(std::string bytes, const std::string &what) {
  const uint64_t size = bytes.size();
  return parse(std::move(bytes), size, what);
}

Checkpoint Checkpoint::parse(std::string bytes, uint64_t fileSize, const std::string &what) {
  Checkpoint c;
  c.bytes = std::move(bytes);
  c.source = what;
  const std::string &b = c.bytes;
  // The whole file, or its beginning: the header and the records (the values follow).
  if (fileSize < b.size())
    throw Error(ErrorKind::Runtime, "internal: " + what + " has " + std::to_string(b.size()) +
                                        " bytes, more than its file's " + std::to_string(fileSize));
  const bool whole = fileSize == b.size();
  Reader head(b, 0, b.size(), what);
  if (b.size() < 8 || std::memcmp(b.data(), kCheckpointMagic, 8) != 0)
    throw Error(ErrorKind::Checkpoint, what + ": not a dp checkpoint (no checkpoint magic)");
  if (b.size() < kCheckpointHeaderBytes)
    throw Error(ErrorKind::Checkpoint, what + ": truncated: " + std::to_string(b.size()) +
                                           " bytes, shorter than the checkpoint header");
  head.le(8, "the magic");
  const uint32_t version = head.u32("the version");
  if (version < kOldestCheckpointVersion || version > kCheckpointVersion)
    throw Error(ErrorKind::Checkpoint,
                what + ": checkpoint format version " + std::to_string(version) +
                    (version > kCheckpointVersion ? ", newer than" : ", older than") +
                    " this dprun's (" + std::to_string(kOldestCheckpointVersion) + " to " +
                    std::to_string(kCheckpointVersion) + ")");
  if (head.u32("the header size") != kCheckpointHeaderBytes)
    head.fail("a header size other than " + std::to_string(kCheckpointHeaderBytes));
  const uint64_t payload = head.u64("the payload size");
  const uint32_t crc = head.u32("the checksum");
  for (uint64_t i = head.at(); i < kCheckpointHeaderBytes; ++i)
    if (b[i] != '\0')
      head.fail("reserved header bytes are not zero");
  const uint64_t actual = fileSize - kCheckpointHeaderBytes;
  if (payload != actual)
    throw Error(ErrorKind::Checkpoint,
                what + ": truncated or padded: the header records " + std::to_string(payload) +
                    " payload bytes but the file holds " + std::to_string(actual));
  const uint32_t actualCrc =
      whole ? crcUpdate(crcStart(version), b.data() + kCheckpointHeaderBytes, actual) : crc;
  if (actualCrc != crc) {
    char text[96];
    std::snprintf(text, sizeof(text), "checksum mismatch (CRC-32 0x%08x recorded, 0x%08x read)",
                  crc, actualCrc);
    throw Error(ErrorKind::Checkpoint, what + ": corrupt: " + text);
  }

  Reader r(b, kCheckpointHeaderBytes, b.size(), what);
  c.meta = getMeta(r, version);
  checkMeta(c.meta, what);
  const uint32_t n = r.records("tensors", 4 + 4 + 16);
  c.tensors.resize(n);
  // A weight and its best copy share a name.
  std::set<std::pair<bool, std::string>> names;
  bool anyBest = false;
  for (CheckpointTensor &t : c.tensors) {
    t.name = r.str("a tensor name", kMaxNameBytes);
    if (t.name.empty())
      r.fail("a tensor without a name");
    const uint8_t kind = r.u8("a tensor kind");
    const uint8_t dtype = r.u8("a tensor type");
    const uint8_t rank = r.u8("a tensor rank");
    r.u8("padding");
    t.best = version >= 4 && kind == kBestWeightKind;
    if (!names.insert({t.best, t.name}).second)
      r.fail(std::string(t.best ? "best weight '" : "tensor '") + t.name + "' appears twice");
    if (kind > static_cast<uint8_t>(ParamKind::OptimizerState) && !t.best)
      r.fail("tensor '" + t.name + "' has unknown kind " + std::to_string(kind));
    if (dtype > static_cast<uint8_t>(DType::I32))
      r.fail("tensor '" + t.name + "' has unknown element type " + std::to_string(dtype));
    if (t.best && dtype != static_cast<uint8_t>(DType::F32))
      r.fail("best weight '" + t.name + "' is not f32");
    if (rank > kMaxRank)
      r.fail("tensor '" + t.name + "' has rank " + std::to_string(rank));
    anyBest |= t.best;
    t.kind = t.best ? ParamKind::Weight : static_cast<ParamKind>(kind);
    t.dtype = static_cast<DType>(dtype);
    t.numel = 1;
    for (uint8_t i = 0; i < rank; ++i) {
      const int64_t dim = r.count("a dimension");
      // Element counts stay far below what 64-bit byte offsets hold.
      if (dim != 0 && t.numel > (int64_t(1) << 56) / dim)
        r.fail("tensor '" + t.name + "' has more elements than a file can hold");
      t.shape.push_back(dim);
      t.numel *= dim;
    }
    t.offset = r.u64("a tensor offset");
    t.bytes = r.u64("a tensor size");
    if (t.bytes != uint64_t(t.numel) * dtypeSize(t.dtype))
      r.fail("tensor '" + t.name + "' (" + t.text() + ") records " + std::to_string(t.bytes) +
             " bytes");
  }
  if (anyBest != (c.meta.best >= 0))
    r.fail(anyBest ? "best weights without the validation they are of"
                   : "a best validation without its weights");
  // The values follow the records, each at a 64-byte boundary, in order and apart.
  uint64_t next = alignUp(r.at());
  for (const CheckpointTensor &t : c.tensors) {
    if (t.offset % kAlign != 0 || t.offset < next || t.offset > fileSize ||
        t.bytes > fileSize - t.offset)
      throw Error(ErrorKind::Checkpoint,
                  what + ": not a valid checkpoint: the values of tensor '" + t.name +
                      "' at byte " + std::to_string(t.offset) + " (" + std::to_string(t.bytes) +
                      " bytes) are not inside the file after the records and the tensor "
                      "before");
    next = alignUp(t.offset + t.bytes);
  }
  return c;
}

Checkpoint Checkpoint::read(const std::string &path, uint64_t maxBytes) {
  return fromBytes(readInputFile(path, maxBytes, "checkpoint", ErrorKind::Checkpoint), path);
}

std::optional<Checkpoint> shareCheckpoint(ProcessGroup &group, const Plan &plan,
                                          std::optional<Checkpoint> found, double timeoutSec) {
  if (group.size() <= 1)
    return found;
  const bool root = group.rank() == 0;
  // The file's size, its path's, and where its first values begin (the header and the
  // records before them). Rank 0 may have read a large file meanwhile: this waits longer.
  uint64_t sizes[3] = {0, 0, 0};
  if (root && found)
    sizes[0] = found->bytes.size(), sizes[1] = found->source.size(),
    sizes[2] = found->tensors.empty() ? found->bytes.size() : found->tensors.front().offset;
  // (A timeout of 0, none, stays none.)
  group.broadcast(sizes, sizeof(sizes), 0, timeoutSec > 0 ? std::max(timeoutSec, 600.0) : 0.0);
  if (sizes[1] == 0) // no checkpoint to resume from
    return std::nullopt;
  const uint64_t size = sizes[0], prefix = sizes[2];
  // The records: the meta's (bounded as checkpointSizeLimit bounds them) and a tensor's each,
  // a weight's best copy beside it.
  const uint64_t recordsLimit = kCheckpointHeaderBytes + (uint64_t(64) << 20) +
                                2 * plan.logicalParams().size() * (kMaxNameBytes + 128);
  if (prefix < kCheckpointHeaderBytes || prefix > size || prefix > recordsLimit ||
      size > checkpointSizeLimit(plan) || sizes[1] > kMaxNameBytes)
    throw Error(ErrorKind::Checkpoint, "--resume: rank 0 sends a checkpoint of " +
                                           std::to_string(size) + " bytes, values from byte " +
                                           std::to_string(prefix) + ": not this plan's");
  std::string path(sizes[1], '\0');
  if (root && found)
    path = found->source;
  group.broadcast(path.data(), path.size(), 0, timeoutSec);
  // Rounds of 64 MiB (a test's DPRUN_TEST_GATHER_ROUND_BYTES, the same on every rank, makes
  // them small).
  const uint64_t chunk = testEvents::gatherRoundBytes(uint64_t(64) << 20);
  // Every rank holds the whole file, unless the plan shards the state over the processes.
  if (!plan.shardsAcrossProcesses()) {
    std::string bytes = root ? std::move(found->bytes) : std::string(size, '\0');
    for (uint64_t at = 0; at < size; at += chunk)
      group.broadcast(&bytes[at], std::min(chunk, size - at), 0, timeoutSec);
    return Checkpoint::fromBytes(std::move(bytes), path);
  }
  // Then the records first, and the values in rounds, of which each other rank keeps the
  // tensors it loads: the weights, their best copies and the state it holds, each from a
  // 64-byte boundary after the records. The checksum covers every byte that passed.
  std::string head = root ? found->bytes.substr(0, prefix) : std::string(prefix, '\0');
  group.broadcast(head.data(), head.size(), 0, timeoutSec);
  if (root) {
    for (uint64_t begin = prefix; begin < size; begin += chunk)
      group.broadcast(&found->bytes[begin], std::min(chunk, size - begin), 0, timeoutSec);
    return found;
  }
  const std::string what = path + " (from rank 0)";
  Checkpoint c = Checkpoint::parse(std::move(head), size, what);
  // The values begin where the records end: the rounds carry every one of them.
  if (c.tensors.empty() ? prefix != size : c.tensors.front().offset != prefix)
    throw Error(ErrorKind::Checkpoint, what + ": its values do not begin at byte " +
                                           std::to_string(prefix) + ", where rank 0 said");
  std::set<std::string> others; // state another process holds
  for (const ParamDesc &p : plan.params)
    if (!plan.holds(p))
      others.insert(p.name);
  std::vector<CheckpointTensor> kept;
  std::vector<uint64_t> from; // each kept tensor's offset in the file
  uint64_t at = alignUp(prefix);
  for (const CheckpointTensor &t : c.tensors)
    if (t.best || !others.count(t.name)) {
      from.push_back(t.offset);
      kept.push_back(t);
      kept.back().offset = at;
      at = alignUp(at + t.bytes);
    }
  std::string bytes = std::move(c.bytes);
  bytes.resize(at, '\0');
  // The header parse() read: the version and the recorded checksum.
  Reader header(bytes, 0, kCheckpointHeaderBytes, what);
  header.le(8, "the magic");
  const uint32_t version = header.u32("the version");
  header.u32("the header size");
  header.u64("the payload size");
  const uint32_t recorded = header.u32("the checksum");
  uint32_t crc = crcUpdate(crcStart(version), bytes.data() + kCheckpointHeaderBytes,
                           prefix - kCheckpointHeaderBytes);
  std::string round;
  for (uint64_t begin = prefix; begin < size; begin += chunk) {
    const uint64_t end = std::min(begin + chunk, size);
    round.resize(end - begin);
    group.broadcast(round.data(), round.size(), 0, timeoutSec);
    crc = crcUpdate(crc, round.data(), round.size());
    for (size_t i = 0; i < kept.size(); ++i) {
      const uint64_t lo = std::max(begin, from[i]), hi = std::min(end, from[i] + kept[i].bytes);
      if (lo < hi)
        std::memcpy(&bytes[kept[i].offset + (lo - from[i])], round.data() + (lo - begin), hi - lo);
    }
  }
  if (crc != recorded)
    throw Error(ErrorKind::Checkpoint, what + ": corrupt on the way: its checksum differs");
  testEvents::note("resumed " + std::to_string(bytes.size()) + " of " + std::to_string(size) +
                   " bytes");
  c.bytes = std::move(bytes);
  c.tensors = std::move(kept);
  c.source = path;
  return c;
}

std::map<std::string, std::vector<uint8_t>> gatherHeldState(Program &program, ProcessGroup &group,
                                                            double timeoutSec) {
  const Plan &plan = program.plan();
  std::map<std::string, std::vector<uint8_t>> out;
  if (!plan.shardsAcrossProcesses() || group.size() < 2)
    return out;
  // This process's share (rank 0's stays where it is): name, byte count, values; one after
  // another.
  Writer mine;
  std::vector<uint8_t> values;
  for (size_t i : plan.logicalParams()) {
    const ParamDesc &p = plan.params[i];
    if (p.process != group.rank() || group.rank() == 0)
      continue;
    values.resize(plan.buffers[p.buffer].bytes());
    program.read(p.buffer, values.data());
    mine.str(p.name);
    mine.u64(values.size());
    mine.bytes().append(reinterpret_cast<const char *>(values.data()), values.size());
  }
  std::vector<uint8_t>().swap(values);
  // In rounds whose gathers stay within one MPI count (each rank at most half of 1/P of it a
  // round), as many as the largest share needs: the sizes first. Every rank must agree on the
  // round's size (a test's DPRUN_TEST_GATHER_ROUND_BYTES is the same on every rank).
  const int ranks = group.size();
  const std::vector<double> sizes = group.gatherDoubles(double(mine.bytes().size()), timeoutSec);
  const uint64_t chunk = testEvents::gatherRoundBytes(
      std::max<uint64_t>(uint64_t(std::numeric_limits<int>::max() / ranks) / 2, 1));
  uint64_t largest = 0;
  for (double size : sizes)
    largest = std::max(largest, uint64_t(size));
  std::vector<std::string> parts(ranks);
  for (uint64_t at = 0; at < largest; at += chunk) {
    const std::string piece =
        at < mine.bytes().size() ? mine.bytes().substr(at, chunk) : std::string();
    std::vector<std::string> got = group.gatherBytes(piece, 0, timeoutSec);
    for (size_t rank = 0; rank < got.size(); ++rank)
      parts[rank] += got[rank];
  }
  std::string().swap(mine.bytes());
  for (int rank = 0; rank < ranks && group.rank() == 0; ++rank) {
    std::string &part = parts[rank];
    const std::string what = "process " + std::to_string(rank) + "'s share of the optimizer state";
    Reader r(part, 0, part.size(), what);
    while (r.at() < part.size()) {
      std::string name = r.str("a tensor's name", kMaxNameBytes);
      const uint64_t bytes = r.u64("its size");
      const char *data = r.take(bytes, "its values");
      out[name].assign(data, data + bytes);
    }
    std::string().swap(part);
  }
  return out;
}

uint64_t writeCheckpoint(Program &program, const CheckpointMeta &meta, const std::string &path,
                         const std::vector<ParamsEntry> *best,
                         const std::map<std::string, std::vector<uint8_t>> *elsewhere) {
  const Plan &plan = program.plan();
  if ((best != nullptr) != (meta.best >= 0))
    throw Error(ErrorKind::Runtime, "a checkpoint's best weights without their validation");
  // Each logical parameter once (device 0's copy, or the device holding a sharded state),
  // then the best weights (from host memory).
  struct Entry {
    const std::string &name;
    uint8_t kind;
    DType dtype;
    const std::vector<int64_t> &shape;
    uint64_t bytes;
    const BufferDesc *buffer; // or:
    const float *values;
  };
  std::vector<Entry> entries;
  for (size_t i : plan.logicalParams()) {
    const ParamDesc &p = plan.params[i];
    const BufferDesc &buf = plan.buffers[p.buffer];
    if (plan.holds(p)) {
      entries.push_back(
          {p.name, static_cast<uint8_t>(p.kind), buf.dtype, buf.shape, buf.bytes(), &buf, nullptr});
      continue;
    }
    // State another process holds, gathered from it.
    auto it = elsewhere ? elsewhere->find(p.name) : decltype(elsewhere->end()){};
    if (!elsewhere || it == elsewhere->end() || it->second.size() != buf.bytes())
      throw Error(ErrorKind::Runtime, "internal: the checkpoint lacks process " +
                                          std::to_string(p.process) + "'s '" + p.name + "'");
    entries.push_back({p.name, static_cast<uint8_t>(p.kind), buf.dtype, buf.shape, buf.bytes(),
                       nullptr, reinterpret_cast<const float *>(it->second.data())});
  }
  if (best)
    for (const ParamsEntry &e : *best)
      entries.push_back({e.name, kBestWeightKind, DType::F32, e.shape,
                         e.values.size() * sizeof(float), nullptr, e.values.data()});

  // The records first: their size fixes where the values go.
  Writer records;
  putMeta(records, meta);
  records.u32(static_cast<uint32_t>(entries.size()));
  std::vector<uint64_t> offsets;
  uint64_t tableBytes = records.bytes().size();
  for (const Entry &e : entries)
    tableBytes += 4 + e.name.size() + 4 + 8 * e.shape.size() + 16;
  uint64_t at = alignUp(kCheckpointHeaderBytes + tableBytes);
  for (const Entry &e : entries) {
    records.str(e.name);
    records.u8(e.kind);
    records.u8(static_cast<uint8_t>(e.dtype));
    records.u8(static_cast<uint8_t>(e.shape.size()));
    records.u8(0);
    for (int64_t d : e.shape)
      records.i64(d);
    records.u64(at);
    records.u64(e.bytes);
    offsets.push_back(at);
    at = alignUp(at + e.bytes);
  }

  AtomicFileWriter file(path);
  static const char zeros[kAlign] = {};
  file.write(header(0, 0).data(), kCheckpointHeaderBytes);
  uint32_t crc = crcStart(kCheckpointVersion);
  auto put = [&](const void *data, uint64_t bytes) {
    file.write(data, bytes);
    crc = crcUpdate(crc, data, bytes);
  };
  auto padTo = [&](uint64_t offset) {
    while (file.size() < offset)
      put(zeros, std::min<uint64_t>(offset - file.size(), kAlign));
  };
  put(records.bytes().data(), records.bytes().size());
  std::vector<uint8_t> values;
  for (size_t i = 0; i < entries.size(); ++i) {
    padTo(offsets[i]);
    if (!entries[i].buffer) {
      put(entries[i].values, entries[i].bytes);
      continue;
    }
    values.resize(entries[i].bytes);
    program.read(uint32_t(entries[i].buffer - plan.buffers.data()), values.data());
    put(values.data(), values.size());
  }
  const uint64_t payload = file.size() - kCheckpointHeaderBytes;
  const std::string head = header(payload, crc);
  file.writeAt(0, head.data(), head.size());
  file.commit();
  return file.size();
}

void checkCheckpointFits(const Checkpoint &checkpoint, const Plan &plan, const std::string &what) {
  std::map<std::string, const CheckpointTensor *> byName, best;
  for (const CheckpointTensor &t : checkpoint.tensors)
    (t.best ? best : byName)[t.name] = &t;
  auto refuse = [&](const std::string &problem) {
    throw Error(ErrorKind::Checkpoint,
                what + " does not fit the plan's model" +
                    (plan.model.empty() ? std::string() : " " + plan.model) + ": " + problem +
                    " (a checkpoint resumes only the model that wrote it" +
                    (checkpoint.meta.model.empty() ? std::string()
                                                   : ", here " + checkpoint.meta.model) +
                    ")");
  };
  auto kindName = [](ParamKind k) {
    return k == ParamKind::Weight ? "a weight" : "optimizer state";
  };
  std::set<std::string> planNames;
  for (size_t i : plan.logicalParams()) {
    const ParamDesc &p = plan.params[i];
    const BufferDesc &buf = plan.buffers[p.buffer];
    planNames.insert(p.name);
    auto it = byName.find(p.name);
    if (it == byName.end())
      refuse("it has no '" + p.name + "' (" + kindName(p.kind) + ", " + buf.text() +
             " in the plan)");
    const CheckpointTensor &t = *it->second;
    if (t.kind != p.kind || t.dtype != buf.dtype || t.shape != buf.shape)
      refuse("'" + p.name + "' is " + kindName(t.kind) + " " + t.text() + " in it but " +
             kindName(p.kind) + " " + buf.text() + " in the plan");
  }
  for (const CheckpointTensor &t : checkpoint.tensors)
    if (!t.best && !planNames.count(t.name))
      refuse("it holds '" + t.name + "' (" + t.text() + "), which the plan does not have");
  // The best weights (--restore-best): none, or a copy of every weight.
  if (best.empty())
    return;
  std::set<std::string> weights;
  for (const ParamDesc &p : plan.params) {
    const BufferDesc &buf = plan.buffers[p.buffer];
    if (buf.device != 0 || p.kind != ParamKind::Weight)
      continue;
    weights.insert(p.name);
    auto it = best.find(p.name);
    if (it == best.end())
      refuse("its best weights lack '" + p.name + "' (" + buf.text() + " in the plan)");
    if (it->second->dtype != buf.dtype || it->second->shape != buf.shape)
      refuse("its best copy of '" + p.name + "' is " + it->second->text() + " but the weight is " +
             buf.text() + " in the plan");
  }
  for (const auto &[name, t] : best)
    if (!weights.count(name))
      refuse("it holds a best copy of '" + name + "' (" + t->text() +
             "), which is no weight of the plan");
}

std::vector<ParamsEntry> checkpointBestWeights(const Checkpoint &checkpoint, const Plan &plan) {
  std::map<std::string, const CheckpointTensor *> best;
  for (const CheckpointTensor &t : checkpoint.tensors)
    if (t.best)
      best[t.name] = &t;
  std::vector<ParamsEntry> out;
  if (best.empty())
    return out;
  for (const ParamDesc &p : plan.params) {
    if (plan.buffers[p.buffer].device != 0 || p.kind != ParamKind::Weight)
      continue;
    const CheckpointTensor &t = *best.at(p.name);
    ParamsEntry &e = out.emplace_back();
    e.name = p.name;
    e.shape = t.shape;
    e.values.resize(size_t(t.numel));
    std::memcpy(e.values.data(), checkpoint.data(t), t.bytes);
  }
  return out;
}

void checkCheckpointPosition(const CheckpointMeta &meta, int64_t epochSamples,
                             const std::string &what) {
  const TrainPosition &p = meta.position;
  auto n = [](int64_t v) { return std::to_string(v); };
  auto refuse = [&](const std::string &problem) {
    throw Error(ErrorKind::Checkpoint, what + ": " + problem + " (this run's training data has " +
                                           n(epochSamples) + " samples an epoch)");
  };
  // The writer's batches were of its training samples (the same data). (A global batch below 1
  // or an epoch count past the step's bound never passes the reader: tested again here for a
  // caller that checks records of its own.)
  if (meta.globalBatch < 1 || p.epochsDone > kMaxCheckpointStep)
    refuse("a global batch of " + n(meta.globalBatch) + " and " + n(p.epochsDone) +
           " finished epochs");
  if (meta.globalBatch > epochSamples)
    refuse("its global batch of " + n(meta.globalBatch) + " is more than an epoch's samples");
  const int64_t epochSteps = epochSamples / meta.globalBatch;
  // A checkpoint inside an epoch is taken before its last step (after it, the epoch is done).
  if (p.stepsInEpoch >= epochSteps)
    refuse("its unfinished epoch is at step " + n(p.stepsInEpoch) + " of an epoch of " +
           n(epochSteps) + " steps of " + n(meta.globalBatch) + " samples");
  for (const EpochStats &e : meta.epochs)
    if (e.steps > epochSamples || e.samples > epochSamples)
      refuse("the record of epoch " + n(e.epoch) + " has " + n(e.steps) + " steps of " +
             n(e.samples) + " samples, more than an epoch holds");
  // An epoch takes at most one step a sample, whatever global batch each run that trained a
  // part of it had (a resume may change it): the epochs begun bound the steps.
  int64_t most = 0;
  if (__builtin_mul_overflow(p.epochsDone + 1, epochSamples, &most))
    most = std::numeric_limits<int64_t>::max();
  if (p.step > most)
    refuse("step " + n(p.step) + " is past the " + n(p.epochsDone + 1) + " x " +
           n(epochSamples) + " steps its " + n(p.epochsDone) +
           " finished epoch(s) and the one begun can have taken, at most one step a sample");
}

void loadCheckpoint(Program &program, const Checkpoint &checkpoint) {
  std::map<std::string, const CheckpointTensor *> byName;
  for (const CheckpointTensor &t : checkpoint.tensors)
    if (!t.best)
      byName[t.name] = &t;
  for (const ParamDesc &p : program.plan().params)
    if (program.plan().holds(p))
      program.write(p.buffer, checkpoint.data(*byName.at(p.name)));
}

uint64_t checkpointSizeLimit(const Plan &plan) {
  uint64_t bytes = 0;
  for (size_t i : plan.logicalParams()) {
    const ParamDesc &p = plan.params[i];
    // A weight may have its best copy beside it (--restore-best).
    bytes += (p.kind == ParamKind::Weight ? 2 : 1) *
             (alignUp(plan.buffers[p.buffer].bytes()) + kMaxNameBytes + 128);
  }
  // The records of a long epoch (a loss per step) and of many finished ones.
  return bytes + (uint64_t(64) << 20);
}

void prepareCheckpointDir(const std::string &dir) {
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw Error(ErrorKind::Usage, "--checkpoint-dir " + dir + ": cannot create it: " +
                                      std::strerror(errno));
  struct stat info;
  // (A symbolic link that loops, or leads nowhere, exists for mkdir but not for stat.)
  if (::stat(dir.c_str(), &info) != 0)
    throw Error(ErrorKind::Usage, "--checkpoint-dir " + dir + ": cannot use it: " +
                                      std::strerror(errno));
  if (!S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, "--checkpoint-dir " + dir + ": is " +
                                      fileTypeName(info.st_mode) + ", not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw Error(ErrorKind::Usage, "--checkpoint-dir " + dir + ": is not writable");
}

std::string checkpointFileName(int64_t step) {
  std::string digits = std::to_string(step);
  if (digits.size() < kStepDigits)
    digits.insert(0, kStepDigits - digits.size(), '0');
  return kPrefix + digits + kSuffix;
}

int32_t peekCheckpointThreads(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  try {
    found = listCheckpoints(dir);
  } catch (const Error &) {
    return 0;
  }
  if (found.empty())
    return 0;
  // The figures come first; 16 MiB holds them for any run of fewer than 4 million steps.
  std::string bytes;
  const int fd = ::open(found.front().second.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return 0;
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    bytes.resize(size_t(std::min<off_t>(info.st_size, off_t(16) << 20)));
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, &bytes[got], bytes.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += size_t(n);
    }
    bytes.resize(got);
  }
  ::close(fd);
  if (bytes.size() < kCheckpointHeaderBytes || std::memcmp(bytes.data(), kCheckpointMagic, 8) != 0)
    return 0;
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version < 2 || version > kCheckpointVersion)
    return 0;
  try {
    Reader r(bytes, kCheckpointHeaderBytes, bytes.size(), found.front().second);
    return getMeta(r, version).threads;
  } catch (const Error &) {
    return 0;
  }
}

std::vector<std::pair<int64_t, std::string>> listCheckpoints(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT)
      return found;
    throw Error(ErrorKind::Checkpoint,
                dir + ": cannot read the checkpoint directory: " + std::strerror(errno));
  }
  while (dirent *entry = ::readdir(d)) {
    int64_t step = 0;
    if (isCheckpointName(entry->d_name, step))
      found.emplace_back(step, dir + "/" + entry->d_name);
  }
  ::closedir(d);
  std::sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a > b; });
  return found;
}

CheckpointPruner::CheckpointPruner(std::string dir, int keep, const Plan &plan, uint64_t seed,
                                   int64_t epochSamples)
    : dir_(std::move(dir)), keep_(std::max(keep, 1)), plan_(plan), seed_(seed),
      epochSamples_(epochSamples) {}

void CheckpointPruner::judge(const std::string &path, Seen &seen) const {
  seen.owned = false;
  try {
    const Checkpoint c = Checkpoint::read(path, checkpointSizeLimit(plan_));
    const CheckpointMeta &m = c.meta;
    if (m.model != plan_.model)
      seen.why = "a checkpoint of model " + (m.model.empty() ? "(unnamed)" : m.model) +
                 ", this run's is " + (plan_.model.empty() ? "unnamed" : plan_.model);
    else if (m.seed != seed_)
      seen.why = "a checkpoint of another run of the model (seed " + std::to_string(m.seed) +
                 ", this run's is " + std::to_string(seed_) + ")";
    else {
      checkCheckpointFits(c, plan_, path);
      checkCheckpointPosition(m, epochSamples_, path);
      seen.owned = true;
    }
  } catch (const Error &e) {
    // (Without the path the message starts with: the warning names it.)
    seen.why = e.what();
    if (seen.why.compare(0, path.size(), path) == 0)
      seen.why.erase(0, seen.why.compare(path.size(), 2, ": ") == 0 ? path.size() + 2
                                                                    : path.size() + 1);
  }
}

std::vector<std::string> CheckpointPruner::prune(const std::string &written) {
  std::vector<std::string> warnings;
  std::vector<std::pair<int64_t, std::string>> found;
  try {
    found = listCheckpoints(dir_);
  } catch (const Error &) {
    return warnings;
  }
  std::map<std::string, Seen> now;
  std::vector<std::string> owned; // newest first, as listed
  for (const auto &[step, path] : found) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0)
      continue;
    Seen seen;
    seen.device = info.st_dev;
    seen.inode = info.st_ino;
    seen.size = info.st_size;
    seen.modifiedNs = int64_t(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    auto before = seen_.find(path);
    const bool same = before != seen_.end() && before->second.device == seen.device &&
                      before->second.inode == seen.inode && before->second.size == seen.size &&
                      before->second.modifiedNs == seen.modifiedNs;
    if (same)
      seen = before->second;
    else if (path == written)
      seen.owned = true; // this run wrote it just now
    else
      judge(path, seen);
    if (seen.owned) {
      owned.push_back(path);
    } else if (!seen.warned) {
      warnings.push_back("--checkpoint-keep leaves " + path + " alone, as it is not this run's: " +
                         seen.why);
      seen.warned = true;
    }
    now[path] = seen;
  }
  // Gone files are forgotten; the rest are known for the next write.
  seen_ = std::move(now);
  int kept = 0;
  for (const std::string &path : owned) {
    if (path == written || kept < keep_) {
      ++kept;
      continue;
    }
    if (::unlink(path.c_str()) == 0)
      seen_.erase(path);
  }
  // Temporary files of writers that died mid-write ("ckpt-....dpk.tmp.<pid>"); a live
  // writer's (another run sharing the directory) stays.
  if (DIR *d = ::opendir(dir_.c_str())) {
    std::vector<std::string> stale;
    while (dirent *entry = ::readdir(d)) {
      const std::string name = entry->d_name;
      const size_t tmp = name.find(std::string(kSuffix) + ".tmp.");
      int64_t step = 0;
      if (tmp == std::string::npos || !isCheckpointName(name.substr(0, tmp + 4), step))
        continue;
      const std::string pidText = name.substr(tmp + 9);
      if (pidText.empty() || pidText.find_first_not_of("0123456789") != std::string::npos)
        continue;
      const long pid = std::strtol(pidText.c_str(), nullptr, 10);
      if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
          errno == ESRCH)
        stale.push_back(dir_ + "/" + name);
    }
    ::closedir(d);
    for (const std::string &path : stale)
      ::unlink(path.c_str());
  }
  return warnings;
}

CheckpointDirLock::CheckpointDirLock(const std::string &dir) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    warning_ = "cannot open " + path + " (" + std::strerror(errno) +
               "): nothing keeps another run from sharing the checkpoint directory";
    return;
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      // The holder wrote "pid <N> on <host>" after taking the lock (unless it is taking it
      // now); anything else in the file is not quoted.
      char text[256] = {};
      const ssize_t got = ::pread(fd_, text, sizeof(text) - 1, 0);
      ::close(fd_);
      fd_ = -1;
      std::string holder(text, got > 0 ? size_t(got) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0'))
        holder.pop_back();
      const bool known =
          holder.compare(0, 4, "pid ") == 0 &&
          std::all_of(holder.begin(), holder.end(), [](char c) { return c >= ' ' && c <= '~'; });
      throw Error(ErrorKind::Usage,
                  "--checkpoint-dir " + dir + ": in use by another run" +
                      (known ? " (" + holder + ")" : std::string()) + ", which holds the lock " +
                      path + "; two runs must not share a checkpoint directory (each would "
                      "prune and resume the other's checkpoints): give this one another");
    }
    ::close(fd_);
    fd_ = -1;
    warning_ = "cannot lock " + path + " (" + std::strerror(error) +
               "): nothing keeps another run from sharing the checkpoint directory";
    return;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  const std::string holder = "pid " + std::to_string(::getpid()) +
                             (host[0] ? std::string(" on ") + host : std::string()) + "\n";
  // Best effort: the lock is the flock; the text only names its holder to a run refused.
  if (::ftruncate(fd_, 0) == 0) {
    const ssize_t wrote = ::pwrite(fd_, holder.data(), holder.size(), 0);
    (void)wrote;
  }
}

CheckpointDirLock::~CheckpointDirLock() {
  if (fd_ >= 0)
    ::close(fd_);
}

} // namespace dp::rt
