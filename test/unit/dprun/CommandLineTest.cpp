// The table-driven parser of the runtime's tools (tools/common/CommandLine.h): each kind of
// value, the messages that name the option, and the usage and help made from the table.
#include "tools/common/CommandLine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using dp::cli::Parser;
using dp::cli::UsageError;

struct Fixture {
  Parser parser{"tool", "IN"};
  bool verbose = false;
  std::string out, mode = "fast";
  int64_t count = 1;

  Fixture() {
    parser.flag("--verbose", "say more", verbose).alias = "-v";
    parser.text("--out", "FILE", "a file name", "where the output goes", out);
    parser.count("--count", "N", 1, 64, "how many", count, "things");
    parser.choice("--mode", {"fast", "slow", "auto"}, "which way", mode);
  }

  /// Parses `args` after the tool's name; returns the operands.
  std::vector<std::string> parse(std::vector<std::string> args) {
    std::vector<char *> argv = {const_cast<char *>("tool")};
    for (std::string &a : args)
      argv.push_back(a.data());
    std::vector<std::string> operands;
    parser.parse(static_cast<int>(argv.size()), argv.data(), operands);
    return operands;
  }

  std::string error(std::vector<std::string> args) {
    try {
      parse(std::move(args));
    } catch (const UsageError &e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST(CommandLine, ParsesEachKindOfValue) {
  Fixture f;
  const std::vector<std::string> operands =
      f.parse({"a", "--out", "o.txt", "-v", "--count=7", "--mode", "slow", "b"});
  EXPECT_EQ(operands, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(f.verbose);
  EXPECT_EQ(f.out, "o.txt");
  EXPECT_EQ(f.count, 7);
  EXPECT_EQ(f.mode, "slow");
  EXPECT_TRUE(f.parser.given("--count"));
  EXPECT_TRUE(f.parser.given("--verbose")); // given by its alias
}

TEST(CommandLine, EveryMistakeNamesTheOption) {
  Fixture f;
  EXPECT_EQ(f.error({"--frob"}), "unknown option '--frob'");
  EXPECT_EQ(f.error({"--out"}), "--out needs a value");
  EXPECT_EQ(f.error({"--out="}), "--out needs a file name");
  EXPECT_EQ(f.error({"--verbose=yes"}), "--verbose takes no value");
  EXPECT_EQ(f.error({"--count", "two"}), "--count expects a non-negative integer, got 'two'");
  EXPECT_EQ(f.error({"--count=-1"}), "--count expects a non-negative integer, got '-1'");
  EXPECT_EQ(f.error({"--count", "0"}), "--count expects a positive integer, got '0'");
  EXPECT_EQ(f.error({"--count", "65"}), "--count expects at most 64 things, got '65'");
  EXPECT_EQ(f.error({"--count", "99999999999999999999999"}),
            "--count expects at most 64 things, got '99999999999999999999999'");
  EXPECT_EQ(f.error({"--mode", "quick"}), "--mode expects fast, slow or auto");
  // Leading zeros are still the number; the whole unsigned 64-bit range parses.
  EXPECT_EQ(Parser::parseCount("--n", "007", 0, 10), 7);
  EXPECT_EQ(Parser::parseUnsigned("--seed", "18446744073709551615", UINT64_MAX),
            18446744073709551615ull);
  EXPECT_THROW(Parser::parseUnsigned("--seed", "18446744073709551616", UINT64_MAX), UsageError);
}

TEST(CommandLine, AnOptionThatEndsTheParseIgnoresWhatFollows) {
  Fixture f;
  bool help = false;
  f.parser.flag("--help", "print this help", help).endsParse = true;
  EXPECT_TRUE(f.parse({"--help", "--frob", "x", "y"}).empty());
  EXPECT_TRUE(help);
  // Operands are checked as they come, before a later mistake.
  Fixture g;
  std::vector<std::string> operands;
  std::vector<std::string> args = {"a", "b", "--frob"};
  std::vector<char *> argv = {const_cast<char *>("tool"), args[0].data(), args[1].data(),
                              args[2].data()};
  EXPECT_THROW(g.parser.parse(4, argv.data(), operands,
                              [](const std::vector<std::string> &seen) {
                                if (seen.size() > 1)
                                  throw UsageError("unexpected argument '" + seen.back() + "'");
                              }),
               UsageError);
  EXPECT_EQ(operands.size(), 2u);
}

TEST(CommandLine, UsageAndHelpComeFromTheTable) {
  Fixture f;
  EXPECT_EQ(f.parser.usage({"--help"}),
            "usage: tool IN [--verbose] [--out FILE] [--count N] [--mode fast|slow|auto]\n"
            "       tool --help\n");
  const std::string help = f.parser.help();
  EXPECT_NE(help.find("  --verbose, -v    say more\n"), std::string::npos) << help;
  EXPECT_NE(help.find("  --mode fast|slow|auto\n                   which way\n"), std::string::npos)
      << help;
}

TEST(CommandLine, LongHelpIsWrappedUnderItsColumn) {
  Parser parser("tool", "");
  bool flag = false;
  std::string words;
  for (int i = 0; i < 40; ++i)
    words += "word ";
  parser.flag("--x", words, flag);
  const std::string help = parser.help();
  size_t start = 0;
  for (size_t end; (end = help.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = help.substr(start, end - start);
    EXPECT_LE(line.size(), 92u) << line;
    if (start > 0) {
      EXPECT_EQ(line.rfind(std::string(19, ' ') + "word", 0), 0u) << line;
    }
  }
}

} // namespace
