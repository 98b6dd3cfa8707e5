// The cuDNN convolution adapter's translation, as pure functions tested on the host: how one of
// dp's convolutions (NHWC images, HWIO kernels, any zero padding on each side) becomes cuDNN's
// (NHWC images, KRSC filters, one symmetric padding per axis), and which algorithm of cuDNN's
// ranked list a kernel takes. The cuDNN calls themselves are in CudaKernels.cpp.
#pragma once

#include "runtime/backends/cuda/ImageOps.h"
#include "runtime/kernels/Contract.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dp::rt::cuda {

/// What cuDNN is asked to convolve for one of dp's convolutions.
struct ConvPlan {
  /// cuDNN pads symmetrically; a convolution padded differently above and below (or left and
  /// right) is given an explicitly zero-padded copy of its image instead (`explicitPad`, with
  /// cuDNN's padding 0). The forward and filter gradient pad x into it; the input gradient
  /// computes the padded image's gradient there and crops it into dx.
  bool explicitPad = false;
  Pad pad{};
  /// The image cuDNN sees, [n, inH, inW, c] NHWC, its symmetric padding and strides.
  int64_t n = 0, c = 0, inH = 0, inW = 0, padH = 0, padW = 0, strideH = 1, strideW = 1;
  /// The filter cuDNN sees: [f, kh, kw, c / groups] (KRSC, cuDNN's NHWC filter format); dp's
  /// HWIO kernel is transposed into it (and a filter gradient back). Filter group g reads
  /// channel group g (cudnnSetConvolutionGroupCount); taps are dilationH (W) apart.
  int64_t f = 0, kh = 0, kw = 0, groups = 1, dilationH = 1, dilationW = 1;
  /// Channels per group: the filter's C.
  int64_t groupChannels() const { return c / groups; }
  /// The output, [n, outH, outW, f]: dp's [N, OH, OW, F] exactly.
  int64_t outH = 0, outW = 0;
  /// Bytes of the padded image (0 unless explicitPad) and of the KRSC filter.
  size_t paddedBytes() const;
  size_t filterBytes() const;
};

/// The plan of `s`.
ConvPlan convPlan(const contract::ConvShape &s);

/// Empty when every dimension fits cuDNN's 32-bit descriptors; else why not.
std::string convProblem(const ConvPlan &p);

/// One entry of cuDNN's ranked algorithm list (cudnnGetConvolution*Algorithm_v7), in plain
/// terms: its number, whether cuDNN can run it here (status CUDNN_STATUS_SUCCESS), the
/// workspace it needs and whether its results are the same on every run.
struct AlgoCandidate {
  int algo = 0;
  bool supported = false;
  size_t workspace = 0;
  bool deterministic = false;
};

/// The algorithm a kernel takes, chosen once at load: cuDNN ranks them fastest first; dp takes
/// the first supported, deterministic one within `workspaceLimit` (runs repeat bit for bit, as
/// on the CPU), else the first supported one within the limit. `index` is -1 when none fits,
/// and `why` then says what was offered.
struct AlgoChoice {
  int index = -1;
  std::string why;
};
AlgoChoice chooseAlgorithm(const std::vector<AlgoCandidate> &ranked, size_t workspaceLimit);

} // namespace dp::rt::cuda
