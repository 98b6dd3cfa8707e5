// The CUDA backend on a GPU, kernel by kernel: every kernel kind it implements runs on small
// plans, once on the CPU backend and once on the GPU, with the same random inputs, and the
// outputs must agree. These tests need a GPU: without one every test is skipped with the
// CUDA runtime's reason (ctest label `gpu`; scripts/gpu-check.sh runs them where one exists).
#include "runtime/backends/cpu/CpuBackend.h"
#include "runtime/backends/cuda/CudaBackend.h"
#include "runtime/base/Error.h"
#include "test/unit/PlanBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace dp::rt {
namespace {

using testing::KernelSpec;
using testing::PlanBuilder;

/// Why this machine cannot run the GPU tests, or "" when it can.
const std::string &noGpu() {
  static const std::string why = [] {
    try {
      cuda::makeCudaBackend()->checkMemory(1, 1, "the GPU tests' probe");
      return std::string();
    } catch (const Error &e) {
      return std::string(e.what());
    }
  }();
  return why;
}

#define DP_REQUIRE_GPU()                                                                           \
  if (!noGpu().empty())                                                                            \
  GTEST_SKIP() << "no GPU: " << noGpu()

/// One case: builds its plan (buffers and kernels of the train step) and names the buffers to
/// fill and compare. Labels are i32 in [0, classes).
struct Case {
  std::string name;
  int64_t batch = 4;
  std::function<void(PlanBuilder &, Case &)> build;
  double tolerance = 1e-4; // relative to max(1, |cpu|)
  // Filled by build():
  std::vector<uint32_t> inputs, labels, outputs;
  int32_t classes = 10;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

struct Outputs {
  std::vector<std::vector<float>> outputs;
};

/// Runs `c` on `backend` (of `kind`) with inputs drawn from `seed`.
Outputs runOn(Case c, Backend &backend, DeviceKind kind, uint32_t seed) {
  PlanBuilder b(c.batch);
  b.deviceKind(static_cast<uint8_t>(kind));
  c.inputs.clear(), c.labels.clear(), c.outputs.clear();
  c.build(b, c);
  auto program = Program::load(b.plan(), &backend);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (uint32_t id : c.inputs) {
    std::vector<float> v(program->buffer(id).numel);
    for (float &x : v)
      x = dist(gen);
    program->write(id, v.data());
  }
  for (uint32_t id : c.labels) {
    std::vector<int32_t> v(program->buffer(id).numel);
    for (int32_t &x : v)
      x = static_cast<int32_t>(gen() % c.classes);
    program->write(id, v.data());
  }
  StepContext ctx;
  ctx.validRows = c.batch - 1; // a short last batch: losses must skip the padding row
  ctx.batchRows = c.batch;
  ctx.step = 3;
  ctx.seed = 7;
  program->run(StepKind::Train, ctx);
  Outputs run;
  for (uint32_t id : c.outputs) {
    std::vector<float> v(program->buffer(id).numel);
    program->read(id, v.data());
    run.outputs.push_back(std::move(v));
  }
  return run;
}

class GpuVsCpu : public ::testing::TestWithParam<Case> {};

TEST_P(GpuVsCpu, OutputsAgree) {
  DP_REQUIRE_GPU();
  const Case &c = GetParam();
  auto cpu = cpu::makeCpuBackend();
  auto gpu = cuda::makeCudaBackend();
  const Outputs want = runOn(c, *cpu, DeviceKind::Cpu, 11);
  const Outputs got = runOn(c, *gpu, DeviceKind::Cuda, 11);
  ASSERT_EQ(got.outputs.size(), want.outputs.size());
  for (size_t o = 0; o < got.outputs.size(); ++o)
    for (size_t i = 0; i < got.outputs[o].size(); ++i) {
      const double w = want.outputs[o][i], g = got.outputs[o][i];
      ASSERT_LE(std::fabs(g - w), c.tolerance * std::max(1.0, std::fabs(w)))
          << c.name << ": output " << o << " element " << i << ": gpu " << g << ", cpu " << w;
    }
}

/// The cases: every kernel kind of the CUDA backend.
std::vector<Case> cases() {
  std::vector<Case> all;
  const StepKind T = StepKind::Train;
  auto add = [&](std::string name, std::function<void(PlanBuilder &, Case &)> build,
                 double tolerance = 1e-4) {
    Case c;
    c.name = std::move(name);
    c.build = std::move(build);
    c.tolerance = tolerance;
    all.push_back(std::move(c));
  };
  for (Activation act : {Activation::None, Activation::Relu, Activation::Sigmoid,
                         Activation::Tanh, Activation::Softmax})
    add(std::string("dense_bias_") + activationName(act), [act, T](PlanBuilder &b, Case &c) {
      uint32_t x = b.buffer({4, 33}), w = b.buffer({33, 10}), bias = b.buffer({10}),
               y = b.buffer({4, 10});
      b.kernel(T, KernelKind::Dense, {x, w, bias}, {y}).activation(act);
      c.inputs = {x, w, bias}, c.outputs = {y};
    });
  for (int t = 0; t < 4; ++t)
    add("matmul_t" + std::to_string(t), [t, T](PlanBuilder &b, Case &c) {
      const bool ta = t & 1, tb = t & 2;
      uint32_t a = b.buffer(ta ? std::vector<int64_t>{7, 5} : std::vector<int64_t>{5, 7});
      uint32_t bb = b.buffer(tb ? std::vector<int64_t>{3, 7} : std::vector<int64_t>{7, 3});
      uint32_t y = b.buffer({5, 3});
      b.kernel(T, KernelKind::MatMul, {a, bb}, {y}).attrI("transpose_a", ta).attrI("transpose_b", tb);
      c.inputs = {a, bb}, c.outputs = {y};
    });
  for (Activation act : {Activation::Relu, Activation::Sigmoid, Activation::Tanh,
                         Activation::Softmax})
    add(std::string("activation_and_grad_") + activationName(act),
        [act, T](PlanBuilder &b, Case &c) {
          uint32_t x = b.buffer({4, 9}), y = b.buffer({4, 9}), dy = b.buffer({4, 9}),
                   dx = b.buffer({4, 9});
          b.kernel(T, KernelKind::Activation, {x}, {y}).activation(act);
          b.kernel(T, KernelKind::ActivationGrad, {y, dy}, {dx}).activation(act);
          c.inputs = {x, dy}, c.outputs = {y, dx};
        });
  add("reduce_rows_add_fill_copy", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({300, 7}), y = b.buffer({7}), z = b.buffer({7}), f = b.buffer({7}),
             cp = b.buffer({7});
    b.kernel(T, KernelKind::ReduceRows, {x}, {y});
    b.kernel(T, KernelKind::Fill, {}, {f}).attrF("value", 0.25);
    b.kernel(T, KernelKind::Add, {y, f}, {z});
    b.kernel(T, KernelKind::Copy, {z}, {cp});
    c.inputs = {x}, c.outputs = {y, z, cp};
  });
  add("softmax_xent_grad_and_count", [T](PlanBuilder &b, Case &c) {
    uint32_t z = b.buffer({4, 10}), y = b.buffer({4}, DType::I32), loss = b.buffer({}),
             dloss = b.buffer({}), dz = b.buffer({4, 10}), correct = b.buffer({});
    b.kernel(T, KernelKind::SoftmaxXent, {z, y}, {loss});
    b.kernel(T, KernelKind::Fill, {}, {dloss}).attrF("value", 1.0);
    b.kernel(T, KernelKind::SoftmaxXentGrad, {z, y, dloss}, {dz});
    b.kernel(T, KernelKind::CountCorrect, {z, y}, {correct});
    c.inputs = {z}, c.labels = {y}, c.outputs = {loss, dz, correct};
  });
  add("smoothed_softmax_xent_and_grad", [T](PlanBuilder &b, Case &c) {
    uint32_t z = b.buffer({4, 10}), y = b.buffer({4}, DType::I32), loss = b.buffer({}),
             dloss = b.buffer({}), dz = b.buffer({4, 10});
    b.kernel(T, KernelKind::SoftmaxXent, {z, y}, {loss}).attrF("label_smoothing", 0.1);
    b.kernel(T, KernelKind::Fill, {}, {dloss}).attrF("value", 1.0);
    b.kernel(T, KernelKind::SoftmaxXentGrad, {z, y, dloss}, {dz}).attrF("label_smoothing", 0.1);
    c.inputs = {z}, c.labels = {y}, c.outputs = {loss, dz};
  });
  add("sgd_momentum_adam", [T](PlanBuilder &b, Case &c) {
    uint32_t p1 = b.buffer({50}), g = b.buffer({50}), p2 = b.buffer({50}), v = b.buffer({50}),
             p3 = b.buffer({50}), m = b.buffer({50}), s = b.buffer({50});
    b.kernel(T, KernelKind::SgdUpdate, {g}, {p1}).attrF("lr", 0.1);
    b.kernel(T, KernelKind::MomentumUpdate, {g}, {p2, v}).attrF("lr", 0.1).attrF("momentum", 0.9);
    b.kernel(T, KernelKind::AdamUpdate, {g}, {p3, m, s})
        .attrF("lr", 0.01).attrF("beta1", 0.9).attrF("beta2", 0.999).attrF("epsilon", 1e-7);
    c.inputs = {p1, g, p2, v, p3, m}, c.outputs = {p1, p2, v, p3, m, s};
  });
  add("updates_with_weight_decay", [T](PlanBuilder &b, Case &c) {
    uint32_t p1 = b.buffer({50}), g = b.buffer({50}), p2 = b.buffer({50}), v = b.buffer({50}),
             p3 = b.buffer({50}), m = b.buffer({50}), s = b.buffer({50});
    b.kernel(T, KernelKind::SgdUpdate, {g}, {p1}).attrF("lr", 0.1).attrF("weight_decay", 0.5);
    b.kernel(T, KernelKind::MomentumUpdate, {g}, {p2, v})
        .attrF("lr", 0.1)
        .attrF("momentum", 0.9)
        .attrI("nesterov", 1)
        .attrF("weight_decay", 0.5);
    b.kernel(T, KernelKind::AdamUpdate, {g}, {p3, m, s})
        .attrF("lr", 0.01)
        .attrF("beta1", 0.9)
        .attrF("beta2", 0.999)
        .attrF("epsilon", 1e-7)
        .attrF("weight_decay", 0.1);
    c.inputs = {p1, g, p2, v, p3, m}, c.outputs = {p1, p2, v, p3, m, s};
  });
  // Clipping by global norm: the factor of two gradients (one past a block of the CPU's sum),
  // and the updates reading it as their scale.
  add("clip_factor_and_scaled_updates", [T](PlanBuilder &b, Case &c) {
    uint32_t g = b.buffer({50}), h = b.buffer({20000}), f = b.buffer({}), p1 = b.buffer({50}),
             p2 = b.buffer({50}), v = b.buffer({50}), p3 = b.buffer({50}), m = b.buffer({50}),
             s = b.buffer({50});
    b.kernel(T, KernelKind::ClipFactor, {g, h}, {f}).attrF("max_norm", 2.0);
    b.kernel(T, KernelKind::SgdUpdate, {g, f}, {p1}).attrF("lr", 0.1);
    b.kernel(T, KernelKind::MomentumUpdate, {g, f}, {p2, v})
        .attrF("lr", 0.1)
        .attrF("momentum", 0.9);
    b.kernel(T, KernelKind::AdamUpdate, {g, f}, {p3, m, s})
        .attrF("lr", 0.01)
        .attrF("beta1", 0.9)
        .attrF("beta2", 0.999)
        .attrF("epsilon", 1e-7);
    c.inputs = {p1, g, h, p2, v, p3, m}, c.outputs = {f, p1, p2, v, p3, m, s};
  });
  // Convolutions: valid, same (symmetric), and asymmetric padding with stride 2.
  struct Conv {
    const char *name;
    int64_t h, k, stride, pt, pb;
  };
  for (Conv g : {Conv{"valid", 8, 3, 1, 0, 0}, Conv{"same", 8, 3, 1, 1, 1},
                 Conv{"stride2_asym", 9, 3, 2, 0, 1}})
    add(std::string("conv2d_and_grads_") + g.name,
        [g, T](PlanBuilder &b, Case &c) {
          const int64_t oh = (g.h + g.pt + g.pb - g.k) / g.stride + 1;
          uint32_t x = b.buffer({4, g.h, g.h, 3}), w = b.buffer({g.k, g.k, 3, 5}),
                   bias = b.buffer({5}), y = b.buffer({4, oh, oh, 5}),
                   dy = b.buffer({4, oh, oh, 5}), dx = b.buffer({4, g.h, g.h, 3}),
                   dw = b.buffer({g.k, g.k, 3, 5});
          auto geometry = [&](KernelSpec &k) -> KernelSpec & {
            return k.attrI("stride_h", g.stride).attrI("stride_w", g.stride)
                .attrI("pad_top", g.pt).attrI("pad_left", g.pt)
                .attrI("pad_bottom", g.pb).attrI("pad_right", g.pb);
          };
          geometry(b.kernel(T, KernelKind::Conv2d, {x, w, bias}, {y})).activation(Activation::Relu);
          geometry(b.kernel(T, KernelKind::Conv2dGradInput, {dy, w}, {dx}));
          geometry(b.kernel(T, KernelKind::Conv2dGradFilter, {x, dy}, {dw}));
          c.inputs = {x, w, bias, dy}, c.outputs = {y, dx, dw};
        },
        1e-3);
  add("pooling_and_grads", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 6, 6, 3}), y = b.buffer({4, 3, 3, 3}), dy = b.buffer({4, 3, 3, 3}),
             dx = b.buffer({4, 6, 6, 3}), ya = b.buffer({4, 3, 3, 3}), dxa = b.buffer({4, 6, 6, 3});
    auto window = [](KernelSpec &k) -> KernelSpec & {
      return k.attrI("window_h", 2).attrI("window_w", 2).attrI("stride_h", 2).attrI("stride_w", 2);
    };
    window(b.kernel(T, KernelKind::MaxPool2d, {x}, {y}));
    window(b.kernel(T, KernelKind::MaxPool2dGrad, {x, dy}, {dx}));
    window(b.kernel(T, KernelKind::AvgPool2d, {x}, {ya}));
    window(b.kernel(T, KernelKind::AvgPool2dGrad, {dy}, {dxa}));
    c.inputs = {x, dy}, c.outputs = {y, dx, ya, dxa};
  });
  add("zero_pad_and_grad", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 5, 5, 2}), y = b.buffer({4, 8, 6, 2}), dx = b.buffer({4, 5, 5, 2});
    auto pads = [](KernelSpec &k) -> KernelSpec & {
      return k.attrI("pad_top", 1).attrI("pad_bottom", 2).attrI("pad_left", 0).attrI("pad_right", 1);
    };
    pads(b.kernel(T, KernelKind::ZeroPad2d, {x}, {y}));
    pads(b.kernel(T, KernelKind::ZeroPad2dGrad, {y}, {dx}));
    c.inputs = {x}, c.outputs = {y, dx};
  });
  add("dropout_and_grad", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 40}), y = b.buffer({4, 40}), mask = b.buffer({4, 40}),
             dy = b.buffer({4, 40}), dx = b.buffer({4, 40});
    b.kernel(T, KernelKind::Dropout, {x}, {y, mask}).attrF("rate", 0.3).attrI("stream", 2);
    b.kernel(T, KernelKind::DropoutGrad, {mask, dy}, {dx});
    c.inputs = {x, dy}, c.outputs = {y, mask, dx};
  });
  add("batch_norm", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 3, 3, 6}), stats = b.buffer({2, 6}), gamma = b.buffer({6}),
             beta = b.buffer({6}), y = b.buffer({4, 3, 3, 6}), dy = b.buffer({4, 3, 3, 6}),
             dgamma = b.buffer({6}), dbeta = b.buffer({6}), dx = b.buffer({4, 3, 3, 6}),
             mean = b.buffer({6}), var = b.buffer({6}), yi = b.buffer({4, 3, 3, 6});
    b.kernel(T, KernelKind::BatchMoments, {x}, {stats});
    b.kernel(T, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y}).attrF("epsilon", 1e-3);
    b.kernel(T, KernelKind::BatchNormGradParams, {x, stats, dy}, {dgamma, dbeta})
        .attrF("epsilon", 1e-3);
    b.kernel(T, KernelKind::BatchNormGradInput, {x, stats, gamma, dgamma, dbeta, dy}, {dx})
        .attrF("epsilon", 1e-3);
    b.kernel(T, KernelKind::MovingStatsUpdate, {stats}, {mean, var}).attrF("momentum", 0.99);
    b.kernel(T, KernelKind::BatchNormInfer, {x, gamma, beta, mean, var}, {yi})
        .attrF("epsilon", 1e-3);
    c.inputs = {x, gamma, beta, dy, mean}, c.outputs = {stats, y, dgamma, dbeta, dx, mean, var, yi};
  });
  add("batch_norm_with_relu", [T](PlanBuilder &b, Case &c) {
    // The relu plan-fuse-epilogues puts in both forwards.
    uint32_t x = b.buffer({4, 3, 3, 6}), stats = b.buffer({2, 6}), gamma = b.buffer({6}),
             beta = b.buffer({6}), y = b.buffer({4, 3, 3, 6}), mean = b.buffer({6}),
             var = b.buffer({6}), yi = b.buffer({4, 3, 3, 6});
    b.kernel(T, KernelKind::BatchMoments, {x}, {stats});
    b.kernel(T, KernelKind::BatchNormTrain, {x, stats, gamma, beta}, {y})
        .attrF("epsilon", 1e-3)
        .activation(Activation::Relu);
    b.kernel(T, KernelKind::MovingStatsUpdate, {stats}, {mean, var}).attrF("momentum", 0.9);
    b.kernel(T, KernelKind::BatchNormInfer, {x, gamma, beta, mean, var}, {yi})
        .attrF("epsilon", 1e-3)
        .activation(Activation::Relu);
    c.inputs = {x, gamma, beta, mean}, c.outputs = {y, yi};
  });
  add("layer_norm_and_grad", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 20}), gamma = b.buffer({20}), beta = b.buffer({20}),
             y = b.buffer({4, 20}), dy = b.buffer({4, 20}), dx = b.buffer({4, 20}),
             dgamma = b.buffer({20}), dbeta = b.buffer({20});
    b.kernel(T, KernelKind::LayerNorm, {x, gamma, beta}, {y}).attrF("epsilon", 1e-5);
    b.kernel(T, KernelKind::LayerNormGrad, {x, gamma, dy}, {dx, dgamma, dbeta})
        .attrF("epsilon", 1e-5);
    c.inputs = {x, gamma, beta, dy}, c.outputs = {y, dx, dgamma, dbeta};
  });
  for (bool sequences : {true, false})
    add(std::string("lstm_and_grad_") + (sequences ? "sequences" : "last"),
        [sequences, T](PlanBuilder &b, Case &c) {
          const int64_t n = 4, t = 5, f = 3, u = 6;
          const std::vector<int64_t> yShape =
              sequences ? std::vector<int64_t>{n, t, u} : std::vector<int64_t>{n, u};
          uint32_t x = b.buffer({n, t, f}), w = b.buffer({f, 4 * u}), r = b.buffer({u, 4 * u}),
                   bias = b.buffer({4 * u}), y = b.buffer(yShape), dy = b.buffer(yShape),
                   dx = b.buffer({n, t, f}), dw = b.buffer({f, 4 * u}),
                   dr = b.buffer({u, 4 * u}), db = b.buffer({4 * u});
          b.kernel(T, KernelKind::Lstm, {x, w, r, bias}, {y})
              .attrI("return_sequences", sequences)
              .attrI("training", 1);
          b.kernel(T, KernelKind::LstmGrad, {x, w, r, bias, y, dy}, {dx, dw, dr, db});
          c.inputs = {x, w, r, bias, dy}, c.outputs = {y, dx, dw, dr, db};
        },
        1e-3);
  add("concat_and_slice", [T](PlanBuilder &b, Case &c) {
    uint32_t p = b.buffer({4, 3}), q = b.buffer({4, 5}), y = b.buffer({4, 8}), s = b.buffer({4, 5});
    b.kernel(T, KernelKind::Concat, {p, q}, {y}).attrI("axis", 1);
    b.kernel(T, KernelKind::Slice, {y}, {s}).attrI("axis", 1).attrI("offset", 3);
    c.inputs = {p, q}, c.outputs = {y, s};
  });
  add("mul_and_mul_reduce", [T](PlanBuilder &b, Case &c) {
    // Squeeze-and-excitation: NHWC images times per-sample channel weights, and back.
    uint32_t x = b.buffer({4, 6, 5, 8}), s = b.buffer({4, 1, 1, 8}), y = b.buffer({4, 6, 5, 8}),
             dy = b.buffer({4, 6, 5, 8}), ds = b.buffer({4, 1, 1, 8});
    b.kernel(T, KernelKind::Mul, {x, s}, {y});
    b.kernel(T, KernelKind::MulReduce, {dy, x}, {ds});
    c.inputs = {x, s, dy}, c.outputs = {y, ds};
  });
  add("squared_error_and_grad", [T](PlanBuilder &b, Case &c) {
    // A regression's loss over the valid rows, and its gradient (zero on the padding row).
    uint32_t p = b.buffer({4, 49}), t = b.buffer({4, 49}), loss = b.buffer({}),
             dloss = b.buffer({}), dp = b.buffer({4, 49});
    b.kernel(T, KernelKind::SquaredError, {p, t}, {loss});
    b.kernel(T, KernelKind::Fill, {}, {dloss}).attrF("value", 1.0);
    b.kernel(T, KernelKind::SquaredErrorGrad, {p, t, dloss}, {dp});
    c.inputs = {p, t}, c.outputs = {loss, dp};
  });
  add("sigmoid_xent_grad_and_count", [T](PlanBuilder &b, Case &c) {
    // Binary cross-entropy on logits against the inputs' draw as soft targets, its gradient
    // and the binary accuracy's count.
    uint32_t x = b.buffer({4, 5}), t = b.buffer({4, 5}), loss = b.buffer({}), dloss = b.buffer({}),
             dx = b.buffer({4, 5}), correct = b.buffer({});
    b.kernel(T, KernelKind::SigmoidXent, {x, t}, {loss});
    b.kernel(T, KernelKind::Fill, {}, {dloss}).attrF("value", 1.0);
    b.kernel(T, KernelKind::SigmoidXentGrad, {x, t, dloss}, {dx});
    b.kernel(T, KernelKind::CountBinaryCorrect, {x, t}, {correct});
    c.inputs = {x, t}, c.outputs = {loss, dx, correct};
  });
  add("gather_and_grad", [T](PlanBuilder &b, Case &c) {
    // An embedding of token ids (the labels' draw: ids below 10, so rows repeat) and its
    // table's scatter-add.
    uint32_t table = b.buffer({10, 6}), ids = b.buffer({4, 7}, DType::I32), e = b.buffer({4, 7, 6}),
             de = b.buffer({4, 7, 6}), dt = b.buffer({10, 6});
    b.kernel(T, KernelKind::Gather, {table, ids}, {e});
    b.kernel(T, KernelKind::GatherGrad, {de, ids}, {dt});
    c.inputs = {table, de}, c.labels = {ids}, c.outputs = {e, dt};
  });
  add("gelu_and_grad", [T](PlanBuilder &b, Case &c) {
    uint32_t x = b.buffer({4, 3000}), y = b.buffer({4, 3000}), dy = b.buffer({4, 3000}),
             dx = b.buffer({4, 3000});
    b.kernel(T, KernelKind::Gelu, {x}, {y});
    b.kernel(T, KernelKind::GeluGrad, {x, dy}, {dx});
    c.inputs = {x, dy}, c.outputs = {y, dx};
  });
  for (auto [name, f, df] :
       {std::tuple("relu6_and_grad", KernelKind::Relu6, KernelKind::Relu6Grad),
        std::tuple("hard_sigmoid_and_grad", KernelKind::HardSigmoid, KernelKind::HardSigmoidGrad),
        std::tuple("hard_swish_and_grad", KernelKind::HardSwish, KernelKind::HardSwishGrad)})
    add(name, [T, f = f, df = df](PlanBuilder &b, Case &c) {
      uint32_t x = b.buffer({4, 3000}), y = b.buffer({4, 3000}), dy = b.buffer({4, 3000}),
               dx = b.buffer({4, 3000});
      b.kernel(T, f, {x}, {y});
      b.kernel(T, df, {x, dy}, {dx});
      c.inputs = {x, dy}, c.outputs = {y, dx};
    });
  return all;
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuVsCpu, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });

TEST(GpuCases, EveryCaseRunsOnTheCpuBackend) {
  // Runs here, without a GPU: the cases' plans pass the kernel contract and produce finite
  // outputs, so that on a GPU a failure is the GPU's, not the harness's.
  auto cpu = cpu::makeCpuBackend();
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    Outputs out;
    ASSERT_NO_THROW(out = runOn(c, *cpu, DeviceKind::Cpu, 11));
    ASSERT_FALSE(out.outputs.empty());
    for (const std::vector<float> &o : out.outputs)
      for (float v : o)
        ASSERT_TRUE(std::isfinite(v));
  }
}

TEST(Gpu, NoGpuIsReportedWithTheRuntimesReason) {
  if (noGpu().empty())
    GTEST_SKIP() << "this machine has a GPU";
  // Without a GPU the probe's message says why, as dprun's refusal does.
  EXPECT_NE(noGpu().find("cuda"), std::string::npos) << noGpu();
}

} // namespace
} // namespace dp::rt
