// A loaded plan ready to run: the arena, the parameters, and for each step (train, eval) the
// list of kernels with their backend primitives, all created once at load time so that a step
// does no allocation and no primitive creation.
#pragma once

#include "runtime/format/PlanFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dp::rt {

enum class StepKind { Train, Eval };

/// Per-call facts a kernel may need.
struct StepContext {
  /// Rows of the batch that hold real samples (the rest is padding in a short last batch).
  int64_t validRows = 0;
  /// 1-based count of train steps run so far including this one (Adam's bias correction).
  int64_t step = 1;
};

/// One kernel of a step, bound to its buffers. Backends implement it.
class Kernel {
public:
  virtual ~Kernel() = default;
  virtual void run(const StepContext &ctx) = 0;
};

class Program {
public:
  /// Allocates the arena and creates every kernel of both steps. Throws Error on failure.
  static std::unique_ptr<Program> load(PlanFile plan);
  ~Program();

  const fb::Plan &plan() const { return file_.plan(); }
  const PlanFile &file() const { return file_; }

  /// Draws every parameter from its initialiser; `seed` makes the draw reproducible and the
  /// value of a parameter depends only on (seed, its name), not on the order of parameters.
  void initParams(uint64_t seed);

  void *bufferData(uint32_t id);
  const fb::Buffer &buffer(uint32_t id) const { return *plan().buffers()->Get(id); }
  /// The buffer bound to the named input, or -1.
  int inputBuffer(const std::string &name) const;
  /// The buffer of the named output of a step ("loss", "correct"), or -1.
  int outputBuffer(StepKind step, const std::string &name) const;

  /// Runs every kernel of the step in order.
  void run(StepKind step, const StepContext &ctx);

  size_t arenaBytes() const { return plan().arena_bytes(); }

private:
  explicit Program(PlanFile file);
  PlanFile file_;
  struct Arena;
  std::unique_ptr<Arena> arena_;
  std::vector<std::unique_ptr<Kernel>> train_, eval_;
};

} // namespace dp::rt
