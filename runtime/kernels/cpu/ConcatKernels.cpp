// The CPU concat and slice kernels: pure data movement along one axis, as one memcpy per
// contiguous block (for each index before the axis, each input's run of axis x trailing
// elements). The same code moves f32 and i32 (a 4-byte element either way).
#include "runtime/kernels/cpu/Internal.h"

#include <string>
#include <vector>

namespace dp::rt::cpu {
namespace {

std::string named(const char *role, size_t i, const TensorView &t) {
  return std::string(role) + " " + std::to_string(i) + " (buffer " + std::to_string(t.id) + ")";
}

/// Elements before `axis` (the blocks) and after it (the trailing run) of `shape`.
int64_t product(const std::vector<int64_t> &shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d)
    p *= shape[d];
  return p;
}

/// Checks that `part` has `whole`'s rank, dtype and sizes on every axis but `axis`.
void expectPart(const KernelSite &site, const TensorView &whole, const TensorView &part,
                int64_t axis, const std::string &role) {
  if (part.dtype != whole.dtype || part.rank() != whole.rank())
    site.fail(role + " is " + dtypeName(part.dtype) + " of rank " + std::to_string(part.rank()) +
              ", expected " + dtypeName(whole.dtype) + " of rank " +
              std::to_string(whole.rank()));
  for (int64_t d = 0; d < whole.rank(); ++d)
    if (d != axis && part.dim(d) != whole.dim(d))
      site.fail(role + " has size " + std::to_string(part.dim(d)) + " on axis " +
                std::to_string(d) + ", expected " + std::to_string(whole.dim(d)));
}

int64_t checkedAxis(const KernelSite &site, int64_t axis, const TensorView &t) {
  if (axis < 0 || axis >= t.rank())
    site.fail("axis " + std::to_string(axis) + " is outside rank " + std::to_string(t.rank()));
  return axis;
}

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

std::unique_ptr<Kernel> makeConcat(const KernelSite &site, const AxisAttrs &attrs) {
  const TensorView y = site.output(0);
  const int64_t axis = checkedAxis(site, attrs.axis, y);
  const int64_t blocks = product(y.shape, 0, axis);
  const int64_t trailing = product(y.shape, axis + 1, y.rank()) * dtypeSize(y.dtype);
  std::vector<ConcatKernel::Part> parts;
  int64_t total = 0;
  for (int i = 0; i < site.numInputs(); ++i) {
    const TensorView x = site.input(i);
    expectPart(site, y, x, axis, named("input", i, x));
    parts.push_back({static_cast<const char *>(x.data), x.dim(axis) * trailing});
    total += x.dim(axis);
  }
  if (total != y.dim(axis))
    site.fail("the inputs' sizes along axis " + std::to_string(axis) + " add up to " +
              std::to_string(total) + ", output 0 (buffer " + std::to_string(y.id) + ") has " +
              std::to_string(y.dim(axis)));
  return std::make_unique<ConcatKernel>(std::move(parts), static_cast<char *>(y.data), blocks,
                                        y.dim(axis) * trailing);
}

std::unique_ptr<Kernel> makeSlice(const KernelSite &site, const SliceAttrs &attrs) {
  const TensorView x = site.input(0), y = site.output(0);
  const int64_t axis = checkedAxis(site, attrs.axis, x);
  expectPart(site, x, y, axis, named("output", 0, y));
  if (attrs.offset < 0 || attrs.offset + y.dim(axis) > x.dim(axis))
    site.fail("elements [" + std::to_string(attrs.offset) + ", " +
              std::to_string(attrs.offset + y.dim(axis)) + ") along axis " +
              std::to_string(axis) + " are outside input 0's " + std::to_string(x.dim(axis)));
  const int64_t trailing = product(x.shape, axis + 1, x.rank()) * dtypeSize(x.dtype);
  return std::make_unique<SliceKernel>(static_cast<const char *>(x.data) + attrs.offset * trailing,
                                       x.dim(axis) * trailing, static_cast<char *>(y.data),
                                       product(x.shape, 0, axis), y.dim(axis) * trailing);
}

} // namespace dp::rt::cpu
