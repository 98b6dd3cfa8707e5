// Naive reference implementations of concatenation and slicing along one axis and of
// transposition: the oracles of the backends' concat, slice and transpose kernels.
// Element-by-element index arithmetic, obviously correct; templated on the element type (f32, i32,
// double).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dp::rt::ref {

/// The row-major index of `index` in a tensor of `shape`.
inline int64_t flatIndex(const std::vector<int64_t> &shape, const std::vector<int64_t> &index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + index[d];
  return flat;
}

/// Advances `index` through `shape` in row-major order; false after the last element.
inline bool nextIndex(const std::vector<int64_t> &shape, std::vector<int64_t> &index) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

/// y = the inputs joined along `axis`: input i's element at index j lands at j shifted by the
/// sizes of inputs 0..i-1 along `axis`. `shapes[i]` is input i's shape.
template <typename T>
void concat(const std::vector<const T *> &inputs, const std::vector<std::vector<int64_t>> &shapes,
            int64_t axis, T *y) {
  std::vector<int64_t> outShape = shapes[0];
  outShape[axis] = 0;
  for (const auto &s : shapes)
    outShape[axis] += s[axis];
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> index(shapes[i].size(), 0);
    do {
      std::vector<int64_t> out = index;
      out[axis] += offset;
      y[flatIndex(outShape, out)] = inputs[i][flatIndex(shapes[i], index)];
    } while (nextIndex(shapes[i], index));
    offset += shapes[i][axis];
  }
}

/// y[shape with `size` along axis] = x[xShape] at [offset, offset + size) along `axis`.
template <typename T>
void slice(const T *x, const std::vector<int64_t> &xShape, int64_t axis, int64_t offset,
           int64_t size, T *y) {
  std::vector<int64_t> shape = xShape;
  shape[axis] = size;
  std::vector<int64_t> index(shape.size(), 0);
  do {
    std::vector<int64_t> in = index;
    in[axis] += offset;
    y[flatIndex(shape, index)] = x[flatIndex(xShape, in)];
  } while (nextIndex(shape, index));
}

/// y = x[xShape] with its axes in the order `permutation`: y's axis i is x's axis
/// permutation[i], so y[j] = x[k] where k[permutation[i]] = j[i].
template <typename T>
void transpose(const T *x, const std::vector<int64_t> &xShape,
               const std::vector<int64_t> &permutation, T *y) {
  std::vector<int64_t> shape;
  for (int64_t axis : permutation)
    shape.push_back(xShape[axis]);
  std::vector<int64_t> index(shape.size(), 0), in(shape.size());
  for (int64_t d : shape)
    if (d == 0)
      return;
  do {
    for (size_t i = 0; i < permutation.size(); ++i)
      in[permutation[i]] = index[i];
    y[flatIndex(shape, index)] = x[flatIndex(xShape, in)];
  } while (nextIndex(shape, index));
}

} // namespace dp::rt::ref
