//===- OpCoverageTest.cpp - Every op of the table has reference tests ----===//
//
// Scans the reference kernel tests (tests/backends/*.cpp) for "OpKind::X"
// and fails for every op of the table that no test mentions, so a new row in
// Ops.def cannot land without hand-checked tests of its kernel. It reads the
// sources (not a runtime registry) because ctest runs each test in its own
// process.
//
//===----------------------------------------------------------------------===//

#include "RefTestUtils.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

/// The text of every test source in tests/backends except this one.
std::string testSources() {
  namespace fs = std::filesystem;
  fs::path Dir = fs::path(NNGRAPH_SOURCE_DIR) / "tests" / "backends";
  std::string All;
  for (const auto &E : fs::directory_iterator(Dir)) {
    if (E.path().extension() != ".cpp" ||
        E.path().filename() == "OpCoverageTest.cpp")
      continue;
    std::ifstream In(E.path());
    std::stringstream SS;
    SS << In.rdbuf();
    All += SS.str();
  }
  return All;
}

/// True when Text contains "OpKind::Name" not followed by an identifier
/// character.
bool mentions(const std::string &Text, const std::string &Name) {
  std::string Needle = "OpKind::" + Name;
  for (size_t At = Text.find(Needle); At != std::string::npos;
       At = Text.find(Needle, At + 1)) {
    size_t End = At + Needle.size();
    if (End >= Text.size() ||
        !(std::isalnum(static_cast<unsigned char>(Text[End])) ||
          Text[End] == '_'))
      return true;
  }
  return false;
}

TEST(RefCoverage, EveryOpHasKernelTests) {
  std::string Text = testSources();
  ASSERT_FALSE(Text.empty()) << "no test sources found under "
                             << NNGRAPH_SOURCE_DIR << "/tests/backends";
  std::vector<std::string> Missing;
  for (const nng::ir::OpSchema &S : nng::ir::allOpSchemas())
    if (!mentions(Text, std::string(S.Name)))
      Missing.push_back(S.qualifiedName());
  std::string List;
  for (const std::string &M : Missing)
    List += " " + M;
  EXPECT_TRUE(Missing.empty())
      << Missing.size() << " ops have no reference kernel test in "
      << "tests/backends (add cases built with OpTest(OpKind::X)):" << List;
}

} // namespace
