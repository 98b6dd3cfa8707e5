// TensorBoard's event files, written (dprun --tensorboard DIR): a TFRecord stream of
// tensorflow.Event protocol-buffer messages, the format TensorBoard, tf.summary and PyTorch's
// SummaryWriter share. Each record is
//   u64 length, u32 masked CRC-32C of those 8 bytes, the message, u32 masked CRC-32C of it
// (little-endian; masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8). The first event holds
// file_version "brain.Event:2"; each later one a wall time, a step and one scalar summary
// value (Event.summary.value { tag, simple_value }). Only these few fields are encoded, by
// hand: TensorBoard reads them as tf.summary.scalar's.
#pragma once

#include "runtime/base/Files.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dp::rt {

/// CRC-32C (Castagnoli), and TFRecord's masking of it.
uint32_t crc32c(const void *data, size_t size);
uint32_t maskedCrc32c(const void *data, size_t size);

/// One TFRecord: the framing of `message`.
std::string tfRecord(const std::string &message);
/// The encoded Event messages: the file's first (its version), and a scalar's.
std::string versionEvent(double wallTime);
std::string scalarEvent(double wallTime, int64_t step, const std::string &tag, float value);

/// Creates `dir` and its parents when missing. Throws Error(Usage) naming it when it cannot,
/// or when it is not a directory.
void makeLogDirectory(const std::string &dir);

/// An event file in a directory, appended to and flushed record by record (a run killed with
/// -9 leaves every record written before it; TensorBoard reads a file as it grows).
class EventFileWriter {
public:
  /// Creates `dir` when missing and the file events.out.tfevents.<seconds>.<host>.<pid> in
  /// it, with its version event. Throws Error(Usage) naming the path when it cannot.
  explicit EventFileWriter(const std::string &dir);

  /// Appends a scalar at `step`, stamped with the time now. Throws Error(Runtime) when the
  /// write fails.
  void scalar(const std::string &tag, int64_t step, double value);
  const std::string &path() const { return file_->path(); }

private:
  std::unique_ptr<AppendFile> file_;
};

} // namespace dp::rt
