// Finite-difference check of a plan's gradients (see GradCheck.h).
#include "runtime/train/GradCheck.h"

#include "runtime/base/Error.h"
#include "runtime/core/Program.h"
#include "runtime/data/Random.h"
#include "runtime/train/PlanInfo.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace dp::rt {
namespace {

/// Buffer `id`'s values, read from its device.
template <typename T> std::vector<T> values(Program &program, uint32_t id) {
  std::vector<T> v(static_cast<size_t>(program.buffer(id).numel));
  program.read(id, v.data());
  return v;
}

/// Fills the inputs with random data: samples uniform in [0, 1) (token ids uniform over the
/// embedding's rows), targets uniform over the classes (a regression's uniform in [0, 1)).
void randomInputs(Program &program, uint64_t seed) {
  const Plan &plan = program.plan();
  int64_t classes = numClasses(plan);
  Rng rng(seed ^ 0x6a09e667f3bcc908ull);
  for (const InputDesc &input : plan.inputs) {
    const BufferDesc &buf = program.buffer(input.buffer);
    int64_t n = buf.numel;
    if (input.role == InputRole::Targets && buf.dtype == DType::F32) {
      // A regression's targets: floats in [0, 1), as the samples.
      std::vector<float> p(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<float>(rng.uniform());
      program.write(input.buffer, p.data());
    } else if (input.role == InputRole::Targets) {
      std::vector<int32_t> p(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<int32_t>(rng.below(static_cast<uint64_t>(classes)));
      program.write(input.buffer, p.data());
    } else if (buf.dtype == DType::I32) {
      // Token ids: uniform over the smallest embedding's rows.
      const int64_t vocabulary = std::max<int64_t>(1, tokenVocabulary(plan));
      std::vector<int32_t> p(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocabulary)));
      program.write(input.buffer, p.data());
    } else {
      std::vector<float> p(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        p[i] = static_cast<float>(rng.uniform());
      program.write(input.buffer, p.data());
    }
  }
}

} // namespace

int checkGradients(Plan loaded, const GradCheckOptions &options, std::ostream &out) {
  if (loaded.accumulation > 1)
    throw Error(ErrorKind::Plan,
                "--check-gradients checks a plan without gradient accumulation: the plan runs "
                "its step on " +
                    std::to_string(loaded.accumulation) +
                    " micro-shards (compile it again without --micro-batch)");
  Backend &backend = BackendRegistry::get(loaded.deviceKind);
  // As a run does before it allocates: a plan too big for the machine is refused with the
  // numbers, not killed half way into allocating its arena.
  backend.checkMemory(loaded.arenaBytes, loaded.devicesPerProcess, "the plan's arena");
  std::unique_ptr<Program> program = Program::load(std::move(loaded), &backend);
  const Plan &plan = program->plan();
  program->initParams(options.seed);
  randomInputs(*program, options.seed);
  // The loss the train step differentiates is its own 'loss' output: with batch statistics
  // where the model normalises batches (the eval step's loss uses the moving ones), with the
  // step's dropout masks. Finite differences are taken of it, by running the train step again
  // with one element moved; its updates are undone before each run.
  const int lossId = program->outputBuffer(StepKind::Train, OutputRole::Loss);
  if (lossId < 0 || program->buffer(static_cast<uint32_t>(lossId)).numel != 1 ||
      program->buffer(static_cast<uint32_t>(lossId)).dtype != DType::F32)
    throw Error(ErrorKind::Plan, "the train step has no f32 scalar loss output");
  // The same context for every run: the same step number and seed draw the same dropout
  // masks; a learning-rate factor of 0 leaves the parameters as they are where the optimizer
  // scales its whole update by the rate.
  StepContext ctx;
  ctx.validRows = plan.batch;
  ctx.batchRows = plan.batch;
  ctx.step = 1;
  ctx.seed = options.seed;
  ctx.lrScale = 0;

  // Every parameter as initialised, optimizer state and moving statistics included: each run
  // starts from these values, whatever the runs before it updated.
  std::vector<std::vector<float>> saved;
  for (const ParamDesc &p : plan.params)
    saved.push_back(values<float>(*program, p.buffer));
  auto restore = [&] {
    for (size_t i = 0; i < plan.params.size(); ++i)
      program->write(plan.params[i].buffer, saved[i].data());
  };
  program->run(StepKind::Train, ctx);
  std::vector<std::vector<float>> grads;
  for (const ParamDesc &p : plan.params)
    grads.push_back(p.grad >= 0 ? values<float>(*program, static_cast<uint32_t>(p.grad))
                                : std::vector<float>());

  // The kernels up to the last one that writes the loss are all a finite difference needs:
  // the forward pass, and what the compiler scheduled before its loss (the backward pass and
  // the updates come after it, and could only change what the restore undoes). A host device
  // runs just those on this thread; another runs the whole step.
  size_t lossEnd = plan.train.kernels.size();
  for (size_t k = 0; k < plan.train.kernels.size(); ++k)
    for (uint32_t id : plan.train.kernels[k].outputs)
      if (id == static_cast<uint32_t>(lossId))
        lossEnd = k + 1;
  const bool prefix = program->device(0).hostAccessible() && plan.collectives.empty();
  auto loss = [&] {
    if (prefix)
      program->runKernels(0, lossEnd, ctx);
    else
      program->run(StepKind::Train, ctx);
    return static_cast<double>(values<float>(*program, static_cast<uint32_t>(lossId))[0]);
  };
  int failures = 0;
  char line[256];
  for (size_t i = 0; i < plan.params.size(); ++i) {
    const ParamDesc &p = plan.params[i];
    if (p.grad < 0)
      continue;
    const std::vector<float> &data = saved[i];
    const int64_t n = static_cast<int64_t>(std::min(saved[i].size(), grads[i].size()));
    int samples = static_cast<int>(std::min<int64_t>(n, options.samplesPerParam));
    double worstAbs = 0, worstRel = 0;
    int checked = 0, kinks = 0;
    bool ok = true;
    auto lossWith = [&](int64_t e, float value) {
      restore();
      program->write(p.buffer, &value, static_cast<size_t>(e) * sizeof(float), sizeof(float));
      return loss();
    };
    auto centralDifference = [&](int64_t e, double h) {
      const float original = data[e];
      const double plus = lossWith(e, static_cast<float>(original + h));
      const double minus = lossWith(e, static_cast<float>(original - h));
      return (plus - minus) / (2 * h);
    };
    auto tolerance = [&](double scale) {
      return options.absTolerance + options.relTolerance * scale;
    };
    for (int s = 0; s < samples; ++s) {
      int64_t e = samples == 1 ? 0 : s * (n - 1) / (samples - 1);
      double fd = centralDifference(e, options.step);
      // Where two step sizes disagree the loss is not smooth around the point (a relu kink
      // inside the interval): no derivative to compare with, so the element is skipped.
      double fdFine = centralDifference(e, options.step / 4);
      if (std::fabs(fd - fdFine) > tolerance(std::max(std::fabs(fd), std::fabs(fdFine)))) {
        ++kinks;
        continue;
      }
      ++checked;
      double g = grads[i][e];
      double err = std::fabs(fd - g);
      double scale = std::max(std::fabs(fd), std::fabs(g));
      worstAbs = std::max(worstAbs, err);
      worstRel = std::max(worstRel, scale > 0 ? err / scale : 0.0);
      if (!(err <= tolerance(scale)))
        ok = false;
    }
    if (checked == 0)
      ok = false;
    failures += ok ? 0 : 1;
    std::snprintf(line, sizeof line,
                  "%-28s %5d checked %3d at kinks  max abs err %.2e  max rel err %.2e  %s",
                  p.name.c_str(), checked, kinks, worstAbs, worstRel, ok ? "ok" : "FAILED");
    out << line << "\n";
  }
  out << (failures ? "gradient check FAILED for " + std::to_string(failures) + " parameter(s)"
                   : std::string("gradient check passed"))
      << "\n";
  return failures;
}

} // namespace dp::rt
