//===- CommonOptions.h - Options several drivers share ----------*- C++ -*-===//
//
// Private to nngraph_tools: the command-line options that more than one tool
// has (-O, --backend, --dim, --threads), each added to a CLI11 app in one
// place with one help text, one validation and one error message. A tool
// adds what it says beyond the shared text (when the option applies, its
// default) and an example of its own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/tools/ToolSupport.h"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace nng::tools {

/// -O LEVEL: the -O pipeline of passes/Pipelines.h (0 no passes, 1
/// canonicalize,cse,dce, 2 the full fusion pipeline ending with the
/// backend's own passes), levels checked against passes::MaxOptLevel.
/// When: how this tool applies it (and its default); Example: a command
/// line after "e.g. " ("" for none).
CLI::Option *addOptLevelOption(CLI::App &App, int &Level, std::string_view When,
                               std::string_view Example = "");

/// --backend NAME: the backend that Purpose ("Backend to run on"), one of
/// backends::backendNames(); an unknown name is a command-line error whose
/// message lists the known ones. The default shown is Backend's value.
CLI::Option *addBackendOption(CLI::App &App, std::string &Backend,
                              std::string_view Purpose,
                              std::string_view Example = "");

/// --dim NAME=VALUE (repeatable): binds a symbolic dim of the model's
/// inputs into Dims as it is parsed; a malformed binding is a command-line
/// error with parseDimBinding's message. More: what else this tool says of
/// the bindings ("" for nothing).
CLI::Option *addDimOption(CLI::App &App, DimBindings &Dims,
                          std::string_view More = "",
                          std::string_view Example = "");

/// --threads T (1-4096): threads of the parallel loops and oneDNN;
/// 0 in Threads means not given. The driver applies it after parsing
/// (nng::setNumThreads), so a command line that fails to parse changes
/// nothing. More: what else this tool does with it ("" for nothing).
CLI::Option *addThreadsOption(CLI::App &App, int &Threads,
                              std::string_view More = "",
                              std::string_view Example = "");

} // namespace nng::tools
