// A small table-driven command-line parser for the runtime's tools (dprun links no LLVM, so it
// cannot use LLVM's CommandLine). Each option is declared once, with its names, the word for
// its value, its help and what its value sets; the parser, the usage line and --help come from
// that table. Values are checked as they are parsed, with messages that name the option:
//   "--epochs expects a positive integer, got '0'", "--allreduce expects flat, hierarchical or
//   auto", "--data needs a value", "--inspect takes no value", "unknown option '--frobnicate'".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace dp::cli {

/// A mistake on the command line: the message, without the tool's name.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One option of a command.
struct Option {
  /// "--epochs", and another name for it ("-q"), or "".
  std::string name, alias;
  /// The word for its value in the usage and help ("N", "FILE"); "" for a flag.
  std::string value;
  /// One paragraph, wrapped by help().
  std::string help;
  /// Shown in the usage line (the options of the main form of the command).
  bool inUsage = true;
  /// Checks and stores `value` ("" for a flag); throws UsageError naming the option.
  std::function<void(const std::string &value)> set;
  /// Ends the parse at once, whatever follows (--help, --version); any value is ignored.
  bool endsParse = false;
};

class Parser {
public:
  /// `command` names the tool in the usage line ("dprun"); `operands` is what the main form
  /// takes before its options ("PLAN --data DIR").
  Parser(std::string command, std::string operands)
      : command_(std::move(command)), operands_(std::move(operands)) {}

  /// Adds an option and returns it.
  Option &add(Option option);

  // The kinds of value, each storing into `target` ------------------------------------------

  /// A flag: sets `target`.
  Option &flag(const std::string &name, const std::string &help, bool &target);
  /// A non-empty text: "--trace needs a file name" for "" (`what`: "a file name").
  Option &text(const std::string &name, const std::string &value, const std::string &what,
               const std::string &help, std::string &target);
  /// A whole number in [`least`, `most`] (`least` 0 or 1), and the words after the largest
  /// in its message ("batches": "--prefetch expects at most 64 batches, got '65'").
  Option &count(const std::string &name, const std::string &value, int64_t least, int64_t most,
                const std::string &help, int64_t &target, const std::string &unit = "");
  /// One of `choices`: "--allreduce expects flat, hierarchical or auto".
  Option &choice(const std::string &name, std::initializer_list<const char *> choices,
                 const std::string &help, std::string &target);

  /// Parses argv[1..]: "--name value", "--name=value", flags, and the arguments that are not
  /// options, which go to `operands` in order; `operand` (if given) checks each as it comes,
  /// with those before it. Throws UsageError.
  void parse(int argc, char **argv, std::vector<std::string> &operands,
             const std::function<void(const std::vector<std::string> &)> &operand = nullptr);

  /// Whether the command line gave `name` (after parse()).
  bool given(const std::string &name) const;

  /// "usage: dprun PLAN --data DIR [--epochs N] ...", wrapped, with `otherForms` (each a
  /// whole line after the command's name, "PLAN --inspect") on lines of their own.
  std::string usage(const std::vector<std::string> &otherForms) const;
  /// Every option with its help, wrapped at 92 columns.
  std::string help() const;

  /// The parsers the kinds above use, for options whose value is parsed otherwise: a whole
  /// number of at most `most` (digits only), and one in [`least`, `most`].
  static uint64_t parseUnsigned(const std::string &name, const std::string &text, uint64_t most,
                                const std::string &unit = "");
  static int64_t parseCount(const std::string &name, const std::string &text, int64_t least,
                            int64_t most, const std::string &unit = "");

private:
  Option *find(const std::string &name);

  std::string command_, operands_;
  std::deque<Option> options_; // stable references for add()
  std::vector<std::string> given_;
};

} // namespace dp::cli
