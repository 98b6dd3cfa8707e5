// A guard for MLIR and JSON text before it is parsed: MLIR's parser recurses once per level of
// nesting (regions, attributes, types), and so does LLVM's JSON parser (arrays, objects), so
// text nested thousands deep overflows the stack. The tools scan the text first and refuse it,
// with file:line:col, past a depth no model, profile or topology comes near.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace dp {

/// How deep dpc, dp-opt and dpc summary let text nest (the seed models stay under 10).
inline constexpr unsigned kMaxNesting = 256;

/// 1-based line and column of a place in text.
struct TextPoint {
  unsigned line = 1, column = 1;
};

/// The line and column of byte `offset` of `text`.
inline TextPoint textPointAt(llvm::StringRef text, size_t offset) {
  TextPoint at;
  for (size_t j = 0; j < offset && j < text.size(); ++j)
    text[j] == '\n' ? (++at.line, at.column = 1) : ++at.column;
  return at;
}

/// Where `text` first nests deeper than `limit`: the opening bracket that goes past it, or
/// nothing. Counted: ( [ { < and their closers, outside "strings" (with escapes) and // line
/// comments; `->` and `>=` are not brackets. A stray closer never takes the depth below 0.
inline std::optional<TextPoint> nestingBeyond(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    const char c = text[i];
    if (c == '"') { // a string: to its closing quote, skipping escapes
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') { // a comment: to the end of the line
      while (i + 1 < n && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if ((c == '-' && i + 1 < n && text[i + 1] == '>') ||
        (c == '>' && i + 1 < n && text[i + 1] == '=')) {
      ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return textPointAt(text, i);
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// The same for JSON: only [ and { nest, outside "strings" (a backslash escapes the next
/// character, so \" does not end one). JSON has no comments and no other brackets: a ( or < is
/// left to the parser to refuse. An unterminated string ends the scan (the parser refuses it).
inline std::optional<TextPoint> jsonNestingBeyond(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return textPointAt(text, i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

} // namespace dp
