// Learning-rate schedules: data in the plan (`dpc compile --lr-schedule SPEC`), evaluated by
// the runtime before every train step as a factor on each optimizer's learning rate. Shared by
// the compiler (which parses and checks the text, and prints it) and the runtime (which reads it
// from the plan and evaluates it); nothing here throws, for the compiler's sake.
//
// A SPEC is an optional linear warmup, then one schedule, joined by '+':
//   constant                                the rate as compiled (the default)
//   step:every=E,factor=F                   times F after every E epochs (F^floor(t/E))
//   cosine:epochs=T[,min=M]                 cosine from 1 to M over T epochs, then M
//   plateau:patience=N,factor=F[,min=M][,threshold=R]
//                                           times F (floored at M) when the test loss has not
//                                           fallen by a relative R (default 1e-4) for N epochs
//   warmup-linear:epochs=K[,start=S]+...    from S to 1 over the first K epochs, linearly per
//                                           step (Goyal et al.'s gradual warmup), times the rest
// t is the epochs done before the step, with fractions (step s of an epoch of n steps: s/n).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dp::rt {

/// The schedule kinds; their values are part of the plan format (append only).
enum class LrScheduleKind : uint8_t { Constant = 0, Step = 1, Cosine = 2, Plateau = 3 };
inline constexpr unsigned kNumLrScheduleKinds = 4;

/// The spans a schedule may give in epochs (step's every, cosine's and the warmup's epochs).
inline constexpr double kMinScheduleEpochs = 1e-3, kMaxScheduleEpochs = 1e9;

struct LrSchedule {
  LrScheduleKind kind = LrScheduleKind::Constant;
  /// Linear warmup over `warmupEpochs` (0: none) from `warmupStart` to 1.
  double warmupEpochs = 0, warmupStart = 0;
  /// step: every `every` epochs times `factor`; plateau: times `factor`.
  double every = 0, factor = 1;
  /// cosine: over `epochs` epochs down to `minScale`; plateau: never below `minScale`.
  double epochs = 0, minScale = 0;
  /// plateau: epochs without a relative improvement of `threshold` before a reduction.
  int64_t patience = 0;
  double threshold = 1e-4;

  /// True when the runtime must evaluate the test loss after every epoch.
  bool needsEvaluation() const { return kind == LrScheduleKind::Plateau; }
  bool isConstant() const { return kind == LrScheduleKind::Constant && warmupEpochs == 0; }
};

/// Parses a SPEC (see above) into `out`; on failure returns false with a message naming the
/// part at fault in `error`. `defaultWarmupStart` is the warmup's start when the spec gives none.
bool parseLrSchedule(std::string_view text, double defaultWarmupStart, LrSchedule &out,
                     std::string &error);

/// Empty when every field of `s` is in range (finite, positive where it must be); otherwise
/// what is wrong. The plan loader refuses a plan whose schedule this rejects.
std::string checkLrSchedule(const LrSchedule &s);

/// The canonical SPEC of `s`, which parses back to `s`: "warmup-linear:epochs=5,start=0.25+
/// cosine:epochs=30,min=0".
std::string lrScheduleText(const LrSchedule &s);

/// The factor on the learning rate for a step taken after `epochsDone` epochs (with
/// fractions), `plateauScale` being the plateau's reductions so far (1 for other kinds).
double lrScaleAt(const LrSchedule &s, double epochsDone, double plateauScale = 1);

/// The state of a plateau schedule (and of early stopping) across epochs: the best test loss so
/// far and the epochs since it. Checkpoints keep it.
struct PlateauState {
  double scale = 1;
  double best = 0;
  bool haveBest = false;
  int64_t badEpochs = 0;

  /// Records an epoch's test `loss`; returns true when it improved on the best by a relative
  /// `threshold` (or is the first).
  bool record(double loss, double threshold);
};

/// After an epoch's test `loss`: updates `state` and, when the loss has not improved for
/// `s.patience` epochs, multiplies the scale by `s.factor` (not below `s.minScale`) and starts
/// counting again (Keras's ReduceLROnPlateau, without cooldown). Returns true on a reduction.
bool plateauStep(const LrSchedule &s, PlateauState &state, double loss);

} // namespace dp::rt
