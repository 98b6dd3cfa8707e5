// The options of `dpc compile`: their checks, from the table of CompileOptions.def.
#include "passes/Pipelines/CompileOptions.h"

#include "runtime/format/LrSchedule.h"

#include <cmath>
#include <cstdio>
#include <iterator>

using namespace mlir;
using llvm::StringRef;

namespace dp {

// A number as a user writes it: integers in full, others as %g.
static std::string number(double v) {
  char text[32];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    std::snprintf(text, sizeof(text), "%.0f", v);
  else
    std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

int64_t CompileOptions::maxDevicesPerProcess() {
  return rt::kernelInfo(rt::KernelKind::AllReduceStart).maxInputs;
}

std::string CompileOptions::check(StringRef name, int64_t value) {
#define DP_INT(Field, Name, Value, Default, Min, Max, WhyMax, Help)                                \
  if (name == Name) {                                                                              \
    if (value < int64_t(Min))                                                                      \
      return std::string(Name) + " must be at least " + std::to_string(Min) + ", found " +         \
             std::to_string(value);                                                                \
    if (value > int64_t(Max))                                                                      \
      return std::string(Name) + " must be at most " + std::to_string(Max) + WhyMax + ", found " + \
             std::to_string(value);                                                                \
  }
#include "passes/Pipelines/CompileOptions.def"
  return {};
}

std::string CompileOptions::check(StringRef name, double value) {
#define DP_REAL(Field, Name, Value, Default, Min, MinExcluded, Max, WhyMax, Help)                  \
  if (name == Name) {                                                                              \
    if (MinExcluded && !(value > Min && value <= Max))                                             \
      return std::string(Name) + " must be " +                                                     \
             (Min == 0 ? std::string("positive") : "greater than " + number(Min)) +                \
             " and at most " + number(Max) + WhyMax + ", found " + number(value);                  \
    if (std::isnan(value))                                                                         \
      return std::string(Name) + " must be a number of " + Value + ", found nan";                  \
    if (value < Min)                                                                               \
      return std::string(Name) + " must " +                                                        \
             (Min == 0 ? std::string("not be negative") : "be at least " + number(Min)) +          \
             ", found " + number(value);                                                           \
    if (value > Max)                                                                               \
      return std::string(Name) + " must be at most " + number(Max) + WhyMax + ", found " +         \
             number(value);                                                                        \
  }
#include "passes/Pipelines/CompileOptions.def"
  return {};
}

std::string CompileOptions::check(StringRef name, StringRef value) {
#define DP_CHOICE(Field, Name, Help, ...)                                                          \
  if (name == Name) {                                                                              \
    std::string names;                                                                             \
    const auto &choices = compile_choices::Field;                                                  \
    const size_t count = std::size(choices);                                                       \
    for (size_t i = 0; i < count; ++i) {                                                           \
      if (value == choices[i].name)                                                                \
        return {};                                                                                 \
      names += std::string(i == 0 ? "" : i + 1 == count ? " or " : ", ") + choices[i].name;        \
    }                                                                                              \
    return std::string(Name) + " must be " + names + ", not '" + value.str() + "'";                \
  }
#include "passes/Pipelines/CompileOptions.def"
  if (name == "device") {
    rt::DeviceKind kind;
    if (!rt::deviceKindByName(value.str(), kind))
      return "device must be " + rt::deviceKindNames() + ", not '" + value.str() + "'";
  }
  if (name == "staleness" && value != "inf") {
    int64_t k = 0;
    if (value.getAsInteger(10, k) || k < 0)
      return "staleness must be a number of steps >= 0 or inf, not '" + value.str() + "'";
  }
  if (name == "lr-schedule" && !value.empty()) {
    rt::LrSchedule schedule;
    std::string problem;
    if (!rt::parseLrSchedule(value.str(), 0.1, schedule, problem))
      return "lr-schedule '" + value.str() + "': " + problem;
  }
  return {};
}

LogicalResult CompileOptions::parse(StringRef text) {
  if (failed(parseFromString(text)))
    return failure();
#define DP_INT(Field, Name, ...) DP_GIVEN(Field, Name)
#define DP_REAL(Field, Name, ...) DP_GIVEN(Field, Name)
#define DP_TEXT(Field, Name, ...) DP_GIVEN(Field, Name)
#define DP_FLAG(Field, Name, ...) DP_GIVEN(Field, Name)
#define DP_CHOICE(Field, Name, ...) DP_GIVEN(Field, Name)
#define DP_GIVEN(Field, Name)                                                                      \
  if (Field.hasValue())                                                                            \
    given.insert(Name);
#include "passes/Pipelines/CompileOptions.def"
#undef DP_GIVEN
  return success();
}

int64_t CompileOptions::stalenessSteps() const {
  int64_t k = -1;
  if (staleness != "inf" && StringRef(staleness).getAsInteger(10, k))
    return -1;
  return k;
}

std::string CompileOptions::verify() const {
  // Each option on its own, in the table's order.
#define DP_INT(Field, Name, ...) DP_CHECK(Field, Name, int64_t)
#define DP_REAL(Field, Name, ...) DP_CHECK(Field, Name, double)
#define DP_TEXT(Field, Name, ...) DP_CHECK(Field, Name, StringRef)
#define DP_CHOICE(Field, Name, ...) DP_CHECK(Field, Name, StringRef)
#define DP_CHECK(Field, Name, Type)                                                                \
  if (std::string problem = check(Name, Type(Field.getValue())); !problem.empty())                 \
    return problem;
#include "passes/Pipelines/CompileOptions.def"
#undef DP_CHECK

  // Options that depend on each other.
  const bool cuda = device == "cuda";
  if (precision == "bf16" && cuda)
    return "precision bf16 is built for device cpu only so far (the CUDA backend has no bf16 "
           "kernels yet)";
  if (allreducePrecision == "bf16" && cuda)
    return "allreduce-precision bf16 is built for device cpu only so far (NCCL's engine "
           "averages f32 buckets)";
  if (given.count("first-bucket-mb") && parameterServer())
    return "first-bucket-mb applies to the allreduce strategy (a parameter server's buckets "
           "are --bucket-mb)";
  if (firstBucketMb > bucketMb && bucketMb > 0)
    return "first-bucket-mb must be at most bucket-mb (" + number(bucketMb) + "), found " +
           number(firstBucketMb);
  if (allreducePrecision == "bf16" && parameterServer())
    return "allreduce-precision bf16 applies to the allreduce strategy (a parameter server "
           "receives f32 gradients)";
  if (parameterServer()) {
    if (servers + workers > kMaxProcesses)
      return "servers and workers must be at most " + std::to_string(kMaxProcesses) +
             " processes together, found " + std::to_string(servers + workers);
    if (devicesPerProcess != 1)
      return "devices-per-process must be 1 under the parameter-server strategy (one device "
             "per worker), found " +
             std::to_string(devicesPerProcess);
    if (processes != 1 && processes != servers + workers)
      return "processes is the servers and the workers together (" +
             std::to_string(servers + workers) +
             ") under the parameter-server strategy, "
             "found " +
             std::to_string(processes);
    if (nodes != 1)
      return "nodes must be 1 under the parameter-server strategy, found " + std::to_string(nodes);
    if (microBatch > 0)
      return "micro-batch is not supported under the parameter-server strategy yet (a worker "
             "pushes the gradient of each step)";
    if (sync && given.count("staleness"))
      return "staleness and --sync exclude each other (a synchronous step has staleness 0)";
    if (clipNorm > 0)
      return "clip-norm is not supported under the parameter-server strategy: each server "
             "updates its own parameters from its share of the gradient, and no process holds "
             "the whole gradient whose norm clipping needs";
    // Each server updates its buckets as gradients arrive, at its own pace: no server knows
    // the epoch a worker is in, which a schedule's factor is a function of.
    if (!canonicalLrSchedule().empty())
      return "lr-schedule '" + lrSchedule +
             "' is not supported under the parameter-server strategy yet: the servers apply "
             "the updates and do not know the workers' epochs (compile without it)";
  } else {
    for (const char *name : {"servers", "workers", "staleness", "sync"})
      if (given.count(name))
        return std::string(name) + " needs --strategy parameter-server";
  }
  if (shardOptimizer > 0) {
    if (parameterServer())
      return "shard-optimizer applies to the allreduce strategy (parameter servers already hold "
             "the optimizer state, each its share)";
    if (devicesPerProcess * processes < 2)
      return "shard-optimizer shards the optimizer state over the devices of the job, and "
             "this layout has 1 device: use --devices-per-process or --processes 2 or more";
    if (processes > 32767)
      return "shard-optimizer is built for at most 32,767 processes (a plan records the process "
             "that holds a state in 16 bits)";
  }
  if (processes % nodes != 0)
    return "nodes must be at least 1 and divide the " + std::to_string(processes) +
           " processes evenly, found " + std::to_string(nodes);
  return {};
}

std::string CompileOptions::canonicalLrSchedule() const {
  if (lrSchedule.empty())
    return "";
  const double factor = replicaLrFactor();
  rt::LrSchedule schedule;
  std::string problem;
  if (!rt::parseLrSchedule(lrSchedule, factor > 1 ? 1.0 / factor : 0.1, schedule, problem))
    return lrSchedule; // verify() refused it already; the pass says so again
  return schedule.isConstant() ? "" : rt::lrScheduleText(schedule);
}

} // namespace dp
