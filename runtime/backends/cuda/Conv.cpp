// The cuDNN convolution adapter's translation; see Conv.h.
#include "runtime/backends/cuda/Conv.h"

#include <climits>

namespace dp::rt::cuda {

size_t ConvPlan::paddedBytes() const {
  return explicitPad ? static_cast<size_t>(n * inH * inW * c) * sizeof(float) : 0;
}

size_t ConvPlan::filterBytes() const {
  return static_cast<size_t>(f * kh * kw * groupChannels()) * sizeof(float);
}

ConvPlan convPlan(const contract::ConvShape &s) {
  ConvPlan p;
  p.n = s.n, p.c = s.c, p.f = s.f, p.kh = s.kh, p.kw = s.kw;
  p.groups = s.g, p.dilationH = s.dh, p.dilationW = s.dw;
  p.strideH = s.sh, p.strideW = s.sw;
  p.outH = s.oh, p.outW = s.ow;
  p.explicitPad = s.pt != s.pb || s.pl != s.pr;
  if (p.explicitPad) {
    p.pad = {s.n, s.h, s.w, s.c, s.pt, s.pl, s.h + s.pt + s.pb, s.w + s.pl + s.pr};
    p.inH = p.pad.ph, p.inW = p.pad.pw;
  } else {
    p.inH = s.h, p.inW = s.w;
    p.padH = s.pt, p.padW = s.pl;
  }
  return p;
}

std::string convProblem(const ConvPlan &p) {
  for (int64_t v : {p.n, p.c, p.inH, p.inW, p.padH, p.padW, p.strideH, p.strideW, p.f, p.kh, p.kw,
                    p.outH, p.outW, p.groups, p.dilationH, p.dilationW})
    if (v > INT_MAX)
      return "a dimension of " + std::to_string(v) + " exceeds cuDNN's 32-bit descriptors";
  // cuDNN's legacy descriptors also take each tensor's element count as an int.
  for (int64_t count : {p.n * p.inH * p.inW * p.c, p.n * p.outH * p.outW * p.f,
                        p.f * p.kh * p.kw * p.groupChannels()})
    if (count > INT_MAX)
      return "a tensor of " + std::to_string(count) +
             " elements exceeds cuDNN's 32-bit descriptors (split the batch over more devices)";
  return {};
}

AlgoChoice chooseAlgorithm(const std::vector<AlgoCandidate> &ranked, size_t workspaceLimit) {
  AlgoChoice choice;
  for (int pass = 0; pass < 2 && choice.index < 0; ++pass)
    for (size_t i = 0; i < ranked.size(); ++i) {
      const AlgoCandidate &a = ranked[i];
      if (a.supported && a.workspace <= workspaceLimit && (pass == 1 || a.deterministic)) {
        choice.index = static_cast<int>(i);
        break;
      }
    }
  if (choice.index < 0) {
    choice.why = "none of cuDNN's " + std::to_string(ranked.size()) + " algorithms";
    size_t least = SIZE_MAX;
    bool anySupported = false;
    for (const AlgoCandidate &a : ranked)
      if (a.supported) {
        anySupported = true;
        least = a.workspace < least ? a.workspace : least;
      }
    choice.why += anySupported
                      ? " fits the workspace limit of " + std::to_string(workspaceLimit >> 20) +
                            " MiB (the smallest needs " +
                            std::to_string((least + (1 << 20) - 1) >> 20) + " MiB)"
                      : " supports this convolution";
  }
  return choice;
}

} // namespace dp::rt::cuda
