//===- CommandLine.h - CLI11 glue shared by the drivers ---------*- C++ -*-===//
//
// Private to nngraph_tools: parses an argument vector with a CLI11 app and
// maps CLI11's outcomes onto the tools' exit statuses (help and version: 0,
// anything wrong with the command line: 2); prints errors uniformly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/tools/ToolSupport.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
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

} // namespace nng::tools
