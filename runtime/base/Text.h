// Number text shared by the runtime's and the compiler's reports (header-only, no exceptions).
#pragma once

#include <cstdint>
#include <string>

namespace dp::rt {

/// "1234567" -> "1,234,567": a string of digits, grouped by thousands.
inline std::string groupDigits(const std::string &digits) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

/// 1234567 -> "1,234,567".
inline std::string withCommas(int64_t n) {
  const std::string out = groupDigits(std::to_string(n < 0 ? -n : n));
  return n < 0 ? "-" + out : out;
}

} // namespace dp::rt
