// JSON text for the files dprun writes by hand (metrics, the timeline, the log): string
// escaping and numbers.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dp::rt {

/// Appends `text` to `out` as the inside of a JSON string: quotes, backslashes and control
/// bytes escaped, everything else (UTF-8 included) as it is.
inline void appendJsonEscaped(std::string &out, const std::string &text) {
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char code[8];
      std::snprintf(code, sizeof(code), "\\u%04x", c);
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
}

/// `text` as a quoted JSON string.
inline std::string jsonString(const std::string &text) {
  std::string out = "\"";
  appendJsonEscaped(out, text);
  return out + "\"";
}

/// The shortest decimal that reads back as `value` (15 digits, else 17); null if not finite.
inline std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.15g", value);
  if (std::strtod(text, nullptr) != value)
    std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

} // namespace dp::rt
