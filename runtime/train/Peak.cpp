// Measuring and recording this machine's peak for the products; see Peak.h.
#include "runtime/train/Peak.h"

#include "runtime/base/Error.h"
#include "runtime/base/Files.h"
#include "runtime/core/Program.h"
#include "runtime/format/Flops.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>

namespace dp::rt {
namespace {

constexpr uint64_t kMaxPeakFileBytes = 1 << 20;

/// A plan of one product on one device, its operands and result laid out one after another.
struct OneProduct {
  Plan plan;
  double flops = 0;
};

OneProduct productPlan(DeviceKind device, KernelKind kind, KernelAttrSet attrs,
                       std::vector<std::pair<DType, std::vector<int64_t>>> buffers) {
  OneProduct p;
  p.plan.model = "peak";
  p.plan.batch = buffers[0].second[0];
  p.plan.deviceKind = device;
  uint64_t offset = 0;
  for (const auto &[dtype, shape] : buffers) {
    BufferDesc b;
    b.dtype = dtype;
    b.shape = shape;
    for (int64_t d : shape)
      b.numel *= d;
    b.offset = offset;
    offset += (b.bytes() + 63) / 64 * 64;
    p.plan.buffers.push_back(b);
  }
  p.plan.arenaBytes = offset;
  KernelDesc k;
  k.kind = kind;
  k.inputs = {0, 1};
  k.outputs = {2};
  k.attrs = attrs;
  k.where = std::string("the peak's ") + kernelInfo(kind).name;
  p.plan.train.name = "train";
  p.plan.eval.name = "eval";
  p.plan.train.kernels.push_back(k);
  // A run below is one micro-shard's (the products are never final).
  p.flops = p.plan.stepFlops(StepKind::Train) / p.plan.accumulation;
  return p;
}

/// Seconds of the fastest run of the one-product plan `p` on `backend`.
double fastestRun(const OneProduct &p, Backend &backend) {
  std::unique_ptr<Program> program = Program::load(p.plan, &backend);
  // Operands of 0.5 (no denormals, no NaN from an uninitialized arena).
  for (uint32_t id = 0; id < 2; ++id) {
    const BufferDesc &b = program->buffer(id);
    std::vector<uint8_t> bytes(b.bytes());
    if (b.dtype == DType::BF16)
      for (size_t i = 0; i + 1 < bytes.size(); i += 2)
        bytes[i] = 0x00, bytes[i + 1] = 0x3f; // 0x3f00: 0.5
    else {
      const float half = 0.5f;
      for (size_t i = 0; i + 3 < bytes.size(); i += 4)
        std::memcpy(&bytes[i], &half, 4);
    }
    program->write(id, bytes.data());
  }
  StepContext ctx;
  ctx.validRows = ctx.batchRows = p.plan.batch;
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 2; ++i) // warm up: first-touch pages, the library's caches
    program->run(StepKind::Train, ctx);
  double fastest = 1e30, total = 0;
  for (int runs = 0; (runs < 3 || total < 0.3) && runs < 1000; ++runs) {
    const auto begin = Clock::now();
    program->run(StepKind::Train, ctx);
    const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    fastest = std::min(fastest, seconds);
    total += seconds;
  }
  return fastest;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t first = line.find_first_not_of(" \t", colon + 1);
        return first == std::string::npos ? "unknown CPU" : line.substr(first);
      }
    }
  return "unknown CPU";
}

} // namespace

PeakFigures measurePeak(Backend &backend, std::ostream *progress) {
  const DeviceKind device = backend.kind();
  const bool gpu = device != DeviceKind::Cpu;
  // Sizes that keep the machine busy: a few ms a run on 2 CPU cores, on a GPU a few ms too.
  const int64_t n = gpu ? 8192 : 1024;
  const int64_t batch = gpu ? 64 : 8, side = gpu ? 56 : 28, channels = gpu ? 256 : 128;
  Conv2dAttrs conv;
  conv.stride_h = conv.stride_w = 1;
  conv.pad_top = conv.pad_left = conv.pad_bottom = conv.pad_right = 1;
  PeakFigures figures;
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    const DType operand = bf16 ? DType::BF16 : DType::F32;
    const OneProduct products[2] = {
        productPlan(device, KernelKind::Dense, FusedActivationAttrs{},
                    {{operand, {n, n}}, {operand, {n, n}}, {DType::F32, {n, n}}}),
        productPlan(device, KernelKind::Conv2d, conv,
                    {{operand, {batch, side, side, channels}},
                     {operand, {3, 3, channels, channels}},
                     {DType::F32, {batch, side, side, channels}}})};
    const char *names[2] = {"matmul", "conv 3x3"};
    double *out[2] = {&figures.matmul[bf16], &figures.conv[bf16]};
    for (int i = 0; i < 2; ++i) {
      char line[160];
      try {
        const double seconds = fastestRun(products[i], backend);
        *out[i] = products[i].flops / seconds / 1e12;
        std::snprintf(line, sizeof(line), "%-4s %-9s %8.3f TFLOP/s  (%.3g GFLOP in %.3f ms)\n",
                      bf16 ? "bf16" : "f32", names[i], *out[i], products[i].flops / 1e9,
                      seconds * 1e3);
      } catch (const Error &e) {
        if (!bf16)
          throw;
        std::snprintf(line, sizeof(line), "%-4s %-9s not measured: %.100s\n", "bf16", names[i],
                      e.what());
      }
      if (progress)
        *progress << line << std::flush;
    }
  }
  return figures;
}

std::string peakKey(const Backend &backend, int threads, const std::string &device) {
  std::string key = cpuModel() + " | " + backend.describe();
  if (!device.empty())
    key += " | " + device;
  if (threads > 0)
    key += " | " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
  // The key is one field of a tab-separated line.
  for (char &c : key)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return key;
}

std::string peakFilePath() {
  if (const char *file = std::getenv("DP_PEAK_FILE"); file && *file)
    return file;
  if (const char *cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
    return std::string(cache) + "/dp/peak.tsv";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/dp/peak.tsv";
  return "";
}

std::optional<PeakFigures> readPeak(const std::string &path, const std::string &key) {
  if (path.empty())
    return std::nullopt;
  std::string content, error;
  if (!tryReadInputFile(path, kMaxPeakFileBytes, "peak file", content, error))
    return std::nullopt;
  std::istringstream lines(content);
  std::string line;
  std::optional<PeakFigures> found;
  while (std::getline(lines, line)) {
    const size_t tab = line.find('\t');
    if (line.empty() || line[0] == '#' || tab == std::string::npos || line.compare(0, tab, key))
      continue;
    PeakFigures f;
    double *fields[4] = {&f.matmul[0], &f.conv[0], &f.matmul[1], &f.conv[1]};
    const char *at = line.c_str() + tab + 1;
    bool ok = true;
    for (double *field : fields) {
      char *end = nullptr;
      *field = std::strtod(at, &end);
      ok = ok && end != at && std::isfinite(*field) && *field >= 0 && *field < 1e9;
      at = end;
    }
    if (ok && f.best(false) > 0)
      found = f; // the last line of the key wins
  }
  return found;
}

void writePeak(const std::string &path, const std::string &key, const PeakFigures &f) {
  if (path.empty())
    throw Error(ErrorKind::Runtime, "no place for the peak file: set DP_PEAK_FILE, "
                                    "XDG_CACHE_HOME or HOME");
  // The directory (and its parent, ~/.cache) where missing.
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1))
    ::mkdir(path.substr(0, slash).c_str(), 0777);
  std::string kept = "# dp peak file (dprun --measure-peak): key, then TFLOP/s of f32 matmul, "
                     "f32 conv, bf16 matmul, bf16 conv\n";
  std::string content, error;
  if (tryReadInputFile(path, kMaxPeakFileBytes, "peak file", content, error)) {
    std::istringstream lines(content);
    std::string line;
    while (std::getline(lines, line)) {
      const size_t tab = line.find('\t');
      if (!line.empty() && line[0] != '#' && tab != std::string::npos &&
          line.compare(0, tab, key) != 0)
        kept += line + "\n";
    }
  }
  char figures[160];
  std::snprintf(figures, sizeof(figures), "\t%.4f\t%.4f\t%.4f\t%.4f\n", f.matmul[0], f.conv[0],
                f.matmul[1], f.conv[1]);
  writeFileAtomically(path, kept + key + figures);
}

} // namespace dp::rt
