// Metrics JSON, atomic file replacement and the human-readable result lines; see Report.h.
#include "runtime/train/Report.h"

#include "runtime/core/Error.h"
#include "runtime/train/PlanInfo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace dp::rt {
namespace {

/// The shortest decimal that reads back as `value` (15 digits, else 17); null if not finite.
std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.15g", value);
  if (std::strtod(text, nullptr) != value)
    std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void ioFail(const std::string &path, const std::string &what, int error) {
  throw Error(ErrorKind::Runtime, path + ": " + what + ": " + std::strerror(error));
}

} // namespace

std::string metricsJson(const TrainReport &report) {
  std::string json = "{\n  \"epochs\": [";
  for (size_t i = 0; i < report.epochs.size(); ++i) {
    const EpochStats &e = report.epochs[i];
    json += i ? ",\n    " : "\n    ";
    json += "{\"epoch\": " + std::to_string(e.epoch) + ", \"loss\": " + jsonNumber(e.loss) +
            ", \"train_accuracy\": " + jsonNumber(e.trainAccuracy) +
            ", \"seconds\": " + jsonNumber(e.seconds) +
            ", \"samples_per_sec\": " + jsonNumber(e.samplesPerSec);
    json += ", \"rank_samples_per_sec\": [";
    for (size_t r = 0; r < e.rankSamplesPerSec.size(); ++r)
      json += (r ? ", " : "") + jsonNumber(e.rankSamplesPerSec[r]);
    json += "]}";
  }
  json += report.epochs.empty() ? "],\n" : "\n  ],\n";
  json += "  \"test_accuracy\": " + jsonNumber(report.test.accuracy) + ",\n";
  json += "  \"test_loss\": " + jsonNumber(report.test.loss) + ",\n";
  json += "  \"replicas_per_process\": " + std::to_string(report.replicas) + ",\n";
  json += "  \"processes\": " + std::to_string(report.processes) + ",\n";
  json += "  \"allreduce_seconds\": " + jsonNumber(report.allreduceSeconds) + ",\n";
  json += "  \"allreduce_wait_seconds\": " + jsonNumber(report.allreduceWaitSeconds) + ",\n";
  json += "  \"params\": " + std::to_string(report.params) + "\n}\n";
  return json;
}

void checkWritable(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, path + ": is a directory, not a file to write metrics to");
  std::string dir = directoryOf(path);
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::Usage, path + ": directory " + dir + " is not writable");
}

void writeFileAtomically(const std::string &path, const std::string &content) {
  // Beside the target, so that rename stays within one file system and is atomic.
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    ioFail(temp, "cannot create", errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      ioFail(temp, "write failed", error);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    ioFail(temp, "write failed", error);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temp.c_str());
    ioFail(path, "cannot replace", error);
  }
}

std::string epochLine(const EpochStats &stats, int64_t epochs) {
  char loss[32], accuracy[32], seconds[32];
  std::snprintf(loss, sizeof(loss), "%.4f", stats.loss);
  if (std::isnan(stats.trainAccuracy))
    std::snprintf(accuracy, sizeof(accuracy), "n/a");
  else
    std::snprintf(accuracy, sizeof(accuracy), "%.4f", stats.trainAccuracy);
  std::snprintf(seconds, sizeof(seconds), "%.1f", stats.seconds);
  return "epoch " + std::to_string(stats.epoch) + "/" + std::to_string(epochs) + "  loss " + loss +
         "  accuracy " + accuracy + "  " + seconds + " s  " +
         withCommas(static_cast<int64_t>(std::llround(stats.samplesPerSec))) + " samples/s";
}

void printPhaseTable(const PhaseTimes &phases, std::ostream &out) {
  const std::pair<const char *, double> rows[] = {{"load", phases.load},
                                                  {"init", phases.init},
                                                  {"train", phases.train},
                                                  {"evaluate", phases.evaluate}};
  double total = phases.load + phases.init + phases.train + phases.evaluate;
  char line[80];
  std::snprintf(line, sizeof(line), "%-10s %10s %7s\n", "phase", "seconds", "%");
  out << line;
  for (const auto &[name, seconds] : rows) {
    std::snprintf(line, sizeof(line), "%-10s %10.3f %6.1f%%\n", name, seconds,
                  total > 0 ? 100.0 * seconds / total : 0.0);
    out << line;
  }
  std::snprintf(line, sizeof(line), "%-10s %10.3f %6.1f%%\n", "total", total,
                total > 0 ? 100.0 : 0.0);
  out << line;
}

} // namespace dp::rt
