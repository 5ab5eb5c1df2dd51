//===- ViewBrowserTest.cpp - nngraph-view's page in a real browser --------===//
//
// Writes the page of the model zoo's resnet18 (traced, 76 nodes with
// torchvision's module scopes) and opens it in headless Chromium (Debian's
// `chromium`, scripts/setup.sh --tests; $NNGRAPH_CHROMIUM names another),
// reading the DOM after the page's script ran (--dump-dom): every node is
// drawn; #select=layer1.0.conv1 clicks that convolution and the details
// panel shows its attributes and its weight's statistics;
// #collapse=all&select=layer2 draws the scopes as single boxes and shows
// the group. A screenshot goes to the test's output folder in the build
// tree (tests/view-browser/<test>/resnet18.png) and must be a real PNG.
// SKIPPED with the reason when Chromium is missing.
//
//===----------------------------------------------------------------------===//

#include "common/Subprocess.h"
#include "nngraph/runtime/FileIO.h"
#include "nngraph/tools/ViewDriver.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>

using namespace nng;
namespace fs = std::filesystem;

namespace {

/// The Chromium to use, or "" (then Why says what is missing).
std::string findChromium(std::string &Why) {
  std::vector<std::string> Candidates;
  if (const char *C = std::getenv("NNGRAPH_CHROMIUM"); C && *C)
    Candidates.push_back(C);
  Candidates.insert(Candidates.end(), {"chromium", "chromium-browser"});
  for (const std::string &C : Candidates) {
    std::string Out;
    if (test::runCommand("command -v " + test::shellQuote(C), Out) == 0)
      return C;
  }
  Why = "no Chromium (install Debian's chromium: scripts/setup.sh --tests, "
        "or set NNGRAPH_CHROMIUM)";
  return "";
}

class ViewBrowserTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Why;
    Chromium = findChromium(Why);
    if (Chromium.empty())
      GTEST_SKIP() << Why;
    // One folder per test: ctest may run them at once, and a Chromium
    // profile is not shared.
    OutDir = fs::path(NNGRAPH_BINARY_DIR) / "tests" / "view-browser" /
             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(OutDir);
    Page = (OutDir / "resnet18.html").string();
    std::ostringstream Out, Err;
    ASSERT_EQ(tools::runViewDriver(
                  {"nngraph-view", "--arch", "resnet18", "-o", Page, "--json"},
                  Out, Err),
              0)
        << Err.str();
    Nodes = nlohmann::json::parse(Out.str()).at("nodes").get<int>();
  }

  /// Chromium headless on the page with Hash; returns its stdout (the DOM
  /// for --dump-dom), failing the test when Chromium fails.
  std::string chromium(const std::string &Mode, const std::string &Hash) {
    std::string Cmd =
        "timeout 120 " + test::shellQuote(Chromium) +
        " --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage"
        " --no-first-run"
        " --user-data-dir=" +
        test::shellQuote((OutDir / "profile").string()) + " " + Mode + " " +
        test::shellQuote("file://" + Page + Hash) + " 2>" +
        test::shellQuote((OutDir / "chromium.log").string());
    std::string Out;
    int Status = test::runCommand(Cmd, Out);
    EXPECT_EQ(Status, 0) << Cmd << "\n"
                         << Out << "\n"
                         << rt::readFile((OutDir / "chromium.log").string());
    return Out;
  }

  /// The value of data-NAME on the <body> of Dom ("" when absent).
  static std::string bodyData(const std::string &Dom, const std::string &Name) {
    std::smatch M;
    std::regex Body("<body[^>]*>");
    if (!std::regex_search(Dom, M, Body))
      return "";
    std::string Tag = M.str();
    std::regex Attr("data-" + Name + "=\"([^\"]*)\"");
    return std::regex_search(Tag, M, Attr) ? M[1].str() : "";
  }

  static size_t count(const std::string &Text, const std::string &What) {
    size_t N = 0;
    for (size_t At = Text.find(What); At != std::string::npos;
         At = Text.find(What, At + 1))
      ++N;
    return N;
  }

  std::string Chromium, Page;
  fs::path OutDir;
  int Nodes = 0;
};

} // namespace

TEST_F(ViewBrowserTest, DrawsEveryNodeAndAClickShowsTheAttributes) {
  std::string Dom = chromium("--dump-dom", "#select=layer1.0.conv1");
  ASSERT_EQ(bodyData(Dom, "ready"), "true")
      << "the page's script did not finish: " << bodyData(Dom, "error");
  EXPECT_EQ(bodyData(Dom, "error"), "");
  EXPECT_EQ(Nodes, 76);
  EXPECT_EQ(bodyData(Dom, "rendered-ops"), std::to_string(Nodes));
  EXPECT_EQ(count(Dom, "class=\"unit op"), static_cast<size_t>(Nodes));
  EXPECT_LT(std::stod(bodyData(Dom, "layout-ms")), 2000.0);
  // The clicked convolution's details.
  EXPECT_NE(Dom.find("<aside id=\"details\" data-kind=\"node\""),
            std::string::npos);
  EXPECT_NE(Dom.find("<td>scope</td><td class=\"value\">layer1.0.conv1</td>"),
            std::string::npos);
  EXPECT_NE(Dom.find("<tr data-attr=\"kernel_shape\"><td>kernel_shape</td>"
                     "<td class=\"value\">[3, 3]</td></tr>"),
            std::string::npos);
  EXPECT_NE(Dom.find("<tr data-attr=\"strides\">"), std::string::npos);
  EXPECT_NE(Dom.find("layer1.0.conv1.weight"), std::string::npos);
  EXPECT_NE(Dom.find("<td>min / max</td>"), std::string::npos);
  EXPECT_NE(Dom.find("<td>initializer</td><td class=\"value\">"
                     "f32[64,64,3,3]</td>"),
            std::string::npos);
  EXPECT_EQ(count(Dom, "class=\"unit op selected\""), 1u);
}

TEST_F(ViewBrowserTest, CollapsedScopesAreOneBoxEachAndAScreenshotIsTaken) {
  std::string Dom = chromium("--dump-dom", "#collapse=all&select=layer2");
  ASSERT_EQ(bodyData(Dom, "ready"), "true") << bodyData(Dom, "error");
  int Ops = std::stoi(bodyData(Dom, "rendered-ops"));
  EXPECT_GT(Ops, 0);
  EXPECT_LT(Ops, Nodes);
  EXPECT_NE(Dom.find("data-key=\"g:layer2\""), std::string::npos);
  EXPECT_NE(Dom.find("<aside id=\"details\" data-kind=\"group\" "
                     "data-node=\"layer2\""),
            std::string::npos);
  EXPECT_NE(Dom.find("<td>nodes</td><td class=\"value\">16</td>"),
            std::string::npos);

  fs::path Png = OutDir / "resnet18.png";
  fs::remove(Png);
  chromium("--window-size=1400,900 --screenshot=" +
               test::shellQuote(Png.string()),
           "#select=layer1.0.conv1");
  ASSERT_TRUE(fs::exists(Png)) << "no screenshot at " << Png;
  std::string Bytes = rt::readFile(Png.string());
  EXPECT_EQ(Bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(Bytes.size(), 20000u) << "a blank page?";
  std::cout << "screenshot: " << Png.string() << "\n";
}
