// The checks every path of dprun makes of a plan before it runs it; see PlanCheck.h.
#include "runtime/train/PlanCheck.h"

#include "runtime/base/Error.h"
#include "runtime/core/Program.h"
#include "runtime/kernels/Contract.h"
#include "runtime/train/PlanInfo.h"

namespace dp::rt {
namespace {

/// What checkRunnable checks of one plan's own records (the workers' plan, or a server's),
/// each refusal prefixed by `what`.
void checkOwnRecords(const Plan &plan, const std::string &what) {
  try {
    contract::checkStepKernels(plan);
    Program::checkPlan(plan);
    for (const ParamDesc &p : plan.params) {
      if (p.grad < 0)
        continue;
      // --check-gradients reads a parameter's gradient element by element.
      const BufferDesc &param = plan.buffers[p.buffer];
      const BufferDesc &grad = plan.buffers[static_cast<uint32_t>(p.grad)];
      if (grad.dtype != DType::F32 || grad.numel != param.numel || grad.device != param.device)
        throw Error(ErrorKind::Plan, "param '" + p.name + "' (" + param.text() +
                                         ") has gradient buffer " + std::to_string(p.grad) +
                                         " of " + grad.text() + " on device " +
                                         std::to_string(grad.device) +
                                         ": a gradient is f32 of its parameter's size, on its "
                                         "device");
    }
  } catch (const Error &e) {
    if (e.kind() != ErrorKind::Plan)
      throw;
    throw Error(ErrorKind::Plan, what + ": " + e.what());
  }
}

} // namespace

void checkTrainingInterface(const Plan &plan, const std::string &path) {
  auto fail = [&](const std::string &problem) {
    throw Error(ErrorKind::Plan, path + ": " + problem);
  };
  const int replicas = plan.devicesPerProcess, processes = plan.processes;
  const int64_t batch = plan.batch;
  const int64_t shards = int64_t(replicas) * processes * plan.accumulation;
  if (batch % shards != 0)
    fail("global batch " + std::to_string(batch) + " is not a multiple of " +
         std::to_string(replicas) + " x " + std::to_string(processes) + " replicas x " +
         std::to_string(plan.accumulation) + " micro-shards");
  const int64_t shardRows = batch / shards;
  auto scalarOutput = [&](StepKind step, OutputRole role, bool required, int d) {
    const OutputDesc *out = plan.output(step, role, d);
    const std::string stepName = step == StepKind::Train ? "train" : "eval";
    if (!out) {
      if (required)
        fail("the " + stepName + " step has no " + outputRoleName(role) + " output" +
             (replicas > 1 ? " on device " + std::to_string(d) : std::string()));
      return;
    }
    const BufferDesc &b = plan.buffers[out->buffer];
    if (b.dtype != DType::F32 || b.numel != 1)
      fail("the " + stepName + " step's " + outputRoleName(role) + " output '" + out->name +
           "' is " + b.text() + ", expected an f32 scalar");
  };
  for (int d = 0; d < replicas; ++d) {
    const InputDesc *samples = plan.input(InputRole::Samples, d);
    const InputDesc *targets = plan.input(InputRole::Targets, d);
    if (!samples || !targets)
      fail(std::string("the plan has no ") + (samples ? "targets" : "samples") + " input" +
           (replicas > 1 ? " on device " + std::to_string(d) : std::string()) +
           "; dprun feeds one samples and one targets input");
    const BufferDesc &image = plan.buffers[samples->buffer];
    const BufferDesc &label = plan.buffers[targets->buffer];
    // Pixels as floats, or token ids (i32) an embedding looks up.
    if ((image.dtype != DType::F32 && image.dtype != DType::I32) || image.shape.size() < 2 ||
        image.shape[0] != shardRows || image.numel % shardRows != 0)
      fail("samples input '" + samples->name + "' is " + image.text() + ", expected f32 or i32[" +
           std::to_string(shardRows) + ", ...] (batch " + std::to_string(batch) +
           (shardRows != batch ? " split into " + std::to_string(shards) + " shards"
                               : std::string()) +
           ")");
    // Class labels, or a regression's rows of float targets.
    const bool regression = label.dtype == DType::F32;
    if (regression ? label.shape.size() != 2 || label.shape[0] != shardRows || label.numel < 1
                   : label.dtype != DType::I32 || label.numel != shardRows)
      fail("targets input '" + targets->name + "' is " + label.text() + ", expected i32[" +
           std::to_string(shardRows) + "] (class labels) or f32[" + std::to_string(shardRows) +
           ", K] (a regression's targets)");
    // The loop gathers every replica's shard with device 0's sample size.
    if (d > 0 && (image.shape != plan.buffers[plan.input(InputRole::Samples, 0)->buffer].shape ||
                  label.shape != plan.buffers[plan.input(InputRole::Targets, 0)->buffer].shape))
      fail("device " + std::to_string(d) + "'s inputs '" + samples->name + "' " + image.text() +
           " and '" + targets->name + "' " + label.text() +
           " differ from device 0's: every replica runs the same step");
    scalarOutput(StepKind::Train, OutputRole::Loss, true, d);
    scalarOutput(StepKind::Train, OutputRole::Correct, false, d);
    scalarOutput(StepKind::Eval, OutputRole::Loss, true, d);
    // A classifier's eval step counts its right predictions; a regression has no count.
    scalarOutput(StepKind::Eval, OutputRole::Correct, !regression, d);
    // The predictions (plans of dpc before them have none): a row per sample of the shard.
    if (const OutputDesc *out = plan.output(StepKind::Eval, OutputRole::Logits, d)) {
      const BufferDesc &b = plan.buffers[out->buffer];
      if ((b.dtype != DType::F32 && b.dtype != DType::BF16) || b.shape.size() != 2 ||
          b.shape[0] != shardRows)
        fail("the eval step's logits output '" + out->name + "' is " + b.text() +
             ", expected f32 or bf16 [" + std::to_string(shardRows) + ", classes]");
    }
    if (const OutputDesc *out = plan.output(StepKind::Train, OutputRole::Logits, d))
      fail("the train step has a logits output '" + out->name +
           "': only the eval step's "
           "predictions are read");
  }
}

void checkRunnable(const Plan &plan, const std::string &path) {
  checkOwnRecords(plan, path);
  for (size_t s = 0; s < plan.servers.size(); ++s)
    checkOwnRecords(plan.servers[s], path + " (server " + std::to_string(s) + ")");
  checkTrainingInterface(plan, path);
  // Labels are bytes; the data loader checks them against the classes. (A regression's
  // targets are floats.)
  const int64_t classes = numClasses(plan);
  if (targetWidth(plan) == 0 && (classes < 1 || classes > 256))
    throw Error(ErrorKind::Plan, path + ": the model predicts " + std::to_string(classes) +
                                     " classes; byte labels allow 1 to 256");
  if (plan.parameterServer() && !plan.lrSchedule.isConstant())
    throw Error(ErrorKind::Plan, path + ": parameter servers do not apply learning-rate "
                                        "schedules yet; compile it without --lr-schedule");
  if (plan.deviceKind == DeviceKind::Cuda)
    for (const CollectiveDesc &c : plan.collectives)
      if (c.dtype != DType::F32)
        throw Error(ErrorKind::Plan, path + ": bucket " + std::to_string(c.bucket) +
                                         " crosses the processes as " + dtypeName(c.dtype) +
                                         ": NCCL's engine averages f32 buckets only so far");
}

} // namespace dp::rt
