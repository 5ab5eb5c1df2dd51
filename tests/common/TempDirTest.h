//===- TempDirTest.h - A test fixture with a fresh folder ---------*- C++ -*-===//
//
// TempDirTest gives each test its own empty folder under the system's
// temporary directory (named after the fixture prefix, the process and the
// test, so parallel ctest runs never share one), removed afterwards; path()
// names a file in it and files() lists what is there (to check that a
// failed write left nothing behind).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace nng::test {

class TempDirTest : public ::testing::Test {
protected:
  /// Prefix of the folder's name, e.g. "nngraph-opt-test".
  explicit TempDirTest(std::string Prefix) : Prefix(std::move(Prefix)) {}

  void SetUp() override {
    Dir = std::filesystem::temp_directory_path() /
          (Prefix + "-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(Dir);
    std::filesystem::create_directories(Dir);
  }
  void TearDown() override { std::filesystem::remove_all(Dir); }

  std::string path(const std::string &Name) const {
    return (Dir / Name).string();
  }
  /// The names in the folder, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> R;
    for (const auto &E : std::filesystem::directory_iterator(Dir))
      R.push_back(E.path().filename().string());
    std::sort(R.begin(), R.end());
    return R;
  }

  std::filesystem::path Dir;

private:
  std::string Prefix;
};

} // namespace nng::test
