#include "test/onnx-conformance/RunPlan.h"

#include "runtime/backends/Backends.h"
#include "runtime/base/Error.h"
#include "runtime/core/Program.h"

#include <cstring>

namespace dp::conformance {

std::string runEval(const std::string &planPath, const std::vector<float> &samples,
                    std::vector<float> &predictions) {
  using namespace dp::rt;
  try {
    registerBuiltinBackends();
    std::unique_ptr<Program> program = Program::load(Plan::read(planPath));
    program->initParams(0);
    const int x = program->inputBuffer(InputRole::Samples);
    const int targets = program->inputBuffer(InputRole::Targets);
    const int logits = program->outputBuffer(StepKind::Eval, OutputRole::Logits);
    if (x < 0 || targets < 0 || logits < 0)
      return "the plan has no samples, targets or predictions buffer";
    const BufferDesc &in = program->buffer(uint32_t(x));
    if (in.dtype != DType::F32 || size_t(in.numel) != samples.size())
      return "the plan's samples buffer holds " + std::to_string(in.numel) + " elements, not " +
             std::to_string(samples.size()) + " floats";
    program->write(uint32_t(x), samples.data());
    const BufferDesc &t = program->buffer(uint32_t(targets));
    std::vector<char> zeros(t.bytes(), 0);
    program->write(uint32_t(targets), zeros.data());
    const int64_t rows = in.shape.empty() ? 1 : in.shape[0];
    StepContext ctx;
    ctx.validRows = rows;
    ctx.batchRows = rows;
    program->run(StepKind::Eval, ctx);
    const BufferDesc &out = program->buffer(uint32_t(logits));
    if (out.dtype != DType::F32)
      return "the predictions are not f32";
    predictions.assign(size_t(out.numel), 0.0f);
    program->read(uint32_t(logits), predictions.data());
    return "";
  } catch (const Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace dp::conformance
