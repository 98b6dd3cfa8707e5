// Checkpoints: a training run's whole state in one file, so that a run stopped by a time limit,
// a preemption or a crash continues where it was. The format is the runtime's own, versioned
// and pure data (docs/checkpoints.md): every parameter and optimizer state under its logical
// (unreplicated) name, the step and epoch, the position in the epoch, the seed (which with the
// step and epoch is the whole random state: shuffles and dropout masks are drawn from counters),
// the unfinished epoch's running figures, the finished epochs' figures, every validation so far
// and, with --restore-best, a copy of the weights of the best one. Nothing in it
// depends on the layout (R x P) that wrote it, so a checkpoint resumes under any layout of the
// same model. Files are written atomically and carry a CRC-32 of their payload; reading
// verifies every byte before anything is used.
#pragma once

#include "runtime/base/ParamsFile.h"
#include "runtime/comm/Comm.h"
#include "runtime/core/Program.h"
#include "runtime/train/Trainer.h"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dp::rt {

/// The checkpoint format version this build writes and reads.
inline constexpr uint32_t kCheckpointVersion = 4;
/// Version 1 lacks the compute threads (CheckpointMeta::threads), versions 1 and 2 the
/// epochs' validation figures, versions 1 to 3 the validations and the best weights of
/// --restore-best; all are still read.
inline constexpr uint32_t kOldestCheckpointVersion = 1;
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
  /// The compute threads of each process of the run that wrote it (0: not recorded, or left
  /// to OpenMP): a resume runs with them unless told otherwise, since the sums of the kernels
  /// depend on them.
  int32_t threads = 0;
  TrainPosition position;
  /// The finished epochs' figures (rankSamplesPerSec is not kept).
  std::vector<EpochStats> epochs;
  /// Every validation evaluation of the run so far, in order (since version 4).
  std::vector<Evaluation> validations;
  /// --restore-best: the validation (an index into `validations`) whose weights the
  /// checkpoint's best tensors hold, and the figure it was chosen by ("val_loss",
  /// "val_accuracy"); -1 and empty without (since version 4).
  int64_t best = -1;
  std::string bestMonitor;
};

/// One tensor of a checkpoint: its logical name and what it is.
struct CheckpointTensor {
  std::string name;
  ParamKind kind = ParamKind::Weight;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  /// A copy of weight `name` at the best validation (--restore-best; always f32), not the
  /// parameter itself (since version 4: kind byte kBestWeightKind).
  bool best = false;
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
  /// As fromBytes, of the first bytes of a file of `fileSize` bytes (its whole image when
  /// they are all there): without the whole file the checksum is the caller's to verify, and
  /// `bytes` must reach past the records (shareCheckpoint's prefix).
  static Checkpoint parse(std::string bytes, uint64_t fileSize, const std::string &what);
  /// Reads and verifies `path`, refusing (Error(Checkpoint)) a file larger than `maxBytes`, a
  /// FIFO or anything but a regular file.
  static Checkpoint read(const std::string &path, uint64_t maxBytes);
};

/// The kind byte of a best-weights tensor in the file (ParamKind's values are the others).
inline constexpr uint8_t kBestWeightKind = 2;

/// Writes `meta` and every parameter of `program`'s device 0 (the replicas hold copies) to
/// `path`, atomically: a temporary file beside it, flushed, renamed over it, the directory
/// flushed; with `best` (which meta.best must name), those weights as best tensors after them.
/// The device's enqueued work must be done. Returns the bytes written. Throws Error.
/// `elsewhere` holds, by name, the values of the state other processes hold (optimizer state
/// sharded over the processes; gatherHeldState()): one is needed for each such tensor.
uint64_t writeCheckpoint(Program &program, const CheckpointMeta &meta, const std::string &path,
                         const std::vector<ParamsEntry> *best = nullptr,
                         const std::map<std::string, std::vector<uint8_t>> *elsewhere = nullptr);

/// Rank 0's checkpoint (`found`: the verified file it resumes from, or none; ignored on the
/// other ranks) on every rank of `group`, in rounds of 64 MiB, so that the checkpoint
/// directory need not be shared. A rank whose plan holds only its share of the optimizer state
/// (sharded over the processes: Plan::keepProcess) keeps only the tensors it loads (the
/// weights, their best copies, its own state), never the whole file: the others pass through,
/// and the checksum is checked over every byte. Collective over `group`; returns `found` at
/// once for a group of one. Throws Error(Checkpoint) for a file that changed on the way.
std::optional<Checkpoint> shareCheckpoint(ProcessGroup &group, const Plan &plan,
                                          std::optional<Checkpoint> found, double timeoutSec);

/// Under optimizer state sharded over the processes: every process's own share, sent to rank
/// 0, which gets the other processes' tensors by name (the other ranks get none). Collective
/// over `group`, bounded by `timeoutSec`: every rank calls it at the same boundary. Returns at
/// once, with nothing, for a plan whose processes all hold the whole state.
std::map<std::string, std::vector<uint8_t>> gatherHeldState(Program &program, ProcessGroup &group,
                                                            double timeoutSec);

/// Throws Error(Checkpoint) naming `what` and the first difference unless `checkpoint` holds
/// exactly the parameters of `plan` (names, kinds, element types and shapes; in any order),
/// and best tensors for none or for every weight of the plan, each in its shape.
void checkCheckpointFits(const Checkpoint &checkpoint, const Plan &plan, const std::string &what);

/// The best tensors of a checkpoint that fits `plan`, as weights in plan order (empty when it
/// has none).
std::vector<ParamsEntry> checkpointBestWeights(const Checkpoint &checkpoint, const Plan &plan);

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

/// The compute threads the newest checkpoint in `dir` records (0: none there, not recorded, or
/// unreadable). Reads only the start of the file (header and figures), without the checksum:
/// a hint for choosing the threads before the checkpoint is read and verified.
int32_t peekCheckpointThreads(const std::string &dir);

/// Removes a run's older checkpoints from its directory, and only the run's own: a file with
/// a checkpoint's name is the run's when it verifies (Checkpoint::read), is of the run's model
/// (its name, and checkCheckpointFits of the plan), was written with the run's seed and its
/// position fits the run's data (checkCheckpointPosition), so that a resume of the run could
/// take it. Anything else (a corrupt file, another model's checkpoint,
/// another run's) is left alone, however high its step. Each file is read once while it stays
/// the same (device, inode, size and modification time), and the files this run writes are
/// known without reading them.
class CheckpointPruner {
public:
  /// For `dir`, keeping the newest `keep` (at least 1) of the run's checkpoints, of `plan`
  /// (which must outlive this), `seed` and `epochSamples` training samples an epoch.
  CheckpointPruner(std::string dir, int keep, const Plan &plan, uint64_t seed,
                   int64_t epochSamples);

  /// After this run wrote `written` (in the directory): removes all but the newest `keep` of
  /// the run's checkpoints, never `written`, and the temporary files of writers that no longer
  /// run (a writer killed mid-write). Returns a warning for each file with a checkpoint's name
  /// that is not the run's, once per file: what it is and that it stays. Errors are ignored: a
  /// file that cannot be removed stays.
  std::vector<std::string> prune(const std::string &written);

private:
  /// What a file was when it was last looked at, and whether it is the run's.
  struct Seen {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    int64_t modifiedNs = 0;
    bool owned = false, warned = false;
    std::string why; // not owned: why not
  };
  /// Whether `path` (stat'ed as `seen`, its identity filled in) is the run's; `why` when not.
  void judge(const std::string &path, Seen &seen) const;

  std::string dir_;
  int keep_;
  const Plan &plan_;
  uint64_t seed_;
  int64_t epochSamples_;
  std::map<std::string, Seen> seen_;
};

/// The lock that keeps a checkpoint directory to one run: an exclusive flock(2) on DIR/.lock,
/// held by the process that writes the checkpoints for as long as it lives (the kernel drops
/// it when the process ends, however it ends, so a killed run's directory is free at once).
/// The file holds the holder's pid and host, for the message of a run refused.
class CheckpointDirLock {
public:
  /// Takes the lock on `dir` (which must exist). Throws Error(Usage) naming the directory and,
  /// when it can tell, the pid and host of the run that holds it. Where the file system
  /// cannot lock (some network file systems), the run goes on unlocked: warning() says so.
  explicit CheckpointDirLock(const std::string &dir);
  ~CheckpointDirLock();
  CheckpointDirLock(const CheckpointDirLock &) = delete;
  CheckpointDirLock &operator=(const CheckpointDirLock &) = delete;

  /// Empty, or why the directory is not locked.
  const std::string &warning() const { return warning_; }

private:
  int fd_ = -1;
  std::string warning_;
};

} // namespace dp::rt
