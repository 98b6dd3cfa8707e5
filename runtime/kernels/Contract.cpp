// The kernel contract's checks; see Contract.h.
#include "runtime/kernels/Contract.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace dp::rt::contract {
namespace {

/// "input 0 (x) (buffer 3)": a tensor as error messages name it.
std::string named(const char *role, const TensorView &t) {
  return std::string(role) + " (buffer " + std::to_string(t.id) + ")";
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return "[" + s + "]";
}

void expectRank(const KernelSite &site, const TensorView &t, int rank, const char *role) {
  if (t.rank() != rank)
    site.fail(std::string(role) + " (buffer " + std::to_string(t.id) + ") has rank " +
              std::to_string(t.rank()) + ", expected " + std::to_string(rank));
}

/// Input 2 (b): an f32 bias of `n` elements.
void expectBias(const KernelSite &site, int64_t n) {
  const TensorView b = site.input(2);
  site.expectDType(b, DType::F32, "input 2 (b)");
  site.expectNumel(b, n, "input 2 (b)");
}

void expectRank4(const KernelSite &site, const TensorView &t, const char *role) {
  if (t.rank() != 4)
    site.fail(named(role, t) + " has rank " + std::to_string(t.rank()) +
              ", expected 4 (an NHWC image)");
}

void expectAllF32(const KernelSite &site) {
  for (int i = 0; i < site.numInputs(); ++i)
    site.expectDType(site.input(i), DType::F32, ("input " + std::to_string(i)).c_str());
  for (int i = 0; i < site.numOutputs(); ++i)
    site.expectDType(site.output(i), DType::F32, ("output " + std::to_string(i)).c_str());
}

/// A result f32, or bf16 where the compiler fused the cast that followed its kernel
/// (plan-fuse-epilogues: mixed precision's copies written by their producers).
void expectF32OrFusedCast(const KernelSite &site, const TensorView &y, const char *role) {
  if (y.dtype != DType::BF16)
    site.expectDType(y, DType::F32, role);
}

/// The two factors of a product kernel (dense, matmul, the convolutions): both f32, or both
/// bf16 (mixed precision: the kernel accumulates in f32). Returns their type.
DType expectFactors(const KernelSite &site, const TensorView &a, const char *aRole,
                    const TensorView &b, const char *bRole) {
  if (a.dtype != DType::F32 && a.dtype != DType::BF16)
    site.fail(named(aRole, a) + " is " + dtypeName(a.dtype) + ", expected f32 or bf16");
  site.expectDType(b, a.dtype, bRole);
  return a.dtype;
}

void expectScalar(const KernelSite &site, const TensorView &t, const char *role) {
  site.expectDType(t, DType::F32, role);
  site.expectNumel(t, 1, role);
}

/// Checks a per-channel vector: f32 with `c` elements.
void expectChannels(const KernelSite &site, const TensorView &t, int64_t c, const char *role) {
  site.expectDType(t, DType::F32, role);
  site.expectNumel(t, c, role);
}

/// Checks batch statistics: f32 [2, c].
void expectStats(const KernelSite &site, const TensorView &t, int64_t c, const char *role) {
  site.expectDType(t, DType::F32, role);
  site.expectShape(t, {2, c}, role);
}

/// Rows and columns of a softmax over the last axis.
Rows softmaxRows(const KernelSite &site, const TensorView &t) {
  if (t.rank() < 1)
    site.fail("softmax needs a tensor of rank >= 1, buffer " + std::to_string(t.id) +
              " is a scalar");
  const int64_t cols = t.dim(-1);
  return {cols ? t.numel / cols : 0, cols};
}

Rows activationRows(const KernelSite &site, Activation act, const TensorView &t) {
  return act == Activation::Softmax ? softmaxRows(site, t) : Rows{1, t.numel};
}

XentShape xentShape(const KernelSite &site) {
  const TensorView logits = site.input(0), labels = site.input(1);
  site.expectDType(logits, DType::F32, "input 0 (logits)");
  site.expectDType(labels, DType::I32, "input 1 (labels)");
  if (logits.rank() != 2)
    site.fail("input 0 (logits, buffer " + std::to_string(logits.id) + ") has rank " +
              std::to_string(logits.rank()) + ", expected 2");
  site.expectNumel(labels, logits.dim(0), "input 1 (labels)");
  return {logits.dim(0), logits.dim(1)};
}

// Checks that the gradient and every state output are f32 of the parameter's size.
int64_t checkUpdate(const KernelSite &site, const char *const *outputRoles) {
  const TensorView grad = site.input(0);
  site.expectDType(grad, DType::F32, "input 0 (grad)");
  if (site.numInputs() > 1) {
    site.expectDType(site.input(1), DType::F32, "input 1 (scale)");
    site.expectNumel(site.input(1), 1, "input 1 (scale)");
  }
  for (int o = 0; o < site.numOutputs(); ++o) {
    site.expectDType(site.output(o), DType::F32, outputRoles[o]);
    site.expectNumel(site.output(o), grad.numel, outputRoles[o]);
  }
  return grad.numel;
}

/// Reads the padding attributes and checks the image `x` against its padded form `y`.
PadShape padShape(const KernelSite &site, const PadAttrs &a, const TensorView &x,
                  const TensorView &y, const char *xRole, const char *yRole) {
  site.expectDType(x, DType::F32, xRole);
  site.expectDType(y, DType::F32, yRole);
  expectRank4(site, x, xRole);
  PadShape p{};
  p.n = x.dim(0), p.h = x.dim(1), p.w = x.dim(2), p.c = x.dim(3);
  p.pt = a.pad_top, p.pb = a.pad_bottom;
  p.pl = a.pad_left, p.pr = a.pad_right;
  if (p.pt < 0 || p.pb < 0 || p.pl < 0 || p.pr < 0)
    site.fail("paddings must be non-negative, got top " + std::to_string(p.pt) + ", bottom " +
              std::to_string(p.pb) + ", left " + std::to_string(p.pl) + ", right " +
              std::to_string(p.pr));
  p.ph = p.h + p.pt + p.pb, p.pw = p.w + p.pl + p.pr;
  site.expectShape(y, {p.n, p.ph, p.pw, p.c}, yRole);
  return p;
}

NormShape normShape(const KernelSite &site, const TensorView &x, const char *role) {
  site.expectDType(x, DType::F32, role);
  if (x.rank() < 2)
    site.fail(named(role, x) + " has rank " + std::to_string(x.rank()) +
              ", expected at least 2 (rows and channels)");
  if (x.numel == 0)
    site.fail(named(role, x) + " is empty");
  return {x.numel / x.dim(-1), x.dim(-1), 0.0};
}

double batchNormEpsilon(const KernelSite &site, const EpsilonAttrs &attrs) {
  const double epsilon = attrs.epsilon;
  if (!(epsilon >= 0.0 && std::isfinite(epsilon)))
    site.fail("epsilon " + std::to_string(epsilon) + " must be finite and non-negative");
  return epsilon;
}

NormShape layerRows(const KernelSite &site, const TensorView &x, const char *role) {
  site.expectDType(x, DType::F32, role);
  if (x.rank() < 2 || x.numel == 0)
    site.fail(std::string(role) + " (buffer " + std::to_string(x.id) +
              ") needs rows and a non-empty last axis");
  return {x.numel / x.dim(-1), x.dim(-1), 0.0};
}

/// A batch normalisation's fused activation: none or relu.
bool batchNormRelu(const KernelSite &site, const NormAttrs &attrs) {
  if (attrs.activation != Activation::None && attrs.activation != Activation::Relu)
    site.fail(std::string("activation ") + activationName(attrs.activation) +
              " cannot follow a batch normalisation in its kernel (none or relu)");
  return attrs.activation == Activation::Relu;
}

double layerNormEpsilon(const KernelSite &site, const EpsilonAttrs &attrs) {
  if (!(attrs.epsilon > 0))
    site.fail("epsilon " + std::to_string(attrs.epsilon) + " must be positive");
  return attrs.epsilon;
}

std::string indexed(const char *role, size_t i, const TensorView &t) {
  return std::string(role) + " " + std::to_string(i) + " (buffer " + std::to_string(t.id) + ")";
}

/// Elements of `shape` over the axes [begin, end).
int64_t product(const std::vector<int64_t> &shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

/// Checks that `part` has `whole`'s rank, dtype and sizes on every axis but `axis`.
void expectPart(const KernelSite &site, const TensorView &whole, const TensorView &part,
                int64_t axis, const std::string &role) {
  if (part.dtype != whole.dtype || part.rank() != whole.rank())
    site.fail(role + " is " + dtypeName(part.dtype) + " of rank " + std::to_string(part.rank()) +
              ", expected " + dtypeName(whole.dtype) + " of rank " +
              std::to_string(whole.rank()));
  for (int64_t d = 0; d < whole.rank(); ++d)
    if (d != axis && part.dim(d) != whole.dim(d))
      site.fail(role + " has size " + std::to_string(part.dim(d)) + " on axis " +
                std::to_string(d) + ", expected " + std::to_string(whole.dim(d)));
}

int64_t checkedAxis(const KernelSite &site, int64_t axis, const TensorView &t) {
  if (axis < 0 || axis >= t.rank())
    site.fail("axis " + std::to_string(axis) + " is outside rank " + std::to_string(t.rank()));
  return axis;
}

/// Reads the geometry attributes and checks x, w and y against them; `x`, `w`, `y` are the
/// input image, the kernel and the output image whichever of them the kernel reads or writes.
template <typename GeometryAttrs>
ConvShape convShape(const KernelSite &site, const GeometryAttrs &a, const TensorView &x,
                    const TensorView &w, const TensorView &y, const char *xRole,
                    const char *wRole, const char *yRole) {
  // Whichever of x, w, y the kernel writes is f32; the two it reads are its factors.
  const TensorView &out = site.output(0);
  const TensorView *in[2];
  const char *inRoles[2];
  int reads = 0;
  for (const auto &[t, role] : {std::pair{&x, xRole}, {&w, wRole}, {&y, yRole}}) {
    expectRank4(site, *t, role);
    if (t->id == out.id)
      site.expectDType(*t, DType::F32, role);
    else
      in[reads] = t, inRoles[reads++] = role;
  }
  ConvShape s{};
  s.compute = expectFactors(site, *in[0], inRoles[0], *in[1], inRoles[1]);
  s.n = x.dim(0), s.h = x.dim(1), s.w = x.dim(2), s.c = x.dim(3);
  s.kh = w.dim(0), s.kw = w.dim(1), s.f = w.dim(3);
  s.sh = a.stride_h, s.sw = a.stride_w;
  s.pt = a.pad_top, s.pl = a.pad_left;
  s.pb = a.pad_bottom, s.pr = a.pad_right;
  s.g = a.groups, s.dh = a.dilation_h, s.dw = a.dilation_w;
  if (s.sh < 1 || s.sw < 1 || s.pt < 0 || s.pl < 0 || s.pb < 0 || s.pr < 0)
    site.fail("strides must be positive and paddings non-negative");
  if (s.g < 1 || s.dh < 1 || s.dw < 1)
    site.fail("groups and dilations must be positive");
  if (s.c % s.g != 0 || s.f % s.g != 0)
    site.fail(std::to_string(s.g) + " groups do not divide " + std::to_string(s.c) +
              " channels and " + std::to_string(s.f) + " filters");
  if (s.c / s.g != w.dim(2))
    site.fail(std::string(wRole) + " expects " + std::to_string(w.dim(2)) + " input channels" +
              (s.g > 1 ? " per group" : "") + ", the image has " + std::to_string(s.c) +
              (s.g > 1 ? " in " + std::to_string(s.g) + " groups" : ""));
  // The window's extent: its taps dh (dw) apart (checked before it is computed: a hostile
  // dilation must not overflow).
  const int64_t ph = s.h + s.pt + s.pb, pw = s.w + s.pl + s.pr;
  if (s.kh < 1 || s.kw < 1 || ph < 1 || pw < 1 || (s.kh - 1) > (ph - 1) / s.dh ||
      (s.kw - 1) > (pw - 1) / s.dw)
    site.fail("the kernel does not fit the padded image");
  const int64_t eh = (s.kh - 1) * s.dh + 1, ew = (s.kw - 1) * s.dw + 1;
  s.oh = (ph - eh) / s.sh + 1;
  s.ow = (pw - ew) / s.sw + 1;
  site.expectShape(y, {s.n, s.oh, s.ow, s.f}, yRole);
  s.plainWeights = a.plain_weights;
  if (s.plainWeights && !liveTaps(s).allowsPlainWeights())
    site.fail("plain_weights needs one group and a dense window of live taps (whole rows of "
              "the kernel, or one row): the library reads no other window as stored");
  return s;
}

} // namespace

ConvShape checkConv2d(const KernelSite &site, const Conv2dAttrs &attrs) {
  ConvShape s = convShape(site, attrs, site.input(0), site.input(1), site.output(0),
                          "input 0 (x)", "input 1 (w)", "output 0 (y)");
  s.bias = site.numInputs() == 3;
  if (s.bias)
    expectBias(site, s.f);
  return s;
}

ConvShape checkConv2dGradInput(const KernelSite &site, const ConvAttrs &attrs) {
  return convShape(site, attrs, site.output(0), site.input(1), site.input(0), "output 0 (dx)",
                   "input 1 (w)", "input 0 (dy)");
}

ConvShape checkConv2dGradFilter(const KernelSite &site, const ConvAttrs &attrs) {
  return convShape(site, attrs, site.input(0), site.output(0), site.input(1), "input 0 (x)",
                   "output 0 (dw)", "input 1 (dy)");
}

int64_t checkPointwise(const KernelSite &site) {
  const TensorView x = site.input(0), y = site.output(0);
  site.expectDType(x, DType::F32, "input 0 (x)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  site.expectNumel(y, x.numel, "output 0 (y)");
  return x.numel;
}

int64_t checkPointwiseGrad(const KernelSite &site) {
  const TensorView x = site.input(0), dy = site.input(1), dx = site.output(0);
  site.expectDType(x, DType::F32, "input 0 (x)");
  site.expectDType(dy, DType::F32, "input 1 (dy)");
  site.expectDType(dx, DType::F32, "output 0 (dx)");
  site.expectNumel(dy, x.numel, "input 1 (dy)");
  site.expectNumel(dx, x.numel, "output 0 (dx)");
  return x.numel;
}

bool allowsInPlace(KernelKind kind) {
  // DP_KERNEL_IN_PLACE of Kernels.def.
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)
#define DP_KERNEL_IN_PLACE(Enum)                                                                 \
  if (kind == KernelKind::Enum)                                                                  \
    return true;
#include "runtime/format/Kernels.def"
  return false;
}

void checkOverlaps(const KernelSite &site) {
  const bool inPlace = allowsInPlace(site.kind());
  for (int o = 0; o < site.numOutputs(); ++o) {
    const TensorView out = site.output(o);
    for (int i = 0; i < site.numInputs(); ++i) {
      const TensorView in = site.input(i);
      if (out.overlaps(in) && !(inPlace && out.sameBytes(in)))
        site.fail("output " + std::to_string(o) + " (buffer " + std::to_string(out.id) +
                  ") overlaps input " + std::to_string(i) + " (buffer " + std::to_string(in.id) +
                  ")" + (inPlace ? " without being the same bytes" : ""));
    }
    for (int p = 0; p < o; ++p)
      if (out.overlaps(site.output(p)))
        site.fail("outputs " + std::to_string(p) + " and " + std::to_string(o) + " overlap");
  }
}

// ---- elementwise and rows ------------------------------------------------------------------

Rows checkActivation(const KernelSite &site, const ActivationAttrs &attrs) {
  expectAllF32(site);
  site.expectNumel(site.output(0), site.input(0).numel, "output 0 (y)");
  return activationRows(site, attrs.activation, site.input(0));
}

Rows checkActivationGrad(const KernelSite &site, const ActivationAttrs &attrs) {
  site.expectDType(site.input(0), DType::F32, "input 0");
  site.expectDType(site.input(1), DType::F32, "input 1");
  expectF32OrFusedCast(site, site.output(0), "output 0");
  const int64_t n = site.input(0).numel;
  site.expectNumel(site.input(1), n, "input 1 (dy)");
  site.expectNumel(site.output(0), n, "output 0 (dx)");
  return activationRows(site, attrs.activation, site.input(0));
}

int64_t checkAdd(const KernelSite &site, const NoAttrs &) {
  expectAllF32(site);
  const TensorView a = site.input(0), b = site.input(1), c = site.output(0);
  site.expectNumel(b, a.numel, "input 1 (b)");
  site.expectNumel(c, a.numel, "output 0 (c)");
  return a.numel;
}

Rows checkAddRows(const KernelSite &site, const NoAttrs &) {
  expectAllF32(site);
  const TensorView x = site.input(0), b = site.input(1), y = site.output(0);
  if (b.numel < 1 || x.numel % b.numel != 0)
    site.fail("input 1 (b) (buffer " + std::to_string(b.id) + ") has " + std::to_string(b.numel) +
              " elements, which do not divide input 0 (x)'s " + std::to_string(x.numel) +
              " into rows");
  site.expectNumel(y, x.numel, "output 0 (y)");
  return {x.numel / b.numel, b.numel};
}

namespace {

/// `full`'s shape with `small` broadcast to it (each of small's axes full's or 1), merged into
/// runs (BroadcastShape); `fullRole` and `smallRole` name the two in messages.
BroadcastShape broadcastShape(const KernelSite &site, const TensorView &full, const char *fullRole,
                              const TensorView &small, const char *smallRole) {
  auto shapeText = [](const TensorView &t) {
    std::string s;
    for (int64_t d : t.shape)
      s += (s.empty() ? "" : "x") + std::to_string(d);
    return "[" + s + "]";
  };
  if (small.rank() != full.rank())
    site.fail(std::string(smallRole) + " (buffer " + std::to_string(small.id) + ") is " +
              shapeText(small) + ", not of the rank of " + fullRole + "'s " + shapeText(full));
  BroadcastShape s;
  s.elements = full.numel;
  s.bElements = small.numel;
  for (int k = 0; k < full.rank(); ++k) {
    const int64_t d = full.dim(k);
    if (small.dim(k) != d && small.dim(k) != 1)
      site.fail(std::string(smallRole) + " (buffer " + std::to_string(small.id) + ") " +
                shapeText(small) + " does not broadcast to " + fullRole + "'s " + shapeText(full) +
                " along axis " + std::to_string(k));
    if (d == 1)
      continue; // an axis of size 1 is both kept and broadcast: it merges with any run
    const bool broadcast = small.dim(k) == 1;
    if (s.rank > 0 && s.broadcast[s.rank - 1] == broadcast) {
      s.dims[s.rank - 1] *= d;
      continue;
    }
    if (s.rank == BroadcastShape::kMaxRank)
      site.fail("the broadcast of " + std::string(smallRole) + " alternates more than " +
                std::to_string(BroadcastShape::kMaxRank) + " times");
    s.dims[s.rank] = d;
    s.broadcast[s.rank] = broadcast;
    ++s.rank;
  }
  if (s.rank == 0) { // every axis of size 1: one element
    s.dims[0] = 1;
    s.rank = 1;
  }
  return s;
}

} // namespace

BroadcastShape checkMul(const KernelSite &site, const NoAttrs &) {
  expectAllF32(site);
  const TensorView a = site.input(0), b = site.input(1), y = site.output(0);
  BroadcastShape s = broadcastShape(site, a, "input 0 (a)", b, "input 1 (b)");
  site.expectShape(y, a.shape, "output 0 (y)");
  return s;
}

BroadcastShape checkMulReduce(const KernelSite &site, const NoAttrs &) {
  expectAllF32(site);
  const TensorView dy = site.input(0), a = site.input(1), db = site.output(0);
  site.expectShape(a, dy.shape, "input 1 (a)");
  return broadcastShape(site, dy, "input 0 (dy)", db, "output 0 (db)");
}

int64_t checkCopy(const KernelSite &site, const NoAttrs &) {
  const TensorView x = site.input(0), y = site.output(0);
  site.expectDType(y, x.dtype, "output 0 (y)");
  site.expectNumel(y, x.numel, "output 0 (y)");
  return x.numel;
}

int64_t checkCast(const KernelSite &site, const NoAttrs &) {
  const TensorView x = site.input(0), y = site.output(0);
  const bool narrows = x.dtype == DType::F32 && y.dtype == DType::BF16;
  const bool widens = x.dtype == DType::BF16 && y.dtype == DType::F32;
  if (!narrows && !widens)
    site.fail(std::string("casts f32 to bf16 or bf16 to f32, not ") + dtypeName(x.dtype) +
              " (buffer " + std::to_string(x.id) + ") to " + dtypeName(y.dtype) + " (buffer " +
              std::to_string(y.id) + ")");
  site.expectNumel(y, x.numel, "output 0 (y)");
  return x.numel;
}

uint32_t checkFill(const KernelSite &site, const FillAttrs &attrs) {
  const TensorView out = site.output(0);
  if (out.dtype == DType::BF16)
    site.fail("fills f32 or i32, not bf16 (buffer " + std::to_string(out.id) + ")");
  uint32_t pattern = 0;
  if (out.dtype == DType::F32) {
    const float f = static_cast<float>(attrs.value);
    std::memcpy(&pattern, &f, 4);
  } else { // i32, the only other element type
    const int32_t i = static_cast<int32_t>(attrs.value);
    std::memcpy(&pattern, &i, 4);
  }
  return pattern;
}

Rows checkReduceRows(const KernelSite &site, const NoAttrs &) {
  expectAllF32(site);
  const TensorView x = site.input(0), y = site.output(0);
  if (x.rank() < 1)
    site.fail("input 0 (x, buffer " + std::to_string(x.id) + ") is a scalar: no rows to reduce");
  const int64_t rows = x.dim(0), cols = rows ? x.numel / rows : 0;
  site.expectNumel(y, cols, "output 0 (y)");
  return {rows, cols};
}

// ---- products ------------------------------------------------------------------------------

DenseShape checkDense(const KernelSite &site, const FusedActivationAttrs &) {
  const TensorView x = site.input(0), w = site.input(1), y = site.output(0);
  DenseShape s;
  s.bias = site.numInputs() == 3;
  s.compute = expectFactors(site, x, "input 0 (x)", w, "input 1 (w)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  expectRank(site, w, 2, "input 1 (w)");
  expectRank(site, y, 2, "output 0 (y)");
  s.k = w.dim(0), s.m = w.dim(1), s.n = y.dim(0);
  if (y.dim(1) != s.m)
    site.fail("output 0 (y) has " + std::to_string(y.dim(1)) + " columns but w has " +
              std::to_string(s.m));
  if (x.rank() < 1 || x.dim(0) != s.n)
    site.fail("input 0 (x) has " + std::to_string(x.rank() ? x.dim(0) : 0) + " rows but y has " +
              std::to_string(s.n));
  site.expectNumel(x, s.n * s.k, "input 0 (x)");
  if (s.bias)
    expectBias(site, s.m);
  return s;
}

namespace {

/// The products of a matmul (rank 2) or a batch_matmul (rank >= 3, one rank, the leading axes
/// equal): a, b and c checked, the sizes returned.
MatMulShape productShape(const KernelSite &site, bool ta, bool tb, bool batched) {
  const TensorView a = site.input(0), b = site.input(1), c = site.output(0);
  const DType compute = expectFactors(site, a, "input 0 (a)", b, "input 1 (b)");
  site.expectDType(c, DType::F32, "output 0 (c)");
  const int rank = batched ? a.rank() : 2;
  if (batched && rank < 3)
    site.fail("input 0 (a) (buffer " + std::to_string(a.id) + ") has rank " + std::to_string(rank) +
              ", expected at least 3");
  expectRank(site, a, rank, "input 0 (a)");
  expectRank(site, b, rank, "input 1 (b)");
  expectRank(site, c, rank, "output 0 (c)");
  MatMulShape s;
  s.compute = compute;
  s.ta = ta, s.tb = tb;
  for (int d = 0; d < rank - 2; ++d) {
    if (b.dim(d) != a.dim(d) || c.dim(d) != a.dim(d))
      site.fail("the sizes on axis " + std::to_string(d) + " differ: a has " +
                std::to_string(a.dim(d)) + ", b " + std::to_string(b.dim(d)) + ", c " +
                std::to_string(c.dim(d)));
    s.batch *= a.dim(d);
  }
  // op(a) is [m, k], op(b) is [k, n].
  const int r = rank - 2, q = rank - 1;
  s.m = s.ta ? a.dim(q) : a.dim(r), s.k = s.ta ? a.dim(r) : a.dim(q);
  const int64_t kb = s.tb ? b.dim(q) : b.dim(r);
  s.n = s.tb ? b.dim(r) : b.dim(q);
  if (s.k != kb)
    site.fail("inner dimensions differ: op(a) has " + std::to_string(s.k) +
              " columns, op(b) has " + std::to_string(kb) + " rows");
  if (c.dim(r) != s.m || c.dim(q) != s.n)
    site.fail("output 0 (c) is [" + std::to_string(c.dim(r)) + ", " + std::to_string(c.dim(q)) +
              "], expected [" + std::to_string(s.m) + ", " + std::to_string(s.n) + "]");
  return s;
}

} // namespace

MatMulShape checkMatMul(const KernelSite &site, const MatMulAttrs &attrs) {
  return productShape(site, attrs.transpose_a, attrs.transpose_b, /*batched=*/false);
}

MatMulShape checkBatchMatMul(const KernelSite &site, const BatchMatMulAttrs &attrs) {
  MatMulShape s = productShape(site, attrs.transpose_a, attrs.transpose_b, /*batched=*/true);
  s.alpha = attrs.alpha;
  return s;
}

// ---- losses --------------------------------------------------------------------------------

/// Label smoothing lies in [0, 1].
static void checkSmoothing(const KernelSite &site, const XentAttrs &attrs) {
  if (!(attrs.label_smoothing >= 0 && attrs.label_smoothing <= 1))
    site.fail("label_smoothing must lie in [0, 1], got " + std::to_string(attrs.label_smoothing));
}

XentShape checkSoftmaxXent(const KernelSite &site, const XentAttrs &attrs) {
  checkSmoothing(site, attrs);
  const XentShape shape = xentShape(site);
  expectScalar(site, site.output(0), "output 0 (loss)");
  return shape;
}

XentShape checkSoftmaxXentGrad(const KernelSite &site, const XentAttrs &attrs) {
  checkSmoothing(site, attrs);
  const XentShape shape = xentShape(site);
  expectScalar(site, site.input(2), "input 2 (dloss)");
  site.expectDType(site.output(0), DType::F32, "output 0 (dlogits)");
  site.expectNumel(site.output(0), shape.rows * shape.classes, "output 0 (dlogits)");
  return shape;
}

XentShape checkCountCorrect(const KernelSite &site, const NoAttrs &) {
  const XentShape shape = xentShape(site);
  expectScalar(site, site.output(0), "output 0 (correct)");
  return shape;
}

namespace {

Rows squaredErrorShape(const KernelSite &site) {
  const TensorView prediction = site.input(0), target = site.input(1);
  site.expectDType(prediction, DType::F32, "input 0 (prediction)");
  site.expectDType(target, DType::F32, "input 1 (target)");
  if (prediction.rank() != 2)
    site.fail("input 0 (prediction, buffer " + std::to_string(prediction.id) + ") has rank " +
              std::to_string(prediction.rank()) + ", expected 2");
  site.expectShape(target, {prediction.dim(0), prediction.dim(1)}, "input 1 (target)");
  return {prediction.dim(0), prediction.dim(1)};
}

} // namespace

Rows checkSquaredError(const KernelSite &site, const NoAttrs &) {
  const Rows shape = squaredErrorShape(site);
  expectScalar(site, site.output(0), "output 0 (loss)");
  return shape;
}

Rows checkSquaredErrorGrad(const KernelSite &site, const NoAttrs &) {
  const Rows shape = squaredErrorShape(site);
  expectScalar(site, site.input(2), "input 2 (dloss)");
  site.expectDType(site.output(0), DType::F32, "output 0 (dprediction)");
  site.expectNumel(site.output(0), shape.elements(), "output 0 (dprediction)");
  return shape;
}

Rows checkSigmoidXent(const KernelSite &site, const NoAttrs &attrs) {
  return checkSquaredError(site, attrs);
}

Rows checkSigmoidXentGrad(const KernelSite &site, const NoAttrs &attrs) {
  return checkSquaredErrorGrad(site, attrs);
}

Rows checkCountBinaryCorrect(const KernelSite &site, const NoAttrs &) {
  const Rows shape = squaredErrorShape(site);
  expectScalar(site, site.output(0), "output 0 (correct)");
  return shape;
}

// ---- embeddings ----------------------------------------------------------------------------

namespace {

/// A gather's geometry from its [V, D] table (`table`, f32 of rank 2) and its indices.
GatherShape gatherShape(const KernelSite &site, const TensorView &table, const char *tableRole,
                        const TensorView &indices) {
  site.expectDType(table, DType::F32, tableRole);
  site.expectDType(indices, DType::I32, "input 1 (indices)");
  if (table.rank() != 2)
    site.fail(std::string(tableRole) + " (buffer " + std::to_string(table.id) + ") has rank " +
              std::to_string(table.rank()) + ", expected 2 ([vocabulary, width])");
  return {indices.numel, table.dim(0), table.dim(1)};
}

} // namespace

GatherShape checkGather(const KernelSite &site, const NoAttrs &) {
  const GatherShape s = gatherShape(site, site.input(0), "input 0 (table)", site.input(1));
  site.expectDType(site.output(0), DType::F32, "output 0 (rows)");
  site.expectNumel(site.output(0), s.n * s.width, "output 0 (rows)");
  return s;
}

GatherShape checkGatherGrad(const KernelSite &site, const NoAttrs &) {
  const GatherShape s = gatherShape(site, site.output(0), "output 0 (dtable)", site.input(1));
  site.expectDType(site.input(0), DType::F32, "input 0 (dy)");
  site.expectNumel(site.input(0), s.n * s.width, "input 0 (dy)");
  return s;
}

// ---- optimizer updates ---------------------------------------------------------------------

int64_t checkSgdUpdate(const KernelSite &site, const SgdAttrs &) {
  static const char *const roles[] = {"output 0 (param)"};
  return checkUpdate(site, roles);
}

int64_t checkMomentumUpdate(const KernelSite &site, const MomentumAttrs &) {
  static const char *const roles[] = {"output 0 (param)", "output 1 (velocity)"};
  return checkUpdate(site, roles);
}

int64_t checkAdamUpdate(const KernelSite &site, const AdamAttrs &attrs) {
  static const char *const roles[] = {"output 0 (param)", "output 1 (m)", "output 2 (v)"};
  const int64_t n = checkUpdate(site, roles);
  const double beta1 = attrs.beta1, beta2 = attrs.beta2;
  if (beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1)
    site.fail("adam betas must lie in [0, 1), got beta1 " + std::to_string(beta1) + ", beta2 " +
              std::to_string(beta2));
  return n;
}

int64_t checkClipFactor(const KernelSite &site, const ClipAttrs &attrs) {
  if (!(attrs.max_norm > 0))
    site.fail("max_norm must be positive, got " + std::to_string(attrs.max_norm));
  int64_t total = 0;
  for (int i = 0; i < site.numInputs(); ++i) {
    const std::string role = "input " + std::to_string(i) + " (gradient)";
    site.expectDType(site.input(i), DType::F32, role.c_str());
    total += site.input(i).numel;
  }
  site.expectDType(site.output(0), DType::F32, "output 0 (factor)");
  site.expectNumel(site.output(0), 1, "output 0 (factor)");
  return total;
}

int64_t checkAccumulate(const KernelSite &site, const AccumulateAttrs &attrs) {
  if (attrs.count < 2)
    site.fail("accumulate sums at least 2 micro-shards, got count " +
              std::to_string(attrs.count));
  site.expectDType(site.input(0), DType::F32, "input 0 (gradient)");
  site.expectDType(site.output(0), DType::F32, "output 0 (sum)");
  const int64_t n = site.input(0).numel;
  site.expectNumel(site.output(0), n, "output 0 (sum)");
  const int64_t levels = accumulatePartialLevels(attrs.count);
  if ((levels > 0) != (site.numOutputs() > 1))
    site.fail("accumulate over " + std::to_string(attrs.count) + " micro-shards takes " +
              (levels > 0 ? "an output 1 of " + std::to_string(levels) + " partial sums"
                          : std::string("no partial sums")));
  if (levels > 0) {
    site.expectDType(site.output(1), DType::F32, "output 1 (partial sums)");
    site.expectNumel(site.output(1), levels * n, "output 1 (partial sums)");
  }
  return n;
}

// ---- images --------------------------------------------------------------------------------

PoolShape poolShape(const KernelSite &site, const PoolAttrs &a, const TensorView &x,
                    const TensorView &y, const char *xRole, const char *yRole, bool exactShape) {
  site.expectDType(x, DType::F32, xRole);
  site.expectDType(y, DType::F32, yRole);
  expectRank4(site, x, xRole);
  PoolShape p{};
  p.n = x.dim(0), p.h = x.dim(1), p.w = x.dim(2), p.c = x.dim(3);
  p.kh = a.window_h, p.kw = a.window_w;
  p.sh = a.stride_h, p.sw = a.stride_w;
  if (p.kh < 1 || p.kw < 1 || p.sh < 1 || p.sw < 1)
    site.fail("window and strides must be positive, got window " + std::to_string(p.kh) + "x" +
              std::to_string(p.kw) + ", strides " + std::to_string(p.sh) + "x" +
              std::to_string(p.sw));
  if (p.kh > p.h || p.kw > p.w)
    site.fail("the " + std::to_string(p.kh) + "x" + std::to_string(p.kw) +
              " window is larger than the " + std::to_string(p.h) + "x" + std::to_string(p.w) +
              " image of " + named(xRole, x));
  p.oh = (p.h - p.kh) / p.sh + 1;
  p.ow = (p.w - p.kw) / p.sw + 1;
  if (exactShape)
    site.expectShape(y, {p.n, p.oh, p.ow, p.c}, yRole);
  else
    site.expectNumel(y, p.n * p.oh * p.ow * p.c, yRole);
  return p;
}

PoolShape checkMaxPool2d(const KernelSite &site, const PoolAttrs &attrs) {
  return poolShape(site, attrs, site.input(0), site.output(0), "input 0 (x)", "output 0 (y)",
                   true);
}

PoolShape checkMaxPool2dGrad(const KernelSite &site, const PoolAttrs &attrs) {
  const TensorView x = site.input(0), dy = site.input(1), dx = site.output(0);
  const PoolShape p = poolShape(site, attrs, x, dy, "input 0 (x)", "input 1 (dy)", true);
  site.expectDType(dx, DType::F32, "output 0 (dx)");
  site.expectShape(dx, x.shape, "output 0 (dx)");
  return p;
}

PoolShape checkAvgPool2d(const KernelSite &site, const PoolAttrs &attrs) {
  return poolShape(site, attrs, site.input(0), site.output(0), "input 0 (x)", "output 0 (y)",
                   false);
}

PoolShape checkAvgPool2dGrad(const KernelSite &site, const PoolAttrs &attrs) {
  return poolShape(site, attrs, site.output(0), site.input(0), "output 0 (dx)", "input 0 (dy)",
                   false);
}

PadShape checkZeroPad2d(const KernelSite &site, const PadAttrs &attrs) {
  PadShape p = padShape(site, attrs, site.input(0), site.output(0), "input 0 (x)", "output 0 (y)");
  p.value = attrs.lowest ? std::numeric_limits<float>::lowest() : 0.0f;
  return p;
}

PadShape checkZeroPad2dGrad(const KernelSite &site, const PadAttrs &attrs) {
  if (attrs.lowest)
    site.fail("lowest is zero_pad2d's: its gradient only crops");
  return padShape(site, attrs, site.output(0), site.input(0), "output 0 (dx)", "input 0 (dy)");
}

Rows checkDropout(const KernelSite &site, const DropoutAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0), mask = site.output(1);
  site.expectDType(x, DType::F32, "input 0 (x)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  site.expectDType(mask, DType::F32, "output 1 (mask)");
  if (x.rank() < 1)
    site.fail("input 0 (x) (buffer " + std::to_string(x.id) + ") has no batch axis");
  site.expectNumel(y, x.numel, "output 0 (y)");
  site.expectNumel(mask, x.numel, "output 1 (mask)");
  const double rate = attrs.rate;
  if (!(rate >= 0.0 && rate < 1.0))
    site.fail("rate " + std::to_string(rate) + " is not in [0, 1)");
  return {x.dim(0), x.dim(0) ? x.numel / x.dim(0) : 0};
}

int64_t checkDropoutGrad(const KernelSite &site, const NoAttrs &) {
  const TensorView mask = site.input(0), dy = site.input(1), dx = site.output(0);
  site.expectDType(mask, DType::F32, "input 0 (mask)");
  site.expectDType(dy, DType::F32, "input 1 (dy)");
  site.expectDType(dx, DType::F32, "output 0 (dx)");
  site.expectNumel(mask, dy.numel, "input 0 (mask)");
  site.expectNumel(dx, dy.numel, "output 0 (dx)");
  return dy.numel;
}

// ---- normalisation -------------------------------------------------------------------------

NormShape checkBatchMoments(const KernelSite &site, const NoAttrs &) {
  const NormShape s = normShape(site, site.input(0), "input 0 (x)");
  expectStats(site, site.output(0), s.c, "output 0 (stats)");
  return s;
}

NormShape checkBatchNormTrain(const KernelSite &site, const NormAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  NormShape s = normShape(site, x, "input 0 (x)");
  expectStats(site, site.input(1), s.c, "input 1 (stats)");
  expectChannels(site, site.input(2), s.c, "input 2 (gamma)");
  expectChannels(site, site.input(3), s.c, "input 3 (beta)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  site.expectShape(y, x.shape, "output 0 (y)");
  s.epsilon = batchNormEpsilon(site, EpsilonAttrs{attrs.epsilon});
  s.relu = batchNormRelu(site, attrs);
  return s;
}

NormShape checkBatchNormInfer(const KernelSite &site, const NormAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  NormShape s = normShape(site, x, "input 0 (x)");
  expectChannels(site, site.input(1), s.c, "input 1 (gamma)");
  expectChannels(site, site.input(2), s.c, "input 2 (beta)");
  expectChannels(site, site.input(3), s.c, "input 3 (moving_mean)");
  expectChannels(site, site.input(4), s.c, "input 4 (moving_var)");
  site.expectDType(y, DType::F32, "output 0 (y)");
  site.expectShape(y, x.shape, "output 0 (y)");
  s.epsilon = batchNormEpsilon(site, EpsilonAttrs{attrs.epsilon});
  s.relu = batchNormRelu(site, attrs);
  return s;
}

NormShape checkBatchNormGradParams(const KernelSite &site, const EpsilonAttrs &attrs) {
  const TensorView x = site.input(0), dy = site.input(2);
  NormShape s = normShape(site, x, "input 0 (x)");
  expectStats(site, site.input(1), s.c, "input 1 (stats)");
  site.expectDType(dy, DType::F32, "input 2 (dy)");
  site.expectNumel(dy, x.numel, "input 2 (dy)");
  expectChannels(site, site.output(0), s.c, "output 0 (dgamma)");
  expectChannels(site, site.output(1), s.c, "output 1 (dbeta)");
  s.epsilon = batchNormEpsilon(site, attrs);
  return s;
}

NormShape checkBatchNormGradInput(const KernelSite &site, const EpsilonAttrs &attrs) {
  const TensorView x = site.input(0), dy = site.input(5), dx = site.output(0);
  NormShape s = normShape(site, x, "input 0 (x)");
  expectStats(site, site.input(1), s.c, "input 1 (stats)");
  expectChannels(site, site.input(2), s.c, "input 2 (gamma)");
  expectChannels(site, site.input(3), s.c, "input 3 (dgamma)");
  expectChannels(site, site.input(4), s.c, "input 4 (dbeta)");
  site.expectDType(dy, DType::F32, "input 5 (dy)");
  site.expectNumel(dy, x.numel, "input 5 (dy)");
  site.expectDType(dx, DType::F32, "output 0 (dx)");
  site.expectNumel(dx, x.numel, "output 0 (dx)");
  s.epsilon = batchNormEpsilon(site, attrs);
  return s;
}

int64_t checkMovingStatsUpdate(const KernelSite &site, const MovingStatsAttrs &attrs) {
  const TensorView stats = site.input(0);
  site.expectDType(stats, DType::F32, "input 0 (stats)");
  if (stats.rank() != 2 || stats.dim(0) != 2)
    site.fail(named("input 0 (stats)", stats) + " is " + shapeString(stats.shape) +
              ", expected [2xC]");
  const int64_t c = stats.dim(1);
  expectChannels(site, site.output(0), c, "output 0 (moving_mean)");
  expectChannels(site, site.output(1), c, "output 1 (moving_var)");
  const double momentum = attrs.momentum;
  if (!(momentum >= 0.0 && momentum <= 1.0))
    site.fail("momentum " + std::to_string(momentum) + " is not in [0, 1]");
  return c;
}

NormShape checkLayerNorm(const KernelSite &site, const EpsilonAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  NormShape s = layerRows(site, x, "input 0 (x)");
  const int64_t c = s.c;
  expectChannels(site, site.input(1), c, "input 1 (gamma)");
  expectChannels(site, site.input(2), c, "input 2 (beta)");
  expectF32OrFusedCast(site, y, "output 0 (y)");
  site.expectShape(y, x.shape, "output 0 (y)");
  s.epsilon = layerNormEpsilon(site, attrs);
  return s;
}

NormShape checkLayerNormGrad(const KernelSite &site, const EpsilonAttrs &attrs) {
  const TensorView x = site.input(0), dy = site.input(2), dx = site.output(0);
  NormShape s = layerRows(site, x, "input 0 (x)");
  const int64_t c = s.c;
  expectChannels(site, site.input(1), c, "input 1 (gamma)");
  site.expectDType(dy, DType::F32, "input 2 (dy)");
  site.expectShape(dy, x.shape, "input 2 (dy)");
  site.expectDType(dx, DType::F32, "output 0 (dx)");
  site.expectShape(dx, x.shape, "output 0 (dx)");
  expectChannels(site, site.output(1), c, "output 1 (dgamma)");
  expectChannels(site, site.output(2), c, "output 2 (dbeta)");
  s.epsilon = layerNormEpsilon(site, attrs);
  return s;
}

// ---- data movement -------------------------------------------------------------------------

ConcatShape checkConcat(const KernelSite &site, const AxisAttrs &attrs) {
  const TensorView y = site.output(0);
  const int64_t axis = checkedAxis(site, attrs.axis, y);
  ConcatShape s;
  s.blocks = product(y.shape, 0, axis);
  const int64_t trailing = product(y.shape, axis + 1, y.rank()) * dtypeSize(y.dtype);
  int64_t total = 0;
  for (int i = 0; i < site.numInputs(); ++i) {
    const TensorView x = site.input(i);
    expectPart(site, y, x, axis, indexed("input", i, x));
    s.partBytes.push_back(x.dim(axis) * trailing);
    total += x.dim(axis);
  }
  if (total != y.dim(axis))
    site.fail("the inputs' sizes along axis " + std::to_string(axis) + " add up to " +
              std::to_string(total) + ", output 0 (buffer " + std::to_string(y.id) + ") has " +
              std::to_string(y.dim(axis)));
  s.outBytes = y.dim(axis) * trailing;
  return s;
}

SliceShape checkSlice(const KernelSite &site, const SliceAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  const int64_t axis = checkedAxis(site, attrs.axis, x);
  expectPart(site, x, y, axis, indexed("output", 0, y));
  if (attrs.offset < 0 || attrs.offset + y.dim(axis) > x.dim(axis))
    site.fail("elements [" + std::to_string(attrs.offset) + ", " +
              std::to_string(attrs.offset + y.dim(axis)) + ") along axis " +
              std::to_string(axis) + " are outside input 0's " + std::to_string(x.dim(axis)));
  const int64_t trailing = product(x.shape, axis + 1, x.rank()) * dtypeSize(x.dtype);
  SliceShape s;
  s.blocks = product(x.shape, 0, axis);
  s.inBytes = x.dim(axis) * trailing;
  s.offsetBytes = attrs.offset * trailing;
  s.outBytes = y.dim(axis) * trailing;
  return s;
}

TransposeShape checkTranspose(const KernelSite &site, const TransposeAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  const int64_t a = checkedAxis(site, attrs.axis_a, x), b = checkedAxis(site, attrs.axis_b, x);
  if (a >= b)
    site.fail("axis_a " + std::to_string(a) + " must come before axis_b " + std::to_string(b));
  std::vector<int64_t> shape = x.shape;
  std::swap(shape[a], shape[b]);
  // y of x's type, or bf16 of an f32 x where the compiler fused the cast that followed.
  if (x.dtype != DType::F32 || y.dtype != DType::BF16)
    site.expectDType(y, x.dtype, "output 0 (y)");
  site.expectShape(y, shape, "output 0 (y)");
  TransposeShape s;
  s.outer = product(x.shape, 0, a), s.da = x.dim(a), s.middle = product(x.shape, a + 1, b);
  s.db = x.dim(b), s.inner = product(x.shape, b + 1, x.rank());
  s.elementBytes = dtypeSize(x.dtype);
  return s;
}

std::vector<int64_t> LstmShape::yShape() const {
  return returnSequences ? std::vector<int64_t>{n, t, u} : std::vector<int64_t>{n, u};
}

std::string LstmShape::str() const {
  return "N=" + std::to_string(n) + " T=" + std::to_string(t) + " F=" + std::to_string(f) +
         " U=" + std::to_string(u) + " return_sequences=" + std::to_string(int(returnSequences)) +
         (compute == DType::F32 ? "" : std::string(" ") + dtypeName(compute));
}

namespace {

/// Checks the dtypes and shapes of x, w, r, b and y against each other and returns the sizes;
/// `returnSequences` says which shape y must have.
LstmShape lstmShape(const KernelSite &site, const TensorView &x, const TensorView &w,
                    const TensorView &r, const TensorView &b, const TensorView &y,
                    bool returnSequences, const char *yRole) {
  // x, w, r and y are of the compute type (f32, or bf16 under mixed precision: oneDNN's bf16
  // LSTM writes bf16 h), b is f32.
  const DType compute = expectFactors(site, x, "input 0 (x)", w, "input 1 (w)");
  site.expectDType(r, compute, "input 2 (r)");
  site.expectDType(y, compute, yRole);
  site.expectDType(b, DType::F32, "input 3 (b)");
  if (x.rank() != 3)
    site.fail("input 0 (x) (buffer " + std::to_string(x.id) + ") has rank " +
              std::to_string(x.rank()) + ", expected 3 ([N,T,F])");
  if (w.rank() != 2 || w.dim(1) % 4 != 0 || w.dim(1) == 0)
    site.fail("input 1 (w) (buffer " + std::to_string(w.id) +
              ") must be [F,4U] with U > 0, the four gates' kernels side by side");
  LstmShape d{x.dim(0), x.dim(1), x.dim(2), w.dim(1) / 4, returnSequences, compute};
  if (d.n < 1 || d.t < 1 || d.f < 1)
    site.fail("input 0 (x) (buffer " + std::to_string(x.id) + ") has an empty axis");
  site.expectShape(w, {d.f, 4 * d.u}, "input 1 (w)");
  site.expectShape(r, {d.u, 4 * d.u}, "input 2 (r)");
  site.expectShape(b, {4 * d.u}, "input 3 (b)");
  site.expectShape(y, d.yShape(), yRole);
  return d;
}

} // namespace

LstmShape checkLstm(const KernelSite &site, const LstmAttrs &attrs) {
  const TensorView y = site.output(0);
  const LstmShape d = lstmShape(site, site.input(0), site.input(1), site.input(2), site.input(3), y,
                                attrs.return_sequences, "output 0 (y)");
  if (attrs.training) {
    std::shared_ptr<void> &slot = site.sharedState(y.id);
    if (slot)
      site.fail("output 0 (y) (buffer " + std::to_string(y.id) +
                ") already holds the state of another training lstm");
    auto forward = std::make_shared<LstmForward>();
    forward->x = site.input(0), forward->w = site.input(1), forward->r = site.input(2);
    forward->b = site.input(3), forward->y = y;
    forward->shape = d;
    slot = forward;
  }
  return d;
}

std::shared_ptr<LstmForward> checkLstmGrad(const KernelSite &site, const NoAttrs &) {
  const TensorView x = site.input(0), w = site.input(1), r = site.input(2), b = site.input(3),
                   y = site.input(4), dy = site.input(5);
  const std::shared_ptr<void> &slot = site.sharedState(y.id);
  if (!slot)
    site.fail("input 4 (y) (buffer " + std::to_string(y.id) +
              ") is not the output of a training lstm of this step");
  const std::shared_ptr<LstmForward> saved = std::static_pointer_cast<LstmForward>(slot);
  const LstmForward &forward = *saved;
  const LstmShape d =
      lstmShape(site, x, w, r, b, y, forward.shape.returnSequences, "input 4 (y)");
  const char *names[] = {"x", "w", "r", "b", "y"};
  const TensorView *mine[] = {&x, &w, &r, &b, &y};
  const TensorView *theirs[] = {&forward.x, &forward.w, &forward.r, &forward.b, &forward.y};
  for (int i = 0; i < 5; ++i)
    if (!mine[i]->sameBytes(*theirs[i]))
      site.fail("input " + std::to_string(i) + " (" + names[i] + ") (buffer " +
                std::to_string(mine[i]->id) + ") is not the " + names[i] +
                " of the training lstm that wrote y (buffer " + std::to_string(theirs[i]->id) +
                ")");
  if (!(d == forward.shape))
    site.fail("the shapes (" + d.str() + ") differ from those of the training lstm that wrote y (" +
              forward.shape.str() + ")");
  site.expectDType(dy, DType::F32, "input 5 (dy)");
  site.expectShape(dy, y.shape, "input 5 (dy)");
  const char *outRoles[] = {"output 0 (dx)", "output 1 (dw)", "output 2 (dr)", "output 3 (db)"};
  for (int i = 0; i < 4; ++i) {
    site.expectDType(site.output(i), DType::F32, outRoles[i]);
    site.expectShape(site.output(i), mine[i]->shape, outRoles[i]);
  }
  return saved;
}

void checkKernel(const KernelSite &site) {
  checkOverlaps(site);
  switch (site.kind()) {
#define DP_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                                         \
  case KernelKind::Enum:                                                                           \
    check##Enum(site, site.attrs<Attrs>());                                                        \
    break;
#define DP_COLLECTIVE_KERNEL(Enum, Name, MinIn, MaxIn, NumOut, Attrs)                              \
  case KernelKind::Enum:                                                                           \
    break;
#include "runtime/format/Kernels.def"
  case KernelKind::NumKinds:
    break;
  }
}

void checkPlanKernels(const Plan &plan) {
  checkStepKernels(plan);
  for (const Plan &server : plan.servers)
    checkPlanKernels(server);
}

void checkStepKernels(const Plan &plan) {
  // Distinct, aligned, never dereferenced: the checks compare addresses and read shapes only.
  std::vector<std::vector<uint8_t>> arenas(static_cast<size_t>(plan.devicesPerProcess));
  std::vector<uint8_t *> bases;
  for (auto &arena : arenas) {
    arena.resize(64);
    bases.push_back(arena.data());
  }
  KernelStateMap state;
  for (const StepDesc *step : {&plan.train, &plan.eval})
    for (const KernelDesc &k : step->kernels)
      if (!isCollective(k.kind))
        checkKernel(KernelSite(plan, bases.data(), k, &state));
}

} // namespace dp::rt::contract
