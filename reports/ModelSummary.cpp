// The Keras-like model summary printed by `dpc summary`.
#include "reports/ModelSummary.h"
#include "runtime/base/Text.h"

#include "dialect/Graph/IR/GraphDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <cstdio>

using namespace mlir;
using namespace dp::graph;

namespace dp::reports {

/// The optimizer with every setting, defaults included: "adam (lr 0.001, beta1 0.9, beta2
/// 0.999, epsilon 1e-07)", where the attribute prints only what differs from them.
std::string optimizerSettings(Attribute opt) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto num = [](const APFloat &v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v.convertToDouble());
    return std::string(text);
  };
  // Decoupled weight decay, said only when there is one (adam with it is AdamW).
  auto decay = [&](const APFloat &v) {
    return v.isZero() ? std::string() : ", weight decay " + num(v) + " (decoupled)";
  };
  if (auto sgd = dyn_cast<SgdAttr>(opt))
    os << "sgd (lr " << num(sgd.getLr()) << decay(sgd.getWeightDecay()) << ")";
  else if (auto m = dyn_cast<MomentumAttr>(opt))
    os << "momentum (lr " << num(m.getLr()) << ", momentum " << num(m.getMomentum())
       << (m.getNesterov() ? ", nesterov" : "") << decay(m.getWeightDecay()) << ")";
  else if (auto a = dyn_cast<AdamAttr>(opt))
    os << (a.getWeightDecay().isZero() ? "adam" : "adamw") << " (lr " << num(a.getLr())
       << ", beta1 " << num(a.getBeta1()) << ", beta2 " << num(a.getBeta2()) << ", epsilon "
       << num(a.getEpsilon()) << (a.getTorchEpsilon() ? ", PyTorch's epsilon" : ", Keras's epsilon")
       << decay(a.getWeightDecay()) << ")";
  else
    os << opt;
  return text;
}

std::string withThousands(int64_t n) { return rt::withCommas(n); }

static std::string shapeString(Type type) {
  std::string s = "(";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(cast<RankedTensorType>(type).getShape(), os);
  os << ")";
  return s;
}

/// A layer's name: the prefix of its parameters' names ("dense1" of "dense1.kernel"), or the
/// op's mnemonic numbered in order of appearance.
static std::string layerName(Operation *op, llvm::StringMap<unsigned> &counters) {
  for (Value operand : op->getOperands())
    if (auto param = operand.getDefiningOp<ParamOp>())
      return param.getName().rsplit('.').first.str();
  StringRef mnemonic = op->getName().stripDialect();
  return (mnemonic + "_" + Twine(++counters[mnemonic])).str();
}

static std::string layerType(Operation *op) {
  std::string type = op->getName().stripDialect().str();
  if (auto dense = dyn_cast<DenseOp>(op); dense && dense.getActivation() != Activation::none)
    type += ", " + stringifyActivation(dense.getActivation()).str();
  if (auto conv = dyn_cast<Conv2DOp>(op); conv && conv.getActivation() != Activation::none)
    type += ", " + stringifyActivation(conv.getActivation()).str();
  return type;
}

ParamCounts printModelSummary(func::FuncOp model, llvm::raw_ostream &os) {
  const std::string rule = std::string(78, '_') + "\n", thick = std::string(78, '=') + "\n";
  auto row = [&](StringRef layer, StringRef shape, StringRef params) {
    os << llvm::format(" %-41s %-22s %12s\n", layer.str().c_str(), shape.str().c_str(),
                       params.str().c_str());
  };
  os << "Model: \"" << model.getSymName() << "\"\n" << rule;
  row("Layer (type)", "Output Shape", "Param #");
  os << thick;
  for (unsigned i = 0, e = model.getNumArguments(); i < e; ++i) {
    auto name = model.getArgAttrOfType<StringAttr>(i, kInputAttr);
    row((name ? name.getValue() : "input").str() + " (input)",
        shapeString(model.getArgument(i).getType()), "0");
  }

  ParamCounts counts;
  llvm::StringMap<bool> counted;
  llvm::StringMap<unsigned> counters;
  std::string loss;
  for (Operation &op : model.getBody().front().without_terminator()) {
    if (isa<ParamOp>(op))
      continue;
    if (isa<dp::LossOpInterface>(op)) {
      loss = op.getName().stripDialect().str();
      continue;
    }
    int64_t params = 0;
    for (Value operand : op.getOperands()) {
      auto param = operand.getDefiningOp<ParamOp>();
      if (!param)
        continue;
      int64_t n = param.getType().getNumElements();
      params += n;
      if (counted.try_emplace(param.getName(), true).second)
        (param.getTrainable() ? counts.trainable : counts.nonTrainable) += n;
    }
    row(layerName(&op, counters) + " (" + layerType(&op) + ")",
        shapeString(op.getResult(0).getType()), withThousands(params));
  }
  os << thick;
  os << "Total params: " << withThousands(counts.total()) << "\n";
  os << "Trainable params: " << withThousands(counts.trainable) << "\n";
  os << "Non-trainable params: " << withThousands(counts.nonTrainable) << "\n";
  os << rule;
  if (!loss.empty())
    os << "Loss: " << loss << "\n";
  if (Attribute opt = model->getAttr(kOptimizerAttr))
    os << "Optimizer: " << optimizerSettings(opt) << "\n";
  return counts;
}

} // namespace dp::reports
