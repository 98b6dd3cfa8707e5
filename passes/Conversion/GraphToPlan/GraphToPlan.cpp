// convert-graph-to-plan: graph step functions become one plan.program (see Passes.td).
#include "passes/Conversion/Passes.h"
#include "dialect/Dist/IR/DistDialect.h"
#include "dialect/Graph/IR/Model.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "convert-graph-to-plan"

namespace dp {
#define GEN_PASS_DEF_CONVERTGRAPHTOPLANPASS
#include "passes/Conversion/Passes.h.inc"
} // namespace dp

using namespace mlir;
using namespace dp;
namespace g = dp::graph;

namespace {

MemRefType bufferType(Type tensor) {
  auto t = cast<RankedTensorType>(tensor);
  return MemRefType::get(t.getShape(), t.getElementType());
}

/// Keras's fans: (in, out) for a matrix, times the receptive field for convolution kernels.
std::pair<int64_t, int64_t> fans(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return {1, 1};
  if (shape.size() == 1)
    return {shape[0], shape[0]};
  int64_t receptive = 1;
  for (int64_t d : shape.drop_back(2))
    receptive *= d;
  return {shape[shape.size() - 2] * receptive, shape.back() * receptive};
}

plan::InitAttr initFor(g::ParamOp param) {
  MLIRContext *ctx = param.getContext();
  auto [fanIn, fanOut] = fans(param.getType().getShape());
  auto make = [&](StringRef kind, double a = 0, double b = 0) {
    return plan::InitAttr::get(ctx, kind, APFloat(a), APFloat(b), fanIn, fanOut);
  };
  return llvm::TypeSwitch<Attribute, plan::InitAttr>(param.getInit())
      .Case([&](g::ZerosAttr) { return make("zeros"); })
      .Case([&](g::OnesAttr) { return make("ones"); })
      .Case([&](g::ConstantAttr c) { return make("constant", c.getValue().convertToDouble()); })
      .Case([&](g::UniformAttr u) {
        return make("uniform", u.getLow().convertToDouble(), u.getHigh().convertToDouble());
      })
      .Case([&](g::NormalAttr n) {
        return make("normal", n.getMean().convertToDouble(), n.getStddev().convertToDouble());
      })
      .Case([&](g::GlorotUniformAttr) { return make("glorot_uniform"); })
      .Case([&](g::GlorotNormalAttr) { return make("glorot_normal"); })
      .Case([&](g::HeNormalAttr) { return make("he_normal"); })
      .Case([&](g::HeUniformAttr) { return make("he_uniform"); })
      .Case([&](g::OrthogonalAttr o) {
        // Keras's view: [all axes but the last, the last axis].
        auto shape = param.getType().getShape();
        int64_t cols = shape.empty() ? 1 : shape.back();
        return plan::InitAttr::get(ctx, "orthogonal", APFloat(o.getGain().convertToDouble()),
                                   APFloat(0.0), param.getType().getNumElements() / cols, cols);
      })
      .Case([&](g::UnitForgetBiasAttr) { return make("unit_forget_bias"); });
}

/// Lowers the functions of one module into a plan.program.
class Lowering {
public:
  explicit Lowering(plan::ProgramOp program) : program_(program), b_(program.getContext()) {}

  void declarePersistent(func::FuncOp func) {
    b_.setInsertionPointToEnd(&program_.getBody().front());
    auto inputName = [&](Value arg) {
      return func.getArgAttrOfType<StringAttr>(cast<BlockArgument>(arg).getArgNumber(),
                                               g::kInputAttr)
          .getValue();
    };
    // Each replica's shard of an input is that device's input buffer; an input read whole
    // (a single replica) is device 0's.
    auto declareInput = [&](Value v, StringRef name, int64_t device) {
      Value &buffer = inputs_[{name, device}];
      if (!buffer)
        buffer = b_.create<plan::InputOp>(v.getLoc(), bufferType(v.getType()), name,
                                          IntegerAttr(), device);
    };
    for (BlockArgument arg : func.getArguments())
      if (llvm::any_of(arg.getUsers(), [](Operation *u) { return !isa<dist::ShardOp>(u); }))
        declareInput(arg, inputName(arg), 0);
    for (auto shard : func.getOps<dist::ShardOp>())
      declareInput(shard, inputName(shard.getInput()), dist::getReplica(shard));
    for (g::ParamOp param : func.getOps<g::ParamOp>()) {
      Value &buffer = params_[{param.getName(), dist::getReplica(param)}];
      if (!buffer)
        buffer = b_.create<plan::ParamOp>(param.getLoc(), bufferType(param.getType()),
                                          param.getName(), initFor(param),
                                          param.getOptimizerState(), IntegerAttr(),
                                          dist::getReplica(param));
    }
  }

  /// Every allreduced gradient gets its slot in its device's bucket, where the kernel that
  /// computes it writes. Each allreduce needs a bucket index of its own: the collective
  /// kernels name their buffers by it.
  LogicalResult declareBuckets(func::FuncOp func) {
    int64_t replicas = program_.getDevicesPerProcess();
    auto declare = [&](Operation *op, ValueRange grads, int64_t bucket) {
      unsigned n = grads.size() / replicas;
      // Each gradient starts on an arena alignment boundary; the padding between them stays
      // zero and averages to zero.
      const int64_t align = plan::kAlignment / 4;
      auto slot = [&](Value g) {
        return llvm::alignTo(cast<RankedTensorType>(g.getType()).getNumElements(), align);
      };
      int64_t elements = 0;
      for (Value g : grads.take_front(n))
        elements += slot(g);
      SmallVector<Value> perDevice;
      for (int64_t r = 0; r < replicas; ++r) {
        b_.setInsertionPoint(*program_.getBody().front().getOps<plan::StepOp>().begin());
        Value buffer = b_.create<plan::BucketOp>(
            op->getLoc(), MemRefType::get({elements}, b_.getF32Type()),
            b_.getI64IntegerAttr(bucket), IntegerAttr(), deviceAttr(r));
        perDevice.push_back(buffer);
        int64_t offset = 0;
        for (Value g : grads.slice(r * n, n)) {
          auto [name, device] = gradOf_.lookup(g);
          Value grad = b_.create<plan::GradOp>(g.getLoc(), bufferType(g.getType()), name,
                                               buffer, b_.getI64IntegerAttr(offset),
                                               IntegerAttr(), r);
          grads_[{name, r}] = grad;
          offset += slot(g);
        }
      }
      buckets_[bucket] = perDevice;
    };
    WalkResult walk = func.walk([&](Operation *op) {
      int64_t bucket;
      ValueRange grads;
      if (auto a = dyn_cast<dist::AllReduceOp>(op)) {
        if (!a.getBucket()) {
          a.emitOpError("has no bucket (run dist-fuse-allreduce first)");
          return WalkResult::interrupt();
        }
        bucket = a.getBucketAttr().getInt(), grads = a.getGradients();
      } else if (auto a = dyn_cast<dist::AllReduceStartOp>(op)) {
        bucket = a.getBucketAttr().getInt(), grads = a.getGradients();
      } else {
        return WalkResult::advance();
      }
      if (buckets_.count(bucket)) {
        op->emitOpError() << "reuses bucket " << bucket << " of another allreduce";
        return WalkResult::interrupt();
      }
      declare(op, grads, bucket);
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  LogicalResult lowerStep(func::FuncOp func, StringRef name) {
    b_.setInsertionPointToEnd(&program_.getBody().front());
    auto step = b_.create<plan::StepOp>(func.getLoc(), name);
    Block *block = b_.createBlock(&step.getBody());
    b_.setInsertionPointToEnd(block);
    values_.clear();
    masks_.clear();
    dropouts_.clear();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      values_[func.getArgument(i)] =
          inputs_.lookup({func.getArgAttrOfType<StringAttr>(i, g::kInputAttr).getValue(), 0});
    collectGradients(func);
    if (failed(declareBuckets(func)))
      return failure();
    b_.setInsertionPointToEnd(block);
    for (Operation &op : func.getBody().front())
      if (failed(lower(&op)))
        return failure();
    return success();
  }

private:
  /// Gradients consumed by updates get persistent buffers: they outlive the step, to be
  /// inspected, checkpointed or averaged across replicas.
  void collectGradients(func::FuncOp func) {
    gradOf_.clear();
    func.walk([&](Operation *op) {
      Value param, grad;
      if (auto u = dyn_cast<g::SgdUpdateOp>(op))
        param = u.getParam(), grad = u.getGradient();
      else if (auto u = dyn_cast<g::MomentumUpdateOp>(op))
        param = u.getParam(), grad = u.getGradient();
      else if (auto u = dyn_cast<g::AdamUpdateOp>(op))
        param = u.getParam(), grad = u.getGradient();
      else
        return;
      // An averaged gradient's buffer is the one its replica computed (reduced in place).
      if (auto result = dyn_cast<OpResult>(grad)) {
        if (auto a = dyn_cast<dist::AllReduceOp>(result.getOwner()))
          grad = a.getGradients()[result.getResultNumber()];
        else if (auto w = dyn_cast<dist::AllReduceWaitOp>(result.getOwner()))
          grad = w.getStart().getGradients()[result.getResultNumber()];
      }
      gradOf_[grad] = {param.getDefiningOp<g::ParamOp>().getName(), dist::getReplica(op)};
    });
    // Other averaged tensors (batch statistics) live in their bucket like gradients, under
    // the allreduce's names.
    auto nameOthers = [&](ValueRange tensors, std::optional<ArrayAttr> names) {
      if (!names || names->empty() || tensors.size() % names->size() != 0)
        return;
      unsigned n = names->size();
      for (auto [i, v] : llvm::enumerate(tensors))
        if (!gradOf_.count(v))
          gradOf_[v] = {cast<StringAttr>((*names)[i % n]).getValue(),
                        dist::getReplica(v.getDefiningOp())};
    };
    func.walk([&](Operation *op) {
      if (auto a = dyn_cast<dist::AllReduceOp>(op))
        nameOthers(a.getGradients(), a.getTensors());
      else if (auto a = dyn_cast<dist::AllReduceStartOp>(op))
        nameOthers(a.getGradients(), a.getTensors());
    });
  }

  Value gradBuffer(Value result) {
    auto key = gradOf_.lookup(result);
    auto it = grads_.find(key);
    if (it != grads_.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b_);
    // Persistent buffers come before the steps.
    b_.setInsertionPoint(*program_.getBody().front().getOps<plan::StepOp>().begin());
    Value buffer = b_.create<plan::GradOp>(result.getLoc(), bufferType(result.getType()),
                                           key.first, Value(), IntegerAttr(), IntegerAttr(),
                                           key.second);
    grads_[key] = buffer;
    return buffer;
  }

  Value newBuffer(Value result) {
    if (gradOf_.count(result))
      return gradBuffer(result);
    int64_t device = result.getDefiningOp() ? dist::getReplica(result.getDefiningOp()) : 0;
    return b_.create<plan::AllocOp>(result.getLoc(), bufferType(result.getType()), IntegerAttr(),
                                    deviceAttr(device));
  }

  /// The `device` attribute of a buffer op: absent for device 0, as in a single-device plan.
  IntegerAttr deviceAttr(int64_t device) {
    return device ? b_.getI64IntegerAttr(device) : IntegerAttr();
  }

  /// The collective kernels of bucket `index`, on every device's copy.
  void collective(Location loc, StringRef kind, int64_t index) {
    auto k = b_.create<plan::KernelOp>(loc, kind, buckets_.lookup(index), ValueRange());
    k->setAttr("bucket", b_.getI64IntegerAttr(index));
  }

  /// Means are left in place: results take the buffers of the gradients they average.
  void bindMeans(ValueRange results, ValueRange grads) {
    for (auto [result, grad] : llvm::zip(results, grads))
      values_[result] = values_.lookup(grad);
  }

  /// Emits one kernel call on the buffers of `ins` and `outs` (an update kernel's outputs are
  /// the persistent buffers it changes in place).
  void emit(Location loc, StringRef kind, ValueRange ins, ValueRange outs,
            ArrayRef<NamedAttribute> attrs) {
    SmallVector<Value> inBufs, outBufs;
    for (Value v : ins)
      inBufs.push_back(values_.lookup(v));
    for (Value v : outs)
      outBufs.push_back(values_.lookup(v));
    auto k = b_.create<plan::KernelOp>(loc, kind, inBufs, outBufs);
    for (NamedAttribute a : attrs)
      k->setAttr(a.getName(), a.getValue());
  }

  /// Emits `kind` writing a new buffer for each result of `op`.
  void kernel(Operation *op, StringRef kind, ValueRange ins, ArrayRef<NamedAttribute> attrs = {}) {
    for (Value r : op->getResults())
      values_[r] = newBuffer(r);
    emit(op->getLoc(), kind, ins, op->getResults(), attrs);
  }

  NamedAttribute named(StringRef name, Attribute value) {
    return b_.getNamedAttr(name, value);
  }
  NamedAttribute act(g::Activation a) {
    return named("activation", b_.getStringAttr(g::stringifyActivation(a)));
  }
  NamedAttribute flag(StringRef name, bool value) {
    return named(name, b_.getI64IntegerAttr(value ? 1 : 0));
  }

  /// The geometry attributes of a convolution of `input` (NHWC) by `kernel` (HWIO).
  SmallVector<NamedAttribute> convAttrs(Type input, Type kernel, ArrayAttr strides,
                                        StringRef padding) {
    auto in = cast<RankedTensorType>(input).getShape();
    auto k = cast<RankedTensorType>(kernel).getShape();
    int64_t sh = cast<IntegerAttr>(strides[0]).getInt(), sw = cast<IntegerAttr>(strides[1]).getInt();
    g::WindowAxis h = g::windowAxis(in[1], k[0], sh, padding == "same");
    g::WindowAxis w = g::windowAxis(in[2], k[1], sw, padding == "same");
    auto i64 = [&](StringRef name, int64_t v) { return named(name, b_.getI64IntegerAttr(v)); };
    return {i64("stride_h", sh),          i64("stride_w", sw),
            i64("pad_top", h.padBefore),  i64("pad_left", w.padBefore),
            i64("pad_bottom", h.padAfter), i64("pad_right", w.padAfter)};
  }

  SmallVector<NamedAttribute> poolAttrs(ArrayAttr window, ArrayAttr strides) {
    auto i64 = [&](StringRef name, Attribute v) {
      return named(name, b_.getI64IntegerAttr(cast<IntegerAttr>(v).getInt()));
    };
    return {i64("window_h", window[0]), i64("window_w", window[1]), i64("stride_h", strides[0]),
            i64("stride_w", strides[1])};
  }

  /// The attributes of a zero padding of [top, bottom, left, right].
  SmallVector<NamedAttribute> padAttrs(ArrayAttr padding) {
    SmallVector<NamedAttribute> attrs;
    StringRef names[] = {"pad_top", "pad_bottom", "pad_left", "pad_right"};
    for (auto [name, v] : llvm::zip(names, padding))
      attrs.push_back(named(name, b_.getI64IntegerAttr(cast<IntegerAttr>(v).getInt())));
    return attrs;
  }

  LogicalResult lower(Operation *op) {
    using namespace g;
    bool ok = true;
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](ParamOp p) {
          values_[p.getResult()] = params_.lookup({p.getName(), dist::getReplica(p)});
        })
        .Case([&](dist::ShardOp s) {
          StringRef name = cast<func::FuncOp>(s->getParentOp())
                               .getArgAttrOfType<StringAttr>(
                                   cast<BlockArgument>(s.getInput()).getArgNumber(), kInputAttr)
                               .getValue();
          values_[s.getResult()] = inputs_.lookup({name, dist::getReplica(s)});
        })
        .Case([&](dist::AllReduceOp a) {
          int64_t bucket = a.getBucketAttr().getInt();
          collective(a.getLoc(), "allreduce_start", bucket);
          collective(a.getLoc(), "allreduce_wait", bucket);
          bindMeans(a.getResults(), a.getGradients());
        })
        .Case([&](dist::AllReduceStartOp a) {
          collective(a.getLoc(), "allreduce_start", a.getBucket());
        })
        .Case([&](dist::AllReduceWaitOp w) {
          collective(w.getLoc(), "allreduce_wait", w.getStart().getBucket());
          bindMeans(w.getResults(), w.getStart().getGradients());
        })
        .Case<ReshapeOp, FlattenOp>([&](Operation *r) {
          values_[r->getResult(0)] = b_.create<plan::ViewOp>(
              r->getLoc(), bufferType(r->getResult(0).getType()), values_.lookup(r->getOperand(0)));
          if (gradOf_.count(r->getResult(0)))
            copyInto(r->getResult(0));
        })
        .Case([&](DenseOp d) { kernel(d, "dense", d.getOperands(), {act(d.getActivation())}); })
        .Case<ReluOp, SigmoidOp, TanhOp, SoftmaxOp>([&](Operation *a) {
          auto kind = llvm::TypeSwitch<Operation *, Activation>(a)
                          .Case([](ReluOp) { return Activation::relu; })
                          .Case([](SigmoidOp) { return Activation::sigmoid; })
                          .Case([](TanhOp) { return Activation::tanh; })
                          .Default([](Operation *) { return Activation::softmax; });
          kernel(a, "activation", a->getOperands(), {act(kind)});
        })
        .Case([&](ActivationGradOp a) {
          kernel(a, "activation_grad", a.getOperands(), {act(a.getActivation())});
        })
        .Case([&](MatMulOp m) {
          kernel(m, "matmul", m.getOperands(),
                 {flag("transpose_a", m.getTransposeLhs()), flag("transpose_b", m.getTransposeRhs())});
        })
        .Case([&](Conv2DOp c) {
          auto attrs = convAttrs(c.getInput().getType(), c.getKernel().getType(), c.getStrides(),
                                 c.getPadding());
          attrs.push_back(act(c.getActivation()));
          kernel(c, "conv2d", c.getOperands(), attrs);
        })
        .Case([&](Conv2DGradInputOp c) {
          kernel(c, "conv2d_grad_input", c.getOperands(),
                 convAttrs(c.getType(), c.getKernel().getType(), c.getStrides(), c.getPadding()));
        })
        .Case([&](Conv2DGradFilterOp c) {
          kernel(c, "conv2d_grad_filter", c.getOperands(),
                 convAttrs(c.getInput().getType(), c.getType(), c.getStrides(), c.getPadding()));
        })
        .Case([&](MaxPool2DOp p) {
          kernel(p, "max_pool2d", p->getOperands(), poolAttrs(p.getWindow(), p.getStrides()));
        })
        .Case([&](MaxPool2DGradOp p) {
          kernel(p, "max_pool2d_grad", p->getOperands(), poolAttrs(p.getWindow(), p.getStrides()));
        })
        .Case([&](ZeroPad2DOp p) {
          kernel(p, "zero_pad2d", p->getOperands(), padAttrs(p.getPadding()));
        })
        .Case([&](ZeroPad2DGradOp p) {
          kernel(p, "zero_pad2d_grad", p->getOperands(), padAttrs(p.getPadding()));
        })
        .Case([&](AvgPool2DOp p) {
          kernel(p, "avg_pool2d", p->getOperands(), poolAttrs(p.getWindow(), p.getStrides()));
        })
        .Case([&](AvgPool2DGradOp p) {
          kernel(p, "avg_pool2d_grad", p->getOperands(), poolAttrs(p.getWindow(), p.getStrides()));
        })
        .Case([&](GlobalAvgPool2DOp p) {
          // An average pool whose window is the whole image, writing [N, C].
          auto in = cast<RankedTensorType>(p.getInput().getType()).getShape();
          ArrayAttr window = b_.getI64ArrayAttr({in[1], in[2]});
          kernel(p, "avg_pool2d", p->getOperands(), poolAttrs(window, window));
        })
        .Case([&](BatchNormOp n) {
          kernel(n, "batch_norm_infer", n->getOperands(), {named("epsilon", n.getEpsilonAttr())});
        })
        .Case([&](BatchMomentsOp m) { kernel(m, "batch_moments", m->getOperands()); })
        .Case([&](BatchNormTrainOp n) {
          kernel(n, "batch_norm_train", n->getOperands(), {named("epsilon", n.getEpsilonAttr())});
        })
        .Case([&](BatchNormGradParamsOp n) {
          kernel(n, "batch_norm_grad_params", n->getOperands(),
                 {named("epsilon", n.getEpsilonAttr())});
        })
        .Case([&](BatchNormGradInputOp n) {
          kernel(n, "batch_norm_grad_input", n->getOperands(),
                 {named("epsilon", n.getEpsilonAttr())});
        })
        .Case([&](MovingStatsUpdateOp u) {
          emit(u.getLoc(), "moving_stats_update", u.getStats(),
               {u.getMovingMean(), u.getMovingVar()}, {named("momentum", u.getMomentumAttr())});
        })
        .Case([&](LstmOp l) {
          // A training LSTM keeps what its gradient kernel needs, found through its output.
          bool training =
              llvm::any_of(l->getUsers(), [&](Operation *u) {
                auto grad = dyn_cast<LstmGradOp>(u);
                return grad && grad.getOutput() == l.getResult();
              });
          kernel(l, "lstm", l->getOperands(),
                 {flag("return_sequences", l.getReturnSequences()), flag("training", training)});
        })
        .Case([&](LstmGradOp l) { kernel(l, "lstm_grad", l->getOperands()); })
        .Case([&](DropoutOp d) {
          // The mask is a buffer of the step, read again by the gradient. Each device numbers
          // its dropouts in order, so that replicas of one dropout share a stream.
          int64_t device = dist::getReplica(d);
          values_[d.getResult()] = newBuffer(d.getResult());
          Value mask = b_.create<plan::AllocOp>(d.getLoc(), bufferType(d.getType()),
                                                IntegerAttr(), deviceAttr(device));
          masks_[d.getResult()] = mask;
          auto k = b_.create<plan::KernelOp>(d.getLoc(), "dropout",
                                             ValueRange{values_.lookup(d.getInput())},
                                             ValueRange{values_.lookup(d.getResult()), mask});
          k->setAttr("rate", d.getRateAttr());
          k->setAttr("stream", b_.getI64IntegerAttr(dropouts_[device]++));
        })
        .Case([&](DropoutGradOp d) {
          Value mask = masks_.lookup(d.getOutput());
          if (!mask) {
            d.emitOpError("has no mask: its graph.dropout was not lowered in this step");
            ok = false;
            return;
          }
          values_[d.getResult()] = newBuffer(d.getResult());
          b_.create<plan::KernelOp>(d.getLoc(), "dropout_grad",
                                    ValueRange{mask, values_.lookup(d.getGrad())},
                                    ValueRange{values_.lookup(d.getResult())});
        })
        .Case([&](ReduceRowsOp r) { kernel(r, "reduce_rows", r->getOperands()); })
        .Case([&](AddOp a) { kernel(a, "add", a->getOperands()); })
        .Case([&](FillOp f) { kernel(f, "fill", {}, {named("value", f.getValueAttr())}); })
        .Case([&](SoftmaxCrossEntropyOp s) { kernel(s, "softmax_xent", s->getOperands()); })
        .Case([&](SoftmaxCrossEntropyGradOp s) { kernel(s, "softmax_xent_grad", s->getOperands()); })
        .Case([&](CountCorrectOp c) { kernel(c, "count_correct", c->getOperands()); })
        .Case([&](SgdUpdateOp u) {
          emit(u.getLoc(), "sgd_update", u.getGradient(), u.getParam(), {named("lr", u.getLrAttr())});
        })
        .Case([&](MomentumUpdateOp u) {
          emit(u.getLoc(), "momentum_update", u.getGradient(), {u.getParam(), u.getVelocity()},
                 {named("lr", u.getLrAttr()), named("momentum", u.getMomentumAttr()),
                  flag("nesterov", u.getNesterov())});
        })
        .Case([&](AdamUpdateOp u) {
          emit(u.getLoc(), "adam_update", u.getGradient(), {u.getParam(), u.getM(), u.getV()},
                 {named("lr", u.getLrAttr()), named("beta1", u.getBeta1Attr()),
                  named("beta2", u.getBeta2Attr()), named("epsilon", u.getEpsilonAttr())});
        })
        .Case([&](func::ReturnOp ret) {
          auto func = ret->getParentOfType<func::FuncOp>();
          for (unsigned i = 0, e = ret.getNumOperands(); i < e; ++i) {
            auto name = func.getResultAttrOfType<StringAttr>(i, kOutputAttr);
            b_.create<plan::OutputOp>(ret.getLoc(), name ? name.getValue() : "result",
                                      values_.lookup(ret.getOperand(i)));
          }
        })
        .Default([&](Operation *other) {
          other->emitOpError("has no kernel to lower to");
          ok = false;
        });
    return success(ok);
  }

  /// A gradient that is a view of another buffer is copied into its persistent buffer.
  void copyInto(Value result) {
    Value src = values_.lookup(result);
    Value dst = gradBuffer(result);
    b_.create<plan::KernelOp>(result.getLoc(), "copy", ValueRange{src}, ValueRange{dst});
    values_[result] = dst;
  }

  plan::ProgramOp program_;
  OpBuilder b_;
  /// Persistent buffers by (name, device).
  using Key = std::pair<StringRef, int64_t>;
  llvm::DenseMap<Key, Value> inputs_, params_, grads_;
  llvm::DenseMap<int64_t, SmallVector<Value>> buckets_;
  llvm::DenseMap<Value, Value> values_;
  /// The mask buffer of each dropout result, and the number of dropouts per device so far.
  llvm::DenseMap<Value, Value> masks_;
  llvm::DenseMap<int64_t, int64_t> dropouts_;
  /// The (parameter, device) whose gradient a value is.
  llvm::DenseMap<Value, Key> gradOf_;
};

struct ConvertGraphToPlanPass : dp::impl::ConvertGraphToPlanPassBase<ConvertGraphToPlanPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp train = g::getStepFunction(module, "train");
    func::FuncOp eval = g::getStepFunction(module, "eval");
    if (!train || !eval) {
      module.emitError("expected a train and an eval step (run graph-derive-steps first)");
      return signalPassFailure();
    }
    int64_t batch = cast<RankedTensorType>(train.getArgument(0).getType()).getDimSize(0);
    StringRef model = train->getAttrOfType<StringAttr>(g::kModelAttr).getValue();
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    int64_t devices = 1, processes = 1;
    if (dist::MeshAttr mesh = dist::getMesh(train)) {
      devices = mesh.getDevicesPerProcess();
      processes = mesh.getProcesses();
    }
    auto program = b.create<plan::ProgramOp>(module.getLoc(), model, batch, devices, processes);
    program.getBody().emplaceBlock();

    Lowering lowering(program);
    lowering.declarePersistent(train);
    lowering.declarePersistent(eval);
    if (failed(lowering.lowerStep(train, "train")) || failed(lowering.lowerStep(eval, "eval")))
      return signalPassFailure();
    train.erase();
    eval.erase();
  }
};

} // namespace
