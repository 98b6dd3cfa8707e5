// The CUDA backend's own kernels, written once as host-and-device code: what one thread does
// for one element. nvcc compiles these into the CUDA kernels (OwnKernels.cu launches them over
// grid-stride loops); the host compiler compiles the same source for the tests that check them
// against the reference kernels on a machine without a GPU. Nothing here may use the standard
// library beyond <cmath> functions that CUDA provides on the device, or anything that throws.
#pragma once

#include "runtime/base/HostDevice.h"
#include "runtime/format/Enums.h"

#include <cmath>
#include <cstdint>

namespace dp::rt::cuda {

// ------------------------------------------------------------------- elementwise and losses

/// act(x) for the activations applied element by element (softmax is per row: not here).
DP_HOST_DEVICE inline float activate(Activation act, float x) {
  switch (act) {
  case Activation::Relu:
    return x > 0.0f ? x : 0.0f;
  case Activation::Sigmoid:
    return 1.0f / (1.0f + expf(-x));
  case Activation::Tanh:
    return tanhf(x);
  default:
    return x;
  }
}

/// Element i of a dense layer's or convolution's epilogue over rows of `cols`:
/// act(y + b[column]) (no bias when b is null; not softmax, which is per row).
DP_HOST_DEVICE inline float biasActivationElement(const float *y, const float *b, int64_t cols,
                                                  Activation act, int64_t i) {
  return activate(act, b ? y[i] + b[i % cols] : y[i]);
}

/// Element i of add_rows: x's element plus the bias's element of its column.
DP_HOST_DEVICE inline float addRowsElement(const float *x, const float *b, int64_t cols,
                                           int64_t i) {
  return x[i] + b[i % cols];
}

/// dy * act'(x) expressed through the forward output y = act(x).
DP_HOST_DEVICE inline float activationGrad(Activation act, float y, float dy) {
  switch (act) {
  case Activation::Relu:
    return y > 0.0f ? dy : 0.0f;
  case Activation::Sigmoid:
    return dy * y * (1.0f - y);
  case Activation::Tanh:
    return dy * (1.0f - y * y);
  default:
    return dy;
  }
}

// ----------------------------------------------------------------------- optimizer updates

/// Plain SGD: param -= lr * grad.
DP_HOST_DEVICE inline void sgdElement(float *param, float g, int64_t i, float lr) {
  param[i] -= lr * g;
}

/// Keras 2 momentum SGD: v = mu v - lr g; param += v (Nesterov: param += mu v - lr g).
DP_HOST_DEVICE inline void momentumElement(float *param, float *velocity, float g, int64_t i,
                                           float lr, float mu, bool nesterov) {
  const float v = mu * velocity[i] - lr * g;
  velocity[i] = v;
  param[i] += nesterov ? mu * v - lr * g : v;
}

/// The constants of one Adam step, the bias correction folded into the step size, formed in
/// double as the CPU backend forms them. A captured step reads its step number from device
/// memory, so each GPU thread forms them once per launch.
struct AdamStep {
  float lrT, beta1, beta2, oneMinusBeta1, oneMinusBeta2, epsilon;
};

/// The constants of Adam at 1-based step `t` (`torchEpsilon`: PyTorch's epsilon, added to the
/// corrected sqrt(v_hat), which is Keras's times sqrt(1 - beta2^t)).
DP_HOST_DEVICE inline AdamStep adamStep(double lr, double beta1, double beta2, double epsilon,
                                        int64_t t, bool torchEpsilon = false) {
  const double step = static_cast<double>(t);
  AdamStep s;
  s.lrT = static_cast<float>(lr * sqrt(1.0 - pow(beta2, step)) / (1.0 - pow(beta1, step)));
  s.beta1 = static_cast<float>(beta1);
  s.beta2 = static_cast<float>(beta2);
  // 1 - beta in double: in f32, 1 - 0.999f is off by 1e-5 relative.
  s.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
  s.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
  s.epsilon = static_cast<float>(torchEpsilon ? epsilon * sqrt(1.0 - pow(beta2, step)) : epsilon);
  return s;
}

/// Keras 2 Adam: m, v moving moments of the gradient; param -= lrT m / (sqrt(v) + eps).
DP_HOST_DEVICE inline void adamElement(float *param, float *m, float *v, float g, int64_t i,
                                       const AdamStep &s) {
  const float mi = s.beta1 * m[i] + s.oneMinusBeta1 * g;
  const float vi = s.beta2 * v[i] + s.oneMinusBeta2 * g * g;
  m[i] = mi;
  v[i] = vi;
  param[i] -= s.lrT * mi / (sqrtf(vi) + s.epsilon);
}

// --------------------------------------------------------------------- optimizer update

/// One parameter of an optimizer update: its values, its gradient, its optimizer state (null
/// where the optimizer keeps less) and its element count.
struct TensorSegment {
  float *param;
  const float *grad;
  float *state0; // momentum: velocity; Adam: m
  float *state1; // Adam: v
  int64_t elements;
  /// The gradient's scale in device memory (a clip_factor's), null for 1.
  const float *scale = nullptr;
};

/// Which optimizer an update applies, with its constants as the plan gives them (Adam's step
/// size depends on the step number as well: see stepOf).
struct UpdateRule {
  enum class Kind : uint8_t { Sgd, Momentum, Adam } kind = Kind::Sgd;
  double lr = 0, momentum = 0, beta1 = 0, beta2 = 0, epsilon = 0;
  /// Decoupled weight decay (0: none): param -= lr * weightDecay * param before the update.
  double weightDecay = 0;
  bool nesterov = false, torchEpsilon = false;
};

/// `rule` with its rate times the schedule's factor of the step (StepContext::lrScale).
DP_HOST_DEVICE inline UpdateRule scheduled(UpdateRule rule, double lrScale) {
  rule.lr *= lrScale;
  return rule;
}

/// Adam's constants of `rule` at 1-based step `t` (unused by the other rules).
DP_HOST_DEVICE inline AdamStep stepOf(const UpdateRule &rule, int64_t t) {
  return rule.kind == UpdateRule::Kind::Adam
             ? adamStep(rule.lr, rule.beta1, rule.beta2, rule.epsilon, t, rule.torchEpsilon)
             : AdamStep{};
}

/// Element i of the update of one tensor by `rule`; `adam` is stepOf(rule, step).
DP_HOST_DEVICE inline void updateTensorElement(const TensorSegment &seg, int64_t i,
                                               const UpdateRule &rule, const AdamStep &adam) {
  // The scaled gradient, as the CPU backend forms it (times 1 without a scale: the same bits).
  const float g = seg.grad[i] * (seg.scale ? *seg.scale : 1.0f);
  // Decoupled weight decay at the scheduled rate (not Adam's bias-corrected step), first: the
  // CPU backend's separate pass, element by element.
  if (rule.weightDecay != 0)
    seg.param[i] -=
        static_cast<float>(rule.lr) * static_cast<float>(rule.weightDecay) * seg.param[i];
  switch (rule.kind) {
  case UpdateRule::Kind::Sgd:
    sgdElement(seg.param, g, i, static_cast<float>(rule.lr));
    break;
  case UpdateRule::Kind::Momentum:
    momentumElement(seg.param, seg.state0, g, i, static_cast<float>(rule.lr),
                    static_cast<float>(rule.momentum), rule.nesterov);
    break;
  case UpdateRule::Kind::Adam:
    adamElement(seg.param, seg.state0, seg.state1, g, i, adam);
    break;
  }
}

} // namespace dp::rt::cuda
