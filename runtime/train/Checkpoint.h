// Checkpoints: a training run's whole state in one file, so that a run stopped by a time limit,
// a preemption or a crash continues where it was. The format is the runtime's own, versioned
// and pure data (docs/checkpoints.md): every parameter and optimizer state under its logical
// (unreplicated) name, the step and epoch, the position in the epoch, the seed (which with the
// step and epoch is the whole random state: shuffles and dropout masks are drawn from counters),
// the unfinished epoch's running figures and the finished epochs' figures. Nothing in it
// depends on the layout (R x P) that wrote it, so a checkpoint resumes under any layout of the
// same model. Files are written atomically and carry a CRC-32 of their payload; reading
// verifies every byte before anything is used.
#pragma once

#include "runtime/core/Program.h"
#include "runtime/train/Trainer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt {

/// The checkpoint format version this build writes and reads.
inline constexpr uint32_t kCheckpointVersion = 1;
/// The first 8 bytes of every checkpoint file (a non-ASCII byte first, as PNG does, so that
/// a text file is never taken for one).
inline constexpr char kCheckpointMagic[8] = {'\x89', 'd', 'p', 'c', 'k', 'p', 't', '\n'};
/// Bytes of the fixed header before the payload.
inline constexpr uint32_t kCheckpointHeaderBytes = 64;
/// The last step a checkpoint's name holds (12 digits): no file records a later one.
inline constexpr int64_t kMaxCheckpointStep = 999999999999;

/// Everything a checkpoint holds besides the tensors.
struct CheckpointMeta {
  std::string model;
  /// dprun --seed of the run: with the position, the whole random state.
  uint64_t seed = 0;
  /// The global batch of the plan that wrote it.
  int64_t globalBatch = 0;
  /// The writing plan's identity and layout, for messages (a resume may change them).
  uint64_t planHash = 0;
  int32_t replicas = 1, processes = 1;
  TrainPosition position;
  /// The finished epochs' figures (rankSamplesPerSec is not kept).
  std::vector<EpochStats> epochs;
};

/// One tensor of a checkpoint: its logical name and what it is.
struct CheckpointTensor {
  std::string name;
  ParamKind kind = ParamKind::Weight;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  /// Where its values are, in bytes from the start of the file.
  uint64_t offset = 0;
  uint64_t bytes = 0;
  /// "f32[784,100]".
  std::string text() const;
};

/// A verified checkpoint file.
struct Checkpoint {
  CheckpointMeta meta;
  std::vector<CheckpointTensor> tensors;
  /// The whole file, and where it came from (its path).
  std::string bytes;
  std::string source;

  const uint8_t *data(const CheckpointTensor &t) const {
    return reinterpret_cast<const uint8_t *>(bytes.data()) + t.offset;
  }

  /// Verifies a whole file image: the header, the checksum, the version and every record
  /// (bounded counts, names, shapes whose element counts fit, tensor data inside the file and
  /// not overlapping), and the bounds the records keep whatever run reads them (a step a name
  /// holds, one epoch record per finished epoch, no more step losses than steps, the epoch's
  /// samples its steps times the global batch, finite figures and a learning-rate scale in
  /// (0, 1]; docs/checkpoints.md), so that a hostile file with a valid checksum is refused
  /// here. Throws Error(Checkpoint) naming `what` and the problem.
  static Checkpoint fromBytes(std::string bytes, const std::string &what);
  /// Reads and verifies `path`, refusing (Error(Checkpoint)) a file larger than `maxBytes`, a
  /// FIFO or anything but a regular file.
  static Checkpoint read(const std::string &path, uint64_t maxBytes);
};

/// Writes `meta` and every parameter of `program`'s device 0 (the replicas hold copies) to
/// `path`, atomically: a temporary file beside it, flushed, renamed over it, the directory
/// flushed. The device's enqueued work must be done. Returns the bytes written. Throws Error.
uint64_t writeCheckpoint(Program &program, const CheckpointMeta &meta, const std::string &path);

/// Throws Error(Checkpoint) naming `what` and the first difference unless `checkpoint` holds
/// exactly the parameters of `plan` (names, kinds, element types and shapes; in any order).
void checkCheckpointFits(const Checkpoint &checkpoint, const Plan &plan, const std::string &what);

/// The bounds of a checkpoint's position that depend on the data the run trains on, checked
/// before a resume uses any of it: with `epochSamples` training samples an epoch, the global
/// batch is at most that, the unfinished epoch is before its last step (of epochSamples /
/// global batch), each finished epoch's record has at most that many steps and samples, and
/// the step is at most epochSamples times the epochs begun (an epoch takes at most one step a
/// sample, whatever batch each part of the run had). Throws Error(Checkpoint) naming `what`,
/// the field and its bound.
void checkCheckpointPosition(const CheckpointMeta &meta, int64_t epochSamples,
                             const std::string &what);

/// Writes every tensor of `checkpoint` (which must fit the plan) into each replica's copy of
/// its parameter.
void loadCheckpoint(Program &program, const Checkpoint &checkpoint);

/// The largest checkpoint of `plan` worth reading: its parameters' bytes (one replica) and
/// room for the records; a bigger file is not this model's.
uint64_t checkpointSizeLimit(const Plan &plan);

/// Creates `dir` when it is missing (its parent must exist) and checks that it is a writable
/// directory; throws Error(Usage) naming the problem, before anything runs.
void prepareCheckpointDir(const std::string &dir);

/// "ckpt-000000001200.dpk": the name of the checkpoint taken after train step `step`.
std::string checkpointFileName(int64_t step);

/// The checkpoints in `dir` (files named by checkpointFileName), newest (highest step) first,
/// as (step, path). Throws Error(Checkpoint) when `dir` cannot be read; a missing directory
/// has none.
std::vector<std::pair<int64_t, std::string>> listCheckpoints(const std::string &dir);

/// Removes all but the newest `keep` checkpoints of `dir`, and temporary files left by writers
/// that no longer run (a writer killed mid-write). Errors are ignored: a file that cannot be
/// removed stays.
void pruneCheckpoints(const std::string &dir, int keep);

} // namespace dp::rt
