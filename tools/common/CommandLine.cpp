// The table-driven command-line parser; see CommandLine.h.
#include "tools/common/CommandLine.h"

#include <algorithm>

namespace dp::cli {
namespace {

/// `text` wrapped to lines of at most `width` characters, each after `indent` spaces (the first
/// line's indent is the caller's).
std::string wrap(const std::string &text, size_t indent, size_t width) {
  std::string out, line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos)
      end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

} // namespace

Option &Parser::add(Option option) {
  options_.push_back(std::move(option));
  return options_.back();
}

Option &Parser::flag(const std::string &name, const std::string &help, bool &target) {
  return add({name, "", "", help, true, [&target](const std::string &) { target = true; }});
}

Option &Parser::text(const std::string &name, const std::string &value, const std::string &what,
                     const std::string &help, std::string &target) {
  return add({name, "", value, help, true, [name, what, &target](const std::string &text) {
                if (text.empty())
                  throw UsageError(name + " needs " + what);
                target = text;
              }});
}

uint64_t Parser::parseUnsigned(const std::string &name, const std::string &text, uint64_t most,
                               const std::string &unit) {
  // Digits only (no sign, no spaces); past 2^64 - 1 (20 digits at most) is past `most` too.
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(name + " expects a non-negative integer, got '" + text + "'");
  const std::string digits = text.substr(std::min(text.find_first_not_of('0'), text.size()));
  const bool tooLong =
      digits.size() > 20 || (digits.size() == 20 && digits > std::string("18446744073709551615"));
  if (tooLong || std::stoull("0" + digits) > most)
    throw UsageError(name + " expects at most " + std::to_string(most) +
                     (unit.empty() ? "" : " " + unit) + ", got '" + text + "'");
  return std::stoull("0" + digits);
}

int64_t Parser::parseCount(const std::string &name, const std::string &text, int64_t least,
                           int64_t most, const std::string &unit) {
  const auto value = static_cast<int64_t>(parseUnsigned(name, text, uint64_t(most), unit));
  if (value < least)
    throw UsageError(name + " expects a positive integer, got '" + text + "'");
  return value;
}

Option &Parser::count(const std::string &name, const std::string &value, int64_t least,
                      int64_t most, const std::string &help, int64_t &target,
                      const std::string &unit) {
  return add({name, "", value, help, true, [=, &target](const std::string &text) {
                target = parseCount(name, text, least, most, unit);
              }});
}

Option &Parser::choice(const std::string &name, std::initializer_list<const char *> choices,
                       const std::string &help, std::string &target) {
  std::vector<std::string> names(choices.begin(), choices.end());
  std::string value, list;
  for (size_t i = 0; i < names.size(); ++i) {
    value += (i ? "|" : "") + names[i];
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return add({name, "", value, help, true, [=, &target](const std::string &text) {
                if (std::find(names.begin(), names.end(), text) == names.end())
                  throw UsageError(name + " expects " + list);
                target = text;
              }});
}

Option *Parser::find(const std::string &name) {
  for (Option &o : options_)
    if (o.name == name || (!o.alias.empty() && o.alias == name))
      return &o;
  return nullptr;
}

void Parser::parse(int argc, char **argv, std::vector<std::string> &operands,
                   const std::function<void(const std::vector<std::string> &)> &operand) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const bool inlineValue = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos;
    if (inlineValue) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    if (arg.size() <= 1 || arg[0] != '-') {
      operands.push_back(arg);
      if (operand)
        operand(operands);
      continue;
    }
    Option *option = find(arg);
    if (!option)
      throw UsageError("unknown option '" + arg + "'");
    if (option->endsParse) {
      option->set("");
      given_.push_back(option->name);
      return;
    }
    if (option->value.empty()) {
      if (inlineValue)
        throw UsageError(arg + " takes no value");
    } else if (!inlineValue) {
      if (i + 1 >= argc)
        throw UsageError(arg + " needs a value");
      value = argv[++i];
    }
    option->set(value);
    given_.push_back(option->name);
  }
}

bool Parser::given(const std::string &name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

std::string Parser::usage(const std::vector<std::string> &otherForms) const {
  const std::string head = "usage: " + command_ + " ";
  std::string words = operands_;
  for (const Option &o : options_)
    if (o.inUsage)
      words += " [" + o.name + (o.value.empty() ? "" : " " + o.value) + "]";
  // Each bracketed option stays on one line.
  std::string out = head, line;
  size_t at = 0;
  while (at < words.size()) {
    size_t end = words[at] == '[' ? words.find(']', at) + 1 : words.find(" [", at);
    if (end == std::string::npos || end == 0)
      end = words.size();
    const std::string word = words.substr(at, end - at);
    at = end;
    while (at < words.size() && words[at] == ' ')
      ++at;
    if (!line.empty() && head.size() + line.size() + 1 + word.size() > 92) {
      out += line + "\n" + std::string(head.size(), ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  out += line + "\n";
  for (const std::string &form : otherForms)
    out += std::string(head.size() - command_.size() - 1, ' ') + command_ + " " + form + "\n";
  return out;
}

std::string Parser::help() const {
  constexpr size_t kColumn = 19;
  std::string out;
  for (const Option &o : options_) {
    std::string names = "  " + o.name + (o.alias.empty() ? "" : ", " + o.alias) +
                        (o.value.empty() ? "" : " " + o.value);
    if (names.size() + 1 > kColumn)
      out += names + "\n" + std::string(kColumn, ' ');
    else
      out += names + std::string(kColumn - names.size(), ' ');
    out += wrap(o.help, kColumn, 92) + "\n";
  }
  return out;
}

} // namespace dp::cli
