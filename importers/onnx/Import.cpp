// The ONNX importer (see Import.h): ONNX nodes in graph order, each through its entry of the
// op table, into a graph-dialect model function.
#include "importers/onnx/Import.h"
#include "importers/onnx/Layout.h"

#include "dialect/Graph/IR/GraphDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>

using namespace mlir;

namespace dp::onnx_import {
namespace {

using Shape = llvm::SmallVector<int64_t, 4>;

/// The most elements a constant the importer computes with may have (shapes, indices, weights).
constexpr int64_t kMaxConstElements = int64_t(1) << 31;
/// The most elements a model's input, or any tensor a node makes, may hold in a batch.
constexpr int64_t kMaxInputElements = int64_t(1) << 40;
/// Integers the importer interprets (axes, shapes, indices, integer attributes) are clamped to
/// +-kIntBound, beyond any real shape: a slice's INT64_MAX still means "to the end", and sums
/// and differences of such numbers cannot overflow.
constexpr int64_t kIntBound = int64_t(1) << 40;
/// The largest window size, stride, dilation or padding a convolution or pool may have, so that
/// their products with a shape cannot overflow.
constexpr int64_t kMaxWindow = int64_t(1) << 20;

int64_t clampInt(int64_t v) { return std::clamp(v, -kIntBound, kIntBound); }

/// `v` as an int64, saturated (NaN is 0): C++ leaves an out-of-range conversion undefined.
int64_t saturatedInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18) // 2^63
    return std::numeric_limits<int64_t>::max();
  if (v < -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

/// A number as people write it: 0.2, 6, inf.
std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The product of `shape`, saturated at INT64_MAX (a hostile shape's product is refused by the
/// bound it is compared with, not wrapped).
int64_t elementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

/// A tensor the importer knows the values of: an initializer, a Constant, or shape arithmetic
/// on those. Floating-point data is kept as f32, integers (and booleans) as int64.
struct Const {
  bool isFloat = false;
  Shape dims;
  std::vector<float> f;
  std::vector<int64_t> i;

  int64_t size() const { return isFloat ? int64_t(f.size()) : int64_t(i.size()); }
  double at(int64_t k) const { return isFloat ? double(f[k]) : double(i[k]); }
  /// Value `k` read as an axis, a dimension or an index: clamped to +-kIntBound.
  int64_t intAt(int64_t k) const { return clampInt(isFloat ? saturatedInt(f[k]) : i[k]); }
};

/// GELU's erf form, x * 0.5 * (1 + erf(x / sqrt(2))), as the TorchScript exporter writes it
/// (Div, Erf, Add, Mul, Mul; or the half of x first): each step is a Tensor that only the next
/// step takes (Tensor::gelu), and the last is graph.gelu of x.
enum class GeluStep { None, Scaled, Erf, OnePlus, Product, Half };

/// LayerNormalization written out, as exporters write it before opset 17: mean =
/// ReduceMean(x) over the last axis, d = Sub(x, mean), var = ReduceMean(Pow(d, 2)),
/// Div(d, Sqrt(Add(var, epsilon))), Mul by a weight and Add a bias. Each step is a Tensor that
/// only the next step takes (Tensor::norm), and the last is graph.layer_norm of x.
enum class NormStep {
  None,
  Mean,
  Centered,
  Squared,
  Variance,
  VarianceEps,
  Deviation,
  Normalized,
  Scaled
};

/// One ONNX value as the importer holds it: a graph value (with its ONNX shape) or a constant.
struct Tensor {
  Value value;
  std::shared_ptr<const Const> constant;
  /// The ONNX (logical) shape.
  Shape shape;
  /// How the graph value holds it: graph axis j is ONNX axis layout[j]; empty when in ONNX's
  /// order. Images (convolutions, pools, 4-D inputs) are NHWC (kNhwc). A Transpose of a
  /// computed tensor changes only this; the elements move where a reader needs another order
  /// (Importer::laidOut). The batch stays the graph's first axis (layout[0] = 0).
  Shape layout;
  /// The initializer the constant is (its name names the parameter made of it).
  std::string initializer;
  /// A constant that is a Transpose of a 2-D initializer (a Linear's weight as the default
  /// exporter writes it unoptimized): that initializer, which a parameter made of this holds
  /// transposed (Importer::paramOf).
  std::shared_ptr<const Tensor> transposeOf;
  /// A Softmax or LogSoftmax over the last axis: the logits it was taken of. The loss takes
  /// those when this is the model's output.
  std::shared_ptr<Tensor> logits;
  /// The ONNX op that made this value when only its logits may be used (LogSoftmax).
  std::string onlyAsOutput;
  /// A step of GELU's erf form (no graph value), and its x.
  GeluStep gelu = GeluStep::None;
  std::shared_ptr<const Tensor> geluOf;
  /// A step of a written-out layer norm (no graph value), its x, its epsilon (from
  /// VarianceEps on) and its weight's parameter (Scaled).
  NormStep norm = NormStep::None;
  std::shared_ptr<const Tensor> normOf;
  double normEps = 0;
  Value normScale;
  /// The ONNX value's name.
  std::string name;
  /// A [batch, C * H * W] flattening of an image whose features are in dp's H, W, C order, not
  /// ONNX's C, H, W: {C, H, W}. Only a product with a constant weight takes it (its rows are
  /// permuted to match).
  Shape flattenedChw;
  /// A computed integer tensor: the model's input of token ids (i32 in the graph), which only
  /// a Gather takes (as an embedding's indices).
  bool integer = false;

  bool isConst() const { return constant != nullptr; }
};

/// dp's image layout: [N, H, W, C] holding ONNX's [N, C, H, W].
const Shape kNhwc{0, 2, 3, 1};

Shape identityLayout(int64_t rank) {
  Shape p(rank);
  for (int64_t k = 0; k < rank; ++k)
    p[k] = k;
  return p;
}

/// `layout` with the identity written out.
Shape fullLayout(llvm::ArrayRef<int64_t> layout, int64_t rank) {
  return layout.empty() ? identityLayout(rank) : Shape(layout.begin(), layout.end());
}

/// The graph's shape of ONNX shape `shape` held in `layout`.
Shape graphShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> layout) {
  if (layout.empty())
    return Shape(shape.begin(), shape.end());
  Shape s;
  for (int64_t a : layout)
    s.push_back(shape[a]);
  return s;
}

/// Whether ONNX shape `shape` held in `layout` has its elements in ONNX's order: only axes of
/// size 1 are out of place.
bool inOnnxOrder(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> layout) {
  int64_t last = -1;
  for (int64_t a : layout) {
    if (shape[a] == 1)
      continue;
    if (a < last)
      return false;
    last = a;
  }
  return true;
}

/// The graph's type of ONNX shape `shape` held in `layout` (ONNX's order when empty).
RankedTensorType typeIn(MLIRContext *ctx, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> layout = {}) {
  return RankedTensorType::get(graphShape(shape, layout), Float32Type::get(ctx));
}

/// The graph's type of the ONNX image `shape` ([N, C, H, W]): NHWC.
RankedTensorType imageType(MLIRContext *ctx, llvm::ArrayRef<int64_t> shape) {
  return typeIn(ctx, shape, kNhwc);
}

std::string decodeTensor(const onnx::TensorProto &t, Const &out) {
  out = Const();
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0)
      return "a negative dimension (" + std::to_string(d) + ")";
    if (d > 0 && n > kMaxConstElements / d)
      return "more than " + std::to_string(kMaxConstElements) + " elements";
    n *= d;
    out.dims.push_back(d);
  }
  const std::string &raw = t.raw_data();
  const bool hasRaw = t.has_raw_data();
  auto countMismatch = [&](int64_t have) {
    return "holds " + std::to_string(have) + " values for its shape " + shapeText(out.dims) +
           " of " + std::to_string(n);
  };
  auto fromRaw = [&](size_t bytes, auto read) -> std::string {
    if (raw.size() != size_t(n) * bytes)
      return countMismatch(int64_t(raw.size() / bytes));
    for (int64_t k = 0; k < n; ++k)
      read(raw.data() + k * bytes);
    return "";
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::DOUBLE: {
    out.isFloat = true;
    out.f.reserve(n);
    const bool isDouble = t.data_type() == onnx::TensorProto::DOUBLE;
    if (hasRaw)
      return isDouble ? fromRaw(8,
                                [&](const char *p) {
                                  double v;
                                  std::memcpy(&v, p, 8);
                                  out.f.push_back(float(v));
                                })
                      : fromRaw(4, [&](const char *p) {
                          float v;
                          std::memcpy(&v, p, 4);
                          out.f.push_back(v);
                        });
    if (isDouble) {
      if (t.double_data_size() != n)
        return countMismatch(t.double_data_size());
      for (double v : t.double_data())
        out.f.push_back(float(v));
    } else {
      if (t.float_data_size() != n)
        return countMismatch(t.float_data_size());
      out.f.assign(t.float_data().begin(), t.float_data().end());
    }
    return "";
  }
  case onnx::TensorProto::INT64:
    out.i.reserve(n);
    if (hasRaw)
      return fromRaw(8, [&](const char *p) {
        int64_t v;
        std::memcpy(&v, p, 8);
        out.i.push_back(v);
      });
    if (t.int64_data_size() != n)
      return countMismatch(t.int64_data_size());
    out.i.assign(t.int64_data().begin(), t.int64_data().end());
    return "";
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: {
    out.i.reserve(n);
    const int32_t type = t.data_type();
    if (hasRaw) {
      if (type == onnx::TensorProto::INT32)
        return fromRaw(4, [&](const char *p) {
          int32_t v;
          std::memcpy(&v, p, 4);
          out.i.push_back(v);
        });
      return fromRaw(1, [&](const char *p) {
        out.i.push_back(type == onnx::TensorProto::INT8 ? int64_t(int8_t(*p))
                                                        : int64_t(uint8_t(*p)));
      });
    }
    if (t.int32_data_size() != n)
      return countMismatch(t.int32_data_size());
    out.i.assign(t.int32_data().begin(), t.int32_data().end());
    return "";
  }
  default:
    return "of data type " + std::to_string(t.data_type()) +
           " (dp reads float, double, int64, int32, int8, uint8 and bool tensors)";
  }
}

/// numpy's broadcast of two shapes, or false.
bool broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b, Shape &out) {
  out.assign(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t da = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
    int64_t db = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[k] = da == 1 ? db : da;
  }
  return true;
}

/// The flat index into a tensor of shape `shape` broadcast to `to`, of the element at `index`
/// of `to`.
int64_t broadcastIndex(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> to,
                       llvm::ArrayRef<int64_t> index) {
  int64_t flat = 0;
  const size_t offset = to.size() - shape.size();
  for (size_t k = 0; k < shape.size(); ++k)
    flat = flat * shape[k] + (shape[k] == 1 ? 0 : index[k + offset]);
  return flat;
}

/// Calls `visit(index)` for every index of `shape` in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  const std::function<void(llvm::ArrayRef<int64_t>)> &visit) {
  const int64_t n = elementCount(shape);
  Shape index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    visit(index);
    for (int64_t a = int64_t(shape.size()) - 1; a >= 0; --a) {
      if (++index[a] < shape[a])
        break;
      index[a] = 0;
    }
  }
}

class Importer;
using Handler = LogicalResult (*)(Importer &, llvm::ArrayRef<Tensor *>,
                                  llvm::SmallVectorImpl<Tensor> &);

struct OpEntry {
  OpSupport support;
  /// The attributes the handler reads; any other is refused.
  std::vector<std::string> attributes;
  Handler handle;
};

const std::vector<OpEntry> &opTable();

class Importer {
public:
  Importer(MLIRContext &ctx, const OnnxFile &file, const ImportOptions &options)
      : ctx(ctx), file(file), options(options), b(&ctx) {}

  OwningOpRef<ModuleOp> run();

  // --- what handlers use ---
  MLIRContext &ctx;
  const OnnxFile &file;
  const ImportOptions &options;
  OpBuilder b;
  const onnx::NodeProto *node = nullptr;
  Location loc = UnknownLoc::get(&ctx);

  /// An error at the current node, naming it, its op type and the opset.
  InFlightDiagnostic fail() {
    InFlightDiagnostic d = emitError(loc);
    if (node)
      d << "node '" << nodeName() << "' (" << node->op_type() << ", opset " << file.opset << "): ";
    return d;
  }
  /// How many node inputs and graph outputs read the ONNX value `name`.
  int64_t readers(const std::string &name) const { return readCounts.lookup(name); }
  /// Whether the node being imported is the only reader of t's graph value, so that it may
  /// change the op that makes it: nothing uses the value yet, t is read once, and no other
  /// ONNX value that is read holds it (a Transpose, an Identity or a no-op Reshape shares it).
  bool soleReader(const Tensor &t) const {
    if (!t.value || !t.value.use_empty() || readers(t.name) != 1)
      return false;
    for (const auto &e : values)
      if (e.first() != t.name && e.second.value == t.value && readers(e.first().str()) > 0)
        return false;
    return true;
  }
  std::string nodeName() const {
    return node && !node->name().empty() ? node->name() : "#" + std::to_string(nodeIndex);
  }

  const onnx::AttributeProto *attr(llvm::StringRef name) const {
    for (const onnx::AttributeProto &a : node->attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  int64_t intAttr(llvm::StringRef name, int64_t otherwise) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? clampInt(a->i()) : otherwise;
  }
  float floatAttr(llvm::StringRef name, float otherwise) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->f() : otherwise;
  }
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const {
    const onnx::AttributeProto *a = attr(name);
    if (!a)
      return std::nullopt;
    std::vector<int64_t> v;
    for (int64_t x : a->ints())
      v.push_back(clampInt(x));
    return v;
  }

  /// The graph value of `t` in ONNX's order of its axes, or failure (reported) for a constant
  /// or a value only the loss may take.
  FailureOr<Value> graphValue(const Tensor &t, llvm::StringRef what) {
    FailureOr<Value> v = valueAsHeld(t, what);
    if (failed(v))
      return failure();
    return laidOut(t, {});
  }

  /// A computed `t` with its elements in ONNX's order (a flattened image's features moved to
  /// C, H, W order: back to the image, a transpose, and flat again).
  Value onnxOrdered(const Tensor &t) {
    if (t.flattenedChw.empty())
      return laidOut(t, {});
    const Shape image{t.shape[0], t.flattenedChw[0], t.flattenedChw[1], t.flattenedChw[2]};
    Value nhwc = b.create<graph::ReshapeOp>(loc, typeIn(&ctx, image, kNhwc), t.value);
    Tensor held;
    held.value = nhwc;
    held.shape = image;
    held.layout = kNhwc;
    return b.create<graph::ReshapeOp>(loc, typeIn(&ctx, t.shape), laidOut(held, {}));
  }

  /// `t`'s graph value with its axes in `layout` (ONNX's order when empty): moved by a
  /// graph.transpose, or by a free graph.reshape where only axes of size 1 move; made once per
  /// value and layout.
  Value laidOut(const Tensor &t, llvm::ArrayRef<int64_t> layout) {
    const int64_t rank = int64_t(t.shape.size());
    const Shape have = fullLayout(t.layout, rank), want = fullLayout(layout, rank);
    if (have == want)
      return t.value;
    Shape at(rank), perm(rank);
    for (int64_t j = 0; j < rank; ++j)
      at[have[j]] = j;
    for (int64_t k = 0; k < rank; ++k)
      perm[k] = at[want[k]];
    // Keyed by the graph value and the move of its axes (tensors that share a value through a
    // Transpose hold it in different layouts).
    auto key = std::make_pair(t.value.getAsOpaquePointer(), perm);
    if (auto found = relaid.find(key); found != relaid.end())
      return found->second;
    RankedTensorType type = typeIn(&ctx, t.shape, want);
    Value v = inOnnxOrder(graphShape(t.shape, have), perm)
                  ? b.create<graph::ReshapeOp>(loc, type, t.value).getResult()
                  : b.create<graph::TransposeOp>(loc, type, t.value, perm).getResult();
    relaid[key] = v;
    return v;
  }

  /// The graph value of `t` in the layout it is held in (t.layout), or failure (reported) as
  /// graphValue.
  FailureOr<Value> valueAsHeld(const Tensor &t, llvm::StringRef what) {
    if (t.gelu != GeluStep::None) {
      fail() << what
             << " is a step of GELU's erf form, x * 0.5 * (1 + erf(x / sqrt(2))), which dp "
                "takes only whole (as graph.gelu)";
      return failure();
    }
    if (t.norm != NormStep::None) {
      fail() << what
             << " is a step of a layer norm written out (ReduceMean, Sub, Pow, ReduceMean, Add, "
                "Sqrt, Div, Mul by a weight, Add a bias), which dp takes only whole (as "
                "graph.layer_norm)";
      return failure();
    }
    if (!t.onlyAsOutput.empty()) {
      fail() << what << " comes from a " << t.onlyAsOutput
             << ", which dp takes only as the model's output (folded into the loss)";
      return failure();
    }
    if (t.isConst()) {
      fail() << what << " is a constant here; dp takes it only as a computed tensor";
      return failure();
    }
    if (!t.flattenedChw.empty()) {
      fail() << what << " is a flattened " << t.flattenedChw[0] << "-channel image, whose "
             << "features dp holds in H, W, C order: only a Gemm or MatMul with a constant weight "
                "takes it (a transpose to C, H, W is not supported yet)";
      return failure();
    }
    return t.value;
  }

  /// A parameter holding `values` (shape `shape`), named after the initializer or value it
  /// comes from; one per name.
  FailureOr<Value> param(std::string name, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<float> values, bool trainable) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    auto found = params.find(name);
    // One initializer as a trained weight and as untrained statistics (exporters share equal
    // constants, such as a batch norm's ones and its running variance): two parameters.
    if (found != params.end() &&
        found->second.getDefiningOp<graph::ParamOp>().getTrainable() != trainable) {
      name += trainable ? ".trained" : ".statistic";
      found = params.find(name);
    }
    if (found != params.end()) {
      if (found->second.getType() != type) {
        fail() << "the initializer '" << name << "' is used in two shapes ("
               << found->second.getType() << " and " << type << "): not supported";
        return failure();
      }
      return found->second;
    }
    for (float v : values)
      if (!std::isfinite(v)) {
        fail() << "the initializer '" << name << "' holds a non-finite value";
        return failure();
      }
    auto attr = DenseElementsAttr::get(type, values);
    Value v = b.create<graph::ParamOp>(loc, type, name, attr, trainable).getResult();
    params[name] = v;
    return v;
  }

  /// A constant as a parameter of dp's shape `shape`, its values in dp's `layout` of them
  /// (weights, biases): trainable when it is an initializer, unless `trainable` says
  /// otherwise. `input` is the node input it is (recorded for export).
  FailureOr<Value> paramOf(const Tensor &t, llvm::StringRef what, llvm::ArrayRef<int64_t> shape,
                           int input, WeightLayout layout = {},
                           std::optional<bool> trainable = {}) {
    if (t.transposeOf && (layout.kind == WeightLayout::Kind::Same ||
                          layout.kind == WeightLayout::Kind::Transposed)) {
      // The initializer itself, trained, in the other layout: export writes it back there and
      // the Transpose stays in the model.
      layout.kind = layout.kind == WeightLayout::Kind::Same ? WeightLayout::Kind::Transposed
                                                            : WeightLayout::Kind::Same;
      return paramOf(*t.transposeOf, what, shape, input, layout, trainable);
    }
    if (!t.isConst()) {
      fail() << what
             << " is computed from the model's inputs; dp takes it only as a constant "
                "(an initializer)";
      return failure();
    }
    if (!t.constant->isFloat) {
      fail() << what << " is an integer tensor; dp takes float weights";
      return failure();
    }
    if (elementCount(shape) != t.constant->size()) {
      fail() << what << " has shape " << shapeText(t.shape) << ", not " << shapeText(shape);
      return failure();
    }
    std::string name = t.initializer.empty() ? node->output(0) + "." + what.str() : t.initializer;
    layout.onnxDims.assign(t.shape.begin(), t.shape.end());
    FailureOr<Value> v =
        param(name, shape, layout.toDp(t.constant->f), trainable.value_or(!t.initializer.empty()));
    if (failed(v))
      return failure();
    // Where it came from, for export: the ONNX value of the parameter's name, and this input
    // pointed at it where the node read another (a copy, a constant, a shared initializer).
    std::string actual = v->getDefiningOp<graph::ParamOp>().getName().str();
    auto origin = llvm::find_if(origins, [&](const ParamOrigin &o) { return o.param == actual; });
    if (origin == origins.end()) {
      origins.push_back({actual, actual, initializerNames.contains(actual), {}, layout});
      origin = std::prev(origins.end());
    } else if (origin->layout.kind != layout.kind ||
               origin->layout.flattenedChw != layout.flattenedChw) {
      fail() << "the initializer '" << actual
             << "' is read in two layouts (as it is and transposed, or as rows of two orders): "
                "not supported (one parameter holds one layout)";
      return failure();
    }
    if (t.name != actual)
      origin->rewire.push_back({int(nodeIndex), input});
    return v;
  }

  std::vector<ParamOrigin> origins;
  std::vector<ParamOrigin> *originsOut = nullptr;
  std::vector<std::vector<int64_t>> *inputLayoutsOut = nullptr;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef otherwise) const {
    const onnx::AttributeProto *a = attr(name);
    return a ? a->s() : otherwise.str();
  }

private:
  int64_t nodeIndex = 0;
  llvm::StringSet<> initializerNames;
  llvm::StringMap<Tensor> values;
  llvm::StringMap<Value> params;
  llvm::StringMap<int64_t> readCounts;
  /// Values moved to another layout (laidOut), by value and the permutation of its axes.
  std::map<std::pair<void *, Shape>, Value> relaid;
  /// A placeholder at the end of the function: ops are made before it.
  Operation *end = nullptr;

  LogicalResult importInputs(llvm::SmallVectorImpl<std::pair<std::string, Tensor>> &inputs,
                             int64_t &batch);
  LogicalResult importNode(const onnx::NodeProto &n);
  /// The initializers, then every node in order (ops go before `end`).
  LogicalResult importNodes();

public:
  /// The model's output folded on the host (every input an initializer), or failure
  /// (reported).
  FailureOr<Tensor> foldedOutput();
};

LogicalResult Importer::importInputs(llvm::SmallVectorImpl<std::pair<std::string, Tensor>> &inputs,
                                     int64_t &batch) {
  const onnx::GraphProto &g = file.model.graph();
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : g.initializer())
    initializers.insert(t.name());
  batch = options.batch;
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.contains(in.name()))
      continue; // older exporters list the initializers among the inputs
    const onnx::TypeProto &type = in.type();
    // Float samples (pixels), or integers: token ids an embedding (Gather) looks up, fed as i32.
    const int elem = type.has_tensor_type() ? type.tensor_type().elem_type() : 0;
    const bool integer = elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32;
    if (elem != onnx::TensorProto::FLOAT && !integer)
      return emitError(loc) << "the model's input '" << in.name()
                            << "' is not a float or integer tensor: dp feeds float samples, or "
                               "integer token ids";
    if (!type.tensor_type().has_shape() || type.tensor_type().shape().dim_size() < 1)
      return emitError(loc)
             << "the model's input '" << in.name()
             << "' has no shape: dp needs its rank and every dimension but the batch";
    Tensor t;
    t.integer = integer;
    const auto &dims = type.tensor_type().shape().dim();
    for (int k = 0; k < dims.size(); ++k) {
      const onnx::TensorShapeProto::Dimension &d = dims[k];
      const bool fixed = d.has_dim_value() && d.dim_value() > 0;
      if (k == 0) {
        if (fixed && options.batch && d.dim_value() != options.batch)
          return emitError(loc) << "the model's input '" << in.name() << "' has a fixed batch of "
                                << d.dim_value() << ", not --batch " << options.batch
                                << ": export it with a dynamic batch axis (torch.onnx.export's "
                                   "dynamic_axes or dynamic_shapes) or pass --batch "
                                << d.dim_value();
        const int64_t here = fixed              ? d.dim_value()
                             : options.batch    ? options.batch
                             : options.anyBatch ? 1
                                                : 0;
        if (!here)
          return emitError(loc) << "the model's input '" << in.name()
                                << "' has a dynamic batch axis: give the batch size (--batch N)";
        if (batch && here != batch)
          return emitError(loc) << "the model's inputs have different batch sizes (" << batch
                                << " and " << here << ")";
        batch = here;
        t.shape.push_back(here);
        continue;
      }
      if (!fixed)
        return emitError(loc) << "the model's input '" << in.name() << "' has a dynamic axis " << k
                              << (d.has_dim_param() ? " ('" + d.dim_param() + "')" : "")
                              << ": dp needs every axis but the batch fixed";
      t.shape.push_back(d.dim_value());
    }
    // Bounded: no shape arithmetic on the input's axes may overflow.
    int64_t elements = 1;
    for (int64_t d : t.shape)
      if (__builtin_mul_overflow(elements, d, &elements) || elements > kMaxInputElements)
        return emitError(loc) << "the model's input '" << in.name() << "' of shape "
                              << shapeText(t.shape) << " holds more than " << kMaxInputElements
                              << " elements in a batch: more than dp feeds";
    // dp feeds images NHWC. A 4-D input whose last axis is the channels' (at most 4, smaller
    // than H and W) and that only Transposes to NCHW or Reshapes read (Keras's [N, H, W, C]
    // through tf2onnx) is in that order as ONNX sees it; another is ONNX's [N, C, H, W], held
    // NHWC.
    bool channelsLast = t.shape.size() == 4 && t.shape[3] <= 4 && t.shape[3] < t.shape[1] &&
                        t.shape[3] < t.shape[2];
    for (const onnx::NodeProto &n : g.node())
      for (const std::string &name : n.input()) {
        if (name != in.name())
          continue;
        std::vector<int64_t> perm;
        for (const onnx::AttributeProto &a : n.attribute())
          if (a.name() == "perm")
            perm.assign(a.ints().begin(), a.ints().end());
        if (n.op_type() != "Reshape" &&
            (n.op_type() != "Transpose" || perm != std::vector<int64_t>{0, 3, 1, 2}))
          channelsLast = false;
      }
    if (t.shape.size() == 4 && !channelsLast && !integer)
      t.layout = kNhwc;
    // Token ids are fed in the order of the data's bytes (an image's H, W, C): a 4-D input
    // of one channel has them in that order whichever axis the channel is.
    if (integer && t.shape.size() == 4 && t.shape[1] != 1 && t.shape[3] != 1)
      return emitError(loc) << "the model's integer input '" << in.name() << "' has shape "
                            << shapeText(t.shape)
                            << ": dp feeds token ids in the order of the data's bytes, so an "
                               "input of 4 axes must have one channel ([batch, 1, H, W])";
    inputs.push_back({in.name(), t});
  }
  if (inputs.empty())
    return emitError(loc) << "the model has no input to feed (every input is an initializer)";
  return success();
}

std::string symbolName(const std::string &text) {
  std::string s;
  for (char c : text)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "model_" + s;
  return s;
}

OwningOpRef<ModuleOp> Importer::run() {
  const onnx::GraphProto &g = file.model.graph();
  loc = FileLineColLoc::get(&ctx, file.path, 0, 0);
  const bool regression = options.loss == "mean-squared-error" || options.loss == "mse";
  const bool binary = options.loss == "binary-cross-entropy" || options.loss == "bce";
  // Both take float targets of the output's shape, and the output as computed.
  const bool floatTargets = regression || binary;
  if (options.loss != "softmax-cross-entropy" && !floatTargets) {
    emitError(loc) << "unknown loss '" << options.loss << "' (dp knows: " << kLossNames << ")";
    return nullptr;
  }
  if (!(options.labelSmoothing >= 0 && options.labelSmoothing <= 1)) {
    emitError(loc) << "--label-smoothing must lie in [0, 1], found " << options.labelSmoothing;
    return nullptr;
  }
  if (floatTargets && options.labelSmoothing != 0) {
    emitError(loc) << "--label-smoothing applies to softmax-cross-entropy, not to " << options.loss;
    return nullptr;
  }
  std::string optimizerError;
  std::string optimizerText = optimizerAttributeText(options.optimizer, optimizerError);
  Attribute optimizer;
  if (!optimizerText.empty())
    optimizer = parseAttribute(optimizerText, &ctx);
  if (!optimizer) {
    emitError(loc) << "--optimizer '" << options.optimizer << "': "
                   << (optimizerError.empty() ? "not an optimizer dp knows (" + optimizerText + ")"
                                              : optimizerError);
    return nullptr;
  }

  llvm::SmallVector<std::pair<std::string, Tensor>, 2> inputs;
  int64_t batch = 0;
  if (failed(importInputs(inputs, batch)))
    return nullptr;
  if (inputLayoutsOut) {
    inputLayoutsOut->clear();
    for (auto &in : inputs) {
      Shape layout = fullLayout(in.second.layout, int64_t(in.second.shape.size()));
      inputLayoutsOut->emplace_back(layout.begin(), layout.end());
    }
  }
  if (g.output_size() != 1) {
    emitError(loc) << "the model has " << g.output_size()
                   << " outputs; dp trains a model of one output (the logits the loss takes)";
    return nullptr;
  }

  // The function: the model's inputs, then the loss's targets (class labels, or a
  // regression's floats of the output's shape, set once the output is known).
  std::string targetsName = floatTargets ? "target" : "label";
  for (auto &in : inputs)
    if (in.first == targetsName)
      targetsName = "targets";
  llvm::SmallVector<Type> argTypes;
  for (auto &in : inputs) {
    RankedTensorType type = typeIn(&ctx, in.second.shape, in.second.layout);
    argTypes.push_back(in.second.integer ? type.clone(b.getI32Type()) : type);
  }
  argTypes.push_back(RankedTensorType::get({batch}, b.getI32Type()));
  auto lossType = RankedTensorType::get({}, b.getF32Type());
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  std::string name = options.name;
  if (name.empty())
    name = g.name().empty() || g.name() == "main_graph" || g.name() == "torch_jit" ||
                   g.name() == "main"
               ? llvm::sys::path::stem(file.path).str()
               : g.name();
  auto func =
      b.create<func::FuncOp>(loc, symbolName(name), b.getFunctionType(argTypes, {lossType}));
  func->setAttr(graph::kOptimizerAttr, optimizer);
  Block *entry = func.addEntryBlock();
  for (size_t k = 0; k < inputs.size(); ++k) {
    func.setArgAttr(k, graph::kInputAttr, b.getStringAttr(inputs[k].first));
    inputs[k].second.value = entry->getArgument(k);
    inputs[k].second.name = inputs[k].first;
    values[inputs[k].first] = inputs[k].second;
  }
  func.setArgAttr(inputs.size(), graph::kInputAttr, b.getStringAttr(targetsName));
  Value targets = entry->getArguments().back();
  b.setInsertionPointToEnd(entry);
  // Ops are made in the nodes' order, each parameter just before its first use.
  end = b.create<func::ReturnOp>(loc);
  if (failed(importNodes()))
    return nullptr;

  // The loss on the output: a Softmax or LogSoftmax at the end is the loss's own.
  const std::string &outName = g.output(0).name();
  loc = FileLineColLoc::get(&ctx, file.path, 0, 0);
  auto found = values.find(outName);
  if (found == values.end()) {
    emitError(loc) << "the model's output '" << outName << "' is made by no node";
    return nullptr;
  }
  Tensor out = found->second;
  // A regression's output is its predictions as computed, a binary one's its logits: a
  // Softmax at the end stays.
  if (out.logits && !options.flattenOutput && !floatTargets) {
    Operation *softmax = out.value ? out.value.getDefiningOp() : nullptr;
    out = *out.logits;
    if (softmax && softmax->use_empty())
      softmax->erase();
  }
  if (!out.flattenedChw.empty() && !options.flattenOutput && !floatTargets) {
    emitError(loc) << "the model's output '" << outName
                   << "' is a flattened image, whose features dp holds in another order";
    return nullptr;
  }
  if (out.gelu != GeluStep::None) {
    emitError(loc) << "the model's output '" << outName
                   << "' is a step of GELU's erf form, which dp takes only whole";
    return nullptr;
  }
  if (out.norm != NormStep::None) {
    emitError(loc) << "the model's output '" << outName
                   << "' is a step of a layer norm written out, which dp takes only whole (with "
                      "its weight and bias)";
    return nullptr;
  }
  if (!out.onlyAsOutput.empty() && !out.value) {
    emitError(loc) << "the model's output '" << outName << "' comes from a " << out.onlyAsOutput
                   << ", which dp takes only folded into the loss (its values are not computed)"
                   << (regression ? ": a regression's loss needs the values; end the model "
                                    "before it"
                                  : "");
    return nullptr;
  }
  if (out.integer) {
    emitError(loc) << "the model's output '" << outName
                   << "' is its integer input (token ids): nothing to train";
    return nullptr;
  }
  if (out.isConst() || !out.value) {
    emitError(loc) << "the model's output '" << outName << "' is a constant: nothing to train";
    return nullptr;
  }
  b.setInsertionPoint(end);
  Value logits = out.value;
  // A regression's predictions (a binary model's logits), as its targets, are [batch, features]
  // in ONNX's order.
  if (options.flattenOutput || floatTargets) {
    if (out.shape.empty()) {
      emitError(loc) << "the model's output '" << outName << "' is a scalar: it has no batch axis";
      return nullptr;
    }
    logits = onnxOrdered(out);
    const int64_t rows = out.shape[0],
                  features = elementCount(out.shape) / std::max<int64_t>(rows, 1);
    auto type = RankedTensorType::get({rows, features}, b.getF32Type());
    if (logits.getType() != type)
      logits = b.create<graph::ReshapeOp>(loc, type, logits);
  } else if (out.shape.size() != 2) {
    emitError(loc) << "the model's output '" << outName << "' has shape " << shapeText(out.shape)
                   << ": softmax-cross-entropy takes logits of shape [batch, classes] (a "
                      "regression's values: --loss mean-squared-error)";
    return nullptr;
  }
  Value loss;
  if (floatTargets) {
    targets.setType(logits.getType());
    func.setType(b.getFunctionType(entry->getArgumentTypes(), {lossType}));
    if (regression)
      loss = b.create<graph::MeanSquaredErrorOp>(loc, lossType, logits, targets);
    else
      loss = b.create<graph::SigmoidCrossEntropyOp>(loc, lossType, logits, targets);
  } else {
    loss = b.create<graph::SoftmaxCrossEntropyOp>(
        loc, lossType, logits, targets,
        options.labelSmoothing != 0 ? b.getF64FloatAttr(options.labelSmoothing) : FloatAttr());
  }
  b.create<func::ReturnOp>(loc, loss);
  end->erase();
  if (originsOut)
    *originsOut = std::move(origins);
  return module;
}

LogicalResult Importer::importNodes() {
  const onnx::GraphProto &g = file.model.graph();
  for (const onnx::NodeProto &n : g.node())
    for (const std::string &in : n.input())
      ++readCounts[in];
  ++readCounts[g.output(0).name()];
  for (const onnx::TensorProto &t : g.initializer()) {
    Tensor c;
    auto constant = std::make_shared<Const>();
    if (std::string problem = decodeTensor(t, *constant); !problem.empty()) {
      emitError(loc) << "the initializer '" << t.name() << "' " << problem;
      return failure();
    }
    c.shape = constant->dims;
    c.constant = std::move(constant);
    c.initializer = t.name();
    c.name = t.name();
    initializerNames.insert(t.name());
    values[t.name()] = c;
  }
  b.setInsertionPoint(end);
  for (const onnx::NodeProto &n : g.node()) {
    if (failed(importNode(n)))
      return failure();
    ++nodeIndex;
  }
  node = nullptr;
  return success();
}

FailureOr<Tensor> Importer::foldedOutput() {
  const onnx::GraphProto &g = file.model.graph();
  loc = FileLineColLoc::get(&ctx, file.path, 0, 0);
  if (g.output_size() != 1)
    return emitError(loc) << "the model has " << g.output_size() << " outputs, not 1";
  for (const onnx::ValueInfoProto &in : g.input())
    if (llvm::none_of(g.initializer(),
                      [&](const onnx::TensorProto &t) { return t.name() == in.name(); }))
      return emitError(loc) << "the model's input '" << in.name() << "' is not an initializer";
  // Ops a node might make (none, where everything folds) go into a function thrown away.
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(loc, "folded", b.getFunctionType({}, {}));
  b.setInsertionPointToEnd(func.addEntryBlock());
  end = b.create<func::ReturnOp>(loc);
  if (failed(importNodes()))
    return failure();
  loc = FileLineColLoc::get(&ctx, file.path, 0, 0);
  auto found = values.find(g.output(0).name());
  if (found == values.end())
    return emitError(loc) << "the model's output '" << g.output(0).name() << "' is made by no node";
  if (!found->second.isConst())
    return emitError(loc) << "the model's output '" << g.output(0).name()
                          << "' is computed, not folded";
  return found->second;
}

LogicalResult Importer::importNode(const onnx::NodeProto &n) {
  node = &n;
  std::string where = n.name().empty() ? n.op_type() + " #" + std::to_string(nodeIndex) : n.name();
  loc = NameLoc::get(b.getStringAttr(where), FileLineColLoc::get(&ctx, file.path, 0, 0));
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return fail() << "the op domain '" << n.domain()
                  << "' is not supported (dp imports the default ONNX domain)";
  const OpEntry *entry = nullptr;
  for (const OpEntry &e : opTable())
    if (n.op_type() == e.support.opType)
      entry = &e;
  if (!entry)
    return fail() << "the op type " << n.op_type()
                  << " is not supported (docs/onnx.md lists what dp imports)";
  if (file.opset < entry->support.sinceOpset)
    return fail() << "dp imports " << n.op_type() << " from opset " << entry->support.sinceOpset
                  << " (convert the model to a newer opset)";
  for (const onnx::AttributeProto &a : n.attribute())
    if (!llvm::is_contained(entry->attributes, a.name()))
      return fail() << "the attribute '" << a.name() << "' is not supported";
  llvm::SmallVector<Tensor *> ins;
  for (const std::string &in : n.input()) {
    if (in.empty()) {
      ins.push_back(nullptr); // an optional input left out
      continue;
    }
    auto found = values.find(in);
    if (found == values.end())
      return fail() << "its input '" << in << "' is made by no earlier node";
    // Token ids are indices only: a Gather's (an embedding's).
    if (found->second.integer && !(n.op_type() == "Gather" && ins.size() == 1))
      return fail() << "its input '" << in
                    << "' is the model's integer input (token ids), which dp takes only as the "
                       "indices of a Gather (an embedding)";
    ins.push_back(&found->second);
  }
  llvm::SmallVector<Tensor, 2> outs;
  if (failed(entry->handle(*this, ins, outs)))
    return failure();
  // Every tensor a node makes is bounded, so the shape arithmetic of the nodes after it
  // cannot overflow.
  for (const Tensor &t : outs)
    if (llvm::any_of(t.shape, [](int64_t d) { return d < 0; }) ||
        elementCount(t.shape) > kMaxInputElements)
      return fail() << "it makes a tensor of shape " << shapeText(t.shape)
                    << ", more than dp's bound of " << kMaxInputElements << " elements";
  for (size_t k = 0; k < outs.size() && k < size_t(n.output_size()); ++k)
    if (!n.output(k).empty()) {
      if (values.count(n.output(k)))
        return fail() << "its output '" << n.output(k)
                      << "' is already a value of the model (ONNX assigns each value once)";
      outs[k].name = n.output(k);
      values[n.output(k)] = outs[k];
    }
  return success();
}

// --- the op table ---

/// The input `k`, or null when the node has fewer or left it out.
Tensor *input(llvm::ArrayRef<Tensor *> ins, size_t k) { return k < ins.size() ? ins[k] : nullptr; }

/// Requires input `k`.
FailureOr<Tensor *> required(Importer &im, llvm::ArrayRef<Tensor *> ins, size_t k) {
  if (Tensor *t = input(ins, k))
    return t;
  im.fail() << "its input " << k << " is missing";
  return failure();
}

/// A 4-D graph value (an NCHW image in ONNX) in the graph's NHWC.
FailureOr<Value> imageInput(Importer &im, const Tensor &t);

/// How a handler takes a graph input: in ONNX's order of its axes, as an NHWC image, or in
/// whatever layout it is held (an elementwise op, whose result keeps it).
enum class Order { Onnx, Image, AsHeld };

/// Input `k`, required, and its graph value in `order`.
struct GraphInput {
  Tensor *tensor;
  Value value;
};
FailureOr<GraphInput> graphInput(Importer &im, llvm::ArrayRef<Tensor *> ins, size_t k,
                                 Order order = Order::Onnx) {
  FailureOr<Tensor *> t = required(im, ins, k);
  if (failed(t))
    return failure();
  FailureOr<Value> v = order == Order::Image    ? imageInput(im, **t)
                       : order == Order::AsHeld ? im.valueAsHeld(**t, "its input")
                                                : im.graphValue(**t, "its input");
  if (failed(v))
    return failure();
  return GraphInput{*t, *v};
}

/// A constant of zeros that no initializer holds: the bias the default exporter writes for a
/// layer without one (Expand of a 0). Adding it changes nothing, so it is left out rather than
/// made a parameter.
bool isComputedZero(const Tensor &t) {
  if (!t.isConst() || !t.initializer.empty())
    return false;
  for (int64_t k = 0; k < t.constant->size(); ++k)
    if (t.constant->at(k) != 0)
      return false;
  return true;
}

Tensor constTensor(Const c) {
  Tensor t;
  t.shape = c.dims;
  t.constant = std::make_shared<Const>(std::move(c));
  return t;
}

/// A graph value of ONNX shape `shape` held in `layout` (ONNX's order when empty).
Tensor graphTensor(Value v, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> layout = {}) {
  Tensor t;
  t.value = v;
  t.shape.assign(shape.begin(), shape.end());
  if (layout != llvm::ArrayRef<int64_t>(identityLayout(int64_t(shape.size()))))
    t.layout.assign(layout.begin(), layout.end());
  assert(cast<RankedTensorType>(v.getType()).getShape() ==
             llvm::ArrayRef<int64_t>(graphShape(shape, t.layout)) &&
         "a graph value's type is its ONNX shape in its layout");
  return t;
}

/// An NHWC image of ONNX shape `shape`.
Tensor imageTensor(Value v, llvm::ArrayRef<int64_t> shape) { return graphTensor(v, shape, kNhwc); }

/// The layout of a reshape of ONNX shape `from`, held in `layout`, to `to` when it only merges
/// runs of axes that are side by side and in order in the layout too (no axis of size 1, none
/// split); nullopt otherwise.
std::optional<Shape> mergedLayout(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> layout,
                                  llvm::ArrayRef<int64_t> to) {
  const int64_t rank = int64_t(from.size());
  if (layout.empty() || llvm::is_contained(from, 1) || llvm::is_contained(to, 1))
    return std::nullopt;
  Shape at(rank); // the graph axis of each ONNX axis
  for (int64_t j = 0; j < rank; ++j)
    at[layout[j]] = j;
  // Where in the graph the run of `from`'s axes that each axis of `to` merges begins.
  Shape graphFirst;
  int64_t a = 0;
  for (int64_t k = 0; k < int64_t(to.size()); ++k) {
    if (a >= rank)
      return std::nullopt;
    int64_t size = from[a], start = a;
    while (size < to[k] && a + 1 < rank) {
      ++a;
      size *= from[a];
      if (at[a] != at[a - 1] + 1)
        return std::nullopt;
    }
    if (size != to[k])
      return std::nullopt;
    graphFirst.push_back(at[start]);
    ++a;
  }
  if (a != rank)
    return std::nullopt;
  // The result's layout: its axes in the order their runs have in the graph.
  Shape order = identityLayout(int64_t(to.size()));
  llvm::sort(order, [&](int64_t x, int64_t y) { return graphFirst[x] < graphFirst[y]; });
  return order;
}

/// `t` as a graph value of ONNX shape `shape` (same element count), through graph.reshape
/// (and a transpose first where the elements are not in an order the reshape may keep).
FailureOr<Tensor> reshapeTo(Importer &im, const Tensor &t, llvm::ArrayRef<int64_t> shape) {
  if (t.isConst()) {
    Const c = *t.constant;
    c.dims.assign(shape.begin(), shape.end());
    Tensor r = constTensor(std::move(c));
    r.initializer = t.initializer;
    return r;
  }
  FailureOr<Value> v = im.valueAsHeld(t, "the tensor reshaped");
  if (failed(v))
    return failure();
  if (shape.empty() || t.shape.empty() || shape[0] != t.shape[0])
    return im.fail() << "it reshapes " << shapeText(t.shape) << " to " << shapeText(shape)
                     << ", moving the batch axis: dp keeps the batch as the first axis";
  if (llvm::ArrayRef<int64_t>(shape) == llvm::ArrayRef<int64_t>(t.shape))
    return t; // the same tensor (a softmax's logits stay known)
  auto reshaped = [&](Value from, llvm::ArrayRef<int64_t> layout) {
    RankedTensorType type = typeIn(&im.ctx, shape, layout);
    Value y = type == from.getType() ? from : im.b.create<graph::ReshapeOp>(im.loc, type, from);
    return graphTensor(y, shape, layout);
  };
  // A 4-D result whose elements are in the same order in NCHW and NHWC is held NHWC: an image
  // a convolution takes as it is.
  const Shape resultLayout = shape.size() == 4 && inOnnxOrder(shape, kNhwc) ? kNhwc : Shape();
  if (inOnnxOrder(t.shape, fullLayout(t.layout, int64_t(t.shape.size()))))
    return reshaped(*v, resultLayout);
  if (t.layout == kNhwc && shape.size() == 2 && shape[1] == elementCount(t.shape) / shape[0]) {
    // Flattening an image: the features come out in H, W, C order (see flattenedChw).
    Tensor result = reshaped(*v, {});
    result.flattenedChw = {t.shape[1], t.shape[2], t.shape[3]};
    return result;
  }
  // Merging runs of axes that lie side by side, in order, in the layout too (an NHWC image's
  // H and W into tokens): the result is held in the layout the runs have.
  if (std::optional<Shape> layout = mergedLayout(t.shape, t.layout, shape))
    return reshaped(*v, *layout);
  return reshaped(im.laidOut(t, {}), resultLayout);
}

/// Resolves a Reshape target (0 copies the input's axis, -1 takes the rest).
FailureOr<Shape> resolveShape(Importer &im, llvm::ArrayRef<int64_t> from, const Const &target,
                              bool allowZero) {
  Shape out;
  int64_t known = 1, infer = -1;
  for (int64_t k = 0; k < target.size(); ++k) {
    int64_t d = target.intAt(k);
    if (d == 0 && !allowZero) {
      if (k >= int64_t(from.size()))
        return im.fail() << "its shape " << shapeText(target.i) << " copies axis " << k
                         << ", which the input " << shapeText(from) << " does not have";
      d = from[k];
    }
    if (d == -1) {
      if (infer >= 0)
        return im.fail() << "its shape " << shapeText(target.i) << " has two -1";
      infer = k;
      out.push_back(1);
      continue;
    }
    if (d < 0)
      return im.fail() << "its shape " << shapeText(target.i) << " has a negative axis";
    if (__builtin_mul_overflow(known, d, &known) || known > kMaxInputElements)
      return im.fail() << "its shape " << shapeText(target.i) << " holds more than "
                       << kMaxInputElements << " elements";
    out.push_back(d);
  }
  const int64_t total = elementCount(from);
  if (infer >= 0) {
    if (known == 0 || total % known)
      return im.fail() << "cannot reshape " << shapeText(from) << " to " << shapeText(target.i);
    out[infer] = total / known;
  }
  if (elementCount(out) != total)
    return im.fail() << "cannot reshape " << shapeText(from) << " (" << total << " elements) to "
                     << shapeText(out);
  return out;
}

/// A constant input (shape arithmetic, axes), or failure naming what it is.
FailureOr<const Const *> constInput(Importer &im, llvm::ArrayRef<Tensor *> ins, size_t k,
                                    llvm::StringRef what) {
  Tensor *t = input(ins, k);
  if (!t) {
    im.fail() << "its input " << what << " is missing";
    return failure();
  }
  if (!t->isConst()) {
    im.fail() << "its input " << what
              << " is computed from the model's inputs; dp needs it constant at the given batch";
    return failure();
  }
  return t->constant.get();
}

int64_t normalizeAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// Elementwise arithmetic on constants (numpy broadcast).
template <class F>
LogicalResult constBinary(Importer &im, const Const &x, const Const &y, F fn, Const &out) {
  Shape shape;
  if (!broadcastShapes(x.dims, y.dims, shape))
    return im.fail() << "cannot broadcast " << shapeText(x.dims) << " with " << shapeText(y.dims);
  if (elementCount(shape) > kMaxConstElements)
    return im.fail() << "its folded result " << shapeText(shape) << " holds more than "
                     << kMaxConstElements << " elements";
  out = Const();
  out.dims = shape;
  out.isFloat = x.isFloat || y.isFloat;
  forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index) {
    double a = x.at(broadcastIndex(x.dims, shape, index));
    double c = y.at(broadcastIndex(y.dims, shape, index));
    double r = fn(a, c, out.isFloat);
    if (out.isFloat)
      out.f.push_back(float(r));
    else
      out.i.push_back(saturatedInt(r));
  });
  return success();
}

LogicalResult binary(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs, double (*fn)(double, double, bool)) {
  FailureOr<Tensor *> a = required(im, ins, 0), c = required(im, ins, 1);
  if (failed(a) || failed(c))
    return failure();
  if ((*a)->isConst() && (*c)->isConst()) {
    Const r;
    if (failed(constBinary(im, *(*a)->constant, *(*c)->constant, fn, r)))
      return failure();
    outs.push_back(constTensor(std::move(r)));
    return success();
  }
  return im.fail() << "on computed tensors it is not supported yet (dp folds it on constants)";
}

/// The next step of GELU's erf form after `x` (x itself where it is no step).
Tensor geluStep(GeluStep step, const Tensor &x) {
  Tensor t;
  t.shape = x.shape;
  t.gelu = step;
  t.geluOf = x.gelu == GeluStep::None ? std::make_shared<Tensor>(x) : x.geluOf;
  return t;
}

/// The next step of a written-out layer norm after `x` (x itself where it is no step).
Tensor normStep(NormStep step, const Tensor &x) {
  Tensor t;
  t.norm = step;
  t.normOf = x.norm == NormStep::None ? std::make_shared<Tensor>(x) : x.normOf;
  // ONNX's shape of the step: x's, or with the last axis reduced to 1 (the statistics).
  t.shape = t.normOf->shape;
  if (step == NormStep::Mean || step == NormStep::Variance || step == NormStep::VarianceEps ||
      step == NormStep::Deviation)
    t.shape.back() = 1;
  t.normEps = x.normEps;
  t.normScale = x.normScale;
  return t;
}

/// Whether the constant `k` is a vector of the last axis of `shape` ([D], or with leading 1s, of
/// no more axes than `shape`): what broadcasts along the last axis alone.
bool isFeatureVector(const Tensor &k, llvm::ArrayRef<int64_t> shape) {
  llvm::ArrayRef<int64_t> dims(k.shape);
  if (dims.empty() || dims.size() > shape.size() || dims.back() != shape.back())
    return false;
  return llvm::all_of(dims.drop_back(), [](int64_t d) { return d == 1; });
}

/// Whether `p` and `q` are the same computed value, held alike.
bool sameValue(const Tensor &p, const Tensor &q) {
  return p.value && p.value == q.value && p.layout == q.layout && p.shape == q.shape;
}

/// Whether `a` is `v` to float's precision.
bool near(double a, double v) { return std::abs(a - v) <= 1e-6 * std::abs(v); }

/// Whether `t` is the scalar float constant `v` (to float's precision).
bool isScalar(const Tensor &t, double v) {
  return t.isConst() && t.constant->size() == 1 && t.constant->isFloat &&
         near(t.constant->at(0), v);
}

/// graph.gelu of `x`, in the layout x is held in: GELU's erf form complete.
LogicalResult geluOfTensor(Importer &im, const Tensor &x, llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Value> v = im.valueAsHeld(x, "its input");
  if (failed(v))
    return failure();
  outs.push_back(
      graphTensor(im.b.create<graph::GeluOp>(im.loc, v->getType(), *v), x.shape, x.layout));
  return success();
}

/// Mul of two computed tensors (a squeeze-and-excitation block's channel weights times its
/// image): graph.mul in the layout of the operand of the result's shape, the other broadcast
/// along its axes of size 1.
LogicalResult computedProduct(Importer &im, const Tensor &x, const Tensor &k,
                              llvm::SmallVectorImpl<Tensor> &outs) {
  if (x.shape.size() != k.shape.size())
    return im.fail() << "it multiplies " << shapeText(x.shape) << " by " << shapeText(k.shape)
                     << ": dp multiplies computed tensors of one rank";
  Shape result;
  if (!broadcastShapes(x.shape, k.shape, result))
    return im.fail() << "it multiplies " << shapeText(x.shape) << " by " << shapeText(k.shape)
                     << ", which do not broadcast";
  const bool xFull = llvm::ArrayRef<int64_t>(result) == llvm::ArrayRef<int64_t>(x.shape);
  const Tensor &full = xFull ? x : k, &small = xFull ? k : x;
  if (llvm::ArrayRef<int64_t>(result) != llvm::ArrayRef<int64_t>(full.shape))
    return im.fail() << "it multiplies " << shapeText(x.shape) << " by " << shapeText(k.shape)
                     << ": dp broadcasts one operand to the other's shape, not both";
  FailureOr<Value> fv = im.valueAsHeld(full, "its input"), sv = im.valueAsHeld(small, "its input");
  if (failed(fv) || failed(sv))
    return failure();
  Value y = im.b.create<graph::MulOp>(im.loc, fv->getType(), *fv, im.laidOut(small, full.layout));
  outs.push_back(graphTensor(y, full.shape, full.layout));
  return success();
}

/// Mul of a computed tensor by a constant tensor of more than one element (a learned
/// per-channel scale such as LayerScale, a layer norm's gamma written out): graph.mul by a
/// parameter of the constant's shape aligned to x's rank (ONNX's broadcasting) and held in x's
/// layout, trainable where the constant is an initializer. `input` is the node input the
/// constant is.
LogicalResult constantProduct(Importer &im, const Tensor &x, const Tensor &k, int input,
                              llvm::SmallVectorImpl<Tensor> &outs) {
  const int64_t rank = int64_t(x.shape.size());
  if (int64_t(k.shape.size()) > rank)
    return im.fail() << "it multiplies " << shapeText(x.shape) << " by the constant "
                     << shapeText(k.shape) << ", of more axes";
  Shape aligned(rank, 1);
  std::copy(k.shape.begin(), k.shape.end(), aligned.end() - k.shape.size());
  for (int64_t d = 0; d < rank; ++d)
    if (aligned[d] != x.shape[d] && aligned[d] != 1)
      return im.fail() << "it multiplies " << shapeText(x.shape) << " by the constant "
                       << shapeText(k.shape) << ", which does not broadcast to it";
  if (rank == 0 || (aligned[0] != 1 && x.shape[0] != 1))
    return im.fail() << "it multiplies " << shapeText(x.shape) << " by the constant "
                     << shapeText(k.shape)
                     << " along the batch axis: dp multiplies every sample by the same constant";
  const Shape layout = fullLayout(x.layout, rank);
  if (!inOnnxOrder(aligned, layout))
    return im.fail() << "it multiplies " << shapeText(x.shape) << " (held in another order of "
                     << "its axes) by the constant " << shapeText(k.shape)
                     << ", whose elements would need moving: not supported yet";
  FailureOr<Value> xv = im.valueAsHeld(x, "its input");
  if (failed(xv))
    return failure();
  FailureOr<Value> scale = im.paramOf(k, "scale", graphShape(aligned, layout), input);
  if (failed(scale))
    return failure();
  Value y = im.b.create<graph::MulOp>(im.loc, xv->getType(), *xv, *scale);
  outs.push_back(graphTensor(y, x.shape, x.layout));
  return success();
}

/// Mul or Div of a computed tensor by a scalar constant: a scale the product before it takes
/// (attention's 1 / sqrt(d)), or a step of GELU's erf form (x / sqrt(2), x * 0.5, and the
/// product x * (1 + erf(...)) of two computed tensors). Constants are folded as binary()
/// does; two computed tensors, or one by a constant tensor, are computedProduct's and
/// constantProduct's.
LogicalResult scaleOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                      llvm::SmallVectorImpl<Tensor> &outs, double (*fn)(double, double, bool)) {
  FailureOr<Tensor *> a = required(im, ins, 0), c = required(im, ins, 1);
  if (failed(a) || failed(c))
    return failure();
  if ((*a)->isConst() && (*c)->isConst())
    return binary(im, ins, outs, fn);
  const bool divide = im.node->op_type() == "Div";
  Tensor *x = *a, *k = *c;
  if (x->isConst() && !divide)
    std::swap(x, k);
  // A written-out layer norm: the deviations over their standard deviation, times a weight.
  if (divide && x->norm == NormStep::Centered && k->norm == NormStep::Deviation &&
      sameValue(*x->normOf, *k->normOf)) {
    outs.push_back(normStep(NormStep::Normalized, *k));
    return success();
  }
  if (!divide && x->norm == NormStep::Normalized && k->isConst()) {
    if (!isFeatureVector(*k, x->shape))
      return im.fail() << "it scales a layer norm written out by " << shapeText(k->shape)
                       << ": dp takes a weight of the last axis's size, [" << x->shape.back()
                       << "]";
    FailureOr<Value> weight = im.paramOf(*k, "scale", {x->shape.back()}, k == *c ? 1 : 0);
    if (failed(weight))
      return failure();
    Tensor scaled = normStep(NormStep::Scaled, *x);
    scaled.normScale = *weight;
    outs.push_back(std::move(scaled));
    return success();
  }
  // A scalar that broadcasting does not give more axes than x has.
  const bool scalar = k->isConst() && k->constant->size() == 1 && k->constant->isFloat &&
                      k->constant->dims.size() <= x->shape.size();
  if (!divide && !k->isConst()) {
    // GELU: x times (1 + erf(x / sqrt(2))), or half of x times it.
    if (k->gelu == GeluStep::OnePlus)
      std::swap(x, k);
    auto same = [](const Tensor &p, const Tensor &q) {
      return p.value && p.value == q.value && p.layout == q.layout && p.shape == q.shape;
    };
    if (x->gelu == GeluStep::OnePlus && k->gelu == GeluStep::None && same(*k, *x->geluOf)) {
      outs.push_back(geluStep(GeluStep::Product, *k));
      return success();
    }
    if (x->gelu == GeluStep::OnePlus && k->gelu == GeluStep::Half && same(*k->geluOf, *x->geluOf))
      return geluOfTensor(im, *x->geluOf, outs);
  }
  if (scalar && x->gelu == GeluStep::Product && !divide && isScalar(*k, 0.5))
    return geluOfTensor(im, *x->geluOf, outs);
  FailureOr<Value> xv = scalar ? im.valueAsHeld(*x, "its input") : FailureOr<Value>();
  auto product = succeeded(xv) ? xv->getDefiningOp<graph::BatchMatMulOp>() : nullptr;
  if (product) {
    const double scale = fn(product.getAlpha().convertToDouble(), k->constant->at(0), true);
    if (!std::isfinite(scale))
      return im.fail() << "it scales a product by " << num(float(k->constant->at(0)))
                       << ", which gives a factor that is not finite";
    // The product's own scale where this node alone reads it; else a scaled copy of it.
    if (!im.soleReader(*x))
      product = cast<graph::BatchMatMulOp>(im.b.clone(*product));
    product.setAlphaAttr(im.b.getF64FloatAttr(scale));
    outs.push_back(graphTensor(product, x->shape, x->layout));
    return success();
  }
  if (succeeded(xv)) {
    const double factor = divide ? 1 / k->constant->at(0) : k->constant->at(0);
    if (near(factor, M_SQRT1_2) || near(factor, 0.5)) {
      outs.push_back(geluStep(near(factor, 0.5) ? GeluStep::Half : GeluStep::Scaled, *x));
      return success();
    }
  }
  if (!divide && !x->isConst() && !k->isConst())
    return computedProduct(im, *x, *k, outs);
  if (!divide && !x->isConst() && k->isConst() && k->constant->size() > 1)
    return constantProduct(im, *x, *k, k == *c ? 1 : 0, outs);
  return im.fail() << "on computed tensors dp supports it only as the scale of a product of "
                      "two computed tensors by a scalar constant, as the product of two "
                      "computed tensors, and in GELU's erf form (and folds it on constants)";
}

/// A float constant `x` with `fn` applied to each value, into `outs`; false (nothing done)
/// where x is not one.
bool foldUnary(const Tensor &x, float (*fn)(float), llvm::SmallVectorImpl<Tensor> &outs) {
  if (!x.isConst() || !x.constant->isFloat)
    return false;
  Const c = *x.constant;
  for (float &v : c.f)
    v = fn(v);
  outs.push_back(constTensor(std::move(c)));
  return true;
}

/// Erf: only in GELU's erf form (see GeluStep); folded on constants.
LogicalResult erfOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                    llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  if (foldUnary(
          **x, [](float v) { return std::erf(v); }, outs))
    return success();
  if ((*x)->gelu != GeluStep::Scaled)
    return im.fail() << "dp takes Erf on computed tensors only in GELU's erf form, x * 0.5 * (1 + "
                        "erf(x / sqrt(2)))";
  outs.push_back(geluStep(GeluStep::Erf, **x));
  return success();
}

double addFn(double a, double b, bool) { return a + b; }
double subFn(double a, double b, bool) { return a - b; }
double mulFn(double a, double b, bool) { return a * b; }
double divFn(double a, double b, bool isFloat) {
  if (isFloat)
    return a / b;
  const int64_t x = saturatedInt(a), y = saturatedInt(b);
  if (y == -1) // INT64_MIN / -1 overflows: negate with wraparound, as numpy does
    return double(int64_t(0 - uint64_t(x)));
  return y == 0 ? 0 : double(x / y);
}
double fmodFn(double a, double b, bool isFloat) {
  if (isFloat)
    return std::fmod(a, b);
  const int64_t x = saturatedInt(a), y = saturatedInt(b);
  return y == 0 || y == -1 ? 0 : double(x % y); // C's: the dividend's sign
}
double modFn(double a, double b, bool isFloat) {
  if (isFloat)
    return std::fmod(a, b); // ONNX requires fmod = 1 for floats
  const int64_t x = saturatedInt(a), y = saturatedInt(b);
  if (y == 0 || y == -1)
    return 0;
  int64_t r = x % y; // ONNX's integer Mod takes the divisor's sign
  if (r != 0 && ((r < 0) != (y < 0)))
    r += y;
  return double(r);
}

/// The last step of a written-out layer norm (NormStep): the bias added to its scaled
/// normalised x, graph.layer_norm of x with the weight and bias as its parameters.
LogicalResult writtenOutLayerNorm(Importer &im, const Tensor &scaled, const Tensor &bias, int input,
                                  llvm::SmallVectorImpl<Tensor> &outs) {
  const Tensor &x = *scaled.normOf;
  const int64_t rank = int64_t(x.shape.size());
  if (rank != 2 && rank != 3)
    return im.fail() << "it completes a layer norm of " << shapeText(x.shape)
                     << ", which is not [batch, features] or [batch, tokens, features]";
  if (!isFeatureVector(bias, x.shape))
    return im.fail() << "it adds " << shapeText(bias.shape)
                     << " to a layer norm written out: dp takes a bias of the last axis's size, ["
                     << x.shape.back() << "]";
  FailureOr<Value> beta = im.paramOf(bias, "bias", {x.shape.back()}, input);
  if (failed(beta))
    return failure();
  Value in = im.laidOut(x, {});
  Value y = im.b.create<graph::LayerNormOp>(im.loc, in.getType(), in, scaled.normScale, *beta,
                                            im.b.getF64FloatAttr(scaled.normEps));
  outs.push_back(graphTensor(y, x.shape));
  return success();
}

/// Sub: folded on constants; x minus its mean over the last axis, a step of a written-out
/// layer norm (NormStep).
LogicalResult subOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                    llvm::SmallVectorImpl<Tensor> &outs) {
  Tensor *x = input(ins, 0), *mean = input(ins, 1);
  if (x && mean && mean->norm == NormStep::Mean && x->norm == NormStep::None &&
      sameValue(*x, *mean->normOf)) {
    outs.push_back(normStep(NormStep::Centered, *x));
    return success();
  }
  if (x && mean && (!x->isConst() || !mean->isConst()))
    return im.fail() << "on computed tensors dp takes it only in a layer norm written out (x "
                        "minus its mean over the last axis), and folds it on constants";
  return binary(im, ins, outs, subFn);
}

double powFn(double a, double b, bool isFloat) {
  return isFloat ? std::pow(a, b) : double(int64_t(std::llround(std::pow(a, b))));
}

/// Pow: folded on constants; the square of a written-out layer norm's deviations.
LogicalResult powOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                    llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0), e = required(im, ins, 1);
  if (failed(x) || failed(e))
    return failure();
  if ((*x)->isConst() && (*e)->isConst()) {
    // The result has the base's type (an integer base to a float power stays an integer).
    Const r;
    if (failed(constBinary(im, *(*x)->constant, *(*e)->constant, powFn, r)))
      return failure();
    if (r.isFloat && !(*x)->constant->isFloat) {
      // As ONNX's reference casts the power back to the base's type: truncated.
      for (float v : r.f)
        r.i.push_back(int64_t(std::trunc(v)));
      r.f.clear();
      r.isFloat = false;
    } else if (!r.isFloat && (*x)->constant->isFloat) {
      for (int64_t v : r.i)
        r.f.push_back(float(v));
      r.i.clear();
      r.isFloat = true;
    }
    outs.push_back(constTensor(std::move(r)));
    return success();
  }
  if ((*x)->norm == NormStep::Centered && isScalar(**e, 2)) {
    outs.push_back(normStep(NormStep::Squared, **x));
    return success();
  }
  return im.fail() << "on computed tensors dp takes it only in a layer norm written out (the "
                      "square of the deviations from the mean), and folds it on constants";
}

/// Sqrt: folded on constants; the standard deviation of a written-out layer norm.
LogicalResult sqrtOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  if (foldUnary(
          **x, [](float v) { return std::sqrt(v); }, outs))
    return success();
  if ((*x)->norm == NormStep::VarianceEps) {
    outs.push_back(normStep(NormStep::Deviation, **x));
    return success();
  }
  return im.fail() << "on computed tensors dp takes it only in a layer norm written out (the "
                      "square root of the variance plus epsilon), and folds it on constants";
}

LogicalResult addOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                    llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> a = required(im, ins, 0), c = required(im, ins, 1);
  if (failed(a) || failed(c))
    return failure();
  if ((*a)->isConst() && (*c)->isConst())
    return binary(im, ins, outs, addFn);
  Tensor *x = *a, *bias = *c;
  if (x->isConst())
    std::swap(x, bias);
  // A written-out layer norm: epsilon added to the variance, and the bias that completes it.
  if (x->norm == NormStep::Variance && bias->isConst() && bias->constant->isFloat &&
      bias->constant->size() == 1) {
    Tensor t = normStep(NormStep::VarianceEps, *x);
    t.normEps = bias->constant->at(0);
    outs.push_back(std::move(t));
    return success();
  }
  if (x->norm == NormStep::Scaled && bias->isConst())
    return writtenOutLayerNorm(im, *x, *bias, bias == *c ? 1 : 0, outs);
  if (x->gelu == GeluStep::Erf && isScalar(*bias, 1) &&
      bias->constant->dims.size() <= x->shape.size()) { // GELU: 1 + erf(x / sqrt(2))
    outs.push_back(geluStep(GeluStep::OnePlus, *x));
    return success();
  }
  FailureOr<Value> xv = im.valueAsHeld(*x, "its input");
  if (failed(xv))
    return failure();
  if (!bias->isConst()) {
    if (failed(im.valueAsHeld(*bias, "its input")))
      return failure();
    if (x->shape != bias->shape)
      return im.fail() << "it adds " << shapeText(x->shape) << " and " << shapeText(bias->shape)
                       << ": broadcasting between computed tensors is not supported yet";
    // In the first operand's layout (a residual add of two images: NHWC both).
    Value y = im.b.create<graph::AddOp>(im.loc, *xv, im.laidOut(*bias, x->layout));
    outs.push_back(graphTensor(y, x->shape, x->layout));
    return success();
  }
  xv = im.laidOut(*x, {});
  // A bias: a constant of the last axis's size added to a dense layer without one.
  const Const &c0 = *bias->constant;
  auto dense = xv->getDefiningOp<graph::DenseOp>();
  const int64_t m = x->shape.back();
  const bool biasShape =
      c0.size() == m && (c0.dims.size() == 1 || (c0.dims.size() == 2 && c0.dims[0] == 1));
  if (!dense || dense.getBias() || !im.soleReader(*x) || !biasShape) {
    // Else a constant of the input's trailing axes (leading 1s aside) added to every sample: a
    // position embedding, or the bias of a product over tokens.
    llvm::ArrayRef<int64_t> dims(c0.dims);
    while (!dims.empty() && dims.front() == 1 && dims.size() >= x->shape.size())
      dims = dims.drop_front();
    if (x->shape.size() == 4 || dims.empty() || dims.size() >= x->shape.size() ||
        llvm::ArrayRef<int64_t>(x->shape).take_back(dims.size()) != dims)
      return im.fail() << "it adds the constant " << shapeText(c0.dims) << " to "
                       << shapeText(x->shape)
                       << ": dp takes a constant in an Add as the bias of the MatMul before it, "
                          "or as a tensor of the input's trailing axes added to every sample "
                          "(not of an image's)";
    FailureOr<Value> p = im.paramOf(*bias, "bias", dims, bias == *c ? 1 : 0);
    if (failed(p))
      return failure();
    outs.push_back(
        graphTensor(im.b.create<graph::BiasAddOp>(im.loc, xv->getType(), *xv, *p), x->shape));
    return success();
  }
  FailureOr<Value> b0 = im.paramOf(*bias, "bias", {m}, bias == *c ? 1 : 0);
  if (failed(b0))
    return failure();
  auto withBias = im.b.create<graph::DenseOp>(dense.getLoc(), dense.getType(), dense.getInput(),
                                              dense.getKernel(), *b0, dense.getActivation());
  dense.erase();
  outs.push_back(graphTensor(withBias, x->shape));
  return success();
}

/// A [K, M] kernel from a constant B of a product: transposed from [M, K] when `transB`; its
/// rows in H, W, C order where the input is a flattened image (`chw`: {C, H, W}).
FailureOr<Value> kernelOf(Importer &im, const Tensor &w, int64_t k, bool transB,
                          llvm::ArrayRef<int64_t> chw = {}) {
  if (!w.isConst() || w.shape.size() != 2)
    return im.fail() << "its weight operand " << shapeText(w.shape)
                     << " must be a 2-D constant (an initializer): products of computed tensors "
                        "are not supported yet";
  int64_t rows = w.shape[0], cols = w.shape[1];
  if ((transB ? cols : rows) != k)
    return im.fail() << "its weight " << shapeText(w.shape) << (transB ? " (transposed)" : "")
                     << " does not take " << k << " input features";
  WeightLayout layout;
  layout.kind = transB ? WeightLayout::Kind::Transposed : WeightLayout::Kind::Same;
  layout.flattenedChw.assign(chw.begin(), chw.end());
  return im.paramOf(w, "weight", {k, transB ? rows : cols}, 1, layout);
}

/// The input of a product with a constant weight: any graph value, a flattened image too.
FailureOr<Value> productInput(Importer &im, const Tensor &a) {
  Tensor plain = a;
  plain.flattenedChw.clear();
  return im.graphValue(plain, "its input A");
}

LogicalResult gemmOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> a = required(im, ins, 0), w = required(im, ins, 1);
  if (failed(a) || failed(w))
    return failure();
  if (im.intAttr("transA", 0))
    return im.fail() << "transA = 1 is not supported (the samples are the rows)";
  if (im.floatAttr("alpha", 1.f) != 1.f || (input(ins, 2) && im.floatAttr("beta", 1.f) != 1.f))
    return im.fail() << "alpha and beta other than 1 are not supported";
  FailureOr<Value> x = productInput(im, **a);
  if (failed(x))
    return failure();
  if ((*a)->shape.size() != 2)
    return im.fail() << "its input A is " << shapeText((*a)->shape) << ", not 2-D";
  FailureOr<Value> kernel =
      kernelOf(im, **w, (*a)->shape[1], im.intAttr("transB", 0), (*a)->flattenedChw);
  if (failed(kernel))
    return failure();
  const int64_t m = cast<RankedTensorType>(kernel->getType()).getDimSize(1);
  Value bias;
  if (Tensor *c = input(ins, 2); c && !isComputedZero(*c)) {
    if (!c->isConst() || c->constant->size() != m || c->shape.size() > 2 ||
        (c->shape.size() == 2 && c->shape[0] != 1))
      return im.fail() << "its C " << shapeText(c->shape) << " must be a constant bias of " << m
                       << " values";
    FailureOr<Value> b0 = im.paramOf(*c, "bias", {m}, 2);
    if (failed(b0))
      return failure();
    bias = *b0;
  }
  Shape shape{(*a)->shape[0], m};
  Value y = im.b.create<graph::DenseOp>(im.loc, typeIn(&im.ctx, shape), *x, *kernel, bias,
                                        graph::Activation::none);
  outs.push_back(graphTensor(y, shape));
  return success();
}

/// A MatMul of two computed tensors [..., M, K] and [..., K, N] of rank 3 or more with equal
/// leading axes (the batch, attention's heads): one product each (graph.batch_matmul).
LogicalResult batchedProduct(Importer &im, const Tensor &a, const Tensor &b,
                             llvm::SmallVectorImpl<Tensor> &outs) {
  const size_t rank = a.shape.size();
  if (rank < 3 || b.shape.size() != rank ||
      !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin()) ||
      a.shape[rank - 1] != b.shape[rank - 2])
    return im.fail() << "it multiplies the computed tensors " << shapeText(a.shape) << " and "
                     << shapeText(b.shape)
                     << ": dp supports [batch, ..., M, K] by [batch, ..., K, N] with equal "
                        "leading axes (no broadcasting)";
  if (failed(im.valueAsHeld(a, "its input A")) || failed(im.valueAsHeld(b, "its input B")))
    return failure();
  // An operand held with its last two axes exchanged (attention's k^T: a Transpose, which
  // moves no element here) is taken as it is, with the product's transpose flag.
  Shape swapped = identityLayout(int64_t(rank));
  std::swap(swapped[rank - 1], swapped[rank - 2]);
  auto operand = [&](const Tensor &t, bool &transposed) {
    transposed = fullLayout(t.layout, int64_t(rank)) == swapped;
    return im.laidOut(t, transposed ? swapped : Shape());
  };
  bool ta = false, tb = false;
  Value av = operand(a, ta), bv = operand(b, tb);
  Shape shape = a.shape;
  shape.back() = b.shape.back();
  outs.push_back(graphTensor(im.b.create<graph::BatchMatMulOp>(im.loc, typeIn(&im.ctx, shape), av,
                                                               bv, ta, tb, llvm::APFloat(1.0)),
                             shape));
  return success();
}

LogicalResult matMulOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                       llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> a = required(im, ins, 0), w = required(im, ins, 1);
  if (failed(a) || failed(w))
    return failure();
  if (!(*w)->isConst())
    return batchedProduct(im, **a, **w, outs);
  FailureOr<Value> x = productInput(im, **a);
  if (failed(x))
    return failure();
  const Shape &in = (*a)->shape;
  if (in.size() != 2 && in.size() != 3)
    return im.fail() << "its input A is " << shapeText(in)
                     << ": products of an initializer with tensors other than [batch, features] "
                        "and [batch, tokens, features] are not supported yet";
  FailureOr<Value> kernel = kernelOf(im, **w, in.back(), false, (*a)->flattenedChw);
  if (failed(kernel))
    return failure();
  const int64_t m = cast<RankedTensorType>(kernel->getType()).getDimSize(1);
  // Tokens [N, T, K] are N * T rows of one product (free reshapes around it).
  const int64_t rows = in.size() == 3 ? in[0] * in[1] : in[0];
  Value rowsIn = *x;
  if (in.size() == 3)
    rowsIn = im.b.create<graph::ReshapeOp>(im.loc, typeIn(&im.ctx, {rows, in[2]}), *x);
  Value y = im.b.create<graph::DenseOp>(im.loc, typeIn(&im.ctx, {rows, m}), rowsIn, *kernel,
                                        Value(), graph::Activation::none);
  Shape shape(in.begin(), in.end() - 1);
  shape.push_back(m);
  if (in.size() == 3)
    y = im.b.create<graph::ReshapeOp>(im.loc, typeIn(&im.ctx, shape), y);
  outs.push_back(graphTensor(y, shape));
  return success();
}

template <class Op>
LogicalResult activationOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                           llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> x = graphInput(im, ins, 0, Order::AsHeld);
  if (failed(x))
    return failure();
  outs.push_back(graphTensor(im.b.create<Op>(im.loc, x->value.getType(), x->value),
                             x->tensor->shape, x->tensor->layout));
  return success();
}

/// Softmax and LogSoftmax over the classes of a [batch, classes] tensor (a model's output, folded
/// into the loss); Softmax also over any axis after the batch: graph.softmax of the value held
/// with that axis last (moved there where it is not). Before opset 13 the axes from `axis` on
/// are one.
LogicalResult softmaxOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                        llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> in = graphInput(im, ins, 0, Order::AsHeld);
  if (failed(in))
    return failure();
  Tensor *x = in->tensor;
  const int64_t rank = int64_t(x->shape.size());
  const int64_t axis = normalizeAxis(im.intAttr("axis", im.file.opset >= 13 ? -1 : 1), rank);
  const bool isSoftmax = im.node->op_type() == "Softmax";
  if (rank == 2 && axis == 1) {
    Tensor out;
    if (isSoftmax) {
      Value v = im.laidOut(*x, {});
      out = graphTensor(im.b.create<graph::SoftmaxOp>(im.loc, v.getType(), v), x->shape);
    } else {
      out.shape = x->shape;
      out.onlyAsOutput = "LogSoftmax";
    }
    out.logits = std::make_shared<Tensor>(*x);
    outs.push_back(out);
    return success();
  }
  if (!isSoftmax || axis < 1 || axis >= rank)
    return im.fail() << "it is taken over axis " << axis << " of " << shapeText(x->shape)
                     << ": dp supports the classes of a [batch, classes] tensor (and, for "
                        "Softmax, any axis after the batch)";
  if (im.file.opset < 13 && axis != rank - 1) {
    // The axes from `axis` on as one: [batch, outer, inner], and back.
    int64_t outer = 1, inner = 1;
    for (int64_t k = 1; k < rank; ++k)
      (k < axis ? outer : inner) *= x->shape[k];
    FailureOr<Tensor> rows = reshapeTo(im, *x, {x->shape[0], outer, inner});
    if (failed(rows))
      return failure();
    Value v = im.laidOut(*rows, {});
    Tensor soft = graphTensor(im.b.create<graph::SoftmaxOp>(im.loc, v.getType(), v), rows->shape);
    FailureOr<Tensor> back = reshapeTo(im, soft, x->shape);
    if (failed(back))
      return failure();
    outs.push_back(*back);
    return success();
  }
  // Held with `axis` last: as it is where it already is, else moved there.
  Shape layout = fullLayout(x->layout, rank);
  if (layout.back() != axis) {
    llvm::erase(layout, axis);
    layout.push_back(axis);
  }
  Value v = im.laidOut(*x, layout);
  outs.push_back(
      graphTensor(im.b.create<graph::SoftmaxOp>(im.loc, v.getType(), v), x->shape, layout));
  return success();
}

/// Clip to [0, 6] (ReLU6) or [0, inf) (ReLU): bounds attributes before opset 11, inputs from.
LogicalResult clipOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> x = graphInput(im, ins, 0, Order::AsHeld);
  if (failed(x))
    return failure();
  const float inf = std::numeric_limits<float>::infinity();
  float lo = -inf, hi = inf;
  if (im.file.opset < 11) {
    lo = im.floatAttr("min", -inf), hi = im.floatAttr("max", inf);
  } else {
    for (size_t k = 1; k <= 2; ++k) {
      if (!input(ins, k))
        continue;
      FailureOr<const Const *> c = constInput(im, ins, k, k == 1 ? "min" : "max");
      if (failed(c))
        return failure();
      if ((*c)->size() != 1)
        return im.fail() << "its " << (k == 1 ? "min" : "max") << " is not a scalar";
      (k == 1 ? lo : hi) = float((*c)->at(0));
    }
  }
  Value y;
  if (lo == 0 && hi == 6)
    y = im.b.create<graph::Relu6Op>(im.loc, x->value.getType(), x->value);
  else if (lo == 0 && hi == inf)
    y = im.b.create<graph::ReluOp>(im.loc, x->value.getType(), x->value);
  else
    return im.fail() << "it clips to [" << num(lo) << ", " << num(hi)
                     << "]: dp supports [0, 6] (ReLU6) and [0, inf) (ReLU)";
  outs.push_back(graphTensor(y, x->tensor->shape, x->tensor->layout));
  return success();
}

/// HardSigmoid with PyTorch's alpha 1/6 and beta 1/2.
LogicalResult hardSigmoidOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                            llvm::SmallVectorImpl<Tensor> &outs) {
  const float alpha = im.floatAttr("alpha", 0.2f), beta = im.floatAttr("beta", 0.5f);
  if (std::abs(alpha - 1.0f / 6) > 1e-6f || beta != 0.5f)
    return im.fail() << "its alpha " << num(alpha) << " and beta " << num(beta)
                     << " are not PyTorch's (1/6 and 1/2), the only ones dp computes";
  return activationOp<graph::HardSigmoidOp>(im, ins, outs);
}

/// Gelu (opset 20) in its exact form.
LogicalResult geluOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  if (std::string approximate = im.stringAttr("approximate", "none"); approximate != "none")
    return im.fail() << "approximate = \"" << approximate
                     << "\" is not supported (dp computes the exact, erf form)";
  return activationOp<graph::GeluOp>(im, ins, outs);
}

LogicalResult layerNormOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                          llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> x = graphInput(im, ins, 0);
  if (failed(x))
    return failure();
  const Shape &shape = x->tensor->shape;
  const int64_t rank = int64_t(shape.size());
  if (rank != 2 && rank != 3)
    return im.fail() << "its input " << shapeText(shape)
                     << " is not [batch, features] or [batch, tokens, features]";
  if (int64_t axis = im.intAttr("axis", -1); axis != -1 && axis != rank - 1)
    return im.fail() << "axis = " << axis << " is not supported (dp normalises the last axis)";
  for (int k = 1; k < im.node->output_size(); ++k)
    if (!im.node->output(k).empty())
      return im.fail() << "its output " << k << " (the statistics) is not supported";
  FailureOr<Tensor *> scale = required(im, ins, 1);
  Tensor *bias = input(ins, 2);
  if (failed(scale))
    return failure();
  if (!bias)
    return im.fail() << "it has no bias B: dp's layer norm takes one (an initializer)";
  const int64_t c = shape.back();
  FailureOr<Value> gamma = im.paramOf(**scale, "scale", {c}, 1);
  FailureOr<Value> beta = failed(gamma) ? FailureOr<Value>() : im.paramOf(*bias, "bias", {c}, 2);
  if (failed(gamma) || failed(beta))
    return failure();
  Value y = im.b.create<graph::LayerNormOp>(im.loc, x->value.getType(), x->value, *gamma, *beta,
                                            im.b.getF64FloatAttr(im.floatAttr("epsilon", 1e-5f)));
  outs.push_back(graphTensor(y, shape));
  return success();
}

/// Transpose: folded on constants; of a computed tensor keeping its batch axis first, a new
/// layout of the same graph value (the elements move where a reader needs them in another
/// order).
LogicalResult transposeOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                          llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  const Shape &in = (*x)->shape;
  const int64_t rank = int64_t(in.size());
  std::vector<int64_t> perm = im.intsAttr("perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  std::vector<int64_t> sorted = perm;
  llvm::sort(sorted);
  if (int64_t(perm.size()) != rank ||
      llvm::any_of(llvm::enumerate(sorted), [](auto p) { return p.value() != int64_t(p.index()); }))
    return im.fail() << "its perm " << shapeText(perm) << " is not an order of the axes of "
                     << shapeText(in);
  Shape shape;
  for (int64_t k : perm)
    shape.push_back(in[k]);
  if ((*x)->isConst()) {
    const Const &c = *(*x)->constant;
    Const out;
    out.isFloat = c.isFloat;
    out.dims = shape;
    forEachIndex(shape, [&](llvm::ArrayRef<int64_t> index) {
      int64_t flat = 0;
      Shape from(rank);
      for (int64_t k = 0; k < rank; ++k)
        from[perm[k]] = index[k];
      for (int64_t k = 0; k < rank; ++k)
        flat = flat * in[k] + from[k];
      if (c.isFloat)
        out.f.push_back(c.f[flat]);
      else
        out.i.push_back(c.i[flat]);
    });
    Tensor folded = constTensor(std::move(out));
    if (rank == 2 && perm[0] == 1 && !(*x)->initializer.empty())
      folded.transposeOf = std::make_shared<Tensor>(**x);
    outs.push_back(std::move(folded));
    return success();
  }
  if (rank == 0 || perm[0] != 0)
    return im.fail() << "its perm " << shapeText(perm) << " on the computed " << shapeText(in)
                     << " is not supported: dp keeps the batch axis first";
  if (llvm::ArrayRef<int64_t>(perm) == llvm::ArrayRef<int64_t>(identityLayout(rank))) {
    // The same tensor (a softmax's logits stay known).
    outs.push_back(**x);
    return success();
  }
  FailureOr<Value> v = im.valueAsHeld(**x, "its input");
  if (failed(v))
    return failure();
  // No element moves here: the result is the input held in another layout, moved where a
  // reader needs another (Importer::laidOut).
  Shape inverse(rank), layout(rank);
  for (int64_t k = 0; k < rank; ++k)
    inverse[perm[k]] = k;
  const Shape held = fullLayout((*x)->layout, rank);
  for (int64_t j = 0; j < rank; ++j)
    layout[j] = inverse[held[j]];
  outs.push_back(graphTensor(*v, shape, layout));
  return success();
}

LogicalResult identityOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                         llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  outs.push_back(**x);
  // A copy of a constant is a constant of its own name: the TorchScript exporter writes a
  // batch norm's running variance as Identity(weight) where both are ones, and the two must
  // not become one parameter.
  if ((*x)->isConst() && !(*x)->initializer.empty())
    outs.back().initializer = im.node->output(0);
  return success();
}

LogicalResult dropoutOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                        llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  if (im.node->output_size() > 1 && !im.node->output(1).empty())
    return im.fail() << "its mask output is not supported";
  double ratio = im.floatAttr("ratio", 0.5f);
  if (im.file.opset >= 12 && input(ins, 1)) {
    FailureOr<const Const *> r = constInput(im, ins, 1, "ratio");
    if (failed(r))
      return failure();
    if ((*r)->size() != 1)
      return im.fail() << "its ratio is not a scalar";
    ratio = (*r)->at(0);
  }
  if (!(ratio >= 0 && ratio < 1))
    return im.fail() << "its ratio " << num(ratio) << " is not in [0, 1)";
  if (im.file.opset >= 12 && input(ins, 2)) {
    // training_mode: dp's dropout is active in the train step and the identity in the eval
    // step, whatever the file says; a file that asks for it always (a training-mode export)
    // is refused, as a training-mode batch norm is.
    FailureOr<const Const *> mode = constInput(im, ins, 2, "training_mode");
    if (failed(mode))
      return failure();
    if ((*mode)->size() != 1)
      return im.fail() << "its training_mode is not a scalar";
    if ((*mode)->at(0) != 0 && ratio != 0)
      return im.fail() << "its training_mode = 1 (a training-mode export) is not supported: "
                          "export the model in eval mode (dp's dropout is active in the train "
                          "step and the identity in the eval step)";
  }
  FailureOr<Value> v = im.valueAsHeld(**x, "its input");
  if (failed(v))
    return failure();
  if (ratio == 0) {
    outs.push_back(**x);
    return success();
  }
  // Active in the train step, the identity in the eval step (ONNX's training_mode is the
  // step's, not the file's).
  Value y = im.b.create<graph::DropoutOp>(im.loc, v->getType(), *v, im.b.getF64FloatAttr(ratio));
  outs.push_back(graphTensor(y, (*x)->shape, (*x)->layout));
  return success();
}

LogicalResult flattenOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                        llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  const Shape &in = (*x)->shape;
  const int64_t axis = normalizeAxis(im.intAttr("axis", 1), int64_t(in.size()));
  if (axis < 0 || axis > int64_t(in.size()))
    return im.fail() << "its axis is out of range for " << shapeText(in);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < int64_t(in.size()); ++k)
    (k < axis ? outer : inner) *= in[k];
  FailureOr<Tensor> r = reshapeTo(im, **x, {outer, inner});
  if (failed(r))
    return failure();
  outs.push_back(*r);
  return success();
}

LogicalResult reshapeOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                        llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  FailureOr<const Const *> target = constInput(im, ins, 1, "shape");
  if (failed(target))
    return failure();
  FailureOr<Shape> shape = resolveShape(im, (*x)->shape, **target, im.intAttr("allowzero", 0));
  if (failed(shape))
    return failure();
  FailureOr<Tensor> r = reshapeTo(im, **x, *shape);
  if (failed(r))
    return failure();
  outs.push_back(*r);
  return success();
}

/// The axes of Unsqueeze and Squeeze: an attribute before opset 13, an input from 13.
FailureOr<std::vector<int64_t>> axesOf(Importer &im, llvm::ArrayRef<Tensor *> ins, bool required0,
                                       int64_t inputFromOpset = 13) {
  if (im.file.opset < inputFromOpset) {
    if (auto axes = im.intsAttr("axes"))
      return *axes;
  } else if (im.attr("axes")) {
    im.fail() << "its axes are an attribute, an input from opset " << inputFromOpset;
    return failure();
  } else if (input(ins, 1)) {
    FailureOr<const Const *> c = constInput(im, ins, 1, "axes");
    if (failed(c))
      return failure();
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < (*c)->size(); ++k)
      axes.push_back((*c)->intAt(k));
    return axes;
  }
  if (required0) {
    im.fail() << "its axes are missing";
    return failure();
  }
  return std::vector<int64_t>();
}

LogicalResult unsqueezeOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                          llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  FailureOr<std::vector<int64_t>> axes = axesOf(im, ins, true);
  if (failed(x) || failed(axes))
    return failure();
  const int64_t rank = int64_t((*x)->shape.size() + axes->size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    int64_t k = normalizeAxis(a, rank);
    if (k < 0 || k >= rank || inserted[k])
      return im.fail() << "its axes are out of range or repeated";
    inserted[k] = true;
  }
  Shape shape;
  for (int64_t k = 0, from = 0; k < rank; ++k)
    shape.push_back(inserted[k] ? 1 : (*x)->shape[from++]);
  FailureOr<Tensor> r = reshapeTo(im, **x, shape);
  if (failed(r))
    return failure();
  outs.push_back(*r);
  return success();
}

LogicalResult squeezeOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                        llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  FailureOr<std::vector<int64_t>> axes = axesOf(im, ins, false);
  if (failed(x) || failed(axes))
    return failure();
  const Shape &in = (*x)->shape;
  std::vector<bool> dropped(in.size(), false);
  for (int64_t a : *axes) {
    int64_t k = normalizeAxis(a, int64_t(in.size()));
    if (k < 0 || k >= int64_t(in.size()) || in[k] != 1)
      return im.fail() << "it squeezes axis " << a << " of " << shapeText(in)
                       << ", which is not of size 1";
    dropped[k] = true;
  }
  Shape shape;
  for (size_t k = 0; k < in.size(); ++k)
    if (!(axes->empty() ? in[k] == 1 : dropped[k]))
      shape.push_back(in[k]);
  FailureOr<Tensor> r = reshapeTo(im, **x, shape);
  if (failed(r))
    return failure();
  outs.push_back(*r);
  return success();
}

LogicalResult constantOp(Importer &im, llvm::ArrayRef<Tensor *>,
                         llvm::SmallVectorImpl<Tensor> &outs) {
  Const c;
  if (const onnx::AttributeProto *a = im.attr("value")) {
    if (std::string problem = decodeTensor(a->t(), c); !problem.empty())
      return im.fail() << "its value " << problem;
  } else if (const onnx::AttributeProto *a = im.attr("value_float")) {
    c.isFloat = true;
    c.f = {a->f()};
  } else if (const onnx::AttributeProto *a = im.attr("value_floats")) {
    c.isFloat = true;
    c.f.assign(a->floats().begin(), a->floats().end());
    c.dims = {int64_t(c.f.size())};
  } else if (const onnx::AttributeProto *a = im.attr("value_int")) {
    c.i = {a->i()};
  } else if (const onnx::AttributeProto *a = im.attr("value_ints")) {
    c.i.assign(a->ints().begin(), a->ints().end());
    c.dims = {int64_t(c.i.size())};
  } else {
    return im.fail() << "it has no value dp reads (value, value_float(s), value_int(s))";
  }
  outs.push_back(constTensor(std::move(c)));
  return success();
}

LogicalResult shapeOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                      llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  if ((*x)->norm != NormStep::None || (*x)->gelu != GeluStep::None)
    return im.fail() << "its input is a step of a layer norm or of GELU written out, which dp "
                        "takes only whole";
  const int64_t rank = int64_t((*x)->shape.size());
  auto clamp = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
  const int64_t start = clamp(im.intAttr("start", 0)), end = clamp(im.intAttr("end", rank));
  Const c;
  for (int64_t k = start; k < end; ++k)
    c.i.push_back((*x)->shape[k]);
  c.dims = {int64_t(c.i.size())};
  outs.push_back(constTensor(std::move(c)));
  return success();
}

/// Gather of a [V, D] initializer by the model's token ids on axis 0: an embedding lookup
/// (graph.gather), the table a trained parameter.
LogicalResult embeddingOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                          llvm::SmallVectorImpl<Tensor> &outs) {
  Tensor &table = *ins[0], &indices = *ins[1];
  if (!table.isConst())
    return im.fail() << "its data is computed: dp gathers token ids from a table that is an "
                        "initializer (an embedding)";
  if (table.shape.size() != 2)
    return im.fail() << "its data has shape " << shapeText(table.shape)
                     << ": an embedding's table is [vocabulary, width]";
  if (normalizeAxis(im.intAttr("axis", 0), 2) != 0)
    return im.fail() << "it gathers along axis " << im.intAttr("axis", 0)
                     << ": an embedding picks rows (axis 0)";
  FailureOr<Value> weight = im.paramOf(table, "table", table.shape, 0);
  FailureOr<Value> ids = im.graphValue(indices, "its indices");
  if (failed(weight) || failed(ids))
    return failure();
  Shape shape(indices.shape.begin(), indices.shape.end());
  shape.push_back(table.shape[1]);
  auto type = RankedTensorType::get(shape, im.b.getF32Type());
  outs.push_back(graphTensor(im.b.create<graph::GatherOp>(im.loc, type, *weight, *ids), shape));
  return success();
}

LogicalResult gatherOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                       llvm::SmallVectorImpl<Tensor> &outs) {
  if (input(ins, 1) && ins[1]->integer && input(ins, 0))
    return embeddingOp(im, ins, outs);
  FailureOr<const Const *> data = constInput(im, ins, 0, "data");
  FailureOr<const Const *> indices = constInput(im, ins, 1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  const Const &d = **data, &ix = **indices;
  const int64_t rank = int64_t(d.dims.size());
  const int64_t axis = normalizeAxis(im.intAttr("axis", 0), rank);
  if (rank == 0 || axis < 0 || axis >= rank)
    return im.fail() << "its axis is out of range for " << shapeText(d.dims);
  Const out;
  out.isFloat = d.isFloat;
  out.dims.append(d.dims.begin(), d.dims.begin() + axis);
  out.dims.append(ix.dims.begin(), ix.dims.end());
  out.dims.append(d.dims.begin() + axis + 1, d.dims.end());
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k)
    if (k < axis)
      outer *= d.dims[k];
    else if (k > axis)
      inner *= d.dims[k];
  const int64_t n = d.dims[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ix.size(); ++j) {
      int64_t at = ix.intAt(j);
      at = at < 0 ? at + n : at;
      if (at < 0 || at >= n)
        return im.fail() << "its index " << ix.intAt(j) << " is out of range for "
                         << shapeText(d.dims);
      for (int64_t in = 0; in < inner; ++in) {
        int64_t from = (o * n + at) * inner + in;
        if (d.isFloat)
          out.f.push_back(d.f[from]);
        else
          out.i.push_back(d.i[from]);
      }
    }
  outs.push_back(constTensor(std::move(out)));
  return success();
}

/// Concat of computed tensors along a feature axis (DenseNet's and Inception's channels, tokens):
/// graph.concat, in the first input's layout.
LogicalResult computedConcat(Importer &im, llvm::ArrayRef<Tensor *> ins,
                             llvm::SmallVectorImpl<Tensor> &outs) {
  const Tensor &first = *ins[0];
  const int64_t rank = int64_t(first.shape.size());
  const int64_t axis = normalizeAxis(im.intAttr("axis", 0), rank);
  if (axis < 1 || axis >= rank)
    return im.fail() << "its axis " << im.intAttr("axis", 0) << " on " << shapeText(first.shape)
                     << " is not supported: dp joins computed tensors along an axis after the "
                        "batch";
  Shape shape = first.shape;
  shape[axis] = 0;
  llvm::SmallVector<Value> values;
  for (size_t k = 0; k < ins.size(); ++k) {
    const Tensor &t = *ins[k];
    if (failed(im.valueAsHeld(t, "its input #" + std::to_string(k))))
      return failure();
    for (int64_t a = 0; a < rank; ++a)
      if (int64_t(t.shape.size()) != rank || (a != axis && t.shape[a] != first.shape[a]))
        return im.fail() << "its inputs " << shapeText(first.shape) << " and " << shapeText(t.shape)
                         << " differ off the axis";
    shape[axis] += t.shape[axis];
    values.push_back(im.laidOut(t, first.layout));
  }
  const Shape layout = fullLayout(first.layout, rank);
  const int64_t graphAxis = llvm::find(layout, axis) - layout.begin();
  Value y = im.b.create<graph::ConcatOp>(im.loc, typeIn(&im.ctx, shape, first.layout), values,
                                         im.b.getI64IntegerAttr(graphAxis));
  outs.push_back(graphTensor(y, shape, first.layout));
  return success();
}

LogicalResult concatOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                       llvm::SmallVectorImpl<Tensor> &outs) {
  if (!ins.empty() && llvm::all_of(ins, [](Tensor *t) { return t && !t->isConst(); }))
    return computedConcat(im, ins, outs);
  if (llvm::any_of(ins, [](Tensor *t) { return t && !t->isConst(); }))
    return im.fail() << "it joins constants and computed tensors: dp joins only constants "
                        "(folded) or only computed tensors";
  llvm::SmallVector<const Const *> parts;
  for (size_t k = 0; k < ins.size(); ++k) {
    FailureOr<const Const *> c = constInput(im, ins, k, "#" + std::to_string(k));
    if (failed(c))
      return failure();
    parts.push_back(*c);
  }
  if (parts.empty())
    return im.fail() << "it has no inputs";
  const int64_t rank = int64_t(parts[0]->dims.size());
  const int64_t axis = normalizeAxis(im.intAttr("axis", 0), rank);
  if (axis < 0 || axis >= rank)
    return im.fail() << "its axis is out of range";
  Const out;
  out.dims = parts[0]->dims;
  out.dims[axis] = 0;
  for (const Const *p : parts) {
    if (int64_t(p->dims.size()) != rank)
      return im.fail() << "its inputs differ in rank";
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && p->dims[k] != parts[0]->dims[k])
        return im.fail() << "its inputs " << shapeText(parts[0]->dims) << " and "
                         << shapeText(p->dims) << " differ off the axis";
    out.dims[axis] += p->dims[axis];
    out.isFloat |= p->isFloat;
  }
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k)
    outer *= out.dims[k];
  for (int64_t o = 0; o < outer; ++o)
    for (const Const *p : parts) {
      const int64_t chunk = outer ? p->size() / outer : 0;
      for (int64_t j = o * chunk; j < (o + 1) * chunk; ++j)
        if (out.isFloat)
          out.f.push_back(float(p->at(j)));
        else
          out.i.push_back(p->i[j]);
    }
  outs.push_back(constTensor(std::move(out)));
  return success();
}

LogicalResult castOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  const int64_t to = im.intAttr("to", 0);
  const bool toFloat = to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE;
  const bool toInt = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 ||
                     to == onnx::TensorProto::BOOL;
  if (!toFloat && !toInt)
    return im.fail() << "it casts to data type " << to
                     << " (dp casts to float, int64, int32, bool)";
  if (!(*x)->isConst()) {
    if (!toFloat)
      return im.fail() << "it casts a computed tensor to an integer type";
    outs.push_back(**x);
    return success();
  }
  const Const &c = *(*x)->constant;
  Const out;
  out.dims = c.dims;
  out.isFloat = toFloat;
  for (int64_t k = 0; k < c.size(); ++k) {
    double v = c.at(k);
    if (toFloat)
      out.f.push_back(float(v));
    else if (to == onnx::TensorProto::BOOL)
      out.i.push_back(v != 0);
    else
      out.i.push_back(c.isFloat ? saturatedInt(std::trunc(v)) : c.i[k]);
  }
  outs.push_back(constTensor(std::move(out)));
  return success();
}

LogicalResult sliceOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                      llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<const Const *> data = constInput(im, ins, 0, "data");
  if (failed(data))
    return failure();
  std::vector<int64_t> starts, ends, axes, steps;
  auto ints = [&](size_t k, std::vector<int64_t> &to) -> LogicalResult {
    if (!input(ins, k))
      return success();
    FailureOr<const Const *> c = constInput(im, ins, k, "#" + std::to_string(k));
    if (failed(c))
      return failure();
    for (int64_t j = 0; j < (*c)->size(); ++j)
      to.push_back((*c)->intAt(j));
    return success();
  };
  if (failed(ints(1, starts)) || failed(ints(2, ends)) || failed(ints(3, axes)) ||
      failed(ints(4, steps)))
    return failure();
  const Const &d = **data;
  const int64_t rank = int64_t(d.dims.size());
  if (axes.empty())
    for (int64_t k = 0; k < int64_t(starts.size()); ++k)
      axes.push_back(k);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return im.fail() << "its starts, ends, axes and steps differ in length";
  Shape begin(rank, 0), step(rank, 1), size(d.dims.begin(), d.dims.end());
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t a = normalizeAxis(axes[j], rank);
    if (a < 0 || a >= rank || steps[j] == 0)
      return im.fail() << "its axis or step is out of range";
    const int64_t n = d.dims[a];
    auto fix = [&](int64_t v, int64_t lo, int64_t hi) {
      v = v < 0 ? v + n : v;
      return std::clamp(v, lo, hi);
    };
    int64_t s, e;
    if (steps[j] > 0) {
      s = fix(starts[j], 0, n), e = fix(ends[j], 0, n);
      size[a] = e > s ? (e - s + steps[j] - 1) / steps[j] : 0;
    } else {
      s = fix(starts[j], -1, n - 1), e = fix(ends[j], -1, n - 1);
      size[a] = s > e ? (s - e - steps[j] - 1) / -steps[j] : 0;
    }
    begin[a] = s, step[a] = steps[j];
  }
  Const out;
  out.isFloat = d.isFloat;
  out.dims = size;
  forEachIndex(size, [&](llvm::ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (int64_t k = 0; k < rank; ++k)
      flat = flat * d.dims[k] + begin[k] + index[k] * step[k];
    if (d.isFloat)
      out.f.push_back(d.f[flat]);
    else
      out.i.push_back(d.i[flat]);
  });
  outs.push_back(constTensor(std::move(out)));
  return success();
}

// --- images ---

FailureOr<Value> imageInput(Importer &im, const Tensor &t) {
  FailureOr<Value> v = im.valueAsHeld(t, "its input");
  if (failed(v))
    return failure();
  if (t.shape.size() != 4)
    return im.fail() << "its input is " << shapeText(t.shape) << ", not an NCHW image";
  return im.laidOut(t, kNhwc);
}

/// The 2-D window attributes all nodes of images share: an INTS attribute of two positive values,
/// or `otherwise`.
FailureOr<Shape> pairAttr(Importer &im, llvm::StringRef name, Shape otherwise) {
  auto v = im.intsAttr(name);
  if (!v)
    return otherwise;
  if (v->size() != otherwise.size())
    return im.fail() << "its " << name << " has " << v->size() << " values, not "
                     << otherwise.size() << " (dp imports 2-D images only)";
  // Window sizes, strides and dilations: each at least 1.
  if (llvm::any_of(*v, [](int64_t x) { return x < 1 || x > kMaxWindow; }))
    return im.fail() << "its " << name << " " << shapeText(*v) << " must be between 1 and "
                     << kMaxWindow;
  return Shape(v->begin(), v->end());
}

/// Checks the attributes dp's windows do not have: dilation, auto_pad other than NOTSET or
/// VALID, ceil_mode. `auto_pad` SAME_UPPER and SAME_LOWER are allowed where `sameAllowed`.
LogicalResult plainWindow(Importer &im, bool sameAllowed, bool dilationsAllowed = false) {
  FailureOr<Shape> dilations = pairAttr(im, "dilations", {1, 1});
  if (failed(dilations))
    return failure();
  if (!dilationsAllowed && ((*dilations)[0] != 1 || (*dilations)[1] != 1))
    return im.fail() << "dilations other than 1 are not supported yet";
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" &&
      !(sameAllowed && (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")))
    return im.fail() << "auto_pad " << autoPad << " is not supported";
  if (im.intAttr("ceil_mode", 0))
    return im.fail() << "ceil_mode = 1 is not supported";
  return success();
}

/// TensorFlow's "same" padding of a window over [H, W] (ONNX's SAME_UPPER): [top, left,
/// bottom, right], the odd row or column after (before, for SAME_LOWER: `lower`).
Shape samePads(int64_t h, int64_t w, llvm::ArrayRef<int64_t> window,
               llvm::ArrayRef<int64_t> strides, bool lower = false) {
  Shape pads(4, 0);
  const int64_t size[2] = {h, w};
  for (int a = 0; a < 2; ++a) {
    const int64_t out = (size[a] + strides[a] - 1) / strides[a];
    const int64_t total = std::max<int64_t>((out - 1) * strides[a] + window[a] - size[a], 0);
    const int64_t small = total / 2, large = total - total / 2;
    pads[a] = lower ? large : small, pads[a + 2] = lower ? small : large;
  }
  return pads;
}

/// The padding of a window over [H, W]: [top, left, bottom, right] from `pads` or auto_pad.
FailureOr<Shape> windowPads(Importer &im, int64_t h, int64_t w, Shape window, Shape strides) {
  std::string autoPad = im.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return samePads(h, w, window, strides, autoPad == "SAME_LOWER");
  if (autoPad == "VALID")
    return Shape(4, 0);
  auto pads = im.intsAttr("pads");
  if (!pads)
    return Shape(4, 0);
  if (pads->size() != 4 || llvm::any_of(*pads, [](int64_t p) { return p < 0 || p > kMaxWindow; }))
    return im.fail() << "its pads " << shapeText(*pads) << " are not 4 values from 0 to "
                     << kMaxWindow;
  return Shape(pads->begin(), pads->end());
}

/// `image` (ONNX shape `shape`, [N, C, H, W]) padded by ONNX's `pads` [top, left, bottom,
/// right]: with zeros, or with the lowest float (`lowest`: a max pool's padding).
Value zeroPad(Importer &im, Value image, const Shape &shape, const Shape &pads,
              bool lowest = false) {
  const Shape padded{shape[0], shape[1], shape[2] + pads[0] + pads[2],
                     shape[3] + pads[1] + pads[3]};
  auto op =
      im.b.create<graph::ZeroPad2DOp>(im.loc, imageType(&im.ctx, padded), image,
                                      im.b.getI64ArrayAttr({pads[0], pads[2], pads[1], pads[3]}));
  if (lowest)
    op.setLowest(true);
  return op;
}

LogicalResult convOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0), w = required(im, ins, 1);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<Value> v = imageInput(im, **x);
  if (failed(v) || failed(plainWindow(im, true, /*dilationsAllowed=*/true)))
    return failure();
  const int64_t n = (*x)->shape[0], c = (*x)->shape[1], h = (*x)->shape[2], wd = (*x)->shape[3];
  const int64_t groups = im.intAttr("group", 1);
  if (groups < 1 || c % groups != 0)
    return im.fail() << "its group = " << groups << " does not divide its input's " << c
                     << " channels";
  const Tensor &wt = **w;
  if (!wt.isConst() || wt.shape.size() != 4 || wt.shape[1] != c / groups ||
      wt.shape[0] % groups != 0)
    return im.fail() << "its weight " << shapeText(wt.shape) << " must be a constant [F, "
                     << c / groups
                     << ", KH, KW] (an initializer) with F a multiple of group = " << groups;
  const int64_t f = wt.shape[0], kh = wt.shape[2], kw = wt.shape[3];
  FailureOr<Shape> kernelShape = pairAttr(im, "kernel_shape", {kh, kw});
  FailureOr<Shape> strides = pairAttr(im, "strides", {1, 1});
  FailureOr<Shape> dilations = pairAttr(im, "dilations", {1, 1});
  if (failed(kernelShape) || failed(strides) || failed(dilations))
    return failure();
  if ((*kernelShape)[0] != kh || (*kernelShape)[1] != kw)
    return im.fail() << "its kernel_shape " << shapeText(*kernelShape) << " is not its weight's";
  // The window's extent: its taps `dilations` apart.
  for (int a = 0; a < 2; ++a)
    if ((*kernelShape)[a] > 1 && (*dilations)[a] > (a ? wd : h))
      return im.fail() << "its dilations " << shapeText(*dilations) << " spread its " << kh << "x"
                       << kw << " window beyond the " << h << "x" << wd << " image";
  const int64_t eh = (kh - 1) * (*dilations)[0] + 1, ew = (kw - 1) * (*dilations)[1] + 1;
  FailureOr<Shape> pads = windowPads(im, h, wd, {eh, ew}, *strides);
  if (failed(pads))
    return failure();
  // dp's padding: none, TensorFlow's "same" split, or explicit zeros around the image.
  const Shape tfSame = samePads(h, wd, {eh, ew}, *strides);
  std::string padding = "valid";
  Value image = *v;
  const int64_t ph = h + (*pads)[0] + (*pads)[2], pw = wd + (*pads)[1] + (*pads)[3];
  if (ph < eh || pw < ew)
    return im.fail() << "its " << kh << "x" << kw << " window (" << eh << "x" << ew
                     << " dilated) does not fit the padded " << ph << "x" << pw << " image";
  if (*pads == tfSame && llvm::any_of(*pads, [](int64_t p) { return p > 0; })) {
    padding = "same";
  } else if (llvm::any_of(*pads, [](int64_t p) { return p > 0; })) {
    image = zeroPad(im, image, {n, c, h, wd}, *pads);
  }
  // ONNX's [F, C, KH, KW] kernel is dp's [KH, KW, C, F].
  WeightLayout filter;
  filter.kind = WeightLayout::Kind::ConvFilter;
  FailureOr<Value> kernel = im.paramOf(wt, "weight", {kh, kw, c / groups, f}, 1, filter);
  if (failed(kernel))
    return failure();
  Value bias;
  if (Tensor *b = input(ins, 2); b && !isComputedZero(*b)) {
    FailureOr<Value> b0 = im.paramOf(*b, "bias", {f}, 2);
    if (failed(b0))
      return failure();
    bias = *b0;
  }
  const int64_t oh = (ph - eh) / (*strides)[0] + 1, ow = (pw - ew) / (*strides)[1] + 1;
  Shape shape{n, f, oh, ow};
  Value y = im.b.create<graph::Conv2DOp>(
      im.loc, imageType(&im.ctx, shape), image, *kernel, bias, im.b.getI64ArrayAttr(*strides),
      padding, graph::Activation::none, groups, im.b.getI64ArrayAttr(*dilations));
  outs.push_back(imageTensor(y, shape));
  return success();
}

/// Whether every element of `v` is known to be at least 0: the result of a ReLU (or ReLU6, or
/// a sigmoid), alone or as a layer's activation.
bool nonNegative(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<graph::ReluOp, graph::Relu6Op, graph::SigmoidOp, graph::HardSigmoidOp>(op))
    return true;
  auto act = [](graph::Activation a) {
    return a == graph::Activation::relu || a == graph::Activation::sigmoid;
  };
  if (auto conv = dyn_cast<graph::Conv2DOp>(op))
    return act(conv.getActivation());
  if (auto dense = dyn_cast<graph::DenseOp>(op))
    return act(dense.getActivation());
  return false;
}

LogicalResult poolOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                     llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> g = graphInput(im, ins, 0, Order::Image);
  if (failed(g) || failed(plainWindow(im, true)))
    return failure();
  Tensor *x = g->tensor;
  Value v = g->value;
  if (im.node->output_size() > 1 && !im.node->output(1).empty())
    return im.fail() << "its Indices output is not supported";
  if (im.intAttr("storage_order", 0))
    return im.fail() << "storage_order = 1 is not supported";
  auto window = im.intsAttr("kernel_shape");
  if (!window || window->size() != 2)
    return im.fail() << "its kernel_shape must have 2 values";
  FailureOr<Shape> strides = pairAttr(im, "strides", {1, 1});
  if (failed(strides))
    return failure();
  const Shape &in = x->shape;
  FailureOr<Shape> pads =
      windowPads(im, in[2], in[3], Shape(window->begin(), window->end()), *strides);
  if (failed(pads))
    return failure();
  const bool isMax = im.node->op_type() == "MaxPool";
  Shape padded = in;
  if (llvm::any_of(*pads, [](int64_t p) { return p > 0; })) {
    // dp's pooling windows stay inside the image: pads become explicit values around it. An
    // average counting the pads (count_include_pad = 1, PyTorch's default) sums them as
    // zeros. A maximum pads with -inf: zeros give the same where no value is negative (after
    // a ReLU) and every window holds one of the image's (each pad smaller than the window), and
    // at a tie with a pad the gradient a ReLU's zero misses is zero anyway; elsewhere the pads
    // are the lowest float, which no window that covers the image picks.
    for (int a = 0; a < 2; ++a)
      if ((*pads)[a] >= (*window)[a] || (*pads)[a + 2] >= (*window)[a])
        return im.fail() << "its pads " << shapeText(*pads) << " are not smaller than its window "
                         << shapeText(*window);
    v = zeroPad(im, v, in, *pads, /*lowest=*/isMax && !nonNegative(v));
    padded = {in[0], in[1], in[2] + (*pads)[0] + (*pads)[2], in[3] + (*pads)[1] + (*pads)[3]};
  }
  if ((*window)[0] > padded[2] || (*window)[1] > padded[3])
    return im.fail() << "its window " << shapeText(*window) << " is larger than the image";
  Shape shape{in[0], in[1], (padded[2] - (*window)[0]) / (*strides)[0] + 1,
              (padded[3] - (*window)[1]) / (*strides)[1] + 1};
  auto type = imageType(&im.ctx, shape);
  auto windowAttr = im.b.getI64ArrayAttr(*window), strideAttr = im.b.getI64ArrayAttr(*strides);
  Value y =
      isMax ? im.b.create<graph::MaxPool2DOp>(im.loc, type, v, windowAttr, strideAttr).getResult()
            : im.b.create<graph::AvgPool2DOp>(im.loc, type, v, windowAttr, strideAttr).getResult();
  // An average that does not count the pads (count_include_pad = 0, ONNX's default and
  // TensorFlow's "same" pooling): the whole window's average times window / the taps inside
  // the image, a fixed factor per output position (graph.mul by an untrained [1, OH, OW, 1]).
  if (!isMax && im.intAttr("count_include_pad", 0) == 0 &&
      llvm::any_of(*pads, [](int64_t p) { return p > 0; })) {
    std::vector<float> factor;
    auto inside = [](int64_t start, int64_t window, int64_t size) {
      return std::min(start + window, size) - std::max<int64_t>(start, 0);
    };
    for (int64_t oh = 0; oh < shape[2]; ++oh)
      for (int64_t ow = 0; ow < shape[3]; ++ow) {
        const int64_t taps = inside(oh * (*strides)[0] - (*pads)[0], (*window)[0], in[2]) *
                             inside(ow * (*strides)[1] - (*pads)[1], (*window)[1], in[3]);
        factor.push_back(float(double((*window)[0] * (*window)[1]) / double(taps)));
      }
    FailureOr<Value> scale = im.param(im.node->output(0) + ".pad_excluding_scale",
                                      {1, shape[2], shape[3], 1}, factor, /*trainable=*/false);
    if (failed(scale))
      return failure();
    y = im.b.create<graph::MulOp>(im.loc, type, y, *scale);
  }
  outs.push_back(imageTensor(y, shape));
  return success();
}

Tensor spatialMean(Importer &im, const GraphInput &x, bool keepDims);

LogicalResult globalAvgPoolOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                              llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<GraphInput> x = graphInput(im, ins, 0, Order::Image);
  if (failed(x))
    return failure();
  outs.push_back(spatialMean(im, *x, /*keepDims=*/true));
  return success();
}

/// The mean over an image's H and W: [N, C], or [N, C, 1, 1] (NHWC [N, 1, 1, C]) keeping them.
Tensor spatialMean(Importer &im, const GraphInput &x, bool keepDims) {
  const int64_t n = x.tensor->shape[0], c = x.tensor->shape[1];
  Value pooled = im.b.create<graph::GlobalAvgPool2DOp>(
      im.loc, RankedTensorType::get({n, c}, im.b.getF32Type()), x.value);
  if (!keepDims)
    return graphTensor(pooled, {n, c});
  Shape shape{n, c, 1, 1};
  return imageTensor(im.b.create<graph::ReshapeOp>(im.loc, imageType(&im.ctx, shape), pooled),
                     shape);
}

/// ReduceMean over an image's spatial axes (AdaptiveAvgPool2d(1) as the default exporter
/// writes it): axes an attribute before opset 18, an input from 18.
LogicalResult reduceMeanOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                           llvm::SmallVectorImpl<Tensor> &outs) {
  // A written-out layer norm (NormStep): the mean of x over its last axis, kept, and of its
  // squared deviations.
  if (Tensor *in = input(ins, 0); in && !in->isConst()) {
    const int64_t rank = int64_t(in->shape.size());
    FailureOr<std::vector<int64_t>> axes = axesOf(im, ins, false, 18);
    if (failed(axes))
      return failure();
    if (rank >= 2 && axes->size() == 1 && normalizeAxis(axes->front(), rank) == rank - 1 &&
        im.intAttr("keepdims", 1) != 0) {
      if (in->norm == NormStep::None && in->gelu == GeluStep::None && in->value &&
          in->onlyAsOutput.empty() && in->flattenedChw.empty()) {
        outs.push_back(normStep(NormStep::Mean, *in));
        return success();
      }
      if (in->norm == NormStep::Squared) {
        outs.push_back(normStep(NormStep::Variance, *in));
        return success();
      }
    }
  }
  FailureOr<GraphInput> x = graphInput(im, ins, 0, Order::AsHeld);
  FailureOr<std::vector<int64_t>> given = axesOf(im, ins, false, 18);
  if (failed(x) || failed(given))
    return failure();
  std::vector<int64_t> axes = *given;
  const int64_t rank = int64_t(x->tensor->shape.size());
  for (int64_t &a : axes)
    a = normalizeAxis(a, rank);
  llvm::sort(axes);
  const bool keep = im.intAttr("keepdims", 1) != 0;
  if (rank == 3 && axes == std::vector<int64_t>{1} && !im.intAttr("noop_with_empty_axes", 0)) {
    // The mean over the tokens of [N, T, D]: a global average pool of the NHWC image
    // [N, T, 1, D] (a free reshape).
    const Shape &in = x->tensor->shape;
    auto f32 = Float32Type::get(&im.ctx);
    Value image = im.b.create<graph::ReshapeOp>(
        im.loc, RankedTensorType::get({in[0], in[1], 1, in[2]}, f32), im.laidOut(*x->tensor, {}));
    Value mean = im.b.create<graph::GlobalAvgPool2DOp>(
        im.loc, RankedTensorType::get({in[0], in[2]}, f32), image);
    Shape shape = keep ? Shape{in[0], 1, in[2]} : Shape{in[0], in[2]};
    if (keep)
      mean = im.b.create<graph::ReshapeOp>(im.loc, RankedTensorType::get(shape, f32), mean);
    outs.push_back(graphTensor(mean, shape));
    return success();
  }
  if (rank != 4 || axes != std::vector<int64_t>{2, 3} || im.intAttr("noop_with_empty_axes", 0))
    return im.fail() << "it averages axes " << shapeText(axes) << " of "
                     << shapeText(x->tensor->shape)
                     << ": dp supports the mean over an image's H and W (axes [2,3]) and over "
                        "the tokens of [batch, tokens, features] (axis 1)";
  x->value = im.laidOut(*x->tensor, kNhwc);
  outs.push_back(spatialMean(im, *x, keep));
  return success();
}

/// Expand of a constant to a constant shape (numpy broadcast).
LogicalResult expandOp(Importer &im, llvm::ArrayRef<Tensor *> ins, llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<const Const *> data = constInput(im, ins, 0, "input");
  FailureOr<const Const *> shape = constInput(im, ins, 1, "shape");
  if (failed(data) || failed(shape))
    return failure();
  Shape target;
  for (int64_t k = 0; k < (*shape)->size(); ++k)
    target.push_back((*shape)->intAt(k));
  Const ones;
  ones.dims = target;
  if (llvm::any_of(target, [](int64_t d) { return d < 0; }) || elementCount(target) > kMaxConstElements)
    return im.fail() << "its shape " << shapeText(target) << " is not one dp expands to";
  ones.i.assign(elementCount(target), 1);
  Const out;
  if (failed(constBinary(im, **data, ones, mulFn, out)))
    return failure();
  if (!(*data)->isFloat) // 1 * x keeps integers integers
    out.isFloat = false;
  outs.push_back(constTensor(std::move(out)));
  return success();
}

/// CastLike of a constant: to the target's element type (a computed tensor's is float).
LogicalResult castLikeOp(Importer &im, llvm::ArrayRef<Tensor *> ins, llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0), like = required(im, ins, 1);
  if (failed(x) || failed(like))
    return failure();
  const bool toFloat = !(*like)->isConst() || (*like)->constant->isFloat;
  if (!(*x)->isConst()) {
    if (!toFloat)
      return im.fail() << "it casts a computed tensor to an integer type";
    outs.push_back(**x);
    return success();
  }
  Const c = *(*x)->constant;
  if (c.isFloat != toFloat) {
    if (toFloat)
      c.f.assign(c.i.begin(), c.i.end()), c.i.clear();
    else
      for (float v : c.f)
        c.i.push_back(int64_t(std::trunc(v)));
    if (!toFloat)
      c.f.clear();
    c.isFloat = toFloat;
  }
  outs.push_back(constTensor(std::move(c)));
  return success();
}

LogicalResult batchNormOp(Importer &im, llvm::ArrayRef<Tensor *> ins,
                          llvm::SmallVectorImpl<Tensor> &outs) {
  FailureOr<Tensor *> x = required(im, ins, 0);
  if (failed(x))
    return failure();
  for (int k = 1; k < im.node->output_size(); ++k)
    if (!im.node->output(k).empty())
      return im.fail() << "its output " << k
                       << " (a training-mode export's statistics) is not supported: export the "
                          "model in eval mode";
  if (im.intAttr("training_mode", 0))
    return im.fail() << "training_mode = 1 is not supported: export the model in eval mode";
  if (!im.intAttr("spatial", 1))
    return im.fail() << "spatial = 0 is not supported";
  const Shape &shape = (*x)->shape;
  if (shape.size() != 4 && shape.size() != 2)
    return im.fail() << "its input " << shapeText(shape)
                     << " is neither an image nor [batch, features]";
  FailureOr<Value> v = shape.size() == 4 ? imageInput(im, **x) : im.graphValue(**x, "its input");
  if (failed(v))
    return failure();
  const int64_t c = shape[1];
  const char *roles[4] = {"scale", "bias", "mean", "var"};
  Value operands[4];
  for (int k = 0; k < 4; ++k) {
    FailureOr<Tensor *> t = required(im, ins, k + 1);
    if (failed(t))
      return failure();
    // The running statistics are not trained: the train step moves them (momentum).
    FailureOr<Value> p = im.paramOf(**t, roles[k], {c}, k + 1, {},
                                    k >= 2 ? std::optional<bool>(false) : std::nullopt);
    if (failed(p))
      return failure();
    operands[k] = *p;
  }
  const float momentum = im.floatAttr("momentum", 0.9f);
  if (!(momentum >= 0 && momentum <= 1))
    return im.fail() << "its momentum " << num(momentum) << " is not in [0, 1]";
  Value y = im.b.create<graph::BatchNormOp>(
      im.loc, v->getType(), *v, operands[0], operands[1], operands[2], operands[3],
      im.b.getF64FloatAttr(im.floatAttr("epsilon", 1e-5f)), im.b.getF64FloatAttr(momentum));
  outs.push_back(graphTensor(y, shape, shape.size() == 4 ? kNhwc : Shape()));
  return success();
}

#define DP_SCALE(Fn)                                                                               \
  [](Importer &im, llvm::ArrayRef<Tensor *> ins, llvm::SmallVectorImpl<Tensor> &outs) {            \
    return scaleOp(im, ins, outs, Fn);                                                             \
  }

#define DP_BINARY(Fn)                                                                              \
  [](Importer &im, llvm::ArrayRef<Tensor *> ins, llvm::SmallVectorImpl<Tensor> &outs) {            \
    return binary(im, ins, outs, Fn);                                                              \
  }

const std::vector<OpEntry> &opTable() {
  static const std::vector<OpEntry> table = {
      {{"Add", 7, "",
        "graph.add of equal shapes; a constant [M] after a MatMul: its bias; a constant of "
        "the input's trailing axes (not an image's): graph.bias_add; 1 + erf(...) in GELU's erf "
        "form; in a layer norm written out (see ReduceMean); folded on constants"},
       {},
       addOp},
      {{"AveragePool", 7,
        "kernel_shape, strides, pads, count_include_pad, auto_pad NOTSET, VALID, SAME_UPPER or "
        "SAME_LOWER, ceil_mode = 0",
        "graph.avg_pool2d (pads: graph.zero_pad2d before it; count_include_pad = 0: a graph.mul "
        "by window / the taps inside the image, per output position)"},
       {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "count_include_pad"},
       poolOp},
      {{"BatchNormalization", 9, "epsilon, momentum, training_mode = 0",
        "graph.batch_norm (scale and B trained; the running mean and variance moved by the "
        "train step)"},
       {"epsilon", "momentum", "training_mode", "spatial"},
       batchNormOp},
      {{"Cast", 6, "to", "folded on constants; the identity on a float tensor cast to float"},
       {"to"},
       castOp},
      {{"CastLike", 15, "", "folded on constants; the identity on a float tensor"}, {}, castLikeOp},
      {{"Clip", 6, "min = 0, max = 6 or none (attributes before opset 11, inputs from)",
        "graph.relu6 (ReLU6), graph.relu"},
       {"min", "max"},
       clipOp},
      {{"Concat", 4, "axis",
        "folded on constants (shape arithmetic); of computed tensors along an axis after the "
        "batch: graph.concat"},
       {"axis"},
       concatOp},
      {{"Conv", 1,
        "kernel_shape, strides, pads, auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER, group, "
        "dilations",
        "graph.conv2d (W an initializer: [F, C / group, KH, KW] as [KH, KW, C / group, F]; B: "
        "the bias; group = C: depthwise); pads that are not TensorFlow's \"same\" split: "
        "graph.zero_pad2d before it"},
       {"kernel_shape", "strides", "pads", "auto_pad", "group", "dilations"},
       convOp},
      {{"Constant", 9, "value, value_float(s), value_int(s)", "a constant (folded)"},
       {"value", "value_float", "value_floats", "value_int", "value_ints"},
       constantOp},
      {{"Div", 7, "",
        "folded on constants; by a scalar constant after a product of computed tensors: its "
        "scale (graph.batch_matmul's alpha); x / sqrt(2) in GELU's erf form; in a layer norm "
        "written out (see ReduceMean)"},
       {},
       DP_SCALE(divFn)},
      {{"Dropout", 7,
        "ratio (before 12; from 12 an input), training_mode = 0 (an input; 1 only with ratio 0), "
        "seed (not used: dp draws masks from `dprun --seed`)",
        "graph.dropout: active in the train step, the identity in the eval step (training_mode is "
        "the step's)"},
       {"ratio", "seed"},
       dropoutOp},
      {{"Erf", 9, "", "in GELU's erf form (see Mul); folded on constants"}, {}, erfOp},
      {{"Expand", 8, "", "folded on constants (the default exporter's zero biases)"}, {}, expandOp},
      {{"Flatten", 1, "axis", "graph.reshape to [batch, features] (axis 1)"}, {"axis"}, flattenOp},
      {{"Gather", 1, "axis",
        "folded on constants (shape arithmetic); an initializer [V, D] by the model's integer "
        "input on axis 0: an embedding (graph.gather, the table trained)"},
       {"axis"},
       gatherOp},
      {{"GlobalAveragePool", 1, "", "graph.global_avg_pool2d (and a free reshape to [N, C, 1, 1])"},
       {},
       globalAvgPoolOp},
      {{"Gelu", 20, "approximate = none", "graph.gelu"}, {"approximate"}, geluOp},
      {{"Gemm", 7, "alpha = 1, beta = 1, transA = 0, transB",
        "graph.dense (B an initializer: the kernel, transposed if transB; C: the bias)"},
       {"alpha", "beta", "transA", "transB"},
       gemmOp},
      {{"HardSigmoid", 6, "alpha = 1/6, beta = 1/2 (PyTorch's)", "graph.hard_sigmoid"},
       {"alpha", "beta"},
       hardSigmoidOp},
      {{"HardSwish", 14, "", "graph.hard_swish"}, {}, activationOp<graph::HardSwishOp>},
      {{"Identity", 1, "", "nothing (the same value)"}, {}, identityOp},
      {{"LayerNormalization", 17, "axis (the last), epsilon; B required",
        "graph.layer_norm of [batch, features] or [batch, tokens, features]"},
       {"axis", "epsilon", "stash_type"},
       layerNormOp},
      {{"LogSoftmax", 1, "axis (the last)",
        "as the model's output only: folded into softmax-cross-entropy"},
       {"axis"},
       softmaxOp},
      {{"MatMul", 1, "",
        "graph.dense without bias (B a 2-D initializer, or a Transpose of one; A [batch, tokens, "
        "K] as batch * tokens rows); of computed [batch, ..., M, K] and [batch, ..., K, N] "
        "(attention's heads): graph.batch_matmul (an operand held with its last two axes "
        "exchanged: its transpose flag)"},
       {},
       matMulOp},
      {{"MaxPool", 8,
        "kernel_shape, strides, pads, auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER, "
        "ceil_mode = 0, dilations = 1, storage_order = 0",
        "graph.max_pool2d (pads: graph.zero_pad2d before it: zeros on values of at least 0, "
        "such as a ReLU's, else the lowest float)"},
       {"kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations", "storage_order"},
       poolOp},
      {{"Mod", 10, "fmod", "folded on constants"},
       {"fmod"},
       [](Importer &im, llvm::ArrayRef<Tensor *> ins, llvm::SmallVectorImpl<Tensor> &outs) {
         return binary(im, ins, outs, im.intAttr("fmod", 0) ? fmodFn : modFn);
       }},
      {{"Mul", 7, "",
        "folded on constants; by a scalar constant after a product of computed tensors: its "
        "scale (graph.batch_matmul's alpha); the products of GELU's erf form, x * 0.5 * (1 + "
        "erf(x / sqrt(2))): with its Div, Erf and Add, graph.gelu; of two computed tensors of "
        "one rank, one broadcast to the other's shape (squeeze-and-excitation's [N, C, 1, 1] "
        "weights times its image): graph.mul; of a computed tensor by a constant tensor that "
        "broadcasts to it without the batch axis (a learned per-channel scale): graph.mul by a "
        "parameter, trained where an initializer; in a layer norm written out (see "
        "ReduceMean)"},
       {},
       DP_SCALE(mulFn)},
      {{"ReduceMean", 1,
        "axes [2, 3] or, of [batch, tokens, features], [1]; the last axis, kept, in a layer norm "
        "(an input from opset 18), keepdims",
        "graph.global_avg_pool2d (the mean over an image's H and W, or over the tokens); a "
        "layer norm written out as exporters write it before opset 17 (ReduceMean, Sub, Pow, "
        "ReduceMean, Add of epsilon, Sqrt, Div, Mul by a weight, Add of a bias): "
        "graph.layer_norm"},
       {"axes", "keepdims", "noop_with_empty_axes"},
       reduceMeanOp},
      {{"Pow", 7, "",
        "in a layer norm written out: the square of the deviations (see ReduceMean); folded on "
        "constants"},
       {},
       powOp},
      {{"Relu", 6, "", "graph.relu"}, {}, activationOp<graph::ReluOp>},
      {{"Reshape", 5, "allowzero = 0",
        "graph.reshape (batch axis kept; a graph.transpose first where the value is held in "
        "another order and the reshape cannot keep it); folded on constants"},
       {"allowzero"},
       reshapeOp},
      {{"Shape", 1, "start, end", "the input's shape as a constant (folded)"},
       {"start", "end"},
       shapeOp},
      {{"Sigmoid", 6, "", "graph.sigmoid"}, {}, activationOp<graph::SigmoidOp>},
      {{"Slice", 10, "", "folded on constants (shape arithmetic)"}, {}, sliceOp},
      {{"Softmax", 1, "axis (any after the batch; before opset 13 the axes from it on as one)",
        "graph.softmax (of the value held with the axis last); as the model's output, folded "
        "into softmax-cross-entropy"},
       {"axis"},
       softmaxOp},
      {{"Squeeze", 1, "axes (before 13; from 13 an input)", "graph.reshape; folded on constants"},
       {"axes"},
       squeezeOp},
      {{"Sqrt", 6, "", "in a layer norm written out (see ReduceMean); folded on constants"},
       {},
       sqrtOp},
      {{"Sub", 7, "",
        "in a layer norm written out: x minus its mean (see ReduceMean); folded on constants"},
       {},
       subOp},
      {{"Tanh", 6, "", "graph.tanh"}, {}, activationOp<graph::TanhOp>},
      {{"Transpose", 1, "perm",
        "folded on constants; of a computed tensor keeping the batch axis first: the order it is "
        "held in (a graph.transpose where a reader needs another)"},
       {"perm"},
       transposeOp},
      {{"Unsqueeze", 1, "axes (before 13; from 13 an input)", "graph.reshape; folded on constants"},
       {"axes"},
       unsqueezeOp},
  };
  return table;
}

} // namespace

std::string optimizerAttributeText(const std::string &spec, std::string &error) {
  llvm::StringRef name, rest;
  std::tie(name, rest) = llvm::StringRef(spec).split(':');
  name = name.trim();
  if (name != "sgd" && name != "momentum" && name != "adam" && name != "adamw") {
    error = "unknown optimizer '" + name.str() + "' (dp knows sgd, momentum, adam, adamw)";
    return "";
  }
  // adamw is adam with a decoupled weight decay, Keras's AdamW default (0.004) unless given.
  const bool adamw = name == "adamw";
  std::string text = adamw ? "#graph.adam" : "#graph." + name.str();
  llvm::SmallVector<llvm::StringRef> params;
  rest.split(params, ',', -1, false);
  if (adamw && llvm::none_of(params, [](llvm::StringRef p) {
        return p.split('=').first.trim() == "weight_decay";
      }))
    params.push_back("weight_decay=0.004");
  if (!params.empty()) {
    text += "<";
    for (size_t k = 0; k < params.size(); ++k) {
      llvm::StringRef key, value;
      std::tie(key, value) = params[k].split('=');
      key = key.trim(), value = value.trim();
      double number;
      if (key.empty() || !llvm::all_of(key, [](char c) { return std::isalnum(c) || c == '_'; })) {
        error = "expected NAME[:key=value,...] with numbers as values, not '" + spec + "'";
        return "";
      }
      // A flag (momentum's nesterov, adam's torch_epsilon): true or false, or 1 or 0.
      if (key == "nesterov" || key == "torch_epsilon") {
        const bool on = value == "true" || value == "1", off = value == "false" || value == "0";
        if (!on && !off) {
          error = key.str() + " takes true or false (1 or 0), not '" + value.str() + "'";
          return "";
        }
        text += (k ? ", " : "") + key.str() + " = " + (on ? "true" : "false");
        continue;
      }
      if (value.getAsDouble(number)) {
        error = "expected NAME[:key=value,...] with numbers as values, not '" + spec + "'";
        return "";
      }
      // An MLIR float literal has a point: 1e-3 is written 1.0e-03.
      char literal[64];
      std::snprintf(literal, sizeof literal, "%.17g", number);
      std::string v = literal;
      if (v.find_first_of(".ein") == std::string::npos)
        v += ".0";
      else if (v.find('.') == std::string::npos && v.find('e') != std::string::npos)
        v.insert(v.find('e'), ".0");
      text += (k ? ", " : "") + key.str() + " = " + v;
    }
    text += ">";
  } else {
    // Every parameter at its default: the attribute still has its brackets.
    text += "<>";
  }
  return text;
}

OwningOpRef<ModuleOp> importModel(MLIRContext &context, const OnnxFile &file,
                                  const ImportOptions &options, std::vector<ParamOrigin> *origins,
                                  std::vector<std::vector<int64_t>> *inputLayouts) {
  Importer importer(context, file, options);
  importer.originsOut = origins;
  importer.inputLayoutsOut = inputLayouts;
  return importer.run();
}

std::string foldedOutput(MLIRContext &context, const OnnxFile &file, std::vector<double> &values,
                         std::vector<int64_t> &dims, bool &isFloat) {
  std::string error;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return success();
  });
  Importer importer(context, file, {});
  FailureOr<Tensor> out = importer.foldedOutput();
  if (failed(out))
    return error.empty() ? "the model does not fold" : error;
  values.clear();
  for (int64_t k = 0; k < out->constant->size(); ++k)
    values.push_back(out->constant->at(k));
  dims.assign(out->constant->dims.begin(), out->constant->dims.end());
  isFloat = out->constant->isFloat;
  return "";
}

llvm::ArrayRef<OpSupport> supportedOps() {
  static const std::vector<OpSupport> rows = [] {
    std::vector<OpSupport> r;
    for (const OpEntry &e : opTable())
      r.push_back(e.support);
    return r;
  }();
  return rows;
}

std::string supportedOpsTable() {
  std::string table = "| ONNX op | from opset | attributes | in dp |\n| --- | --- | --- | --- |\n";
  for (const OpSupport &op : supportedOps())
    table += std::string("| ") + op.opType + " | " + std::to_string(op.sinceOpset) + " | " +
             (*op.attributes ? op.attributes : "-") + " | " + op.becomes + " |\n";
  return table;
}

} // namespace dp::onnx_import
