// Learning-rate schedules; see LrSchedule.h.
#include "runtime/format/LrSchedule.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace dp::rt {
namespace {

const char *kindName(LrScheduleKind k) {
  switch (k) {
  case LrScheduleKind::Constant:
    return "constant";
  case LrScheduleKind::Step:
    return "step";
  case LrScheduleKind::Cosine:
    return "cosine";
  case LrScheduleKind::Plateau:
    return "plateau";
  }
  return "?";
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", v);
  // The shortest form that reads back, with every digit of the integer part (30, not 3e+01).
  const double magnitude = std::fabs(v);
  const int whole = magnitude >= 1 && magnitude < 1e15 ? int(std::log10(magnitude)) + 1 : 1;
  std::string best = text;
  for (int digits = whole; digits <= 17; ++digits) {
    char shorter[40];
    std::snprintf(shorter, sizeof(shorter), "%.*g", digits, v);
    if (std::strtod(shorter, nullptr) == v) {
      best = shorter;
      break;
    }
  }
  // No '+' in an exponent (1e15, not 1e+15): '+' joins the parts of a schedule's text.
  if (const size_t plus = best.find("e+"); plus != std::string::npos)
    best.erase(plus + 1, 1);
  return best;
}

/// Where `sep` next separates parts of `text` from `from` on: a '+' right after an exponent's
/// 'e' and before a digit (1e+15) belongs to the number.
size_t findSeparator(std::string_view text, char sep, size_t from) {
  for (size_t at = text.find(sep, from); at != std::string_view::npos;
       at = text.find(sep, at + 1)) {
    auto digit = [&](size_t i) {
      return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
    };
    const bool exponent = sep == '+' && at >= 2 &&
                          (text[at - 1] == 'e' || text[at - 1] == 'E') &&
                          (digit(at - 2) || text[at - 2] == '.') && digit(at + 1);
    if (!exponent)
      return at;
  }
  return std::string_view::npos;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = findSeparator(text, sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos)
      return parts;
    start = at + 1;
  }
}

bool parseNumber(std::string_view text, double &out) {
  if (text.empty() || text.size() > 64)
    return false;
  std::string copy(text);
  char *end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(out);
}

} // namespace

bool PlateauState::record(double loss, double threshold) {
  if (!haveBest || loss < best - threshold * std::fabs(best)) {
    best = loss;
    haveBest = true;
    badEpochs = 0;
    return true;
  }
  ++badEpochs;
  return false;
}

bool plateauStep(const LrSchedule &s, PlateauState &state, double loss) {
  if (state.record(loss, s.threshold) || state.badEpochs < s.patience)
    return false;
  state.badEpochs = 0;
  const double reduced = std::fmax(state.scale * s.factor, s.minScale);
  const bool changed = reduced < state.scale;
  state.scale = reduced;
  return changed;
}

std::string checkLrSchedule(const LrSchedule &s) {
  auto finite = [](double v) { return std::isfinite(v); };
  // Spans in epochs: from a thousandth of an epoch (a few steps) to a billion epochs. Outside,
  // the schedule's arithmetic (factor^(epochs / every)) leaves the range of a double.
  auto span = [](double v) { return v >= kMinScheduleEpochs && v <= kMaxScheduleEpochs; };
  const std::string range =
      " (from " + number(kMinScheduleEpochs) + " to " + number(kMaxScheduleEpochs) + " epochs)";
  if (static_cast<unsigned>(s.kind) >= kNumLrScheduleKinds)
    return "unknown schedule kind " + std::to_string(static_cast<unsigned>(s.kind));
  if (!finite(s.warmupEpochs) || s.warmupEpochs < 0 || (s.warmupEpochs > 0 && !span(s.warmupEpochs)))
    return "warmup-linear: epochs must be positive" + range + ", found " + number(s.warmupEpochs);
  if (s.warmupEpochs > 0 && !(s.warmupStart >= 0 && s.warmupStart <= 1))
    return "warmup-linear: start must be between 0 and 1, found " + number(s.warmupStart);
  switch (s.kind) {
  case LrScheduleKind::Constant:
    break;
  case LrScheduleKind::Step:
    if (!finite(s.every) || !span(s.every))
      return "step: every must be a positive number of epochs" + range + ", found " +
             number(s.every);
    // A step schedule decays: a factor above 1 grows the rate without bound (to inf and NaN).
    if (!finite(s.factor) || !(s.factor > 0 && s.factor <= 1))
      return "step: factor must be above 0 and at most 1, found " + number(s.factor);
    break;
  case LrScheduleKind::Cosine:
    if (!finite(s.epochs) || !span(s.epochs))
      return "cosine: epochs must be positive" + range + ", found " + number(s.epochs);
    if (!(s.minScale >= 0 && s.minScale <= 1))
      return "cosine: min must be between 0 and 1, found " + number(s.minScale);
    break;
  case LrScheduleKind::Plateau:
    if (s.patience < 1 || s.patience > 1000000)
      return "plateau: patience must be a whole number of epochs from 1, found " +
             std::to_string(s.patience);
    if (!(s.factor > 0 && s.factor < 1))
      return "plateau: factor must be between 0 and 1 (exclusive), found " + number(s.factor);
    if (!(s.minScale >= 0 && s.minScale <= 1))
      return "plateau: min must be between 0 and 1, found " + number(s.minScale);
    if (!finite(s.threshold) || !(s.threshold >= 0 && s.threshold < 1))
      return "plateau: threshold must be at least 0 and below 1, found " + number(s.threshold);
    break;
  }
  return {};
}

bool parseLrSchedule(std::string_view text, double defaultWarmupStart, LrSchedule &out,
                     std::string &error) {
  LrSchedule s;
  bool haveMain = false;
  const std::vector<std::string_view> parts = split(text, '+');
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    const size_t colon = part.find(':');
    const std::string_view name = part.substr(0, colon);
    std::vector<std::pair<std::string_view, double>> values;
    if (colon != std::string_view::npos) {
      for (std::string_view item : split(part.substr(colon + 1), ',')) {
        const size_t eq = item.find('=');
        double v = 0;
        if (eq == std::string_view::npos || !parseNumber(item.substr(eq + 1), v)) {
          error = "'" + std::string(item) + "' in '" + std::string(part) +
                  "' is not key=number";
          return false;
        }
        values.emplace_back(item.substr(0, eq), v);
      }
    }
    // Takes the values of the keys this part knows, refusing any other.
    auto take = [&](std::initializer_list<std::pair<const char *, double *>> keys,
                    std::initializer_list<const char *> required) {
      for (const auto &[key, value] : values) {
        bool known = false;
        for (const auto &[name, slot] : keys)
          if (key == name) {
            *slot = value;
            known = true;
          }
        if (!known) {
          std::string list;
          for (const auto &k : keys)
            list += std::string(list.empty() ? "" : ", ") + k.first;
          error = "'" + std::string(part.substr(0, colon)) + "' takes " + list + ", not '" +
                  std::string(key) + "'";
          return false;
        }
      }
      for (const char *key : required) {
        bool given = false;
        for (const auto &v : values)
          given = given || v.first == key;
        if (!given) {
          error = "'" + std::string(name) + "' needs " + key + "=...";
          return false;
        }
      }
      return true;
    };
    if (name == "warmup-linear") {
      if (i != 0 || parts.size() < 1) {
        error = "warmup-linear must come first ('warmup-linear:epochs=K+SCHEDULE')";
        return false;
      }
      s.warmupStart = defaultWarmupStart;
      if (!take({{"epochs", &s.warmupEpochs}, {"start", &s.warmupStart}}, {"epochs"}))
        return false;
      if (!(s.warmupEpochs > 0)) {
        error = "warmup-linear: epochs must be positive, found " + number(s.warmupEpochs);
        return false;
      }
      continue;
    }
    if (haveMain) {
      error = "one schedule after the warmup, found '" + std::string(part) + "' too";
      return false;
    }
    haveMain = true;
    double patience = 0;
    bool ok = true;
    if (name == "constant") {
      ok = take({}, {});
    } else if (name == "step") {
      s.kind = LrScheduleKind::Step;
      ok = take({{"every", &s.every}, {"factor", &s.factor}}, {"every", "factor"});
    } else if (name == "cosine") {
      s.kind = LrScheduleKind::Cosine;
      ok = take({{"epochs", &s.epochs}, {"min", &s.minScale}}, {"epochs"});
    } else if (name == "plateau") {
      s.kind = LrScheduleKind::Plateau;
      ok = take({{"patience", &patience},
                 {"factor", &s.factor},
                 {"min", &s.minScale},
                 {"threshold", &s.threshold}},
                {"patience", "factor"});
      if (ok && (patience != std::floor(patience) || patience < 1 || patience > 1000000)) {
        error = "plateau: patience must be a whole number of epochs from 1, found " +
                number(patience);
        return false;
      }
      s.patience = static_cast<int64_t>(patience);
    } else {
      error = "unknown schedule '" + std::string(name) +
              "' (constant, step, cosine, plateau, warmup-linear)";
      return false;
    }
    if (!ok)
      return false;
  }
  if (std::string problem = checkLrSchedule(s); !problem.empty()) {
    error = problem;
    return false;
  }
  out = s;
  return true;
}

std::string lrScheduleText(const LrSchedule &s) {
  std::string text;
  if (s.warmupEpochs > 0)
    text = "warmup-linear:epochs=" + number(s.warmupEpochs) + ",start=" + number(s.warmupStart) +
           "+";
  switch (s.kind) {
  case LrScheduleKind::Constant:
    return text + "constant";
  case LrScheduleKind::Step:
    return text + "step:every=" + number(s.every) + ",factor=" + number(s.factor);
  case LrScheduleKind::Cosine:
    return text + "cosine:epochs=" + number(s.epochs) + ",min=" + number(s.minScale);
  case LrScheduleKind::Plateau:
    return text + "plateau:patience=" + std::to_string(s.patience) +
           ",factor=" + number(s.factor) + ",min=" + number(s.minScale) +
           ",threshold=" + number(s.threshold);
  }
  return text + kindName(s.kind);
}

double lrScaleAt(const LrSchedule &s, double t, double plateauScale) {
  double scale = 1;
  switch (s.kind) {
  case LrScheduleKind::Constant:
    break;
  case LrScheduleKind::Step:
    scale = std::pow(s.factor, std::floor(t / s.every));
    break;
  case LrScheduleKind::Cosine: {
    const double x = std::fmin(t / s.epochs, 1.0);
    scale = s.minScale + (1 - s.minScale) * 0.5 * (1 + std::cos(M_PI * x));
    break;
  }
  case LrScheduleKind::Plateau:
    scale = plateauScale;
    break;
  }
  if (s.warmupEpochs > 0 && t < s.warmupEpochs)
    scale *= s.warmupStart + (1 - s.warmupStart) * t / s.warmupEpochs;
  return scale;
}

} // namespace dp::rt
