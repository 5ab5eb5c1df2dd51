//===- ParallelTest.cpp - parallelFor's chunks ---------------------------===//
//
// Parallel.h: every iteration runs once whatever the range, grain and
// thread count; chunks are at least a grain, ChunksPerThread per thread;
// exceptions reach the caller and the next loop runs; loops inside a chunk
// run inline; callers on several threads at once get correct results; a
// chunk a worker holds up (as a worker descheduled by another process)
// delays only that chunk: the calling thread takes the rest. (Idle
// threads: OpenMPSpinTest.cpp.)
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace nng;

namespace {

/// Runs [0, N) with Grain on Threads threads; each iteration counted.
std::vector<int> coverage(int64_t N, int64_t Grain, int Threads) {
  std::vector<std::atomic<int>> Hits(N);
  ThreadScope Scope(Threads);
  parallelFor(0, N, Grain, [&](int64_t B, int64_t E) {
    ASSERT_LE(0, B);
    ASSERT_LT(B, E);
    ASSERT_LE(E, N);
    for (int64_t I = B; I < E; ++I)
      Hits[I].fetch_add(1);
  });
  std::vector<int> Out(N);
  for (int64_t I = 0; I < N; ++I)
    Out[I] = Hits[I].load();
  return Out;
}

TEST(Parallel, EveryIterationRunsOnce) {
  for (int Threads : {1, 2, 3, 8})
    for (int64_t N : {1, 2, 7, 64, 1000, 100003})
      for (int64_t Grain : {1, 3, 1000}) {
        std::vector<int> H = coverage(N, Grain, Threads);
        for (int64_t I = 0; I < N; ++I)
          ASSERT_EQ(H[I], 1) << "N " << N << " grain " << Grain << " threads "
                             << Threads << " at " << I;
      }
  parallelFor(5, 5, 1, [&](int64_t, int64_t) { FAIL() << "an empty range"; });
}

TEST(Parallel, ChunksAreAtLeastTheGrainAndFinerThanTheThreads) {
  std::atomic<int> Chunks{0};
  std::atomic<int64_t> Smallest{1 << 30};
  ThreadScope Two(2);
  if (numThreads() < 2)
    GTEST_SKIP() << "SKIPPED: one thread (NNGRAPH_NUM_THREADS=1)";
  parallelFor(0, 1 << 20, 1024, [&](int64_t B, int64_t E) {
    Chunks.fetch_add(1);
    int64_t L = E - B, S = Smallest.load();
    while (L < S && !Smallest.compare_exchange_weak(S, L)) {
    }
  });
  EXPECT_EQ(Chunks.load(), 2 * ChunksPerThread);
  EXPECT_GE(Smallest.load(), 1024);
  // Fewer grains than chunks: one chunk a grain.
  Chunks = 0;
  parallelFor(0, 3000, 1000, [&](int64_t, int64_t) { Chunks.fetch_add(1); });
  EXPECT_EQ(Chunks.load(), 3);
}

TEST(Parallel, ExceptionsReachTheCallerAndThePoolGoesOn) {
  ThreadScope Two(2);
  if (numThreads() < 2)
    GTEST_SKIP() << "SKIPPED: one thread (NNGRAPH_NUM_THREADS=1)";
  std::atomic<int> Ran{0};
  EXPECT_THROW(parallelFor(0, 64, 1,
                           [&](int64_t B, int64_t E) {
                             Ran.fetch_add(1);
                             if (B <= 5 && 5 < E)
                               throw std::runtime_error("five");
                           }),
               std::runtime_error);
  EXPECT_EQ(Ran.load(), 2 * ChunksPerThread); // All chunks ran.
  std::vector<int> H = coverage(1000, 1, 2);
  for (int V : H)
    ASSERT_EQ(V, 1);
}

TEST(Parallel, LoopsInsideAChunkRunInline) {
  ThreadScope Two(2);
  std::atomic<int64_t> Sum{0};
  parallelFor(0, 16, 1, [&](int64_t B, int64_t E) {
    for (int64_t I = B; I < E; ++I)
      parallelFor(0, 1000, 1, [&](int64_t IB, int64_t IE) {
        Sum.fetch_add(IE - IB);
      });
  });
  EXPECT_EQ(Sum.load(), 16 * 1000);
}

TEST(Parallel, CallersOnSeveralThreadsAtOnce) {
  std::vector<std::thread> Callers;
  std::atomic<int> Wrong{0};
  for (int T = 0; T < 4; ++T)
    Callers.emplace_back([&, T] {
      ThreadScope Two(2);
      for (int R = 0; R < 200; ++R) {
        int64_t N = 1000 + 37 * T + R;
        std::atomic<int64_t> Sum{0};
        parallelFor(0, N, 1, [&](int64_t B, int64_t E) {
          int64_t S = 0;
          for (int64_t I = B; I < E; ++I)
            S += I;
          Sum.fetch_add(S);
        });
        if (Sum.load() != N * (N - 1) / 2)
          Wrong.fetch_add(1);
      }
    });
  for (std::thread &C : Callers)
    C.join();
  EXPECT_EQ(Wrong.load(), 0);
}

/// A chunk a worker holds up (as a worker descheduled by another
/// process would) delays that chunk only: the calling thread runs the
/// others.
TEST(Parallel, TheCallerTakesOverAHeldUpWorkersShare) {
  ThreadScope Two(2);
  if (numThreads() < 2)
    GTEST_SKIP() << "SKIPPED: one thread (NNGRAPH_NUM_THREADS=1)";
  std::thread::id Caller = std::this_thread::get_id();
  std::atomic<int> ByCaller{0}, ByWorker{0};
  const int Chunks = 2 * ChunksPerThread;
  parallelFor(0, Chunks, 1, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() == Caller) {
      // The first chunk waits (5 s at most) until the worker holds one.
      if (ByCaller.fetch_add(1) == 0)
        for (int I = 0; I < 5000 && ByWorker.load() == 0; ++I)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      ByWorker.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  EXPECT_EQ(ByCaller.load() + ByWorker.load(), Chunks);
  if (ByWorker.load() == 0)
    GTEST_SKIP() << "SKIPPED: the worker thread did not run within 5 s "
                    "(a machine this busy cannot show the hand-over)";
  EXPECT_EQ(ByWorker.load(), 1) << "a held-up worker took one chunk";
  EXPECT_GE(ByCaller.load(), Chunks - 1);
}

} // namespace
