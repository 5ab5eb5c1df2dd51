//===- CommonOptions.cpp - Options several drivers share ------------------===//
//
// The shared option groups of the drivers (CommonOptions.h): their help
// texts, their checks when the command line is parsed, their messages.
//
//===----------------------------------------------------------------------===//

#include "CommonOptions.h"
#include "nngraph/backends/Backend.h"
#include "nngraph/passes/Pipelines.h"
#include "nngraph/runtime/Error.h"

namespace nng::tools {

namespace {

/// Text, then More as a clause of its own ("" for none), a full stop, and
/// the example on a line of its own.
std::string helpText(std::string Text, std::string_view More,
                     std::string_view Example) {
  if (!More.empty())
    Text += "; " + std::string(More);
  Text += ".";
  if (!Example.empty())
    Text += "\n  e.g. " + std::string(Example);
  return Text;
}

/// A CLI11 check that runs Check on each value and turns an nng::Error it
/// throws into the option's error message.
template <typename Fn> CLI::Validator errorCheck(Fn Check) {
  return CLI::Validator(
      [Check](std::string &Value) -> std::string {
        try {
          Check(Value);
        } catch (const Error &E) {
          return E.what();
        }
        return {};
      },
      "");
}

} // namespace

CLI::Option *addOptLevelOption(CLI::App &App, int &Level, std::string_view When,
                               std::string_view Example) {
  return App
      .add_option("-O", Level,
                  helpText("Optimize with the -O pipeline LEVEL: 0 no passes, "
                           "1 canonicalize,cse,dce, 2 the full fusion "
                           "pipeline, ending with the backend's own passes "
                           "(nngraph-opt --list-passes shows each)",
                           When, Example))
      ->check(CLI::Range(0, passes::MaxOptLevel))
      ->option_text("LEVEL");
}

CLI::Option *addBackendOption(CLI::App &App, std::string &Backend,
                              std::string_view Purpose,
                              std::string_view Example) {
  std::string Names;
  for (const std::string &N : backends::backendNames())
    Names += (Names.empty() ? "" : ", ") + N;
  return App
      .add_option("--backend", Backend,
                  helpText(std::string(Purpose) + " (" + Names +
                               "); default '" + Backend + "'",
                           "", Example))
      ->check(errorCheck([](const std::string &Name) {
        backends::getBackend(Name); // Throws listing the known ones.
      }))
      ->option_text("NAME");
}

CLI::Option *addDimOption(CLI::App &App, DimBindings &Dims,
                          std::string_view More, std::string_view Example) {
  return App
      .add_option_function<std::vector<std::string>>(
          "--dim",
          [&Dims](const std::vector<std::string> &Texts) {
            for (const std::string &T : Texts)
              parseDimBinding(T, Dims); // Checked below: cannot throw.
          },
          helpText("Value of a symbolic dim of the model's inputs "
                   "(repeatable); unbound dims are 1",
                   More, Example))
      ->check(errorCheck([](const std::string &Text) {
        DimBindings Scratch;
        parseDimBinding(Text, Scratch);
      }))
      ->option_text("NAME=VALUE");
}

CLI::Option *addThreadsOption(CLI::App &App, int &Threads,
                              std::string_view More, std::string_view Example) {
  return App
      .add_option("--threads", Threads,
                  helpText("Threads of the parallel loops and oneDNN; "
                           "default NNGRAPH_NUM_THREADS, else "
                           "OMP_NUM_THREADS, else the CPUs this process may "
                           "use",
                           More, Example))
      ->check(CLI::Range(1, 4096))
      ->option_text("T");
}

} // namespace nng::tools
