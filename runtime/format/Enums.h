// Small enumerations of the plan format shared by the compiler and the runtime. Their numeric
// values are part of the file format: append only, and bump kFormatVersion on any change.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dp::rt {

/// Kernel kinds, numbered by their position in Kernels.def.
enum class KernelKind : uint16_t {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs) Enum,
#include "runtime/format/Kernels.def"
  NumKinds
};

/// Static facts about a kernel kind, for verifiers on both sides of the format.
struct KernelInfo {
  const char *name;
  int minInputs;
  int maxInputs;
  int numOutputs;
  /// Runs on every device of the process and talks to the other replicas.
  bool collective;
};

/// Facts about `kind`; `kind` must be below KernelKind::NumKinds.
inline const KernelInfo &kernelInfo(KernelKind kind) {
  static const KernelInfo table[] = {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs) {Name, MinIn, MaxIn, NumOut, false},
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                            \
  {Name, MinIn, MaxIn, NumOut, true},
#include "runtime/format/Kernels.def"
  };
  return table[static_cast<unsigned>(kind)];
}

/// The kind whose mnemonic is `name`, or NumKinds when there is none.
inline KernelKind kernelKindByName(std::string_view name) {
  for (unsigned k = 0; k < static_cast<unsigned>(KernelKind::NumKinds); ++k)
    if (name == kernelInfo(KernelKind(k)).name)
      return KernelKind(k);
  return KernelKind::NumKinds;
}

/// The most outputs `kind` takes (its numOutputs, or more for a kind with optional outputs).
inline int maxOutputs(KernelKind kind) {
  switch (kind) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_KERNEL_OUTPUTS_UP_TO(Enum, Max)                                                         \
  case KernelKind::Enum:                                                                           \
    return Max;
#include "runtime/format/Kernels.def"
  default:
    return kernelInfo(kind).numOutputs;
  }
}

/// The partial sums an accumulate kernel over `count` micro-shards keeps besides its sum: the
/// levels of the binary counter past level 0, (bit width of count - 1) - 1, 0 for count <= 2.
inline int64_t accumulatePartialLevels(int64_t count) {
  int64_t width = 0;
  for (int64_t v = count - 1; v > 0; v >>= 1)
    ++width;
  return width > 1 ? width - 1 : 0;
}

/// True for the kinds that run on every device of the process and talk to the others.
inline bool isCollective(KernelKind kind) { return kernelInfo(kind).collective; }
/// True for the collectives that open a bucket's exchange (the others close it): an
/// allreduce's start, a worker's push, a server's receive.
inline bool isCollectiveStart(KernelKind kind) {
  return kind == KernelKind::AllReduceStart || kind == KernelKind::PushStart ||
         kind == KernelKind::ReceivePush || kind == KernelKind::BroadcastStart;
}

/// Element types of buffers.
/// BF16 is bfloat16 (the upper half of an f32): the compute type of `dpc compile --precision
/// bf16`, never a parameter's or an optimizer's.
enum class DType : uint8_t { F32 = 0, I32 = 1, BF16 = 2 };
inline constexpr unsigned kNumDTypes = 3;
inline unsigned dtypeSize(DType t) { return t == DType::BF16 ? 2 : 4; }
inline const char *dtypeName(DType t) {
  return t == DType::F32 ? "f32" : t == DType::I32 ? "i32" : "bf16";
}

/// Activation functions, as the `activation` attribute of dense/activation kernels.
enum class Activation : uint8_t { None = 0, Relu = 1, Sigmoid = 2, Tanh = 3, Softmax = 4 };
inline constexpr unsigned kNumActivations = 5;
/// The name of an activation in the compiler's IR ("none", "relu", ...).
inline const char *activationName(Activation a) {
  static const char *const names[kNumActivations] = {"none", "relu", "sigmoid", "tanh", "softmax"};
  return static_cast<unsigned>(a) < kNumActivations ? names[static_cast<unsigned>(a)] : "?";
}
/// The activation called `name`; false when there is none.
inline bool activationByName(std::string_view name, Activation &out) {
  for (unsigned a = 0; a < kNumActivations; ++a)
    if (name == activationName(Activation(a))) {
      out = Activation(a);
      return true;
    }
  return false;
}

/// Parameter initialisers (Keras semantics). glorot/he use the fans the compiler records.
enum class InitKind : uint8_t {
  Zeros = 0,
  Ones = 1,
  Constant = 2,      // a
  Uniform = 3,       // U(a, b)
  Normal = 4,        // N(mean a, stddev b)
  GlorotUniform = 5, // U(+-sqrt(6 / (fan_in + fan_out)))
  GlorotNormal = 6,  // truncated N(0, sqrt(2 / (fan_in + fan_out)))
  HeNormal = 7,      // truncated N(0, sqrt(2 / fan_in))
  HeUniform = 8,     // U(+-sqrt(6 / fan_in))
  // a times a matrix with orthonormal rows or columns, seen as [fan_in, fan_out] (Keras's
  // Orthogonal: the QR factor of a normal draw, R's diagonal made positive).
  Orthogonal = 9,
  UnitForgetBias = 10, // an LSTM bias: zeros, but ones for the forget gate (the 2nd quarter)
  Data = 11,           // the values the model gives (an imported model's weights): Plan::initData
  NumKinds
};

/// The kind of device a plan was compiled for (`dpc compile --device`).
enum class DeviceKind : uint8_t { Cpu = 0, Cuda = 1 };
inline constexpr unsigned kNumDeviceKinds = 2;
/// The most processes a plan may have (the compiler's --processes and the loader's check): with
/// at most 64 devices each, a job's replicas fit an int.
constexpr int kMaxProcesses = 1 << 20;

inline const char *deviceKindName(DeviceKind k) {
  return k == DeviceKind::Cpu ? "cpu" : k == DeviceKind::Cuda ? "cuda" : "?";
}

/// The device kind named `name` ("cpu", "cuda"); false for any other name.
inline bool deviceKindByName(std::string_view name, DeviceKind &out) {
  for (unsigned k = 0; k < kNumDeviceKinds; ++k)
    if (name == deviceKindName(DeviceKind(k))) {
      out = DeviceKind(k);
      return true;
    }
  return false;
}

/// "cpu or cuda": the device kinds, for messages.
inline std::string deviceKindNames() {
  std::string names;
  for (unsigned k = 0; k < kNumDeviceKinds; ++k)
    names += std::string(k == 0                     ? ""
                         : k + 1 == kNumDeviceKinds ? " or "
                                                    : ", ") +
             deviceKindName(DeviceKind(k));
  return names;
}

/// What a persistent parameter is, for memory reports and checkpoints.
enum class ParamKind : uint8_t { Weight = 0, OptimizerState = 1 };

/// What an entry of the collective manifest does to its bucket (format 5).
enum class CollectiveKind : uint8_t {
  AllReduceMean = 0, ///< every member ends with the mean of the members' buckets
  PushPull = 1,      ///< a worker sends its bucket to a server and receives parameters back
  ReceiveReply = 2,  ///< a server receives the workers' buckets and replies with parameters
  ReduceScatter = 3, ///< member i ends with the sum of the members' i-th parts
  AllGather = 4,     ///< every member ends with every member's part
  Broadcast = 5,     ///< every member ends with the root member's bucket (format 9: `root`)
};
inline constexpr unsigned kNumCollectiveKinds = 6;
/// The manifest's name of a kind ("allreduce_mean"), or "" past the list.
inline const char *collectiveKindName(CollectiveKind kind) {
  static constexpr const char *names[kNumCollectiveKinds] = {
      "allreduce_mean", "push_pull", "receive_reply", "reduce_scatter", "all_gather", "broadcast"};
  return unsigned(kind) < kNumCollectiveKinds ? names[unsigned(kind)] : "";
}

/// With whom a manifest entry exchanges its bucket (format 5); a group's id says which one
/// where there are several (a server's index), else it is -1.
enum class GroupKind : uint8_t {
  World = 0,    ///< every replica of every training process
  Workers = 1,  ///< the workers of a parameter server (a server's plan)
  Server = 2,   ///< parameter server `id` (a worker's plan)
  Node = 3,     ///< the replicas of one node
  Leaders = 4,  ///< one replica per node
  Replicas = 5, ///< the replicas of one process
};
inline constexpr unsigned kNumGroupKinds = 6;
/// The manifest's name of a group: "world", "server 2"; "" past the list.
inline std::string groupName(GroupKind group, int id) {
  static constexpr const char *names[kNumGroupKinds] = {"world", "workers", "server",
                                                        "node",  "leaders", "replicas"};
  if (unsigned(group) >= kNumGroupKinds)
    return "";
  return id >= 0 ? std::string(names[unsigned(group)]) + " " + std::to_string(id)
                 : names[unsigned(group)];
}

/// What the runtime feeds an input of the steps with (format 6): it finds the inputs by role,
/// whatever the model named them.
enum class InputRole : uint8_t {
  Samples = 0, ///< the batch's samples (f32 [rows, ...]: images, sequences)
  Targets = 1, ///< what the loss compares the predictions with (i32 [rows]: class labels)
};
inline constexpr unsigned kNumInputRoles = 2;
/// The plan's name of a role ("samples"), or "" past the list.
inline const char *inputRoleName(InputRole role) {
  static constexpr const char *names[kNumInputRoles] = {"samples", "targets"};
  return unsigned(role) < kNumInputRoles ? names[unsigned(role)] : "";
}

/// What a step's output is to the runtime (format 6), which reads and reduces the outputs by
/// role, whatever the model named them. Loss and correct are f32 scalars.
enum class OutputRole : uint8_t {
  Loss = 0,    ///< the mean loss over the device's valid rows (weighted by rows across devices)
  Correct = 1, ///< how many of the device's valid rows it predicts right (summed; accuracy)
  /// The model's predictions for the device's rows (eval step only; f32 or bf16 [rows,
  /// classes]): what `dprun --predict` writes. Plans of dpc before it have none.
  Logits = 2,
};
inline constexpr unsigned kNumOutputRoles = 3;
/// The plan's name of a role ("loss"), or "" past the list.
inline const char *outputRoleName(OutputRole role) {
  static constexpr const char *names[kNumOutputRoles] = {"loss", "correct", "logits"};
  return unsigned(role) < kNumOutputRoles ? names[unsigned(role)] : "";
}

/// The names of the `count` roles `nameOf` names, as "a, b or c" (for messages).
template <typename Role> std::string roleNames(const char *(*nameOf)(Role), unsigned count) {
  std::string names;
  for (unsigned r = 0; r < count; ++r)
    names += std::string(r == 0 ? "" : r + 1 == count ? " or " : ", ") + nameOf(Role(r));
  return names;
}

/// The role named `name` among the `count` roles `nameOf` names; false for any other name.
template <typename Role>
bool roleByName(std::string_view name, const char *(*nameOf)(Role), unsigned count, Role &out) {
  for (unsigned r = 0; r < count; ++r)
    if (name == nameOf(Role(r))) {
      out = Role(r);
      return true;
    }
  return false;
}
inline bool inputRoleByName(std::string_view name, InputRole &out) {
  return roleByName(name, inputRoleName, kNumInputRoles, out);
}
inline bool outputRoleByName(std::string_view name, OutputRole &out) {
  return roleByName(name, outputRoleName, kNumOutputRoles, out);
}

/// The plan file format version this build reads and writes.
inline constexpr uint32_t kFormatVersion = 12;

} // namespace dp::rt
