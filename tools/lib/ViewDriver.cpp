//===- ViewDriver.cpp - The nngraph-view driver ---------------------------===//
//
// Command line -> load the model (or trace a zoo architecture, --arch) ->
// the graph as JSON (ViewGraphJson.h) -> the page: the template of
// tools/nngraph-view/viewer.html with viewer.css, layout.js and viewer.js
// inlined (embedded at build time as ViewerAssets.inc by
// cmake/EmbedAssets.cmake) -> written atomically -> a one-line summary (or
// --json).
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ViewDriver.h"
#include "CommandLine.h"
#include "ViewGraphJson.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/zoo/Zoo.h"
#include "nngraph/runtime/BuildInfo.h"
#include "nngraph/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace nng::tools {
namespace {

#include "ViewerAssets.inc"

constexpr const char *ToolName = "nngraph-view";

template <size_t N> std::string_view asset(const unsigned char (&Bytes)[N]) {
  // The generated arrays end with a NUL that is not part of the file.
  return {reinterpret_cast<const char *>(Bytes), N - 1};
}

struct ViewOptions {
  std::string Model, Arch, Output, Title;
  bool Json = false, Quiet = false;
};

void describeOptions(CLI::App &App, ViewOptions &O) {
  App.description(
      "nngraph-view: write a model as one self-contained HTML page that "
      "draws its graph (layered layout, pan and zoom), collapses nodes by "
      "module scope (layer1.0.conv1), shows a node's attributes, "
      "input/output types and initializer statistics on click, and "
      "searches by name. The page needs no network access.");
  CLI::Option *Model =
      App.add_option("model", O.Model,
                     "Model to draw: .nng (text format) or .onnx.\n"
                     "  e.g. nngraph-view examples/models/small_cnn.nng -o "
                     "small_cnn.html");
  CLI::Option *Arch =
      App.add_option("--arch", O.Arch,
                     "Draw a model-zoo architecture traced with random "
                     "weights instead (resnet18, resnet50, mobilenet_v2, "
                     "transformer_encoder, ...).\n"
                     "  e.g. nngraph-view --arch resnet18 -o resnet18.html")
          ->option_text("NAME");
  Model->excludes(Arch);
  App.add_option("-o,--output", O.Output,
                 "The page to write (replaced atomically).")
      ->required()
      ->option_text("FILE.html");
  App.add_option("--title", O.Title,
                 "The page's title; default the model's file name.")
      ->option_text("TEXT");
  App.add_flag("--json", O.Json,
               "Print a JSON summary (output, nodes, scopes, initializers, "
               "bytes) instead of the line.");
  addQuietFlag(App, O.Quiet, "with it nothing prints on success");
  App.set_version_flag("--version",
                       std::string(ToolName) + " " +
                           std::string(toolsVersion()) + "\n" +
                           nng::buildDescription(),
                       "Print the version and exit.");
  App.footer("In the page: drag to pan, wheel to zoom, click a node for its "
             "details, click a scope's label to collapse it into one box, "
             "double-click the box (or use its Expand button) to expand it, "
             "type in the search box and press Enter to go to the next "
             "match. "
             "The URL hash #select=NAME selects a node, #search=TEXT "
             "searches, #collapse=all collapses every scope.\n" +
             exitStatusHelp("the model cannot be loaded or the page cannot "
                            "be written"));
}

/// Text with the characters that would end a <script> or <title> element,
/// or start markup, escaped for JSON inside an HTML script element.
std::string scriptSafeJson(const nlohmann::json &J) {
  std::string Raw = J.dump(-1, ' ', /*ensure_ascii=*/true,
                           nlohmann::json::error_handler_t::replace);
  std::string S;
  S.reserve(Raw.size() + Raw.size() / 16);
  for (char C : Raw) {
    // Outside strings JSON has none of these, so escaping all is safe.
    if (C == '<')
      S += "\\u003c";
    else if (C == '>')
      S += "\\u003e";
    else if (C == '&')
      S += "\\u0026";
    else
      S += C;
  }
  return S;
}

std::string htmlEscape(std::string_view Text) {
  std::string S;
  for (char C : Text) {
    switch (C) {
    case '<':
      S += "&lt;";
      break;
    case '>':
      S += "&gt;";
      break;
    case '&':
      S += "&amp;";
      break;
    case '"':
      S += "&quot;";
      break;
    case '\'':
      S += "&#39;";
      break;
    default:
      S += C;
    }
  }
  return S;
}

/// The traced graph of a zoo architecture (random weights, eval mode).
std::unique_ptr<ir::Graph> traceArch(const std::string &Arch) {
  const zoo::ModelInfo &Info = zoo::info(Arch); // Lists the names if unknown.
  nn::ModulePtr Model = zoo::create(Arch);
  Model->eval();
  std::vector<fx::Dim> Dims;
  Dims.push_back(fx::Dim("N"));
  for (size_t I = 1; I < Info.InputShape.size(); ++I)
    Dims.push_back(fx::Dim(Info.InputShape[I]));
  fx::GraphModule Traced = fx::symbolic_trace(*Model, {fx::InputSpec(Dims)});
  std::unique_ptr<ir::Graph> G = Traced.graph().clone();
  G->setName(Arch);
  return G;
}

} // namespace

std::string renderViewerHtml(const ir::Graph &G, const std::string &Title) {
  std::string_view Template = asset(ViewerHtml);
  const std::pair<std::string_view, std::string> Parts[] = {
      {"@TITLE@", htmlEscape(Title)},
      {"/*@VIEWER_CSS@*/", std::string(asset(ViewerCss))},
      {"@GRAPH_JSON@", scriptSafeJson(viewGraphJson(G, Title))},
      {"/*@LAYOUT_JS@*/", std::string(asset(LayoutJs))},
      {"/*@VIEWER_JS@*/", std::string(asset(ViewerJs))},
  };
  // The markers appear once each, in this order; the inserted text is
  // never searched again.
  std::string Page;
  size_t At = 0;
  for (const auto &[Marker, Text] : Parts) {
    size_t Pos = Template.find(Marker, At);
    NNG_CHECK_KIND(Pos != std::string_view::npos, Internal,
                   "viewer.html lacks the marker ", Marker);
    Page.append(Template.substr(At, Pos - At));
    Page += Text;
    At = Pos + Marker.size();
  }
  Page.append(Template.substr(At));
  return Page;
}

int runViewDriver(const std::vector<std::string> &Args, std::ostream &Out,
                  std::ostream &Err) {
  CLI::App App;
  App.name(ToolName);
  ViewOptions O;
  describeOptions(App, O);
  if (auto Status = parseCommandLine(App, Args, Out, Err))
    return *Status;
  if (O.Model.empty() == O.Arch.empty()) {
    Err << ToolName << ": error: name a model file or --arch NAME (one of "
        << "them)\nRun with --help for more information.\n";
    return ExitUsageError;
  }
  try {
    std::unique_ptr<ir::Graph> G =
        O.Arch.empty() ? frontend::loadModel(O.Model) : traceArch(O.Arch);
    std::string Title = O.Title;
    if (Title.empty())
      Title = O.Arch.empty()
                  ? std::filesystem::path(O.Model).filename().string()
                  : O.Arch + " (model zoo)";
    std::string Page = renderViewerHtml(*G, Title);
    frontend::writeFileAtomic(O.Output, Page);

    std::set<std::string> Scopes;
    for (const auto &N : G->nodes()) {
      std::string S = N->scope().empty() ? derivedScope(*N) : N->scope().Path;
      // Every prefix of a path is a scope ("layer1", "layer1.0").
      for (size_t Dot = S.find('.'); Dot != std::string::npos;
           Dot = S.find('.', Dot + 1))
        Scopes.insert(S.substr(0, Dot));
      if (!S.empty())
        Scopes.insert(S);
    }
    if (O.Json) {
      Out << nlohmann::json{{"output", O.Output},
                            {"graph", G->name()},
                            {"nodes", G->numNodes()},
                            {"scopes", Scopes.size()},
                            {"initializers", G->initializers().size()},
                            {"bytes", Page.size()}}
                 .dump(2)
          << "\n";
    } else if (!O.Quiet) {
      Out << "wrote " << O.Output << ": graph \"" << G->name() << "\", "
          << G->numNodes() << " nodes in " << Scopes.size()
          << " module scopes, " << G->initializers().size() << " initializers ("
          << Page.size() << " bytes, self-contained: open it in any browser)\n";
    }
    return ExitSuccess;
  } catch (const std::exception &E) {
    printError(Err, ToolName, E);
    return ExitInputError;
  }
}

} // namespace nng::tools
