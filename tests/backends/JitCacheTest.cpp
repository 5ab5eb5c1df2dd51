//===- JitCacheTest.cpp - The JIT's persistent object cache ---------------===//
//
// A second compile of a kernel is a memory hit in the same KernelJit and a
// disk hit in a fresh one (its results equal); a corrupted, truncated or
// foreign cache file is detected, rebuilt and rewritten; an unwritable
// cache folder only costs the cache; NNGRAPH_CACHE_DIR picks the folder.
// Prints the compile time of one kernel cold and from the cache.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtils.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace nng {
namespace {

using namespace kerneltest;
using backends::cpu::JitOptions;
using backends::cpu::JitStats;
using backends::cpu::KernelJit;
namespace fs = std::filesystem;

/// A fresh folder under the build's temp area.
std::string freshDir(const std::string &Name) {
  fs::path P = fs::temp_directory_path() /
               ("nngraph-jit-cache-test-" + std::to_string(::getpid())) / Name;
  fs::remove_all(P);
  return P.string();
}

JitOptions inDir(const std::string &Dir) {
  JitOptions O;
  O.CacheDir = Dir;
  return O;
}

/// The output of the layernorm kernel of J on fixed data.
std::vector<char> runLayerNorm(KernelJit &J) {
  Kernel K = layerNormKernel(DType::F32);
  std::mt19937 R(11);
  std::vector<int64_t> S{7, 300};
  std::vector<HostBuffer> Bufs = makeBuffers(K, S, R);
  std::vector<void *> P = pointers(Bufs);
  J.compile(K)->run(P, S);
  return Bufs.back().Bytes;
}

std::vector<fs::path> entries(const std::string &Dir) {
  std::vector<fs::path> E;
  for (const auto &F : fs::directory_iterator(Dir))
    E.push_back(F.path());
  return E;
}

TEST(JitCache, HitsMissesAndCompileTimes) {
  NNG_REQUIRE_JIT();
  std::string Dir = freshDir("hits");
  KernelJit Cold(inDir(Dir));
  std::vector<char> Ref = runLayerNorm(Cold);
  JitStats S = Cold.stats();
  EXPECT_EQ(S.Compiled, 1);
  EXPECT_EQ(S.DiskHits, 0);
  EXPECT_EQ(S.WriteFailures, 0);
  runLayerNorm(Cold);
  EXPECT_EQ(Cold.stats().MemoryHits, 1);
  ASSERT_EQ(entries(Dir).size(), 1u);

  auto T0 = std::chrono::steady_clock::now();
  KernelJit Warm(inDir(Dir));
  double CreateMs = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - T0)
                        .count();
  EXPECT_EQ(runLayerNorm(Warm), Ref);
  JitStats W = Warm.stats();
  EXPECT_EQ(W.Compiled, 0);
  EXPECT_EQ(W.DiskHits, 1);
  std::printf("[ JitCache ] layernorm: cold %.1f ms (compile %.1f ms, link "
              "%.1f ms), cached %.1f ms (read %.2f ms, link %.1f ms); a new "
              "KernelJit (host detection, LLJIT) %.1f ms\n",
              S.CompileMs + S.LinkMs, S.CompileMs, S.LinkMs,
              W.LoadMs + W.LinkMs, W.LoadMs, W.LinkMs, CreateMs);
  ::testing::Test::RecordProperty("cold_ms",
                                  std::to_string(S.CompileMs + S.LinkMs));
  ::testing::Test::RecordProperty("cached_ms",
                                  std::to_string(W.LoadMs + W.LinkMs));
}

TEST(JitCache, CorruptTruncatedAndForeignEntriesAreRebuilt) {
  NNG_REQUIRE_JIT();
  std::string Dir = freshDir("corrupt");
  std::vector<char> Ref;
  {
    KernelJit J(inDir(Dir));
    Ref = runLayerNorm(J);
  }
  ASSERT_EQ(entries(Dir).size(), 1u);
  fs::path Entry = entries(Dir)[0];
  auto Damage = [&](const std::string &How) {
    std::string Bytes;
    {
      std::ifstream In(Entry, std::ios::binary);
      Bytes.assign(std::istreambuf_iterator<char>(In), {});
    }
    if (How == "flip")
      Bytes[Bytes.size() - 100] ^= 0x40; // Inside the object code.
    else if (How == "truncate")
      Bytes.resize(Bytes.size() / 2);
    else
      Bytes = "not an nngraph cache entry at all";
    std::ofstream(Entry, std::ios::binary | std::ios::trunc) << Bytes;
  };
  for (const char *How : {"flip", "truncate", "foreign"}) {
    Damage(How);
    KernelJit J(inDir(Dir));
    EXPECT_EQ(runLayerNorm(J), Ref) << How;
    JitStats S = J.stats();
    EXPECT_EQ(S.CorruptEntries, 1) << How;
    EXPECT_EQ(S.Compiled, 1) << How;
    EXPECT_EQ(S.DiskHits, 0) << How;
    // Rewritten: the next JIT hits.
    KernelJit Again(inDir(Dir));
    EXPECT_EQ(runLayerNorm(Again), Ref) << How;
    EXPECT_EQ(Again.stats().DiskHits, 1) << How;
  }
  // No temporary files left behind.
  EXPECT_EQ(entries(Dir).size(), 1u);
}

TEST(JitCache, UnwritableFolderStillCompiles) {
  NNG_REQUIRE_JIT();
  // A "folder" below a regular file can never be created.
  std::string Base = freshDir("unwritable");
  fs::create_directories(Base);
  std::ofstream(Base + "/file") << "x";
  KernelJit J(inDir(Base + "/file/cache"));
  std::vector<char> Out = runLayerNorm(J);
  JitStats S = J.stats();
  EXPECT_EQ(S.Compiled, 1);
  EXPECT_EQ(S.WriteFailures, 1);
  KernelJit NoCache{JitOptions{"", false}};
  EXPECT_EQ(runLayerNorm(NoCache), Out);
  EXPECT_EQ(NoCache.cacheDir(), "");
}

TEST(JitCache, EnvironmentPicksTheFolder) {
  NNG_REQUIRE_JIT();
  std::string Dir = freshDir("env");
  const char *Old = std::getenv("NNGRAPH_CACHE_DIR");
  std::string Saved = Old ? Old : "";
  ::setenv("NNGRAPH_CACHE_DIR", Dir.c_str(), 1);
  {
    KernelJit J;
    EXPECT_EQ(J.cacheDir(), Dir);
    runLayerNorm(J);
  }
  EXPECT_EQ(entries(Dir).size(), 1u);
  ::unsetenv("NNGRAPH_CACHE_DIR");
  const char *Xdg = std::getenv("XDG_CACHE_HOME");
  std::string SavedXdg = Xdg ? Xdg : "";
  ::setenv("XDG_CACHE_HOME", "/some/xdg", 1);
  EXPECT_EQ(KernelJit().cacheDir(), "/some/xdg/nngraph");
  if (Xdg)
    ::setenv("XDG_CACHE_HOME", SavedXdg.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
  if (Old)
    ::setenv("NNGRAPH_CACHE_DIR", Saved.c_str(), 1);
  fs::remove_all(fs::path(Dir).parent_path());
}

} // namespace
} // namespace nng
