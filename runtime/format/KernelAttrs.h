// The typed attributes of every kernel kind, generated from the kernel contract table
// (Kernels.def): one struct per attribute set, a description of each field for the verifiers
// on both sides of the format, and the set each kind takes. Kernel code reads these structs;
// it never looks an attribute up by its name.
#pragma once

#include "runtime/format/Enums.h"

#include <cstdint>
#include <vector>

namespace dp::rt {

/// How an attribute is stored and checked.
enum class AttrType : uint8_t {
  Int,        // any integer
  Float,      // a finite double
  Flag,       // 0 or 1
  Activation, // an Activation (its number in the file, its name in the compiler's IR)
};

/// One attribute of a kernel's contract.
struct AttrSpec {
  const char *name;
  AttrType type;
  bool required;
  /// The value of an optional integer when the plan leaves it out (the compiler writes it only
  /// when it differs, so plans without the attribute keep their bytes); an optional float's is
  /// 0, likewise left out.
  int64_t absent = 0;
};

#define DP_INT(name) int64_t name = 0;
#define DP_OPT_INT(name, absent) int64_t name = absent;
#define DP_FLOAT(name) double name = 0;
#define DP_OPT_FLOAT(name) double name = 0;
#define DP_FLAG(name) bool name = false;
#define DP_OPT_FLAG(name) bool name = false;
#define DP_ACT(name) Activation name = Activation::None;
#define DP_OPT_ACT(name) Activation name = Activation::None;
#define DP_KERNEL_ATTRS(Set, Fields)                                                             \
  struct Set {                                                                                   \
    Fields                                                                                       \
    /** Calls `visit(spec, field)` for each attribute, in the table's order. */                 \
    template <typename V> void visitFields(V &&visit);                                           \
    template <typename V> void visitFields(V &&visit) const;                                     \
    /** The attributes of the set, in the table's order. */                                     \
    static const std::vector<AttrSpec> &specs();                                                 \
  };
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#include "runtime/format/Kernels.def"
#undef DP_INT
#undef DP_OPT_INT
#undef DP_FLOAT
#undef DP_OPT_FLOAT
#undef DP_FLAG
#undef DP_OPT_FLAG
#undef DP_ACT
#undef DP_OPT_ACT

#define DP_INT(name) visit(AttrSpec{#name, AttrType::Int, true}, this->name);
#define DP_OPT_INT(name, absent) visit(AttrSpec{#name, AttrType::Int, false, absent}, this->name);
#define DP_FLOAT(name) visit(AttrSpec{#name, AttrType::Float, true}, this->name);
#define DP_OPT_FLOAT(name) visit(AttrSpec{#name, AttrType::Float, false}, this->name);
#define DP_FLAG(name) visit(AttrSpec{#name, AttrType::Flag, true}, this->name);
#define DP_OPT_FLAG(name) visit(AttrSpec{#name, AttrType::Flag, false}, this->name);
#define DP_ACT(name) visit(AttrSpec{#name, AttrType::Activation, true}, this->name);
#define DP_OPT_ACT(name) visit(AttrSpec{#name, AttrType::Activation, false}, this->name);
#define DP_KERNEL_ATTRS(Set, Fields)                                                             \
  template <typename V> inline void Set::visitFields(V &&visit) { Fields }                       \
  template <typename V> inline void Set::visitFields(V &&visit) const { Fields }                 \
  inline const std::vector<AttrSpec> &Set::specs() {                                             \
    static const std::vector<AttrSpec> all = [] {                                                \
      std::vector<AttrSpec> specs;                                                               \
      Set{}.visitFields([&](const AttrSpec &s, const auto &) { specs.push_back(s); });           \
      return specs;                                                                              \
    }();                                                                                         \
    return all;                                                                                  \
  }
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#include "runtime/format/Kernels.def"
#undef DP_INT
#undef DP_OPT_INT
#undef DP_FLOAT
#undef DP_OPT_FLOAT
#undef DP_FLAG
#undef DP_OPT_FLAG
#undef DP_ACT
#undef DP_OPT_ACT

/// The attributes that kernels of `kind` take; `kind` must be below KernelKind::NumKinds.
inline const std::vector<AttrSpec> &kernelAttrSpecs(KernelKind kind) {
  switch (kind) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                       \
  case KernelKind::Enum:                                                                         \
    return Attrs::specs();
#include "runtime/format/Kernels.def"
  case KernelKind::NumKinds:
    break;
  }
  return NoAttrs::specs();
}

/// The attribute called `name` of kernels of `kind`, or null.
inline const AttrSpec *findAttrSpec(KernelKind kind, std::string_view name) {
  for (const AttrSpec &spec : kernelAttrSpecs(kind))
    if (name == spec.name)
      return &spec;
  return nullptr;
}

} // namespace dp::rt
