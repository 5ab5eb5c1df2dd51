//===- ViewDriverTest.cpp - nngraph-view, run in-process ------------------===//
//
// nngraph-view on the bundled small CNN: one page that loads nothing from
// the network (no external references, a Content-Security-Policy that
// forbids them), with the graph's JSON embedded (every node, attributes as
// display strings, initializer statistics equal to the data's); names that
// would end the script element or start markup stay text; scopes are
// derived from ONNX node names and weight names where none were traced;
// bad command lines exit 2, bad models 1 without writing anything.
// ViewBrowserTest (ViewBrowserTest.cpp) opens the page in Chromium.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ViewDriver.h"
#include "DriverTestUtils.h"
#include "common/TempDirTest.h"
#include "nngraph/frontend/ModelIO.h"
#include "nngraph/runtime/FileIO.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <sstream>

using namespace nng;
using nlohmann::json;

namespace {

using test::SmallCnn;
using Result = test::DriverResult;

Result runView(std::vector<std::string> Args) {
  return test::runDriver(tools::runViewDriver, "nngraph-view", std::move(Args));
}

/// The JSON embedded in a page.
json embeddedGraph(const std::string &Page) {
  const std::string Open =
      "<script type=\"application/json\" id=\"graph-data\">";
  size_t Start = Page.find(Open);
  EXPECT_NE(Start, std::string::npos);
  Start += Open.size();
  size_t End = Page.find("</script>", Start);
  return json::parse(Page.substr(Start, End - Start));
}

size_t count(const std::string &Text, const std::string &What) {
  size_t N = 0;
  for (size_t At = Text.find(What); At != std::string::npos;
       At = Text.find(What, At + 1))
    ++N;
  return N;
}

class ViewDriverTest : public test::TempDirTest {
protected:
  ViewDriverTest() : TempDirTest("nngraph-view-test") {}
};

} // namespace

TEST_F(ViewDriverTest, WritesOneSelfContainedPage) {
  Result R = runView({SmallCnn, "-o", path("cnn.html")});
  ASSERT_EQ(R.Status, 0) << R.Err;
  EXPECT_NE(R.Out.find("wrote " + path("cnn.html") +
                       ": graph \"small_cnn\", "
                       "10 nodes"),
            std::string::npos)
      << R.Out;
  std::string Page = rt::readFile(path("cnn.html"));
  EXPECT_EQ(Page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(Page.find("Content-Security-Policy\" content=\"default-src "
                      "'none'"),
            std::string::npos);
  // Nothing to fetch: no links, sources or URLs but the SVG namespace.
  for (const char *Bad : {"<link", " src=", "url(http", "url(/", "@import",
                          "fetch(", "XMLHttpRequest", "https:"})
    EXPECT_EQ(Page.find(Bad), std::string::npos) << Bad;
  std::string NoNs = Page;
  for (size_t At;
       (At = NoNs.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    NoNs.erase(At, 26);
  EXPECT_EQ(NoNs.find("http:"), std::string::npos);
  // The style and script are inlined, the markers all replaced.
  EXPECT_EQ(Page.find("@VIEWER_"), std::string::npos);
  EXPECT_EQ(Page.find("@GRAPH_JSON@"), std::string::npos);
  EXPECT_NE(Page.find("function layout("), std::string::npos);
  EXPECT_NE(Page.find(".scope-box"), std::string::npos);

  json G = embeddedGraph(Page);
  EXPECT_EQ(G.at("graph"), "small_cnn");
  EXPECT_EQ(G.at("title"), "small_cnn.nng");
  ASSERT_EQ(G.at("nodes").size(), 10u);
  const json &Conv = G.at("nodes")[0];
  EXPECT_EQ(Conv.at("op"), "Conv");
  EXPECT_EQ(Conv.at("scope"), "features.0");
  EXPECT_EQ(Conv.at("module"), "Conv2d");
  EXPECT_EQ(Conv.at("inputs"),
            json({"x", "features.0.weight", "features.0.bias"}));
  EXPECT_EQ(Conv.at("attrs"),
            json::array({json::array({"kernel_shape", "[3, 3]"}),
                         json::array({"pads", "[1, 1, 1, 1]"})}));
  EXPECT_EQ(G.at("values").at("h0").at("type"), "f32[N,4,28,28]");
  EXPECT_EQ(G.at("inputs")[0].at("type"), "f32[N,1,28,28]");

  // Statistics equal the data's.
  std::unique_ptr<ir::Graph> Model = frontend::loadModel(SmallCnn);
  for (const ir::Value *V : Model->initializers()) {
    const json &I = G.at("initializers").at(V->name());
    const rt::Tensor &T = V->data();
    double Min = INFINITY, Max = -INFINITY, Sum = 0, SumSq = 0;
    for (int64_t K = 0; K < T.numel(); ++K) {
      double X = T.getFlat(K);
      Min = std::min(Min, X);
      Max = std::max(Max, X);
      Sum += X;
      SumSq += X * X;
    }
    double N = static_cast<double>(T.numel()), Mean = Sum / N;
    EXPECT_EQ(I.at("numel"), T.numel()) << V->name();
    EXPECT_EQ(I.at("shape"), json(T.shape().dims())) << V->name();
    EXPECT_DOUBLE_EQ(I.at("stats").at("min").get<double>(), Min);
    EXPECT_DOUBLE_EQ(I.at("stats").at("max").get<double>(), Max);
    EXPECT_NEAR(I.at("stats").at("mean").get<double>(), Mean, 1e-12);
    EXPECT_NEAR(I.at("stats").at("std").get<double>(),
                std::sqrt(std::max(0.0, SumSq / N - Mean * Mean)), 1e-9);
  }
}

TEST_F(ViewDriverTest, NamesThatWouldEndTheScriptStayText) {
  std::unique_ptr<ir::Graph> G = frontend::loadModel(SmallCnn);
  const std::string Hostile = "</script><script>alert(1)</script><!--&";
  G->nodes()[0]->setName(Hostile);
  G->setName("</SCRIPT>");
  std::string Page = tools::renderViewerHtml(*G, "<b>title</b>");
  // Only the page's own three script elements end.
  EXPECT_EQ(count(Page, "</script>"), 3u);
  EXPECT_EQ(Page.find("</SCRIPT>"), std::string::npos);
  EXPECT_EQ(Page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(Page.find("<b>title"), std::string::npos);
  EXPECT_NE(Page.find("&lt;b&gt;title&lt;/b&gt;"), std::string::npos);
  // The JSON still reads back the names as they were.
  json J = embeddedGraph(Page);
  EXPECT_EQ(J.at("nodes")[0].at("name"), Hostile);
  EXPECT_EQ(J.at("graph"), "</SCRIPT>");
  EXPECT_EQ(J.at("title"), "<b>title</b>");
}

TEST_F(ViewDriverTest, ScopesAreDerivedWhereNoneWasTraced) {
  std::unique_ptr<ir::Graph> G = frontend::loadModel(SmallCnn);
  for (const auto &N : G->nodes())
    N->setScope({});
  G->nodes()[0]->setName("/features/features.0/Conv"); // torch.onnx's names
  G->nodes()[1]->setName("bn");                        // reads features.1.*
  G->nodes()[2]->setName("Relu_2");                    // nothing to go by
  json J = embeddedGraph(tools::renderViewerHtml(*G, "t"));
  EXPECT_EQ(J.at("nodes")[0].at("scope"), "features.0");
  EXPECT_EQ(J.at("nodes")[1].at("scope"), "features.1");
  EXPECT_EQ(J.at("nodes")[2].at("scope"), "");
  EXPECT_TRUE(J.at("nodes")[0].at("scope_derived").get<bool>());
}

TEST_F(ViewDriverTest, JsonSummaryAndZooArchitectures) {
  Result R = runView({"--arch", "mlp", "-o", path("mlp.html"), "--json"});
  ASSERT_EQ(R.Status, 0) << R.Err;
  json J = json::parse(R.Out);
  EXPECT_EQ(J.at("output"), path("mlp.html"));
  EXPECT_EQ(J.at("graph"), "mlp");
  EXPECT_GT(J.at("nodes").get<int>(), 2);
  EXPECT_GT(J.at("bytes").get<int64_t>(), 10000);
  EXPECT_EQ(embeddedGraph(rt::readFile(path("mlp.html"))).at("nodes").size(),
            J.at("nodes").get<size_t>());
  Result Q = runView({SmallCnn, "-o", path("q.html"), "--quiet"});
  EXPECT_EQ(Q.Status, 0);
  EXPECT_EQ(Q.Out, "");
}

TEST_F(ViewDriverTest, BadCommandLinesExitTwoAndBadInputsOne) {
  for (const std::vector<std::string> &Args :
       std::vector<std::vector<std::string>>{
           {SmallCnn},                                        // no -o
           {"-o", path("x.html")},                            // no model
           {SmallCnn, "--arch", "mlp", "-o", path("x.html")}, // both
           {SmallCnn, "-o", path("x.html"), "--bogus"}}) {
    Result R = runView(Args);
    EXPECT_EQ(R.Status, 2) << R.Err;
    EXPECT_NE(R.Err, "");
  }
  Result Missing = runView({path("none.onnx"), "-o", path("x.html")});
  EXPECT_EQ(Missing.Status, 1);
  EXPECT_NE(Missing.Err.find("none.onnx"), std::string::npos) << Missing.Err;
  Result Arch = runView({"--arch", "no-such-net", "-o", path("x.html")});
  EXPECT_EQ(Arch.Status, 1);
  EXPECT_NE(Arch.Err.find("resnet18"), std::string::npos) << Arch.Err;
  Result Dir = runView({SmallCnn, "-o", path("no/such/dir/x.html")});
  EXPECT_EQ(Dir.Status, 1);
  EXPECT_NE(Dir.Err.find("no/such/dir"), std::string::npos) << Dir.Err;
  EXPECT_TRUE(files().empty()); // nothing half-written
}
