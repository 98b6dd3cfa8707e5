// The CPU concat, slice and transpose kernels: pure data movement. Concat and slice along one
// axis are one memcpy per contiguous block (for each index before the axis, each input's run of
// axis x trailing elements): the same code moves f32 and i32 (a 4-byte element either way). A
// transpose is a oneDNN reorder from the input read through exchanged strides.
#include "runtime/backends/cpu/Dnnl.h"
#include "runtime/backends/cpu/Internal.h"

#include <cstring>
#include <vector>

namespace dp::rt::cpu {
namespace {

/// Copies `blocks` runs: run b of `bytes` from src + b * srcStride to dst + b * dstStride.
void copyBlocks(const char *src, int64_t srcStride, char *dst, int64_t dstStride, int64_t blocks,
                int64_t bytes) {
  for (int64_t b = 0; b < blocks; ++b)
    std::memcpy(dst + b * dstStride, src + b * srcStride, static_cast<size_t>(bytes));
}

class ConcatKernel final : public Kernel {
public:
  struct Part {
    const char *data;
    int64_t bytes; // per block
  };
  ConcatKernel(std::vector<Part> parts, char *y, int64_t blocks, int64_t rowBytes)
      : parts_(std::move(parts)), y_(y), blocks_(blocks), rowBytes_(rowBytes) {}
  void run(const StepContext &) override {
    int64_t offset = 0;
    for (const Part &p : parts_) {
      copyBlocks(p.data, p.bytes, y_ + offset, rowBytes_, blocks_, p.bytes);
      offset += p.bytes;
    }
  }

private:
  std::vector<Part> parts_;
  char *y_;
  int64_t blocks_, rowBytes_;
};

class SliceKernel final : public Kernel {
public:
  SliceKernel(const char *x, int64_t xRowBytes, char *y, int64_t blocks, int64_t bytes)
      : x_(x), xRowBytes_(xRowBytes), y_(y), blocks_(blocks), bytes_(bytes) {}
  void run(const StepContext &) override {
    copyBlocks(x_, xRowBytes_, y_, bytes_, blocks_, bytes_);
  }

private:
  const char *x_;
  int64_t xRowBytes_;
  char *y_;
  int64_t blocks_, bytes_;
};

} // namespace

std::unique_ptr<Kernel> makeConcat(const KernelSite &site, const AxisAttrs &attrs, ConcatShape s) {
  std::vector<ConcatKernel::Part> parts;
  for (int i = 0; i < site.numInputs(); ++i)
    parts.push_back({static_cast<const char *>(site.input(i).data), s.partBytes[i]});
  return std::make_unique<ConcatKernel>(std::move(parts), static_cast<char *>(site.output(0).data),
                                        s.blocks, s.outBytes);
}

std::unique_ptr<Kernel> makeSlice(const KernelSite &site, const SliceAttrs &attrs, SliceShape s) {
  return std::make_unique<SliceKernel>(
      static_cast<const char *>(site.input(0).data) + s.offsetBytes, s.inBytes,
      static_cast<char *>(site.output(0).data), s.blocks, s.outBytes);
}

std::unique_ptr<Kernel> makeTranspose(const KernelSite &site, const TransposeAttrs &,
                                      contract::TransposeShape s) {
  // y [outer, db, middle, da, inner] is plain; x is read in y's index order: its strides for
  // those axes are those of its own [outer, da, middle, db, inner].
  const dnnl::memory::dims dims{s.outer, s.db, s.middle, s.da, s.inner};
  const dnnl::memory::dims yStrides{s.db * s.middle * s.da * s.inner, s.middle * s.da * s.inner,
                                    s.da * s.inner, s.inner, 1};
  const dnnl::memory::dims xStrides{s.da * s.middle * s.db * s.inner, s.inner, s.db * s.inner,
                                    s.middle * s.db * s.inner, 1};
  // The reorder rounds an f32 x to a bf16 y to nearest even, as the cast does, but
  // its AVX-512 code flushes subnormals to zero (Bf16Test.RoundsAsOneDnnDoes).
  dnnl::memory x(plainDesc(dims, xStrides, site.input(0).dtype), cpuEngine(), site.input(0).data);
  dnnl::memory y(plainDesc(dims, yStrides, site.output(0).dtype), cpuEngine(), site.output(0).data);
  return std::make_unique<PrimitiveKernel>(
      reorderCall(x, y, site.where(), threadsFor(static_cast<double>(s.elements()))));
}

} // namespace dp::rt::cpu
