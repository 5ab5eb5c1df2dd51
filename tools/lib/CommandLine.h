//===- CommandLine.h - CLI11 glue shared by the drivers ---------*- C++ -*-===//
//
// Private to nngraph_tools: parses an argument vector with a CLI11 app and
// maps CLI11's outcomes onto the tools' exit statuses (help and version: 0,
// anything wrong with the command line: 2); prints errors uniformly; the
// options and --help text every tool shares (--quiet, --json, the "Exit
// status:" paragraph).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/tools/ToolSupport.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nng::tools {

/// Parses Args with App. Returns nullopt when the driver should go on, or
/// the status to exit with (after printing help, the version or the usage
/// error to Out / Err).
inline std::optional<int> parseCommandLine(CLI::App &App,
                                           const std::vector<std::string> &Args,
                                           std::ostream &Out,
                                           std::ostream &Err) {
  std::vector<const char *> Argv;
  for (const std::string &A : Args)
    Argv.push_back(A.c_str());
  if (Argv.empty())
    Argv.push_back("nngraph");
  try {
    App.parse(static_cast<int>(Argv.size()), Argv.data());
  } catch (const CLI::ParseError &E) {
    int Status = App.exit(E, Out, Err);
    return Status == 0 ? ExitSuccess : ExitUsageError;
  }
  return std::nullopt;
}

/// Prints E as "TOOL: error: MESSAGE". A message that already carries its
/// own "FILE:LINE:COL: error:" prefix (the text-format parser's) is printed
/// as it is, so that the location comes first, as compilers print it.
inline void printError(std::ostream &Err, std::string_view Tool,
                       const std::exception &E) {
  std::string_view Msg = E.what();
  if (Msg.find(": error: ") == std::string_view::npos)
    Err << Tool << ": error: ";
  Err << Msg << "\n";
}

/// One tool-specific exit status (3 and up) and what it means, for --help.
struct ExitStatusHelp {
  int Status;
  std::string Meaning;
};

/// The "Exit status:" paragraph of every tool's --help: 0 success; 1
/// Failure (what makes this tool's operation fail); 2 bad command line
/// (UsageDetail: what counts as one beyond the obvious); then the tool's own
/// statuses (3 and up).
inline std::string
exitStatusHelp(std::string_view Failure, std::string_view UsageDetail = "",
               const std::vector<ExitStatusHelp> &Extra = {}) {
  std::string S = "Exit status: " + std::to_string(ExitSuccess) + " success; " +
                  std::to_string(ExitInputError) + " " + std::string(Failure) +
                  "; " + std::to_string(ExitUsageError) + " bad command line";
  if (!UsageDetail.empty())
    S += " (" + std::string(UsageDetail) + ")";
  for (const ExitStatusHelp &E : Extra)
    S += "; " + std::to_string(E.Status) + " " + E.Meaning;
  return S + ".";
}

/// Appends exitStatusHelp(...) to App's --help footer, as its last
/// paragraph; tools whose footer ends with examples place exitStatusHelp's
/// text themselves.
inline void addExitStatusHelp(CLI::App &App, std::string_view Failure,
                              std::string_view UsageDetail = "",
                              const std::vector<ExitStatusHelp> &Extra = {}) {
  std::string Footer = App.get_footer();
  App.footer(Footer + (Footer.empty() ? "" : "\n\n") +
             exitStatusHelp(Failure, UsageDetail, Extra));
}

/// -q,--quiet: no progress or informational lines on stderr; the requested
/// output and errors still print. What (if anything) it also leaves out
/// of this tool's output follows the common text.
inline CLI::Option *addQuietFlag(CLI::App &App, bool &Quiet,
                                 std::string_view More = "") {
  return App.add_flag("-q,--quiet", Quiet,
                      "No progress or informational lines on stderr "
                      "(the output and errors still print)" +
                          std::string(More.empty() ? "" : "; ") +
                          std::string(More) + ".");
}

} // namespace nng::tools
