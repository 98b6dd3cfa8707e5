// --save-params FILE: the trained parameters, written by the printing process at the end; see
// Callbacks.h and Run.h (dumpParams).
#include "runtime/train/callbacks/Callbacks.h"

#include "runtime/base/Files.h"

namespace dp::rt {

void dumpParams(Program &program, const std::string &path) {
  std::string image;
  for (const ParamDesc &p : program.plan().params) {
    const BufferDesc &b = program.buffer(p.buffer);
    if (b.device != 0)
      continue;
    image += p.name;
    image.push_back('\0');
    uint64_t count = static_cast<uint64_t>(b.numel);
    for (int i = 0; i < 8; ++i)
      image.push_back(static_cast<char>((count >> (8 * i)) & 0xff));
    const size_t at = image.size();
    image.resize(at + b.bytes());
    program.read(p.buffer, &image[at]);
  }
  writeFileAtomically(path, image);
}

namespace {

/// --save-params FILE: the trained parameters (dumpParams), written by the printing process.
class SaveParams final : public RunCallback {
public:
  using RunCallback::RunCallback;

  void onRunEnd() override {
    if (s_.printer)
      dumpParams(s_.job.program(), s_.options.paramsPath);
  }
};

} // namespace

std::unique_ptr<Callback> makeSaveParams(RunState &state) {
  return std::make_unique<SaveParams>(state);
}

} // namespace dp::rt
