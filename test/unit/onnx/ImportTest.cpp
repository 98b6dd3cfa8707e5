// The ONNX importer (importers/onnx/Import.h) on models built here node by node: what each op
// becomes, the weights it carries over (transposed where dp's layout differs), the shape
// arithmetic it folds, and every refusal naming the node, op type and opset.
#include "importers/onnx/Import.h"
#include "importers/onnx/Export.h"

#include "dialect/Graph/IR/GraphDialect.h"
#include "passes/Graph/Passes.h"
#include "passes/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dp::onnx_import {
namespace {

using mlir::ModuleOp;

/// An ONNX model assembled in code: inputs with a dynamic batch (-1) or fixed dimensions.
struct ModelBuilder {
  OnnxFile file;
  onnx::GraphProto *g;

  ModelBuilder(const ModelBuilder &other) : file(other.file), g(file.model.mutable_graph()) {}
  ModelBuilder &operator=(const ModelBuilder &other) {
    file = other.file;
    g = file.model.mutable_graph();
    return *this;
  }
  explicit ModelBuilder(int64_t opset = 17) {
    file.path = "built.onnx";
    file.opset = opset;
    file.model.set_ir_version(8);
    onnx::OperatorSetIdProto *o = file.model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = file.model.mutable_graph();
    g->set_name("built");
  }
  void input(const std::string &name, std::vector<int64_t> dims,
             int32_t type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto *v = g->add_input();
    v->set_name(name);
    onnx::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : dims) {
      auto *dim = t->mutable_shape()->add_dim();
      if (d < 0)
        dim->set_dim_param("batch");
      else
        dim->set_dim_value(d);
    }
  }
  void output(const std::string &name) { g->add_output()->set_name(name); }
  void floats(const std::string &name, std::vector<int64_t> dims, std::vector<float> values) {
    onnx::TensorProto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    for (float v : values)
      t->add_float_data(v);
  }
  void ints(const std::string &name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    onnx::TensorProto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims)
      t->add_dims(d);
    for (int64_t v : values)
      t->add_int64_data(v);
  }
  onnx::NodeProto &node(const std::string &op, std::vector<std::string> ins,
                        std::vector<std::string> outs, const std::string &name = "") {
    onnx::NodeProto *n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) : name);
    for (auto &i : ins)
      n->add_input(i);
    for (auto &o : outs)
      n->add_output(o);
    return *n;
  }
  static void setInt(onnx::NodeProto &n, const std::string &name, int64_t v) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void setInts(onnx::NodeProto &n, const std::string &name, std::vector<int64_t> v) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static void setFloat(onnx::NodeProto &n, const std::string &name, float v) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
};

class ImportTest : public ::testing::Test {
protected:
  ImportTest() {
    mlir::DialectRegistry registry;
    registerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Imports `m`; the errors go to `errors`.
  mlir::OwningOpRef<ModuleOp> import(const ModelBuilder &m, ImportOptions options = {}) {
    errors.clear();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      errors += d.str() + "\n";
      return mlir::success();
    });
    if (!options.batch)
      options.batch = 4;
    auto module = importModel(context, m.file, options);
    if (module) {
      // What dpc does next: the model is one the compiler takes.
      mlir::PassManager pm(&context);
      pm.addPass(graph::createVerifyModelPass());
      EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << errors;
    }
    return module;
  }

  template <class Op> std::vector<Op> ops(ModuleOp module) {
    std::vector<Op> found;
    module.walk([&](Op op) { found.push_back(op); });
    return found;
  }

  static std::vector<float> values(graph::ParamOp p) {
    auto dense = mlir::cast<mlir::DenseElementsAttr>(p.getInit());
    return std::vector<float>(dense.getValues<float>().begin(), dense.getValues<float>().end());
  }

  mlir::MLIRContext context;
  std::string errors;
};

/// x [batch, 3] -> Gemm(W [2, 3] transposed, C [2]) -> y [batch, 2].
ModelBuilder linearModel() {
  ModelBuilder m;
  m.input("x", {-1, 3});
  m.floats("W", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.floats("C", {2}, {0.5f, -0.5f});
  ModelBuilder::setInt(m.node("Gemm", {"x", "W", "C"}, {"y"}, "fc"), "transB", 1);
  m.output("y");
  return m;
}

TEST_F(ImportTest, GemmBecomesDenseWithTheWeightTransposed) {
  auto module = import(linearModel());
  ASSERT_TRUE(module) << errors;
  auto dense = ops<graph::DenseOp>(*module);
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(dense[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 2}));
  auto params = ops<graph::ParamOp>(*module);
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].getName(), "W");
  // PyTorch's [out, in] weight is dp's [in, out] kernel.
  EXPECT_EQ(values(params[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(params[1].getName(), "C");
  EXPECT_EQ(values(params[1]), (std::vector<float>{0.5f, -0.5f}));
  EXPECT_TRUE(params[0].getTrainable());
  // The loss on the output, the targets an i32 input of the batch.
  auto loss = ops<graph::SoftmaxCrossEntropyOp>(*module);
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_EQ(loss[0].getLogits(), dense[0].getResult());
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(func.getNumArguments(), 2u);
  EXPECT_EQ(func.getSymName(), "built");
  // The op is located at its node.
  auto name = mlir::dyn_cast<mlir::NameLoc>(dense[0].getLoc());
  ASSERT_TRUE(name);
  EXPECT_EQ(name.getName().str(), "fc");
}

TEST_F(ImportTest, MatMulAndAddBecomeOneDenseWithBias) {
  ModelBuilder m;
  m.input("x", {-1, 3});
  m.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.floats("b", {2}, {1, 2});
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("Add", {"h", "b"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto dense = ops<graph::DenseOp>(*module);
  ASSERT_EQ(dense.size(), 1u);
  ASSERT_TRUE(dense[0].getBias());
  auto params = ops<graph::ParamOp>(*module);
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(values(params[0]), (std::vector<float>{1, 2, 3, 4, 5, 6})); // already [in, out]
}

TEST_F(ImportTest, AConstantAddIsABiasOrAddedToEverySample) {
  ModelBuilder m;
  m.input("x", {-1, 3});
  m.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.floats("b", {2}, {1, 2});
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("Add", {"h", "b"}, {"y"}, "bias_add");
  m.node("Add", {"h", "y"}, {"z"}); // h is read twice: the bias cannot be folded into it
  m.output("z");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto biasAdds = ops<graph::BiasAddOp>(*module);
  ASSERT_EQ(biasAdds.size(), 1u);
  EXPECT_FALSE(ops<graph::DenseOp>(*module)[0].getBias());
  // A constant that is not of the input's trailing axes is refused.
  ModelBuilder other;
  other.input("x", {-1, 3});
  other.floats("b", {2}, {1, 2});
  other.node("Add", {"x", "b"}, {"y"}, "odd_add");
  other.output("y");
  EXPECT_FALSE(import(other));
  EXPECT_NE(errors.find("node 'odd_add' (Add, opset 17): it adds the constant [2] to [4,3]: dp "
                        "takes a constant in an Add as the bias of the MatMul before it, or as a "
                        "tensor of the input's trailing axes added to every sample (not of an "
                        "image's)"),
            std::string::npos)
      << errors;
}

// A transformer's token path: [N, T, K] tokens through a MatMul (N * T rows of one dense), its
// bias and a position embedding [1, T, M] (bias_add), and a LayerNormalization over the last
// axis, with the initializers' values.
TEST_F(ImportTest, TokensThroughProductsPositionEmbeddingAndLayerNorm) {
  ModelBuilder m(17);
  m.input("x", {-1, 3, 2});
  m.floats("W", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  m.floats("b", {4}, {1, 2, 3, 4});
  m.floats("pos", {1, 3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  m.floats("gamma", {4}, {1, 1, 1, 1});
  m.floats("beta", {4}, {0, 0, 0, 0});
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("Add", {"h", "b"}, {"hb"});
  m.node("Add", {"hb", "pos"}, {"e"});
  auto &ln = m.node("LayerNormalization", {"e", "gamma", "beta"}, {"y"}, "ln");
  ModelBuilder::setFloat(ln, "epsilon", 1e-6f);
  m.node("Flatten", {"y"}, {"logits"}); // [batch, classes] for the loss
  m.output("logits");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto dense = ops<graph::DenseOp>(*module);
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(dense[0].getInput().getType()).getShape(),
            (llvm::ArrayRef<int64_t>{12, 2}));
  auto biasAdds = ops<graph::BiasAddOp>(*module);
  ASSERT_EQ(biasAdds.size(), 2u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(biasAdds[1].getBias().getType()).getShape(),
            (llvm::ArrayRef<int64_t>{3, 4}));
  auto norms = ops<graph::LayerNormOp>(*module);
  ASSERT_EQ(norms.size(), 1u);
  EXPECT_NEAR(norms[0].getEpsilon().convertToDouble(), 1e-6, 1e-12);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(norms[0].getType()).getShape(),
            (llvm::ArrayRef<int64_t>{4, 3, 4}));
  // The position embedding keeps its values, and its ONNX shape for export.
  auto params = ops<graph::ParamOp>(*module);
  auto pos = llvm::find_if(params, [](graph::ParamOp p) { return p.getName() == "pos"; });
  ASSERT_NE(pos, params.end());
  EXPECT_EQ(values(*pos), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  // A layer norm over another axis is refused (the default axis, -1, was the last).
  ModelBuilder other = m;
  ModelBuilder::setInt(*other.g->mutable_node(3), "axis", 1);
  EXPECT_FALSE(import(other));
  EXPECT_NE(errors.find("node 'ln' (LayerNormalization, opset 17): axis = 1 is not supported (dp "
                        "normalises the last axis)"),
            std::string::npos)
      << errors;
}

// Single-head attention on [N, T, D] tokens: q k^T through a Transpose and a MatMul of two
// computed tensors (graph.batch_matmul), its Div by sqrt(d) folded into the product's alpha,
// Softmax over the last axis, the weighted values, and ReduceMean over the tokens.
TEST_F(ImportTest, SingleHeadAttentionOnTokens) {
  ModelBuilder m;
  m.input("x", {-1, 3, 2});
  m.floats("Wq", {2, 4}, {1, 0, 0, 1, 0, 1, 1, 0});
  m.floats("Wk", {2, 4}, {0, 1, 1, 0, 1, 0, 0, 1});
  m.floats("Wv", {2, 4}, {1, 1, 0, 0, 0, 0, 1, 1});
  m.floats("sqrt_d", {}, {2});
  m.node("MatMul", {"x", "Wq"}, {"q"});
  m.node("MatMul", {"x", "Wk"}, {"k"});
  m.node("MatMul", {"x", "Wv"}, {"v"});
  auto &t = m.node("Transpose", {"k"}, {"kt"}, "kt");
  ModelBuilder::setInts(t, "perm", {0, 2, 1});
  m.node("MatMul", {"q", "kt"}, {"s"});
  m.node("Div", {"s", "sqrt_d"}, {"scaled"});
  auto &sm = m.node("Softmax", {"scaled"}, {"p"});
  ModelBuilder::setInt(sm, "axis", -1);
  m.node("MatMul", {"p", "v"}, {"o"});
  auto &mean = m.node("ReduceMean", {"o"}, {"y"});
  ModelBuilder::setInts(mean, "axes", {1});
  ModelBuilder::setInt(mean, "keepdims", 0);
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  // k's Transpose moves no element: the scores' MatMul takes k as it is, with its transpose
  // flag.
  auto products = ops<graph::BatchMatMulOp>(*module);
  ASSERT_EQ(products.size(), 2u);
  EXPECT_EQ(products[0].getAlpha().convertToDouble(), 0.5);
  EXPECT_TRUE(products[0].getTransposeRhs());
  EXPECT_FALSE(products[0].getTransposeLhs());
  EXPECT_EQ(products[1].getAlpha().convertToDouble(), 1.0);
  EXPECT_FALSE(products[1].getTransposeRhs());
  EXPECT_TRUE(ops<graph::TransposeOp>(*module).empty());
  // Read twice (by the product, and by a Transpose back to k's order that a mean reads), it
  // still moves no element: each reader takes k in the order it needs.
  ModelBuilder twice = m;
  twice.g->mutable_output(0)->set_name("y2");
  auto &back = twice.node("Transpose", {"kt"}, {"k_again"});
  ModelBuilder::setInts(back, "perm", {0, 2, 1});
  auto &kMean = twice.node("ReduceMean", {"k_again"}, {"kt_mean"});
  ModelBuilder::setInts(kMean, "axes", {1});
  ModelBuilder::setInt(kMean, "keepdims", 0);
  twice.node("Add", {"y", "kt_mean"}, {"y2"});
  auto module2 = import(twice);
  ASSERT_TRUE(module2) << errors;
  EXPECT_TRUE(ops<graph::TransposeOp>(*module2).empty());
  EXPECT_TRUE(ops<graph::BatchMatMulOp>(*module2)[0].getTransposeRhs());
  EXPECT_EQ(ops<graph::SoftmaxOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::GlobalAvgPool2DOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::DenseOp>(*module).size(), 3u);

  // A transpose that moves the batch axis, and a division by a constant that is not a scalar,
  // are refused.
  ModelBuilder moved;
  moved.input("x", {-1, 3, 2});
  auto &bad = moved.node("Transpose", {"x"}, {"y"}, "swap");
  ModelBuilder::setInts(bad, "perm", {1, 0, 2});
  moved.output("y");
  EXPECT_FALSE(import(moved));
  EXPECT_NE(errors.find("node 'swap' (Transpose, opset 17): its perm [1,0,2] on the computed "
                        "[4,3,2] is not supported: dp keeps the batch axis first"),
            std::string::npos)
      << errors;
  ModelBuilder scaled;
  scaled.input("x", {-1, 3});
  scaled.floats("two", {3}, {2, 2, 2});
  scaled.node("Div", {"x", "two"}, {"y"}, "times");
  scaled.output("y");
  EXPECT_FALSE(import(scaled));
  EXPECT_NE(errors.find("node 'times' (Div, opset 17): on computed tensors dp supports it only as "
                        "the scale of a product of two computed tensors by a scalar constant"),
            std::string::npos)
      << errors;
}

// A vision transformer's layouts: a strided Conv's NHWC patches become tokens through a
// Reshape and a Transpose that move no element; multi-head attention splits heads with
// Reshape and Transpose (k's fused into one [0, 2, 3, 1]), multiplies [N, H, T, D] products
// (graph.batch_matmul of rank 4), and merges the heads back. Elements move (graph.transpose)
// only where a reader needs another order than the one a value is held in.
/// Patches of a [N, 1, 4, 4] image (a 2x2 Conv of stride 2, 4 filters) as 4 tokens of width
/// 4, and multi-head attention on them (2 heads of 2), as a ViT writes it: k^T by one
/// Transpose [0, 2, 3, 1] of the split k (the default exporter's fused form), or, where
/// `ktOfHeads`, by k.transpose(-2, -1) of the [N, H, T, D] heads (PyTorch's code).
ModelBuilder attentionModel(bool ktOfHeads) {
  ModelBuilder m;
  m.input("x", {-1, 1, 4, 4});
  std::vector<float> filter(4 * 1 * 2 * 2), square(16);
  for (size_t k = 0; k < filter.size(); ++k)
    filter[k] = float(k % 5) - 2;
  for (size_t k = 0; k < square.size(); ++k)
    square[k] = float(k % 3) - 1;
  m.floats("patch_w", {4, 1, 2, 2}, filter);
  for (const char *w : {"Wq", "Wk", "Wv"})
    m.floats(w, {4, 4}, square);
  m.ints("tokens_shape", {3}, {0, 4, -1});
  m.ints("heads_shape", {4}, {0, 4, 2, 2});
  m.ints("merged_shape", {3}, {0, 4, 4});
  auto &conv = m.node("Conv", {"x", "patch_w"}, {"p"}, "patches");
  ModelBuilder::setInts(conv, "strides", {2, 2});
  m.node("Reshape", {"p", "tokens_shape"}, {"p3"}); // [N, 4 channels, 4 positions]
  ModelBuilder::setInts(m.node("Transpose", {"p3"}, {"t"}), "perm", {0, 2, 1});
  auto heads = [&](const char *w, const std::string &name, std::vector<int64_t> perm) {
    m.node("MatMul", {"t", w}, {name + "_y"});
    m.node("Reshape", {name + "_y", "heads_shape"}, {name + "_split"});
    ModelBuilder::setInts(m.node("Transpose", {name + "_split"}, {name}), "perm", perm);
  };
  heads("Wq", "q", {0, 2, 1, 3});
  if (ktOfHeads) {
    heads("Wk", "k", {0, 2, 1, 3});
    ModelBuilder::setInts(m.node("Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
  } else {
    heads("Wk", "kt", {0, 2, 3, 1});
  }
  heads("Wv", "v", {0, 2, 1, 3});
  m.node("MatMul", {"q", "kt"}, {"s"});
  ModelBuilder::setInt(m.node("Softmax", {"s"}, {"a"}), "axis", -1);
  m.node("MatMul", {"a", "v"}, {"o"});
  ModelBuilder::setInts(m.node("Transpose", {"o"}, {"o_t"}), "perm", {0, 2, 1, 3});
  m.node("Reshape", {"o_t", "merged_shape"}, {"merged"});
  auto &mean = m.node("ReduceMean", {"merged"}, {"y"});
  ModelBuilder::setInts(mean, "axes", {1});
  ModelBuilder::setInt(mean, "keepdims", 0);
  m.output("y");
  return m;
}

// A vision transformer's layouts: a strided Conv's NHWC patches become tokens through a
// Reshape and a Transpose that move no element; multi-head attention splits heads with
// Reshape and Transpose, multiplies [N, H, T, D] products (graph.batch_matmul of rank 4), and
// merges the heads back. Elements move (graph.transpose) only where a reader needs another
// order than the one a value is held in.
TEST_F(ImportTest, PatchTokensAndMultiHeadAttentionMoveElementsOnlyWhereReadersNeedIt) {
  ModelBuilder m = attentionModel(false);
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  // The patches: the NHWC convolution [4, 2, 2, 4] is the tokens [4, 4, 4] as it is.
  auto reshapes = ops<graph::ReshapeOp>(*module);
  ASSERT_FALSE(reshapes.empty());
  EXPECT_TRUE(mlir::isa<graph::Conv2DOp>(reshapes[0].getInput().getDefiningOp()));
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(reshapes[0].getType()).getShape(),
            (llvm::ArrayRef<int64_t>{4, 4, 4}));
  // Products of [N, H, T, D]: q, k^T and v each moved once into the heads' order, and the
  // heads' outputs once back into the tokens' order before they merge.
  auto products = ops<graph::BatchMatMulOp>(*module);
  ASSERT_EQ(products.size(), 2u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(products[0].getType()).getShape(),
            (llvm::ArrayRef<int64_t>{4, 2, 4, 4}));
  EXPECT_FALSE(products[0].getTransposeRhs());
  auto transposes = ops<graph::TransposeOp>(*module);
  ASSERT_EQ(transposes.size(), 4u);
  EXPECT_EQ(transposes[0].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(transposes[1].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(transposes[3].getInput(), products[1].getResult());
  EXPECT_EQ(ops<graph::SoftmaxOp>(*module).size(), 1u);

  // k^T as PyTorch's k.transpose(-2, -1) of the [N, H, T, D] heads: k is held as the tokens
  // it was split from, and moved once into [N, H, D, T], as before.
  ModelBuilder pytorch = attentionModel(true);
  auto module2 = import(pytorch);
  ASSERT_TRUE(module2) << errors;
  auto transposes2 = ops<graph::TransposeOp>(*module2);
  ASSERT_EQ(transposes2.size(), 4u);
  EXPECT_EQ(transposes2[1].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 3, 1}));

  // An image's H and W merged into a row but not transposed: a product reads it in ONNX's
  // order, so it moves once (it was refused before layouts were the importer's).
  ModelBuilder rows;
  std::vector<float> filter(16);
  for (size_t k = 0; k < filter.size(); ++k)
    filter[k] = float(k % 5) - 2;
  rows.input("x", {-1, 1, 4, 4});
  rows.floats("patch_w", {4, 1, 2, 2}, filter);
  rows.floats("W", {4, 3}, std::vector<float>(12, 0.5f));
  rows.ints("rows_shape", {3}, {0, 4, -1});
  ModelBuilder::setInts(rows.node("Conv", {"x", "patch_w"}, {"p"}), "strides", {2, 2});
  rows.node("Reshape", {"p", "rows_shape"}, {"r"});
  rows.node("MatMul", {"r", "W"}, {"h"});
  rows.node("Flatten", {"h"}, {"y"});
  rows.output("y");
  auto module3 = import(rows);
  ASSERT_TRUE(module3) << errors;
  auto moved = ops<graph::TransposeOp>(*module3);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 1}));
}

TEST_F(ImportTest, ShapeArithmeticIsFoldedAtTheBatch) {
  // x.view(x.size(0), -1) as the TorchScript exporter writes it.
  ModelBuilder m;
  m.input("x", {-1, 1, 4, 4});
  m.ints("zero", {}, {0});
  m.ints("minus1", {1}, {-1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "zero"}, {"n"});
  ModelBuilder::setInts(m.node("Unsqueeze", {"n"}, {"n1"}), "axes", {0});
  ModelBuilder::setInt(m.node("Concat", {"n1", "minus1"}, {"shape"}), "axis", 0);
  m.node("Reshape", {"x", "shape"}, {"flat"});
  m.floats("W", {16, 2}, std::vector<float>(32, 0.25f));
  m.node("MatMul", {"flat", "W"}, {"y"});
  m.output("y");
  ModelBuilder m13 = m;
  m.file.opset = 11; // Unsqueeze's axes an attribute
  auto module = import(m, {.batch = 6});
  ASSERT_TRUE(module) << errors;
  auto reshape = ops<graph::ReshapeOp>(*module);
  ASSERT_EQ(reshape.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(reshape[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({6, 16}));
  // The NCHW input is NHWC in the graph.
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(func.getArgument(0).getType()).getShape(),
            llvm::ArrayRef<int64_t>({6, 4, 4, 1}));
  // From opset 13 the axes are an input; given as an attribute there, they are refused.
  EXPECT_FALSE(import(m13));
  EXPECT_NE(errors.find("(Unsqueeze, opset 17): its axes are an attribute, an input from opset 13"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, ASoftmaxOutputIsTheLossesOwn) {
  for (const char *op : {"Softmax", "LogSoftmax"}) {
    ModelBuilder m = linearModel();
    m.g->mutable_output(0)->set_name("p");
    m.node(op, {"y"}, {"p"});
    auto module = import(m);
    ASSERT_TRUE(module) << op << ": " << errors;
    EXPECT_TRUE(ops<graph::SoftmaxOp>(*module).empty()) << op;
    auto loss = ops<graph::SoftmaxCrossEntropyOp>(*module);
    ASSERT_EQ(loss.size(), 1u);
    EXPECT_EQ(loss[0].getLogits(), ops<graph::DenseOp>(*module)[0].getResult()) << op;
  }
  // A LogSoftmax anywhere else is refused.
  ModelBuilder m = linearModel();
  m.g->mutable_output(0)->set_name("r");
  m.node("LogSoftmax", {"y"}, {"p"}, "logp");
  m.node("Relu", {"p"}, {"r"}, "after");
  EXPECT_FALSE(import(m));
  EXPECT_NE(errors.find("node 'after' (Relu, opset 17): its input comes from a LogSoftmax, which "
                        "dp takes only as the model's output (folded into the loss)"),
            std::string::npos)
      << errors;
}

// --loss mse: a regression's loss on the output as computed (a Softmax at the end stays), the
// targets an f32 input of the output's shape; an output of rank 1 is one value per sample.
TEST_F(ImportTest, ARegressionsLossTakesTheOutputAsComputed) {
  auto module = import(linearModel(), ImportOptions{.loss = "mse"});
  ASSERT_TRUE(module) << errors;
  auto loss = ops<graph::MeanSquaredErrorOp>(*module);
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_TRUE(ops<graph::SoftmaxCrossEntropyOp>(*module).empty());
  EXPECT_EQ(loss[0].getPrediction(), ops<graph::DenseOp>(*module)[0].getResult());
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  ASSERT_EQ(func.getNumArguments(), 2u);
  EXPECT_EQ(loss[0].getTarget(), func.getArgument(1));
  EXPECT_EQ(func.getArgument(1).getType(), loss[0].getPrediction().getType());
  EXPECT_EQ(func.getFunctionType().getInput(1), func.getArgument(1).getType());
  EXPECT_EQ(func.getArgAttrOfType<mlir::StringAttr>(1, graph::kInputAttr).getValue(), "target");

  ModelBuilder m = linearModel();
  m.g->mutable_output(0)->set_name("p");
  m.node("Softmax", {"y"}, {"p"});
  module = import(m, ImportOptions{.loss = "mean-squared-error"});
  ASSERT_TRUE(module) << errors;
  auto softmax = ops<graph::SoftmaxOp>(*module);
  ASSERT_EQ(softmax.size(), 1u);
  EXPECT_EQ(ops<graph::MeanSquaredErrorOp>(*module)[0].getPrediction(), softmax[0].getResult());

  // One value per sample: [batch] is [batch, 1].
  m = linearModel();
  m.g->mutable_output(0)->set_name("v");
  m.floats("W2", {2, 1}, {1, -1});
  m.node("MatMul", {"y", "W2"}, {"u"});
  m.ints("axes", {1}, {1});
  m.node("Squeeze", {"u", "axes"}, {"v"});
  module = import(m, ImportOptions{.loss = "mse"});
  ASSERT_TRUE(module) << errors;
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(
                ops<graph::MeanSquaredErrorOp>(*module)[0].getPrediction().getType())
                .getShape(),
            llvm::ArrayRef<int64_t>({4, 1}));

  // A LogSoftmax output is computed only folded into softmax cross-entropy.
  m = linearModel();
  m.g->mutable_output(0)->set_name("p");
  m.node("LogSoftmax", {"y"}, {"p"});
  EXPECT_FALSE(import(m, ImportOptions{.loss = "mse"}));
  EXPECT_NE(errors.find("which dp takes only folded into the loss"), std::string::npos) << errors;
}

/// ids int64 [batch, 3] -> Gather(E [5, 2], ids) -> Flatten -> Gemm(W [4, 6]) -> y.
ModelBuilder embeddingModel() {
  ModelBuilder m;
  m.input("ids", {-1, 3}, onnx::TensorProto::INT64);
  std::vector<float> table(10), w(24);
  for (size_t i = 0; i < table.size(); ++i)
    table[i] = 0.1f * float(i);
  m.floats("E", {5, 2}, table);
  m.floats("W", {4, 6}, w);
  m.node("Gather", {"E", "ids"}, {"e"}, "embed");
  m.node("Flatten", {"e"}, {"f"});
  ModelBuilder::setInt(m.node("Gemm", {"f", "W"}, {"y"}), "transB", 1);
  m.output("y");
  return m;
}

// An integer input is token ids: fed as i32, looked up by a Gather of an initializer (an
// embedding, its table trained as it is); any other reader of it is refused.
TEST_F(ImportTest, AGatherOfTokenIdsIsAnEmbedding) {
  auto module = import(embeddingModel());
  ASSERT_TRUE(module) << errors;
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(func.getArgument(0).getType(),
            mlir::RankedTensorType::get({4, 3}, mlir::IntegerType::get(&context, 32)));
  auto gather = ops<graph::GatherOp>(*module);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].getIndices(), func.getArgument(0));
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(gather[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 3, 2}));
  auto table = gather[0].getTable().getDefiningOp<graph::ParamOp>();
  ASSERT_TRUE(table);
  EXPECT_EQ(table.getName(), "E");
  EXPECT_TRUE(table.getTrainable());
  // [V, D] as PyTorch holds it: not transposed.
  EXPECT_EQ(values(table)[3], 0.3f);

  struct Refusal {
    const char *what;
    std::function<void(ModelBuilder &)> change;
    const char *message;
  };
  const Refusal cases[] = {
      {"another reader", [](ModelBuilder &m) { m.node("Relu", {"ids"}, {"r"}, "relu"); },
       "node 'relu' (Relu, opset 17): its input 'ids' is the model's integer input (token ids), "
       "which dp takes only as the indices of a Gather (an embedding)"},
      {"another axis",
       [](ModelBuilder &m) { ModelBuilder::setInt(*m.g->mutable_node(0), "axis", 1); },
       "node 'embed' (Gather, opset 17): it gathers along axis 1: an embedding picks rows (axis "
       "0)"},
      {"a table of rank 3",
       [](ModelBuilder &m) {
         m.g->mutable_initializer(0)->clear_dims();
         for (int64_t d : {5, 1, 2})
           m.g->mutable_initializer(0)->add_dims(d);
       },
       "its data has shape [5,1,2]: an embedding's table is [vocabulary, width]"},
  };
  for (const Refusal &c : cases) {
    ModelBuilder m = embeddingModel();
    c.change(m);
    errors.clear();
    EXPECT_FALSE(import(m)) << c.what;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.what << ": " << errors;
  }
}

/// x [batch, 3, 4] -> LayerNormalization written out, as exporters write it before opset 17
/// (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) -> y.
ModelBuilder writtenOutLayerNorm() {
  ModelBuilder m(14);
  m.input("x", {-1, 3, 4});
  m.floats("two", {}, {2.0f});
  m.floats("eps", {}, {1e-5f});
  m.floats("g", {4}, {1, 2, 3, 4});
  m.floats("b", {4}, {0.5f, 0, 0, -0.5f});
  ModelBuilder::setInts(m.node("ReduceMean", {"x"}, {"mean"}, "mean"), "axes", {-1});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  ModelBuilder::setInts(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"sd"});
  m.node("Div", {"d", "sd"}, {"n"});
  m.node("Mul", {"n", "g"}, {"s"});
  m.node("Add", {"s", "b"}, {"y"}, "norm");
  m.output("y");
  return m;
}

// The written-out form is graph.layer_norm of x with the weight and bias trained, at the
// exporter's epsilon; a step of it read elsewhere is refused by name.
TEST_F(ImportTest, ALayerNormWrittenOutIsALayerNorm) {
  auto module = import(writtenOutLayerNorm(), ImportOptions{.flattenOutput = true});
  ASSERT_TRUE(module) << errors;
  auto norms = ops<graph::LayerNormOp>(*module);
  ASSERT_EQ(norms.size(), 1u);
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(norms[0].getInput(), func.getArgument(0));
  EXPECT_FLOAT_EQ(float(norms[0].getEpsilon().convertToDouble()), 1e-5f);
  auto gamma = norms[0].getGamma().getDefiningOp<graph::ParamOp>();
  auto beta = norms[0].getBeta().getDefiningOp<graph::ParamOp>();
  ASSERT_TRUE(gamma && beta);
  EXPECT_EQ(gamma.getName(), "g");
  EXPECT_EQ(beta.getName(), "b");
  EXPECT_EQ(values(gamma), (std::vector<float>{1, 2, 3, 4}));

  // The mean read by something else than the centring Sub.
  ModelBuilder m = writtenOutLayerNorm();
  m.node("Relu", {"mean"}, {"r"}, "after");
  EXPECT_FALSE(import(m, ImportOptions{.flattenOutput = true}));
  EXPECT_NE(errors.find("node 'after' (Relu, opset 14): its input is a step of a layer norm "
                        "written out"),
            std::string::npos)
      << errors;
  // A centring by another tensor's mean.
  m = writtenOutLayerNorm();
  m.g->mutable_node(1)->set_input(0, "y0");
  m.input("y0", {-1, 3, 4});
  EXPECT_FALSE(import(m, ImportOptions{.flattenOutput = true}));
  EXPECT_NE(errors.find("dp takes it only in a layer norm written out (x minus its mean"),
            std::string::npos)
      << errors;
  // A weight that broadcasts along another axis than the last ([4, 1] of x [N, 4, 4]) is
  // another model: refused, not read as a per-feature weight.
  m = writtenOutLayerNorm();
  m.g->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(4);
  m.g->mutable_initializer(2)->clear_dims();
  m.g->mutable_initializer(2)->add_dims(4);
  m.g->mutable_initializer(2)->add_dims(1);
  EXPECT_FALSE(import(m, ImportOptions{.flattenOutput = true}));
  EXPECT_NE(errors.find("it scales a layer norm written out by [4,1]: dp takes a weight of the "
                        "last axis's size, [4]"),
            std::string::npos)
      << errors;
  // A step as the model's output, or read by Shape.
  m = writtenOutLayerNorm();
  m.g->mutable_output(0)->set_name("sd");
  EXPECT_FALSE(import(m, ImportOptions{.flattenOutput = true}));
  EXPECT_NE(errors.find("the model's output 'sd' is a step of a layer norm written out"),
            std::string::npos)
      << errors;
  m = writtenOutLayerNorm();
  m.node("Shape", {"mean"}, {"s"}, "shape");
  EXPECT_FALSE(import(m, ImportOptions{.flattenOutput = true}));
  EXPECT_NE(errors.find("node 'shape' (Shape, opset 14): its input is a step of a layer norm"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, DropoutTrainsAndActivationsMap) {
  ModelBuilder m = linearModel();
  m.g->mutable_output(0)->set_name("t");
  m.floats("ratio", {}, {0.25f});
  // ONNX's seed is not dp's: masks are drawn from dprun's --seed. training_mode is the step's:
  // a constant 0 is taken, a 1 (a training-mode export) refused.
  m.ints("mode", {}, {0});
  ModelBuilder::setInt(m.node("Dropout", {"y", "ratio", "mode"}, {"d"}, "drop"), "seed", 3);
  m.node("Sigmoid", {"d"}, {"s"});
  m.node("Tanh", {"s"}, {"r"});
  m.node("Relu", {"r"}, {"t"});
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto dropout = ops<graph::DropoutOp>(*module);
  ASSERT_EQ(dropout.size(), 1u);
  EXPECT_DOUBLE_EQ(dropout[0].getRate().convertToDouble(), 0.25);
  EXPECT_EQ(ops<graph::SigmoidOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::TanhOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::ReluOp>(*module).size(), 1u);
  for (onnx::TensorProto &t : *m.g->mutable_initializer())
    if (t.name() == "mode")
      t.set_int64_data(0, 1);
  EXPECT_FALSE(import(m));
  EXPECT_NE(errors.find("node 'drop' (Dropout, opset 17): its training_mode = 1 (a training-mode "
                        "export) is not supported"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, MobileNetActivations) {
  // Clip(0, 6) as inputs (opset 11 on), HardSigmoid with PyTorch's alpha, HardSwish, Gelu.
  ModelBuilder m(20);
  m.input("x", {-1, 3});
  m.floats("zero", {}, {0});
  m.floats("six", {}, {6});
  m.node("Clip", {"x", "zero", "six"}, {"a"});
  auto &hs = m.node("HardSigmoid", {"a"}, {"b"});
  ModelBuilder::setFloat(hs, "alpha", 1.0f / 6);
  m.node("HardSwish", {"b"}, {"c"});
  m.node("Gelu", {"c"}, {"d"});
  m.node("Clip", {"d", "zero"}, {"e"});
  m.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  m.node("MatMul", {"e", "W"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  EXPECT_EQ(ops<graph::Relu6Op>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::HardSigmoidOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::HardSwishOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::GeluOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::ReluOp>(*module).size(), 1u); // Clip(0, inf)
  // ONNX's default HardSigmoid (alpha 0.2) and other clips are not PyTorch's: refused.
  ModelBuilder other = m;
  other.g->mutable_node(1)->clear_attribute();
  EXPECT_FALSE(import(other));
  EXPECT_NE(errors.find("its alpha 0.2 and beta 0.5 are not PyTorch's (1/6 and 1/2)"),
            std::string::npos)
      << errors;
  other = m;
  other.g->mutable_initializer(1)->set_float_data(0, 4);
  EXPECT_FALSE(import(other));
  EXPECT_NE(errors.find("it clips to [0, 4]: dp supports [0, 6] (ReLU6) and [0, inf) (ReLU)"),
            std::string::npos)
      << errors;
}

/// `edit` applied to the linear model must be refused with `message`.
struct Refusal {
  const char *what;
  std::function<void(ModelBuilder &)> edit;
  const char *message;
  ImportOptions options = {};
};

TEST_F(ImportTest, RefusalsNameWhatIsMissing) {
  std::vector<Refusal> cases = {
      {"unknown op",
       [](ModelBuilder &m) {
         m.g->mutable_output(0)->set_name("e");
         m.node("Cos", {"y"}, {"e"}, "cos1");
       },
       "node 'cos1' (Cos, opset 17): the op type Cos is not supported (docs/onnx.md lists what dp "
       "imports)"},
      {"unsupported attribute value",
       [](ModelBuilder &m) { ModelBuilder::setInt(*m.g->mutable_node(0), "transA", 1); },
       "node 'fc' (Gemm, opset 17): transA = 1 is not supported"},
      {"unknown attribute",
       [](ModelBuilder &m) { ModelBuilder::setInt(*m.g->mutable_node(0), "broadcast", 1); },
       "node 'fc' (Gemm, opset 17): the attribute 'broadcast' is not supported"},
      {"alpha", [](ModelBuilder &m) { ModelBuilder::setFloat(*m.g->mutable_node(0), "alpha", 2); },
       "alpha and beta other than 1 are not supported"},
      {"old opset",
       [](ModelBuilder &m) {
         m.file.opset = 6;
         m.file.model.mutable_opset_import(0)->set_version(6);
       },
       "node 'fc' (Gemm, opset 6): dp imports Gemm from opset 7 (convert the model to a newer "
       "opset)"},
      {"other domain", [](ModelBuilder &m) { m.g->mutable_node(0)->set_domain("com.microsoft"); },
       "the op domain 'com.microsoft' is not supported"},
      {"integer input read by a Gemm",
       [](ModelBuilder &m) {
         m.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
             onnx::TensorProto::INT64);
       },
       "node 'fc' (Gemm, opset 17): its input 'x' is the model's integer input (token ids), "
       "which dp takes only as the indices of a Gather (an embedding)"},
      {"string input",
       [](ModelBuilder &m) {
         m.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
             onnx::TensorProto::STRING);
       },
       "the model's input 'x' is not a float or integer tensor"},
      {"dynamic feature axis",
       [](ModelBuilder &m) {
         m.g->mutable_input(0)
             ->mutable_type()
             ->mutable_tensor_type()
             ->mutable_shape()
             ->mutable_dim(1)
             ->set_dim_param("features");
       },
       "the model's input 'x' has a dynamic axis 1 ('features'): dp needs every axis but the "
       "batch fixed"},
      {"fixed batch",
       [](ModelBuilder &m) {
         m.g->mutable_input(0)
             ->mutable_type()
             ->mutable_tensor_type()
             ->mutable_shape()
             ->mutable_dim(0)
             ->set_dim_value(1);
       },
       "the model's input 'x' has a fixed batch of 1, not --batch 4"},
      {"two outputs", [](ModelBuilder &m) { m.output("x"); },
       "the model has 2 outputs; dp trains a model of one output"},
      {"unknown input", [](ModelBuilder &m) { m.g->mutable_node(0)->set_input(1, "nowhere"); },
       "node 'fc' (Gemm, opset 17): its input 'nowhere' is made by no earlier node"},
      {"computed weight", [](ModelBuilder &m) { m.g->mutable_node(0)->set_input(1, "x"); },
       "its weight operand [4,3] must be a 2-D constant (an initializer)"},
      {"wrong weight", [](ModelBuilder &m) { m.g->mutable_node(0)->clear_attribute(); },
       "its weight [2,3] does not take 3 input features"},
      {"non-finite weight",
       [](ModelBuilder &m) { m.g->mutable_initializer(0)->set_float_data(2, NAN); },
       "the initializer 'W' holds a non-finite value"},
      {"short initializer",
       [](ModelBuilder &m) { m.g->mutable_initializer(0)->mutable_float_data()->RemoveLast(); },
       "the initializer 'W' holds 5 values for its shape [2,3] of 6"},
      {"output of rank 3",
       [](ModelBuilder &m) {
         m.g->mutable_output(0)->set_name("u");
         m.ints("axes", {1}, {2});
         m.node("Unsqueeze", {"y", "axes"}, {"u"});
       },
       "the model's output 'u' has shape [4,2,1]: softmax-cross-entropy takes logits of shape "
       "[batch, classes]"},
      {"reshape across the batch",
       [](ModelBuilder &m) {
         m.g->mutable_output(0)->set_name("r");
         m.ints("shape", {1}, {-1});
         m.node("Reshape", {"y", "shape"}, {"r"}, "flat_all");
       },
       "node 'flat_all' (Reshape, opset 17): it reshapes [4,2] to [8], moving the batch axis"},
      {"computed shape operand",
       [](ModelBuilder &m) {
         m.g->mutable_output(0)->set_name("r");
         m.node("Reshape", {"y", "y"}, {"r"});
       },
       "its input shape is computed from the model's inputs; dp needs it constant at the given "
       "batch"},
      {"dynamic batch without --batch", [](ModelBuilder &) {},
       "the model's input 'x' has a dynamic batch axis: give the batch size (--batch N)",
       ImportOptions{.batch = -1}},
      {"unknown loss", [](ModelBuilder &) {}, "unknown loss 'hinge'",
       ImportOptions{.loss = "hinge"}},
  };
  for (Refusal &c : cases) {
    ModelBuilder m = linearModel();
    c.edit(m);
    ImportOptions given = c.options;
    given.batch = c.options.batch < 0 ? 0 : 4;
    errors.clear();
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      errors += d.str() + "\n";
      return mlir::success();
    });
    EXPECT_FALSE(importModel(context, m.file, given)) << c.what;
    EXPECT_NE(errors.find(c.message), std::string::npos) << c.what << ": " << errors;
  }
}

TEST_F(ImportTest, AFlattenedImageFeedsAProductWithItsRowsPermuted) {
  // ONNX flattens [C, H, W], dp's NHWC image [H, W, C]: the product's weight rows follow.
  ModelBuilder m;
  m.input("x", {-1, 3, 2, 2});
  m.node("Flatten", {"x"}, {"f"}, "flatten");
  std::vector<float> w(12);
  for (int k = 0; k < 12; ++k)
    w[k] = float(k); // row c * 4 + h * 2 + w holds its own index
  m.floats("W", {12, 1}, w);
  m.node("MatMul", {"f", "W"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  EXPECT_EQ(values(ops<graph::ParamOp>(*module)[0]),
            (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // Any other use of the flattened image would see the wrong order: refused.
  ModelBuilder other;
  other.input("x", {-1, 3, 2, 2});
  other.node("Flatten", {"x"}, {"f"});
  other.node("Relu", {"f"}, {"y"}, "relu");
  other.output("y");
  EXPECT_FALSE(import(other));
  EXPECT_NE(errors.find("node 'relu' (Relu, opset 17): its input is a flattened 3-channel image, "
                        "whose features dp holds in H, W, C order"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, AFlattenedOutputIsInOnnxOrder) {
  // flattenOutput: an output of any rank is the loss's [batch, features] in ONNX's order. An
  // NHWC image moves to NCHW first; a flattened image goes back to one, then the same.
  for (bool flattenFirst : {false, true}) {
    ModelBuilder m;
    m.input("x", {-1, 3, 2, 2});
    if (flattenFirst) {
      m.node("Relu", {"x"}, {"r"});
      m.node("Flatten", {"r"}, {"y"});
    } else {
      m.node("Relu", {"x"}, {"y"});
    }
    m.output("y");
    std::vector<std::vector<int64_t>> layouts;
    errors.clear();
    auto module =
        importModel(context, m.file, {.batch = 2, .flattenOutput = true}, nullptr, &layouts);
    ASSERT_TRUE(module) << errors;
    EXPECT_EQ(layouts, (std::vector<std::vector<int64_t>>{{0, 2, 3, 1}})) << "fed NHWC";
    auto transposes = ops<graph::TransposeOp>(*module);
    ASSERT_EQ(transposes.size(), 1u) << flattenFirst;
    EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(transposes[0].getType()).getShape(),
              (llvm::ArrayRef<int64_t>{2, 3, 2, 2}));
    auto loss = ops<graph::SoftmaxCrossEntropyOp>(*module);
    ASSERT_EQ(loss.size(), 1u);
    EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(loss[0]->getOperand(0).getType()).getShape(),
              (llvm::ArrayRef<int64_t>{2, 12}));
  }
  // Without it, an output that is not [batch, classes] is refused, and with it a LogSoftmax
  // (whose values dp never computes) is.
  ModelBuilder m;
  m.input("x", {-1, 3, 4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  EXPECT_FALSE(import(m));
  EXPECT_NE(errors.find("softmax-cross-entropy takes logits of shape [batch, classes]"),
            std::string::npos)
      << errors;
  ModelBuilder log;
  log.input("x", {-1, 5});
  log.node("LogSoftmax", {"x"}, {"y"});
  log.output("y");
  EXPECT_TRUE(importModel(context, log.file, {.batch = 2}));
  EXPECT_FALSE(import(log, {.flattenOutput = true}));
  EXPECT_NE(errors.find("comes from a LogSoftmax, which dp takes only folded into the loss"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, FoldedOutputsAreTheShapeArithmetic) {
  // Every input an initializer: the importer folds the model on the host.
  ModelBuilder m;
  m.floats("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.node("Shape", {"x"}, {"s"});
  m.node("Transpose", {"x"}, {"t"}); // default perm: the axes reversed
  m.node("Shape", {"t"}, {"st"});
  ModelBuilder::setInt(m.node("Concat", {"s", "st"}, {"y"}), "axis", 0);
  m.output("y");
  std::vector<double> values;
  std::vector<int64_t> dims;
  bool isFloat = true;
  ASSERT_EQ(foldedOutput(context, m.file, values, dims, isFloat), "");
  EXPECT_EQ(values, (std::vector<double>{2, 3, 3, 2}));
  EXPECT_EQ(dims, (std::vector<int64_t>{4}));
  EXPECT_FALSE(isFloat) << "a shape is integers";
  // A computed output, or an input that is not an initializer, is no folding.
  ModelBuilder computed;
  computed.floats("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  computed.node("Relu", {"x"}, {"y"}, "relu");
  computed.output("y");
  EXPECT_NE(foldedOutput(context, computed.file, values, dims, isFloat).find("relu"),
            std::string::npos);
  ModelBuilder fed;
  fed.input("x", {2, 3});
  fed.node("Shape", {"x"}, {"y"});
  fed.output("y");
  EXPECT_NE(
      foldedOutput(context, fed.file, values, dims, isFloat).find("'x' is not an initializer"),
      std::string::npos);
}

/// x [batch, 2, size, size] -> Conv(W [4, 2, 3, 3], B [4]) with `pads`, `strides` -> y,
/// flattened into a product of 10 classes.
ModelBuilder convModel(std::vector<int64_t> pads, std::vector<int64_t> strides, int64_t out,
                       int64_t size = 5) {
  ModelBuilder m;
  m.input("x", {-1, 2, size, size});
  std::vector<float> w(4 * 2 * 3 * 3);
  for (size_t k = 0; k < w.size(); ++k)
    w[k] = float(k);
  m.floats("W", {4, 2, 3, 3}, w);
  m.floats("B", {4}, {1, 2, 3, 4});
  auto &conv = m.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  ModelBuilder::setInts(conv, "pads", pads);
  ModelBuilder::setInts(conv, "strides", strides);
  ModelBuilder::setInts(conv, "kernel_shape", {3, 3});
  m.node("Relu", {"c"}, {"r"});
  m.node("Flatten", {"r"}, {"f"});
  m.floats("D", {4 * out * out, 10}, std::vector<float>(40 * out * out, 0.5f));
  m.node("MatMul", {"f", "D"}, {"y"});
  m.output("y");
  return m;
}

TEST_F(ImportTest, HostileIntegersAreRefusedOrSaturatedNeverOverflowed) {
  // Each of these once reached signed overflow or an out-of-range float conversion (undefined
  // behaviour, found by fuzz_onnx); the sanitizer stage runs this test too.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<double> values;
  std::vector<int64_t> dims;
  bool isFloat = true;
  auto fold = [&](const ModelBuilder &m) {
    return foldedOutput(context, m.file, values, dims, isFloat);
  };
  {
    // A Reshape target whose product overflows int64 before it is compared.
    ModelBuilder m;
    m.floats("x", {2, 3}, {1, 2, 3, 4, 5, 6});
    m.ints("shape", {3}, {int64_t(1008806514099486748), 28, 1});
    m.node("Reshape", {"x", "shape"}, {"y"}, "huge");
    m.output("y");
    EXPECT_NE(fold(m).find("node 'huge' (Reshape, opset 17): its shape"), std::string::npos);
  }
  {
    // Integer arithmetic wraps as numpy's does, or saturates where it comes from a float.
    ModelBuilder m;
    m.ints("a", {4}, {kMin, kMax, kMin, 7});
    m.ints("b", {4}, {-1, 1, -1, 0});
    m.node("Div", {"a", "b"}, {"q"});
    m.node("Add", {"a", "b"}, {"s"});
    ModelBuilder::setInt(m.node("Mod", {"a", "b"}, {"r"}), "fmod", 1);
    m.floats("f", {3}, {1e30f, -1e30f, NAN});
    ModelBuilder::setInt(m.node("Cast", {"f"}, {"c"}), "to", onnx::TensorProto::INT64);
    ModelBuilder::setInt(m.node("Concat", {"q", "s", "r", "c"}, {"y"}), "axis", 0);
    m.output("y");
    ASSERT_EQ(fold(m), "");
    ASSERT_EQ(values.size(), 15u);
    EXPECT_EQ(values[0], double(kMin)) << "INT64_MIN / -1 wraps";
    EXPECT_EQ(values[3], 0) << "a division by zero is 0";
    EXPECT_EQ(values[5], double(kMax)) << "INT64_MAX + 1 saturates (computed in double)";
    EXPECT_EQ(values[8], 0) << "INT64_MIN fmod -1 is 0";
    EXPECT_EQ(values[12], double(kMax));
    EXPECT_EQ(values[13], double(kMin));
    EXPECT_EQ(values[14], 0) << "NaN casts to 0";
  }
  {
    // Slice steps and ends at the extremes: INT64_MAX still means "to the end".
    ModelBuilder m;
    m.ints("d", {5}, {10, 11, 12, 13, 14});
    m.ints("starts", {1}, {kMax});
    m.ints("ends", {1}, {kMin});
    m.ints("axes", {1}, {0});
    m.ints("steps", {1}, {kMin});
    m.node("Slice", {"d", "starts", "ends", "axes", "steps"}, {"back"});
    m.ints("s2", {1}, {1});
    m.ints("e2", {1}, {kMax});
    m.ints("st2", {1}, {kMax});
    m.node("Slice", {"d", "s2", "e2", "axes", "st2"}, {"fwd"});
    ModelBuilder::setInt(m.node("Concat", {"back", "fwd"}, {"y"}), "axis", 0);
    m.output("y");
    ASSERT_EQ(fold(m), "");
    EXPECT_EQ(values, (std::vector<double>{14, 11}));
  }
  {
    // A folded broadcast beyond the bound on constants is refused before it is allocated.
    ModelBuilder m;
    m.ints("a", {1 << 16, 1}, std::vector<int64_t>(1 << 16, 1));
    m.ints("b", {1, 1 << 16}, std::vector<int64_t>(1 << 16, 1));
    m.node("Mul", {"a", "b"}, {"y"}, "outer");
    m.output("y");
    EXPECT_NE(fold(m).find("its folded result [65536,65536] holds more than"), std::string::npos);
  }
  for (const char *attr : {"strides", "pads"}) {
    // A window attribute beyond any image is refused, not multiplied.
    ModelBuilder m = convModel({0, 0, 0, 0}, {1, 1}, 3);
    for (onnx::AttributeProto &a : *m.g->mutable_node(0)->mutable_attribute())
      if (a.name() == attr)
        for (int k = 0; k < a.ints_size(); ++k)
          a.set_ints(k, kMax / 3);
    EXPECT_FALSE(import(m)) << attr;
    EXPECT_NE(errors.find("node 'conv' (Conv, opset 17): its " + std::string(attr)),
              std::string::npos)
        << errors;
  }
}

TEST_F(ImportTest, ConvBecomesConv2DWithItsPadding) {
  // Symmetric pads of 1 at stride 1 are TensorFlow's "same".
  auto module = import(convModel({1, 1, 1, 1}, {1, 1}, 5));
  ASSERT_TRUE(module) << errors;
  auto conv = ops<graph::Conv2DOp>(*module);
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0].getPadding(), "same");
  EXPECT_TRUE(ops<graph::ZeroPad2DOp>(*module).empty());
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(conv[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 5, 5, 4}));
  // The [F, C, KH, KW] weight as [KH, KW, C, F]: element (kh 0, kw 1, c 1, f 2) is ONNX's
  // ((2 * 2 + 1) * 3 + 0) * 3 + 1 = 46.
  auto params = ops<graph::ParamOp>(*module);
  std::vector<float> hwio = values(params[0]);
  ASSERT_EQ(hwio.size(), 72u);
  EXPECT_EQ(hwio[((0 * 3 + 1) * 2 + 1) * 4 + 2], 46.f);
  // On an even image, PyTorch's stride-2 pads of 1 are not TensorFlow's split (0 before, 1
  // after): explicit zeros, then a valid convolution.
  module = import(convModel({1, 1, 1, 1}, {2, 2}, 3, 6));
  ASSERT_TRUE(module) << errors;
  conv = ops<graph::Conv2DOp>(*module);
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(conv[0].getPadding(), "valid");
  auto pad = ops<graph::ZeroPad2DOp>(*module);
  ASSERT_EQ(pad.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(pad[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 8, 8, 2}));
  // No pads: valid.
  module = import(convModel({0, 0, 0, 0}, {1, 1}, 3));
  ASSERT_TRUE(module) << errors;
  EXPECT_EQ(ops<graph::Conv2DOp>(*module)[0].getPadding(), "valid");
  // In 2 groups, a weight of [4, 2, 3, 3] reads 4 channels per filter: refused.
  ModelBuilder grouped = convModel({0, 0, 0, 0}, {1, 1}, 3);
  ModelBuilder::setInt(*grouped.g->mutable_node(0), "group", 2);
  EXPECT_FALSE(import(grouped));
  EXPECT_NE(errors.find("node 'conv' (Conv, opset 17): its weight [4,2,3,3] must be a constant "
                        "[F, 1, KH, KW] (an initializer) with F a multiple of group = 2"),
            std::string::npos)
      << errors;
  // A group that does not divide the channels.
  ModelBuilder three = convModel({0, 0, 0, 0}, {1, 1}, 3);
  ModelBuilder::setInt(*three.g->mutable_node(0), "group", 3);
  EXPECT_FALSE(import(three));
  EXPECT_NE(errors.find("its group = 3 does not divide its input's 2 channels"), std::string::npos)
      << errors;
}

TEST_F(ImportTest, GroupedAndDilatedConvolution) {
  // x [batch, 2, 5, 5] -> Conv(W [4, 1, 3, 3], group 2, dilations 2, pads 2): each pair of
  // filters reads one channel; the dilated window spans 5x5, so pads of 2 are TensorFlow's
  // "same" and the output stays 5x5.
  auto model = [](std::vector<int64_t> dilations) {
    ModelBuilder m;
    m.input("x", {-1, 2, 5, 5});
    std::vector<float> w(4 * 1 * 3 * 3);
    for (size_t k = 0; k < w.size(); ++k)
      w[k] = float(k);
    m.floats("W", {4, 1, 3, 3}, w);
    auto &conv = m.node("Conv", {"x", "W"}, {"c"}, "conv");
    ModelBuilder::setInts(conv, "pads", {2, 2, 2, 2});
    ModelBuilder::setInts(conv, "dilations", dilations);
    ModelBuilder::setInt(conv, "group", 2);
    m.node("Flatten", {"c"}, {"f"});
    m.floats("D", {4 * 25, 10}, std::vector<float>(1000, 0.5f));
    m.node("MatMul", {"f", "D"}, {"y"});
    m.output("y");
    return m;
  };
  auto module = import(model({2, 2}));
  ASSERT_TRUE(module) << errors;
  auto convs = ops<graph::Conv2DOp>(*module);
  ASSERT_EQ(convs.size(), 1u);
  EXPECT_EQ(convs[0].getGroups(), 2);
  for (mlir::Attribute d : convs[0].getDilations())
    EXPECT_EQ(mlir::cast<mlir::IntegerAttr>(d).getInt(), 2);
  EXPECT_EQ(convs[0].getPadding(), "same");
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(convs[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 5, 5, 4}));
  // The [F, C / G, KH, KW] weight as [KH, KW, C / G, F]: element (kh 1, kw 2, c 0, f 3) is
  // ONNX's ((3 * 1 + 0) * 3 + 1) * 3 + 2 = 32.
  auto params = ops<graph::ParamOp>(*module);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(params[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({3, 3, 1, 4}));
  std::vector<float> hwio = values(params[0]);
  ASSERT_EQ(hwio.size(), 36u);
  EXPECT_EQ(hwio[((1 * 3 + 2) * 1 + 0) * 4 + 3], 32.f);
  // A dilation no image here could hold.
  EXPECT_FALSE(import(model({6, 1})));
  EXPECT_NE(errors.find("its dilations [6,1] spread its 3x3 window beyond the 5x5 image"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, SqueezeAndExcitationMultipliesTheImageByChannelWeights) {
  // x * sigmoid(mean of x over H and W): graph.mul of the NHWC image by [N, 1, 1, C] weights,
  // and x * x of equal shapes; a product that broadcasts both ways, or of two ranks, is refused.
  ModelBuilder m;
  m.input("x", {-1, 4, 3, 3});
  m.node("GlobalAveragePool", {"x"}, {"p"});
  m.node("Sigmoid", {"p"}, {"s"});
  m.node("Mul", {"x", "s"}, {"e"}, "excite");
  m.node("Mul", {"e", "e"}, {"q"}, "square");
  m.node("Flatten", {"q"}, {"f"});
  m.floats("W", {36, 2}, std::vector<float>(72, 0.5f));
  m.node("MatMul", {"f", "W"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto muls = ops<graph::MulOp>(*module);
  ASSERT_EQ(muls.size(), 2u);
  auto type = [](mlir::Value v) { return mlir::cast<mlir::RankedTensorType>(v.getType()); };
  EXPECT_EQ(type(muls[0].getLhs()).getShape(), (llvm::ArrayRef<int64_t>{4, 3, 3, 4}));
  EXPECT_EQ(type(muls[0].getRhs()).getShape(), (llvm::ArrayRef<int64_t>{4, 1, 1, 4}));
  EXPECT_EQ(muls[1].getLhs(), muls[1].getRhs());
  EXPECT_TRUE(ops<graph::TransposeOp>(*module).empty()) << "both operands are held NHWC";

  ModelBuilder both;
  both.input("x", {-1, 4, 3});
  // [N, 1, 3] (the mean over axis 1) times [N, 4, 1] (over axis 2): [N, 4, 3] both ways.
  ModelBuilder::setInts(both.node("ReduceMean", {"x"}, {"rows"}), "axes", {1});
  ModelBuilder::setInts(both.node("Transpose", {"x"}, {"t"}), "perm", {0, 2, 1});
  ModelBuilder::setInts(both.node("ReduceMean", {"t"}, {"cols"}), "axes", {1});
  ModelBuilder::setInts(both.node("Transpose", {"cols"}, {"colsT"}), "perm", {0, 2, 1});
  both.node("Mul", {"rows", "colsT"}, {"y"}, "outer");
  both.output("y");
  EXPECT_FALSE(import(both));
  EXPECT_NE(errors.find("node 'outer' (Mul, opset 17): it multiplies"), std::string::npos)
      << errors;
}

TEST_F(ImportTest, AConstantScaleIsAParameterInTheImagesLayout) {
  // x [N, 2, 3, 3] * s [2, 1, 1] (a learned per-channel scale): a trainable [1, 1, 1, 2]
  // parameter (ONNX's [1, 2, 1, 1] held NHWC), written back as [2, 1, 1] on export.
  ModelBuilder m;
  m.input("x", {-1, 2, 3, 3});
  m.floats("s", {2, 1, 1}, {0.5f, 2.0f});
  m.node("Mul", {"s", "x"}, {"e"}, "scale");
  m.node("Flatten", {"e"}, {"f"});
  m.floats("W", {18, 2}, std::vector<float>(36, 0.5f));
  m.node("MatMul", {"f", "W"}, {"y"});
  m.output("y");
  std::vector<ParamOrigin> origins;
  errors.clear();
  auto module = importModel(context, m.file, {.batch = 2}, &origins);
  ASSERT_TRUE(module) << errors;
  auto muls = ops<graph::MulOp>(*module);
  ASSERT_EQ(muls.size(), 1u);
  auto scale = muls[0].getRhs().getDefiningOp<graph::ParamOp>();
  ASSERT_TRUE(scale);
  EXPECT_TRUE(scale.getTrainable());
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(scale.getType()).getShape(),
            (llvm::ArrayRef<int64_t>{1, 1, 1, 2}));
  std::map<std::string, std::vector<float>> trained{{"s", {3, 4}},
                                                    {"W", std::vector<float>(36, 1.0f)}};
  OnnxFile exported = m.file;
  ASSERT_EQ(withTrainedWeights(m.file, origins, trained, exported.model), "");
  for (const onnx::TensorProto &t : exported.model.graph().initializer())
    if (t.name() == "s") {
      EXPECT_EQ(std::vector<int64_t>(t.dims().begin(), t.dims().end()),
                (std::vector<int64_t>{2, 1, 1}));
    }
  auto again = importModel(context, exported, {.batch = 2});
  ASSERT_TRUE(again) << errors;
  EXPECT_EQ(values(ops<graph::MulOp>(*again)[0].getRhs().getDefiningOp<graph::ParamOp>()),
            (std::vector<float>{3, 4}));

  // A constant along the batch axis would scale each sample differently: refused.
  ModelBuilder rows;
  rows.input("x", {4, 3});
  rows.floats("s", {4, 3}, std::vector<float>(12, 1.0f));
  rows.node("Mul", {"x", "s"}, {"y"}, "per_row");
  rows.output("y");
  EXPECT_FALSE(import(rows));
  EXPECT_NE(errors.find("node 'per_row' (Mul, opset 17): it multiplies [4,3] by the constant "
                        "[4,3] along the batch axis"),
            std::string::npos)
      << errors;
}

TEST_F(ImportTest, PoolingAndBatchNormalization) {
  ModelBuilder m;
  m.input("x", {-1, 2, 6, 6});
  m.floats("scale", {2}, {1, 2});
  m.floats("bias", {2}, {0, 1});
  m.floats("mean", {2}, {0, 0});
  m.floats("var", {2}, {1, 1});
  auto &bn = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"b"});
  ModelBuilder::setFloat(bn, "epsilon", 1e-5f);
  ModelBuilder::setFloat(bn, "momentum", 0.9f);
  auto &pool = m.node("MaxPool", {"b"}, {"p"}, "pool");
  ModelBuilder::setInts(pool, "kernel_shape", {2, 2});
  ModelBuilder::setInts(pool, "strides", {2, 2});
  auto &avg = m.node("AveragePool", {"p"}, {"a"});
  ModelBuilder::setInts(avg, "kernel_shape", {3, 3});
  m.node("GlobalAveragePool", {"a"}, {"g"});
  m.node("Flatten", {"g"}, {"f"});
  m.floats("W", {2, 3}, std::vector<float>(6, 1));
  m.node("MatMul", {"f", "W"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto norm = ops<graph::BatchNormOp>(*module);
  ASSERT_EQ(norm.size(), 1u);
  EXPECT_DOUBLE_EQ(norm[0].getMomentum().convertToDouble(), 0.9f);
  auto params = ops<graph::ParamOp>(*module);
  // scale and bias are trained, the running statistics moved by the train step.
  ASSERT_GE(params.size(), 4u);
  EXPECT_TRUE(params[0].getTrainable());
  EXPECT_TRUE(params[1].getTrainable());
  EXPECT_FALSE(params[2].getTrainable());
  EXPECT_FALSE(params[3].getTrainable());
  auto pools = ops<graph::MaxPool2DOp>(*module);
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(pools[0].getType()).getShape(),
            llvm::ArrayRef<int64_t>({4, 3, 3, 2}));
  EXPECT_EQ(ops<graph::AvgPool2DOp>(*module).size(), 1u);
  EXPECT_EQ(ops<graph::GlobalAvgPool2DOp>(*module).size(), 1u);
  // Max pooling with pads on a batch norm's output (which may be negative): the pads hold the
  // lowest float.
  ModelBuilder::setInts(*m.g->mutable_node(1), "pads", {1, 1, 1, 1});
  auto padded = import(m);
  ASSERT_TRUE(padded) << errors;
  auto pads = ops<graph::ZeroPad2DOp>(*padded);
  ASSERT_EQ(pads.size(), 1u);
  EXPECT_TRUE(pads[0].getLowest());
  EXPECT_EQ(ops<graph::MaxPool2DOp>(*padded)[0].getOperand(), pads[0].getResult());
}

TEST_F(ImportTest, PaddedPoolingBecomesZerosAroundTheImage) {
  // torchvision's ResNet stem: ReLU, then MaxPool(3, 2, pads 1); then an AveragePool(3, 1,
  // pads 1) counting its pads (PyTorch's default), or not.
  auto model = [](int64_t countIncludePad, const char *before) {
    ModelBuilder m;
    m.input("x", {-1, 2, 8, 8});
    m.node(before, {"x"}, {"r"});
    auto &pool = m.node("MaxPool", {"r"}, {"p"}, "pool");
    ModelBuilder::setInts(pool, "kernel_shape", {3, 3});
    ModelBuilder::setInts(pool, "strides", {2, 2});
    ModelBuilder::setInts(pool, "pads", {1, 1, 1, 1});
    auto &avg = m.node("AveragePool", {"p"}, {"a"}, "avg");
    ModelBuilder::setInts(avg, "kernel_shape", {3, 3});
    ModelBuilder::setInts(avg, "pads", {1, 1, 1, 1});
    ModelBuilder::setInt(avg, "count_include_pad", countIncludePad);
    m.node("Flatten", {"a"}, {"f"});
    m.floats("W", {32, 3}, std::vector<float>(96, 1));
    m.node("MatMul", {"f", "W"}, {"y"});
    m.output("y");
    return m;
  };
  auto module = import(model(1, "Relu"));
  ASSERT_TRUE(module) << errors;
  auto pads = ops<graph::ZeroPad2DOp>(*module);
  ASSERT_EQ(pads.size(), 2u);
  auto shape = [](mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  };
  // 8x8 padded to 10x10, pooled 3 at stride 2 to 4x4 (PyTorch's size); then 4x4 padded to 6x6
  // and averaged 3 at stride 1 back to 4x4.
  EXPECT_EQ(shape(pads[0].getResult()), llvm::ArrayRef<int64_t>({4, 10, 10, 2}));
  auto max = ops<graph::MaxPool2DOp>(*module);
  ASSERT_EQ(max.size(), 1u);
  EXPECT_EQ(max[0].getOperand(), pads[0].getResult());
  EXPECT_EQ(shape(max[0].getResult()), llvm::ArrayRef<int64_t>({4, 4, 4, 2}));
  auto avg = ops<graph::AvgPool2DOp>(*module);
  ASSERT_EQ(avg.size(), 1u);
  EXPECT_EQ(avg[0].getOperand(), pads[1].getResult());
  EXPECT_EQ(shape(avg[0].getResult()), llvm::ArrayRef<int64_t>({4, 4, 4, 2}));
  EXPECT_TRUE(ops<graph::MulOp>(*module).empty()) << "counting the pads needs no factor";
  // An average that leaves its pads out of the count (ONNX's default, TensorFlow's "same"
  // pooling) is the whole window's average times window / taps inside the image: 9/4 at a
  // corner of the 4x4 image, 9/6 on an edge, 1 inside.
  auto excluding = import(model(0, "Relu"));
  ASSERT_TRUE(excluding) << errors;
  auto muls = ops<graph::MulOp>(*excluding);
  ASSERT_EQ(muls.size(), 1u);
  EXPECT_EQ(muls[0].getLhs(), ops<graph::AvgPool2DOp>(*excluding)[0].getResult());
  auto factor = muls[0].getRhs().getDefiningOp<graph::ParamOp>();
  ASSERT_TRUE(factor);
  EXPECT_FALSE(factor.getTrainable());
  EXPECT_EQ(shape(factor.getResult()), llvm::ArrayRef<int64_t>({1, 4, 4, 1}));
  const std::vector<float> f = values(factor);
  EXPECT_FLOAT_EQ(f[0], 9.0f / 4);
  EXPECT_FLOAT_EQ(f[1], 9.0f / 6);
  EXPECT_FLOAT_EQ(f[5], 1.0f);
  EXPECT_FALSE(pads[0].getLowest()) << "after a ReLU, zeros are the max pool's -inf";
  EXPECT_FALSE(pads[1].getLowest());
  // After a Tanh, values may be negative: the max pool's pads are the lowest float.
  auto tanh = import(model(1, "Tanh"));
  ASSERT_TRUE(tanh) << errors;
  auto lowest = ops<graph::ZeroPad2DOp>(*tanh);
  ASSERT_EQ(lowest.size(), 2u);
  EXPECT_TRUE(lowest[0].getLowest());
  EXPECT_FALSE(lowest[1].getLowest()) << "an average's pads are zeros";
}

TEST_F(ImportTest, SharedConstantsAreNotSharedStatistics) {
  // The TorchScript exporter writes a fresh batch norm's running variance (ones) as
  // Identity(weight) and its running mean (zeros) as Identity(bias); a file may also name one
  // initializer for both. Statistics and trained weights must stay apart.
  for (bool viaIdentity : {true, false}) {
    ModelBuilder m;
    m.input("x", {-1, 3});
    m.floats("ones", {3}, {1, 1, 1});
    m.floats("zeros", {3}, {0, 0, 0});
    std::string mean = "zeros", var = "ones";
    if (viaIdentity) {
      m.node("Identity", {"ones"}, {"bn.running_var"});
      m.node("Identity", {"zeros"}, {"bn.running_mean"});
      mean = "bn.running_mean", var = "bn.running_var";
    }
    m.node("BatchNormalization", {"x", "ones", "zeros", mean, var}, {"y"});
    m.output("y");
    auto module = import(m);
    ASSERT_TRUE(module) << errors;
    std::map<std::string, bool> trainable;
    for (graph::ParamOp p : ops<graph::ParamOp>(*module))
      trainable[p.getName().str()] = p.getTrainable();
    std::map<std::string, bool> expected =
        viaIdentity ? std::map<std::string, bool>{{"ones", true},
                                                  {"zeros", true},
                                                  {"bn.running_mean", false},
                                                  {"bn.running_var", false}}
                    : std::map<std::string, bool>{{"ones", true},
                                                  {"zeros", true},
                                                  {"zeros.statistic", false},
                                                  {"ones.statistic", false}};
    EXPECT_EQ(trainable, expected) << viaIdentity;
  }
}

TEST(WeightLayoutTest, ToOnnxUndoesToDp) {
  std::vector<float> values(2 * 3 * 2 * 2);
  for (size_t k = 0; k < values.size(); ++k)
    values[k] = float(k);
  std::vector<WeightLayout> layouts(4);
  layouts[0].onnxDims = {24};
  layouts[1].kind = WeightLayout::Kind::Transposed;
  layouts[1].onnxDims = {2, 12};
  layouts[2].kind = WeightLayout::Kind::ConvFilter;
  layouts[2].onnxDims = {2, 3, 2, 2};
  layouts[3].kind = WeightLayout::Kind::Transposed;
  layouts[3].onnxDims = {2, 12};
  layouts[3].flattenedChw = {3, 2, 2};
  for (const WeightLayout &l : layouts) {
    std::vector<float> dp = l.toDp(values);
    EXPECT_EQ(l.toOnnx(dp), values) << int(l.kind);
    if (l.kind != WeightLayout::Kind::Same)
      EXPECT_NE(dp, values) << int(l.kind);
  }
  // ONNX's transposed [2, 12] weight with rows (c, h, w) is dp's [12, 2] kernel with rows
  // (h, w, c): dp's row 1 is (h 0, w 0, c 1), ONNX's column 4.
  std::vector<float> dp = layouts[3].toDp(values);
  EXPECT_EQ(dp[1 * 2 + 0], values[0 * 12 + 4]);
  EXPECT_EQ(dp[1 * 2 + 1], values[1 * 12 + 4]);
}

// A Keras model through tf2onnx keeps Keras's [N, H, W, C] input and converts it to NCHW for
// its Conv nodes: by a Transpose, or, with one channel, a Reshape. dp feeds that input in its
// order, and both conversions move no element: the convolution reads the input as it is.
TEST_F(ImportTest, AKerasInputConvertedToNchwIsTheImageAsItIs) {
  for (bool reshape : {false, true}) {
    ModelBuilder m;
    const int64_t c = reshape ? 1 : 3;
    m.input("x", {-1, 6, 6, c});
    m.floats("w", {2, c, 3, 3}, std::vector<float>(2 * c * 9, 0.5f));
    if (reshape) {
      m.ints("nchw", {4}, {-1, 1, 6, 6});
      m.node("Reshape", {"x", "nchw"}, {"xc"});
    } else {
      ModelBuilder::setInts(m.node("Transpose", {"x"}, {"xc"}), "perm", {0, 3, 1, 2});
    }
    m.node("Conv", {"xc", "w"}, {"y"});
    m.node("Flatten", {"y"}, {"f"});
    m.floats("fc", {32, 2}, std::vector<float>(64, 0.25f));
    m.node("MatMul", {"f", "fc"}, {"logits"});
    m.output("logits");
    auto module = import(m);
    ASSERT_TRUE(module) << errors;
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[0]).getShape(),
              (llvm::ArrayRef<int64_t>{4, 6, 6, c}));
    auto convs = ops<graph::Conv2DOp>(*module);
    ASSERT_EQ(convs.size(), 1u);
    EXPECT_EQ(convs[0].getInput(), func.getArgument(0)) << (reshape ? "Reshape" : "Transpose");
    EXPECT_TRUE(ops<graph::TransposeOp>(*module).empty());
  }
}

// GELU's erf form as the TorchScript exporter writes it (Div by sqrt(2), Erf, Add 1, Mul by
// x, Mul by 0.5), and with the half of x taken first: graph.gelu of x, in the layout x is held
// in. Its steps taken by anything else, and an Erf elsewhere, are refused.
TEST_F(ImportTest, GeluErfFormIsGelu) {
  for (bool halfFirst : {false, true}) {
    ModelBuilder m;
    m.input("x", {-1, 3});
    m.floats("sqrt2", {}, {1.4142135f});
    m.floats("one", {}, {1});
    m.floats("half", {}, {0.5f});
    m.node("Div", {"x", "sqrt2"}, {"d"});
    m.node("Erf", {"d"}, {"e"});
    m.node("Add", {"one", "e"}, {"onePlus"});
    if (halfFirst) {
      m.node("Mul", {"x", "half"}, {"h"});
      m.node("Mul", {"onePlus", "h"}, {"y"});
    } else {
      m.node("Mul", {"x", "onePlus"}, {"p"});
      m.node("Mul", {"p", "half"}, {"y"});
    }
    m.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
    m.node("MatMul", {"y", "W"}, {"logits"});
    m.output("logits");
    auto module = import(m);
    ASSERT_TRUE(module) << errors;
    auto gelus = ops<graph::GeluOp>(*module);
    ASSERT_EQ(gelus.size(), 1u) << halfFirst;
    auto func = *module->getOps<mlir::func::FuncOp>().begin();
    EXPECT_EQ(gelus[0].getInput(), func.getArgument(0));
  }
  ModelBuilder partial;
  partial.input("x", {-1, 3});
  partial.floats("sqrt2", {}, {1.4142135f});
  partial.node("Div", {"x", "sqrt2"}, {"d"});
  partial.node("Relu", {"d"}, {"y"}, "relu");
  partial.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  partial.node("MatMul", {"y", "W"}, {"logits"});
  partial.output("logits");
  EXPECT_FALSE(import(partial));
  EXPECT_NE(errors.find("node 'relu' (Relu, opset 17): its input is a step of GELU's erf form, x "
                        "* 0.5 * (1 + erf(x / sqrt(2))), which dp takes only whole"),
            std::string::npos)
      << errors;
  ModelBuilder stray;
  stray.input("x", {-1, 3});
  stray.node("Erf", {"x"}, {"y"}, "erf");
  stray.floats("W", {3, 2}, {1, 2, 3, 4, 5, 6});
  stray.node("MatMul", {"y", "W"}, {"logits"});
  stray.output("logits");
  EXPECT_FALSE(import(stray));
  EXPECT_NE(errors.find("node 'erf' (Erf, opset 17): dp takes Erf on computed tensors only in "
                        "GELU's erf form"),
            std::string::npos)
      << errors;
}

// Concat of computed tensors along a feature axis: two convolutions' NHWC images joined along
// their channels (graph.concat on the graph's last axis); along the batch, or of a constant
// and a computed tensor, refused.
TEST_F(ImportTest, ConcatOfComputedTensorsJoinsTheirHeldAxis) {
  ModelBuilder m;
  m.input("x", {-1, 1, 4, 4});
  m.floats("wa", {2, 1, 1, 1}, {1, 2});
  m.floats("wb", {3, 1, 1, 1}, {3, 4, 5});
  m.node("Conv", {"x", "wa"}, {"a"});
  m.node("Conv", {"x", "wb"}, {"b"});
  ModelBuilder::setInt(m.node("Concat", {"a", "b"}, {"c"}, "join"), "axis", 1);
  m.node("GlobalAveragePool", {"c"}, {"p"});
  m.node("Flatten", {"p"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto joins = ops<graph::ConcatOp>(*module);
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(joins[0].getAxis(), 3);
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(joins[0].getType()).getShape(),
            (llvm::ArrayRef<int64_t>{4, 4, 4, 5}));
  EXPECT_TRUE(ops<graph::TransposeOp>(*module).empty());
  ModelBuilder batch = m;
  batch.g->mutable_node(2)->mutable_attribute(0)->set_i(0);
  EXPECT_FALSE(import(batch));
  EXPECT_NE(errors.find("node 'join' (Concat, opset 17): its axis 0 on [4,2,4,4] is not "
                        "supported: dp joins computed tensors along an axis after the batch"),
            std::string::npos)
      << errors;
  ModelBuilder mixed = m;
  mixed.floats("k", {1, 3, 4, 4}, std::vector<float>(48, 1));
  mixed.g->mutable_node(2)->set_input(1, "k");
  EXPECT_FALSE(import(mixed));
  EXPECT_NE(errors.find("it joins constants and computed tensors"), std::string::npos) << errors;
}

// Softmax over an axis that is not the last: the value moved to be held with that axis last,
// the result held so (moved back where a reader needs ONNX's order). Before opset 13, the axes
// from `axis` on are one: a softmax over them, through free reshapes.
TEST_F(ImportTest, SoftmaxOverAnyAxisAfterTheBatch) {
  for (int64_t opset : {17, 11}) {
    ModelBuilder m(opset);
    m.input("x", {-1, 3, 4});
    ModelBuilder::setInt(m.node("Softmax", {"x"}, {"s"}, "soft"), "axis", 1);
    auto &mean = m.node("ReduceMean", {"s"}, {"r"});
    ModelBuilder::setInts(mean, "axes", {1});
    ModelBuilder::setInt(mean, "keepdims", 0);
    m.floats("W", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    m.node("MatMul", {"r", "W"}, {"y"});
    m.output("y");
    auto module = import(m);
    ASSERT_TRUE(module) << errors;
    auto soft = ops<graph::SoftmaxOp>(*module);
    ASSERT_EQ(soft.size(), 1u);
    auto shape = mlir::cast<mlir::RankedTensorType>(soft[0].getType()).getShape();
    if (opset == 17) {
      EXPECT_EQ(shape, (llvm::ArrayRef<int64_t>{4, 4, 3}));
      auto moves = ops<graph::TransposeOp>(*module);
      ASSERT_EQ(moves.size(), 2u);
      EXPECT_EQ(moves[0].getResult(), soft[0].getInput());
      EXPECT_EQ(moves[1].getInput(), soft[0].getResult());
    } else {
      EXPECT_EQ(shape, (llvm::ArrayRef<int64_t>{4, 1, 12}));
      EXPECT_TRUE(ops<graph::TransposeOp>(*module).empty());
    }
  }
  ModelBuilder batch;
  batch.input("x", {-1, 3});
  ModelBuilder::setInt(batch.node("Softmax", {"x"}, {"y"}, "soft"), "axis", 0);
  batch.output("y");
  EXPECT_FALSE(import(batch));
  EXPECT_NE(errors.find("node 'soft' (Softmax, opset 17): it is taken over axis 0 of [4,3]: dp "
                        "supports the classes of a [batch, classes] tensor (and, for Softmax, any "
                        "axis after the batch)"),
            std::string::npos)
      << errors;
}

// Two Transposes of one value are two layouts of it: each reader gets the order it needs,
// even where the two moves give tensors of one shape.
TEST_F(ImportTest, TwoTransposesOfOneValueAreMovedApart) {
  ModelBuilder m;
  m.input("tokens", {-1, 6, 3});
  m.ints("split", {4}, {0, 3, 2, 3});
  m.node("Reshape", {"tokens", "split"}, {"x"}); // [N, 3, 2, 3] in ONNX's order
  ModelBuilder::setInts(m.node("Transpose", {"x"}, {"q"}), "perm", {0, 2, 1, 3});
  ModelBuilder::setInts(m.node("Transpose", {"x"}, {"kt"}), "perm", {0, 2, 3, 1});
  m.node("MatMul", {"q", "kt"}, {"s"}); // [N, 2, 3, 3]
  m.node("Flatten", {"s"}, {"f"});
  m.floats("W", {18, 2}, std::vector<float>(36, 0.5f));
  m.node("MatMul", {"f", "W"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto products = ops<graph::BatchMatMulOp>(*module);
  ASSERT_EQ(products.size(), 1u);
  EXPECT_NE(products[0].getLhs(), products[0].getRhs());
  auto moves = ops<graph::TransposeOp>(*module);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(moves[1].getPermutation(), (llvm::ArrayRef<int64_t>{0, 2, 3, 1}));
  // Of an NHWC image, the same two Transposes move nothing: q is the image with its last two
  // axes exchanged (the product's flag), k^T the image as it is held.
  ModelBuilder image;
  image.input("x", {-1, 3, 2, 3});
  ModelBuilder::setInts(image.node("Transpose", {"x"}, {"q"}), "perm", {0, 2, 1, 3});
  ModelBuilder::setInts(image.node("Transpose", {"x"}, {"kt"}), "perm", {0, 2, 3, 1});
  for (int k = 3; k < m.g->node_size(); ++k)
    *image.g->add_node() = m.g->node(k);
  image.floats("W", {18, 2}, std::vector<float>(36, 0.5f));
  image.output("y");
  auto module2 = import(image);
  ASSERT_TRUE(module2) << errors;
  auto product = ops<graph::BatchMatMulOp>(*module2);
  ASSERT_EQ(product.size(), 1u);
  EXPECT_TRUE(product[0].getTransposeLhs());
  EXPECT_FALSE(product[0].getTransposeRhs());
  EXPECT_TRUE(ops<graph::TransposeOp>(*module2).empty());
}

// A node changes the op that makes its input (a product's scale, a dense layer's bias) only
// where it alone reads that value: another name of it (an identity Transpose) still read keeps
// the op as it was.
TEST_F(ImportTest, ASharedProductOrDenseIsNotChangedInPlace) {
  ModelBuilder m;
  m.input("x", {-1, 2, 2});
  m.floats("half", {}, {0.5f});
  m.node("MatMul", {"x", "x"}, {"p"});
  ModelBuilder::setInts(m.node("Transpose", {"p"}, {"same"}), "perm", {0, 1, 2});
  m.node("Mul", {"same", "half"}, {"scaled"});
  m.node("Add", {"p", "scaled"}, {"sum"});
  m.node("Flatten", {"sum"}, {"f"});
  m.floats("W", {4, 4}, std::vector<float>(16, 0.25f));
  m.node("MatMul", {"f", "W"}, {"d"});
  ModelBuilder::setInts(m.node("Transpose", {"d"}, {"d2"}), "perm", {0, 1});
  m.floats("b", {4}, {1, 2, 3, 4});
  m.node("Add", {"d2", "b"}, {"biased"});
  m.node("Add", {"biased", "d"}, {"y"});
  m.output("y");
  auto module = import(m);
  ASSERT_TRUE(module) << errors;
  auto products = ops<graph::BatchMatMulOp>(*module);
  ASSERT_EQ(products.size(), 2u);
  EXPECT_EQ(products[0].getAlpha().convertToDouble(), 1.0);
  EXPECT_EQ(products[1].getAlpha().convertToDouble(), 0.5);
  auto dense = ops<graph::DenseOp>(*module);
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_FALSE(dense[0].getBias());
  EXPECT_EQ(ops<graph::BiasAddOp>(*module).size(), 1u);
}

// Refused rather than changed: one initializer read in two layouts (one parameter holds
// one), a value assigned twice, an input too large to index; and a 4-D input with a small last
// axis that a Conv reads is ONNX's NCHW, not Keras's NHWC.
TEST_F(ImportTest, InputsAndInitializersThatWouldChangeMeaningAreRefused) {
  ModelBuilder tied;
  tied.input("x", {-1, 2});
  tied.floats("W", {2, 2}, {1, 2, 3, 4});
  ModelBuilder::setInts(tied.node("Transpose", {"W"}, {"Wt"}), "perm", {1, 0});
  tied.node("MatMul", {"x", "Wt"}, {"h"});
  tied.node("MatMul", {"h", "W"}, {"y"}, "second");
  tied.output("y");
  EXPECT_FALSE(import(tied));
  EXPECT_NE(errors.find("node 'second' (MatMul, opset 17): the initializer 'W' is read in two "
                        "layouts"),
            std::string::npos)
      << errors;
  ModelBuilder twice = linearModel();
  twice.node("Relu", {"y"}, {"y"}, "again");
  EXPECT_FALSE(import(twice));
  EXPECT_NE(errors.find("node 'again' (Relu, opset 17): its output 'y' is already a value of "
                        "the model"),
            std::string::npos)
      << errors;
  ModelBuilder huge;
  huge.input("x", {-1, int64_t(1) << 30, int64_t(1) << 30});
  huge.node("Flatten", {"x"}, {"y"});
  huge.output("y");
  EXPECT_FALSE(import(huge));
  EXPECT_NE(errors.find("holds more than"), std::string::npos) << errors;
  ModelBuilder nchw;
  nchw.input("x", {-1, 16, 16, 2});
  nchw.floats("w", {1, 16, 1, 1}, std::vector<float>(16, 1));
  nchw.node("Conv", {"x", "w"}, {"c"});
  nchw.node("Flatten", {"c"}, {"f"});
  nchw.floats("W", {32, 2}, std::vector<float>(64, 1));
  nchw.node("MatMul", {"f", "W"}, {"y"});
  nchw.output("y");
  auto module = import(nchw);
  ASSERT_TRUE(module) << errors;
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  EXPECT_EQ(mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[0]).getShape(),
            (llvm::ArrayRef<int64_t>{4, 16, 2, 16}));
}

// A Linear as the default exporter writes it unoptimized: MatMul(x, Transpose(W)). The
// folded Transpose is no new constant: the kernel is W itself, trained, held transposed, and
// written back to W (the Transpose stays in the exported model).
TEST_F(ImportTest, ATransposedInitializerIsTrainedAsItself) {
  ModelBuilder m;
  m.input("x", {-1, 3});
  m.floats("W", {2, 3}, {1, 2, 3, 4, 5, 6});
  ModelBuilder::setInts(m.node("Transpose", {"W"}, {"Wt"}), "perm", {1, 0});
  m.node("MatMul", {"x", "Wt"}, {"y"});
  m.output("y");
  std::vector<ParamOrigin> origins;
  errors.clear();
  auto module = importModel(context, m.file, {.batch = 2}, &origins);
  ASSERT_TRUE(module) << errors;
  auto params = ops<graph::ParamOp>(*module);
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].getName(), "W");
  EXPECT_TRUE(params[0].getTrainable());
  EXPECT_EQ(values(params[0]), (std::vector<float>{1, 4, 2, 5, 3, 6})); // [K, M] = W^T
  ASSERT_EQ(origins.size(), 1u);
  EXPECT_EQ(origins[0].layout.kind, WeightLayout::Kind::Transposed);
  EXPECT_EQ(origins[0].layout.onnxDims, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(origins[0].rewire.empty());
  std::map<std::string, std::vector<float>> trained{{"W", {0, 1, 2, 3, 4, 5}}};
  OnnxFile exported = m.file;
  ASSERT_EQ(withTrainedWeights(m.file, origins, trained, exported.model), "");
  const onnx::TensorProto &w = exported.model.graph().initializer(0);
  std::vector<float> written(6);
  ASSERT_EQ(w.raw_data().size(), written.size() * 4);
  std::memcpy(written.data(), w.raw_data().data(), w.raw_data().size());
  EXPECT_EQ(written, (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(exported.model.graph().node(0).op_type(), "Transpose");
  auto again = importModel(context, exported, {.batch = 2});
  ASSERT_TRUE(again) << errors;
  EXPECT_EQ(values(ops<graph::ParamOp>(*again)[0]), trained["W"]);
}

TEST_F(ImportTest, ExportWritesTrainedWeightsTheImportReadsBack) {
  // A CNN with a batch norm whose statistics are copies (Identity) of its scale and bias, as
  // the TorchScript exporter writes them, and a product after a flattened image.
  ModelBuilder m;
  m.input("x", {-1, 2, 3, 3});
  std::vector<float> w(3 * 2 * 2 * 2, 0.5f);
  m.floats("conv.w", {3, 2, 2, 2}, w);
  m.floats("bn.scale", {3}, {1, 1, 1});
  m.floats("bn.bias", {3}, {0, 0, 0});
  m.node("Identity", {"bn.scale"}, {"bn.var"});
  m.node("Identity", {"bn.bias"}, {"bn.mean"});
  m.node("Conv", {"x", "conv.w"}, {"c"});
  m.node("BatchNormalization", {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"b"});
  m.node("Flatten", {"b"}, {"f"});
  m.floats("fc.w", {4, 12}, std::vector<float>(48, 0.25f));
  ModelBuilder::setInt(m.node("Gemm", {"f", "fc.w"}, {"y"}), "transB", 1);
  m.output("y");
  std::vector<ParamOrigin> origins;
  errors.clear();
  ASSERT_TRUE(importModel(context, m.file, {.batch = 2}, &origins)) << errors;
  ASSERT_EQ(origins.size(), 6u);
  // "Trained" values: each parameter's element k is k + its number / 10.
  std::map<std::string, std::vector<float>> trained;
  int number = 0;
  for (const ParamOrigin &o : origins) {
    int64_t n = 1;
    for (int64_t d : o.layout.onnxDims)
      n *= d;
    std::vector<float> v(n);
    for (int64_t k = 0; k < n; ++k)
      v[k] = float(k) + float(number) / 10;
    trained[o.param] = v;
    ++number;
  }
  OnnxFile exported = m.file;
  std::string problem = withTrainedWeights(m.file, origins, trained, exported.model);
  ASSERT_EQ(problem, "");
  // The Identity copies became initializers of their own.
  for (const onnx::NodeProto &n : exported.model.graph().node())
    EXPECT_NE(n.op_type(), "Identity");
  std::vector<ParamOrigin> again;
  auto module = importModel(context, exported, {.batch = 2}, &again);
  ASSERT_TRUE(module) << errors;
  for (graph::ParamOp p : ops<graph::ParamOp>(*module))
    EXPECT_EQ(values(p), trained[p.getName().str()]) << p.getName().str();
  EXPECT_EQ(again.size(), origins.size());
  // Parameters of another model are refused, naming what is missing.
  trained.erase("fc.w");
  EXPECT_EQ(withTrainedWeights(m.file, origins, trained, exported.model),
            "the parameters hold no 'fc.w' (trained from another model?)");
  trained["fc.w"] = {1, 2, 3};
  EXPECT_EQ(withTrainedWeights(m.file, origins, trained, exported.model),
            "the parameters' 'fc.w' has 3 values, the model's 48");
}

TEST_F(ImportTest, OptimizerSpecs) {
  std::string error;
  EXPECT_EQ(optimizerAttributeText("adam:lr=1e-3", error), "#graph.adam<lr = 0.001>");
  EXPECT_EQ(optimizerAttributeText("momentum:lr=1,momentum=0.9", error),
            "#graph.momentum<lr = 1.0, momentum = 0.90000000000000002>");
  EXPECT_EQ(optimizerAttributeText("sgd:lr=1e-10", error), "#graph.sgd<lr = 1.0e-10>");
  EXPECT_EQ(optimizerAttributeText("sgd", error), "#graph.sgd<>");
  EXPECT_EQ(optimizerAttributeText("adam:", error), "#graph.adam<>");
  EXPECT_EQ(error, "");
  EXPECT_EQ(optimizerAttributeText("rmsprop", error), "");
  EXPECT_EQ(error, "unknown optimizer 'rmsprop' (dp knows sgd, momentum, adam, adamw)");
  EXPECT_EQ(optimizerAttributeText("sgd:lr=fast", error), "");
  EXPECT_EQ(optimizerAttributeText("sgd:lr", error), "");
  EXPECT_EQ(optimizerAttributeText("sgd:l r=1", error), "");
  // Flags: true or false, 1 or 0.
  error.clear();
  EXPECT_EQ(optimizerAttributeText("adam:lr=1e-3,epsilon=1e-8,torch_epsilon=1", error),
            "#graph.adam<lr = 0.001, epsilon = 1.0e-08, torch_epsilon = true>");
  EXPECT_EQ(optimizerAttributeText("momentum:nesterov=false", error),
            "#graph.momentum<nesterov = false>");
  EXPECT_EQ(error, "");
  EXPECT_EQ(optimizerAttributeText("adam:torch_epsilon=2", error), "");
  EXPECT_EQ(error, "torch_epsilon takes true or false (1 or 0), not '2'");
  // adamw: adam with Keras's AdamW weight decay, unless given; any optimizer takes one.
  error.clear();
  EXPECT_EQ(optimizerAttributeText("adamw", error),
            "#graph.adam<weight_decay = 0.0040000000000000001>");
  EXPECT_EQ(optimizerAttributeText("adamw:lr=1e-3,weight_decay=0.01", error),
            "#graph.adam<lr = 0.001, weight_decay = 0.01>");
  EXPECT_EQ(optimizerAttributeText("sgd:weight_decay=1e-4", error),
            "#graph.sgd<weight_decay = 0.0001>");
  EXPECT_EQ(error, "");
}

TEST_F(ImportTest, TheDocsListTheImportersTable) {
  for (const OpSupport &op : supportedOps()) {
    EXPECT_GT(op.sinceOpset, 0) << op.opType;
    EXPECT_NE(std::string(op.becomes), "") << op.opType;
  }
  std::ifstream in(DP_SOURCE_DIR "/docs/onnx.md");
  ASSERT_TRUE(in) << "cannot read docs/onnx.md";
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_NE(docs.str().find(supportedOpsTable()), std::string::npos)
      << "docs/onnx.md's table of ops differs from the importer's; it should read:\n"
      << supportedOpsTable();
}

} // namespace
} // namespace dp::onnx_import
