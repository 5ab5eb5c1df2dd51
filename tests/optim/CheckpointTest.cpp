//===- CheckpointTest.cpp - The optimizer checkpoint file -----------------===//
//
// save()/load() round trips (Adam with AMSGrad and a scheduler, SGD with
// None momentum buffers): training resumed from the file continues
// exactly like the original. Bad files: every truncation of a valid file,
// flipped bytes, a wrong magic, trailing bytes, another optimizer's file,
// a missing file; each gives an nng::Error that says what is wrong and
// leaves the optimizer and scheduler unchanged.
//
//===----------------------------------------------------------------------===//

#include "OptimTestUtils.h"
#include "nngraph/frontend/optim/Optim.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace nng;
using namespace nng::optim;
using nng::test::vec;
using nng::test::errorOf;
namespace fs = std::filesystem;

namespace {

/// A per-test temporary folder, removed at the end.
class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    Dir = fs::temp_directory_path() /
          ("nngraph-optim-ckpt-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(Dir);
  }
  void TearDown() override { fs::remove_all(Dir); }

  static std::string readAll(const fs::path &P) {
    std::ifstream In(P, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(In)),
                       std::istreambuf_iterator<char>());
  }
  static void writeAll(const fs::path &P, const std::string &S) {
    std::ofstream Out(P, std::ios::binary | std::ios::trunc);
    Out.write(S.data(), static_cast<std::streamsize>(S.size()));
  }

  fs::path Dir;
};

void grads(std::vector<Tensor> &Ps, float Step) {
  for (size_t I = 0; I < Ps.size(); ++I) {
    std::vector<float> G;
    for (int64_t J = 0; J < Ps[I].numel(); ++J)
      G.push_back(Step * 0.3f - static_cast<float>(J) + static_cast<float>(I));
    Ps[I].set_grad(vec(G, false));
  }
}

std::vector<Tensor> clones(const std::vector<Tensor> &Ps) {
  std::vector<Tensor> C;
  for (const Tensor &P : Ps)
    C.push_back(Tensor(P.data().clone(), true));
  return C;
}

} // namespace

TEST_F(CheckpointTest, AdamWithSchedulerResumesExactly) {
  std::vector<Tensor> P = {vec({1, 2, 3, 4}), vec({0.5, -0.5})};
  Adam Opt({ParamGroup({P[0]}), ParamGroup({P[1]}, {{"lr", 0.02}})},
           {.lr = 0.01, .amsgrad = true});
  StepLR Sched(Opt, 2, 0.5);
  for (int S = 0; S < 3; ++S) {
    grads(P, static_cast<float>(S));
    Opt.step();
    Sched.step();
  }
  fs::path File = Dir / "opt.ckpt";
  save(Opt, File, &Sched);
  EXPECT_FALSE(fs::exists(Dir / "opt.ckpt.tmp"));

  std::vector<Tensor> Q = clones(P);
  Adam Opt2({ParamGroup({Q[0]}), ParamGroup({Q[1]})}, {.lr = 0.9});
  StepLR Sched2(Opt2, 5, 0.1);
  load(Opt2, File, &Sched2);
  EXPECT_EQ(Sched2.last_epoch(), 3);
  EXPECT_EQ(Sched2.get_last_lr(), Sched.get_last_lr());
  EXPECT_EQ(Opt2.param_groups()[1].lr(), Opt.param_groups()[1].lr());
  for (int S = 3; S < 7; ++S) {
    grads(P, static_cast<float>(S));
    grads(Q, static_cast<float>(S));
    Opt.step();
    Opt2.step();
    Sched.step();
    Sched2.step();
  }
  for (size_t I = 0; I < P.size(); ++I)
    EXPECT_TRUE(P[I].data().equals(Q[I].data())) << "parameter " << I;
  EXPECT_EQ(Sched.state_dict(), Sched2.state_dict());
}

TEST_F(CheckpointTest, ReadCheckpointGivesBackWhatWasWritten) {
  Tensor A = vec({1, 2}), B = vec({3});
  SGD Opt({A, B}, {.lr = 0.1});
  A.set_grad(vec({1, 1}, false));
  Opt.step(); // A: momentum_buffer None; B: no state.
  OptimizerCheckpoint C;
  C.optimizer = "SGD";
  C.state = Opt.state_dict();
  C.state.state[1]["extra"] = 2.5;
  C.state.state[1]["half"] = Tensor(
      rt::Tensor::fromVector<double>({1.5, -2, 3, 4, 5, 6}, Shape{2, 3}));
  fs::path File = Dir / "sgd.ckpt";
  write_checkpoint(C, File);
  OptimizerCheckpoint R = read_checkpoint(File);
  EXPECT_EQ(R.optimizer, "SGD");
  EXPECT_FALSE(R.scheduler.has_value());
  ASSERT_EQ(R.state.param_groups.size(), 1u);
  EXPECT_EQ(R.state.param_groups[0].options, C.state.param_groups[0].options);
  EXPECT_EQ(R.state.param_groups[0].params, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(R.state.state.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(
      R.state.state.at(0).at("momentum_buffer")));
  EXPECT_EQ(std::get<double>(R.state.state.at(1).at("extra")), 2.5);
  const Tensor &H = std::get<Tensor>(R.state.state.at(1).at("half"));
  EXPECT_EQ(H.dtype(), DType::F64);
  EXPECT_EQ(H.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(H.to_vector<double>(), (std::vector<double>{1.5, -2, 3, 4, 5, 6}));
}

TEST_F(CheckpointTest, EveryTruncationAndCorruptionIsAClearError) {
  std::vector<Tensor> P = {vec({1, 2, 3}), vec({4})};
  Adam Opt(P, {.lr = 0.01});
  CosineAnnealingLR Sched(Opt, 10);
  grads(P, 1);
  Opt.step();
  Sched.step();
  fs::path File = Dir / "adam.ckpt";
  save(Opt, File, &Sched);
  const std::string Good = readAll(File);
  ASSERT_GT(Good.size(), 100u);

  std::vector<Tensor> Q = clones(P);
  Adam Opt2(Q, {.lr = 0.5});
  CosineAnnealingLR Sched2(Opt2, 3);
  const SchedulerStateDict SchedBefore = Sched2.state_dict();
  auto expectRefused = [&](const std::string &Bytes, const std::string &Want,
                           const std::string &Label) {
    fs::path Bad = Dir / "bad.ckpt";
    writeAll(Bad, Bytes);
    std::string E = errorOf([&] { load(Opt2, Bad, &Sched2); });
    ASSERT_FALSE(E.empty()) << Label << ": no error";
    EXPECT_NE(E.find(Want), std::string::npos) << Label << ": " << E;
    EXPECT_EQ(Opt2.param_groups()[0].lr(), 0.5) << Label;
    EXPECT_TRUE(Opt2.state(Q[0]).empty()) << Label;
    EXPECT_EQ(Sched2.state_dict(), SchedBefore) << Label;
  };
  // Every prefix of the file.
  for (size_t N = 0; N < Good.size(); ++N)
    expectRefused(Good.substr(0, N),
                  N < 8 ? "no NNGOPTCK magic"
                        : (N < 32 ? "truncated" : "(truncated)"),
                  "prefix " + std::to_string(N));
  // A flipped byte anywhere after the header fails the checksum.
  for (size_t At = 32; At < Good.size(); At += 7) {
    std::string Bytes = Good;
    Bytes[At] = static_cast<char>(Bytes[At] ^ 0x5a);
    expectRefused(Bytes, "checksum mismatch", "byte " + std::to_string(At));
  }
  std::string Bytes = Good;
  Bytes[0] = 'X';
  expectRefused(Bytes, "no NNGOPTCK magic", "magic");
  expectRefused(Good + "junk", "payload bytes", "trailing bytes");
  // Nothing failed on the way: the good file still loads.
  load(Opt2, File, &Sched2);
  EXPECT_EQ(Opt2.param_groups()[0].lr(), Opt.param_groups()[0].lr());
}

TEST_F(CheckpointTest, PayloadErrorsBehindAValidChecksumAreCaught) {
  // A file whose checksum is right but whose content is inconsistent (a
  // tensor claiming more bytes than its shape needs) is still refused.
  OptimizerCheckpoint C;
  C.optimizer = "SGD";
  C.state.param_groups.push_back({{{"lr", 0.1}}, {0}});
  C.state.state[0]["momentum_buffer"] =
      Tensor(rt::Tensor::fromVector<float>({1, 2}, Shape{2}));
  fs::path File = Dir / "x.ckpt";
  write_checkpoint(C, File);
  std::string Bytes = readAll(File);
  // The tensor's byte count (u64 8) sits just before its 8 data bytes and
  // the trailing scheduler flag; make it 9 and fix the checksum.
  size_t At = Bytes.size() - 1 - 8 - 8;
  ASSERT_EQ(static_cast<unsigned char>(Bytes[At]), 8u);
  Bytes[At] = 9;
  uint64_t H = 0xcbf29ce484222325ULL;
  for (size_t I = 32; I < Bytes.size(); ++I) {
    H ^= static_cast<unsigned char>(Bytes[I]);
    H *= 0x100000001b3ULL;
  }
  std::memcpy(Bytes.data() + 24, &H, 8);
  writeAll(File, Bytes);
  std::string E = errorOf([&] { read_checkpoint(File); });
  EXPECT_NE(E.find("9 bytes of data but its shape [2] and dtype f32 need 8"),
            std::string::npos)
      << E;
}

TEST_F(CheckpointTest, WrongOptimizerMissingFileAndMissingScheduler) {
  Tensor P = vec({1});
  SGD S({P}, {.lr = 0.1});
  Adam A({P});
  fs::path File = Dir / "sgd.ckpt";
  save(S, File);
  std::string E = errorOf([&] { load(A, File); });
  EXPECT_NE(E.find("holds the state of SGD, not of Adam"), std::string::npos)
      << E;
  StepLR Sched(S, 3);
  E = errorOf([&] { load(S, File, &Sched); });
  EXPECT_NE(E.find("holds no scheduler state"), std::string::npos) << E;
  E = errorOf([&] { load(S, Dir / "missing.ckpt"); });
  EXPECT_NE(E.find("cannot open"), std::string::npos) << E;
  E = errorOf([&] { save(S, Dir / "no" / "such" / "dir.ckpt"); });
  EXPECT_NE(E.find("cannot create"), std::string::npos) << E;
}
