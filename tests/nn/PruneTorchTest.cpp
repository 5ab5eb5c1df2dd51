//===- PruneTorchTest.cpp - nn::utils::prune against torch.nn.utils.prune ===//
//
// The same pruning calls on the same initial weights in C++ and in
// PyTorch 1.13 (tests/nn/scripts/prune_oracle.py, run with
// $NNGRAPH_PYTHON or /usr/bin/python3): the state_dict keys, their order
// and values must be equal (L1 and Ln methods choose the same entries;
// random methods only agree on keys, shapes and counts), a state_dict saved
// by torch loads (strict) into the C++ module pruned the same way and
// computes torch's output, and the C++ state_dict saved as .pt loads into
// torch's module and computes the C++ output. SKIPPED when no Python
// imports torch.
//
//===----------------------------------------------------------------------===//

#include "common/Subprocess.h"
#include "common/TempDirTest.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/frontend/nn/utils/Prune.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/frontend/weights/Load.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

using namespace nng;
using namespace nng::nn;
namespace prune = nng::nn::utils::prune;
using json = nlohmann::json;

namespace {

/// One comparison: a module built twice (Build), the calls, the input.
struct PruneCase {
  std::string Name;
  std::function<ModulePtr()> Build;
  std::string TorchModule;
  json Calls;
  Tensor X;
  /// Extra tensors calls refer to as "@key".
  std::vector<std::pair<std::string, Tensor>> Extra;
  /// Masks drawn at random: compare keys, shapes and zero counts only.
  bool Random = false;
};

prune::Amount amountOf(const json &J) {
  if (J.is_number_integer())
    return prune::Amount(J.get<int64_t>());
  return prune::Amount(J.get<double>());
}

void applyCalls(ModuleBase &Root, const PruneCase &C) {
  auto ExtraOf = [&](const json &J) {
    std::string Key = J.get<std::string>().substr(1);
    for (const auto &[K, T] : C.Extra)
      if (K == Key)
        return T;
    throw std::runtime_error("no extra tensor " + Key);
  };
  for (const json &Call : C.Calls) {
    std::string Fn = Call[0];
    if (Fn == "global_unstructured") {
      std::vector<prune::ParameterRef> Params;
      for (const json &P : Call[1])
        Params.emplace_back(Root.get_submodule(P[0]), P[1]);
      prune::MethodClass Method =
          Call[2] == "L1Unstructured"
              ? prune::method<prune::L1Unstructured>()
              : prune::method<prune::RandomUnstructured>();
      prune::global_unstructured(Params, Method, amountOf(Call[3]));
      continue;
    }
    ModulePtr Sub = Root.get_submodule(Call[1]);
    std::string Name = Call[2];
    if (Fn == "identity")
      prune::identity(Sub, Name);
    else if (Fn == "l1_unstructured")
      prune::l1_unstructured(Sub, Name, amountOf(Call[3]));
    else if (Fn == "random_unstructured")
      prune::random_unstructured(Sub, Name, amountOf(Call[3]));
    else if (Fn == "ln_structured")
      prune::ln_structured(Sub, Name, amountOf(Call[3]), Call[4].get<double>(),
                           Call[5].get<int64_t>());
    else if (Fn == "random_structured")
      prune::random_structured(Sub, Name, amountOf(Call[3]),
                               Call[4].get<int64_t>());
    else if (Fn == "custom_from_mask")
      prune::custom_from_mask(Sub, Name, ExtraOf(Call[3]));
    else if (Fn == "remove")
      prune::remove(Sub, Name);
    else
      throw std::runtime_error("unknown call " + Fn);
  }
}

/// max |a - b| (shapes must match).
double maxDiff(const rt::Tensor &A, const rt::Tensor &B) {
  std::vector<double> VA = A.toDoubleVector(), VB = B.toDoubleVector();
  double M = 0;
  for (size_t I = 0; I < VA.size(); ++I)
    M = std::max(M, std::abs(VA[I] - VB[I]));
  return M;
}

int64_t zerosIn(const rt::Tensor &T) {
  int64_t N = 0;
  for (double V : T.toDoubleVector())
    N += V == 0;
  return N;
}

bool isMask(const std::string &Key) {
  return Key.size() > 5 && Key.compare(Key.size() - 5, 5, "_mask") == 0;
}

class PruneTorch : public test::TempDirTest {
protected:
  PruneTorch() : TempDirTest("nngraph-prune-torch") {}

  /// Runs the cases' C++ side, then the oracle; returns the skip reason
  /// ("" when it ran).
  std::string runOracle(const std::vector<PruneCase> &Cases) {
    json Req{{"cases", json::array()}};
    for (const PruneCase &C : Cases) {
      manual_seed(11);
      ModulePtr M = C.Build();
      M->eval();
      weights::saveWeights(*M, path(C.Name + ".init.pt"));
      manual_seed(0);
      applyCalls(*M, C);
      Tensor Y;
      {
        NoGradGuard G;
        Y = (*M)(C.X);
      }
      CppOut[C.Name] = Y;
      Modules[C.Name] = M;
      weights::saveWeights(*M, path(C.Name + ".cpp.pt"));
      weights::TensorMap In;
      In.insert("x", C.X.data());
      for (const auto &[K, T] : C.Extra)
        In.insert(K, T.data());
      weights::writeStateDict(path(C.Name + ".in.pt"), In);
      Req["cases"].push_back(
          {{"name", C.Name}, {"module", C.TorchModule}, {"calls", C.Calls}});
    }
    std::ofstream(path("request.json")) << Req.dump(1);
    std::string Reasons;
    for (const std::string &Py : test::pythonCandidates()) {
      std::string Out;
      int Status = test::runCommand(
          "OPENBLAS_CORETYPE=SkylakeX OMP_NUM_THREADS=2 " +
              test::shellQuote(Py) +
              " " NNGRAPH_SOURCE_DIR "/tests/nn/scripts/prune_oracle.py " +
              test::shellQuote(Dir.string()),
          Out);
      if (Status == 0)
        return "";
      if (Status == test::OracleSkipStatus || Status == 127) {
        Reasons += Py + ": " + Out + "; ";
        continue;
      }
      ADD_FAILURE() << "prune_oracle.py failed (status " << Status << ") with "
                    << Py << ":\n"
                    << Out;
      return "";
    }
    return "no Python with torch: " + Reasons;
  }

  /// Compares case C with what torch wrote.
  void check(const PruneCase &C) {
    SCOPED_TRACE("case " + C.Name);
    ModulePtr M = Modules.at(C.Name);
    weights::TensorMap Torch =
        weights::readStateDict(path(C.Name + ".torch.pt"));
    StateDict Mine = M->state_dict();
    // Keys and order.
    ASSERT_EQ(Mine.keys(), Torch.keys());
    // Values.
    for (const auto &[Key, T] : Mine) {
      const rt::Tensor &W = Torch.at(Key);
      ASSERT_EQ(T.shape(), W.shape()) << Key;
      EXPECT_EQ(T.dtype(), W.dtype()) << Key;
      if (C.Random && isMask(Key))
        EXPECT_EQ(zerosIn(T.data()), zerosIn(W)) << Key;
      else
        EXPECT_EQ(maxDiff(T.data(), W), 0.0) << Key;
    }
    weights::TensorMap Out =
        weights::readStateDict(path(C.Name + ".torch_out.pt"));
    // torch's module with the C++ state dict computes the C++ output.
    EXPECT_LE(maxDiff(CppOut.at(C.Name).data(), Out.at("y_cpp")), 1e-5);
    if (!C.Random)
      EXPECT_LE(maxDiff(CppOut.at(C.Name).data(), Out.at("y")), 1e-5);
    // torch's state dict loads (strict) into a C++ module pruned the same
    // way and computes torch's output.
    manual_seed(99);
    ModulePtr M2 = C.Build();
    M2->eval();
    applyCalls(*M2, C);
    weights::LoadResult R =
        weights::loadWeights(*M2, path(C.Name + ".torch.pt"));
    EXPECT_TRUE(R.MissingKeys.empty());
    EXPECT_TRUE(R.UnexpectedKeys.empty());
    Tensor Y2;
    {
      NoGradGuard G;
      Y2 = (*M2)(C.X);
    }
    EXPECT_LE(maxDiff(Y2.data(), Out.at("y")), 1e-5);
    for (const auto &[Key, T] : M2->state_dict())
      EXPECT_EQ(maxDiff(T.data(), Torch.at(Key)), 0.0) << Key;
  }

  std::map<std::string, Tensor> CppOut;
  std::map<std::string, ModulePtr> Modules;
};

std::vector<PruneCase> cases() {
  std::vector<PruneCase> Cs;
  manual_seed(3);
  {
    PruneCase C;
    C.Name = "l1";
    C.Build = [] {
      return std::make_shared<Sequential>(std::make_shared<Linear>(6, 5),
                                          std::make_shared<ReLU>(),
                                          std::make_shared<Linear>(5, 3));
    };
    C.TorchModule =
        "nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))";
    C.Calls =
        json::array({json::array({"l1_unstructured", "0", "weight", 0.3}),
                     json::array({"l1_unstructured", "0", "bias", 2}),
                     json::array({"l1_unstructured", "2", "weight", 0.5}),
                     json::array({"l1_unstructured", "0", "weight", 0.5})});
    C.X = randn({4, 6});
    Cs.push_back(C);
  }
  {
    PruneCase C;
    C.Name = "ln";
    C.Build = [] {
      return std::make_shared<Sequential>(std::make_shared<Conv2d>(3, 6, 3),
                                          std::make_shared<ReLU>(),
                                          std::make_shared<Conv2d>(6, 4, 1));
    };
    C.TorchModule =
        "nn.Sequential(nn.Conv2d(3, 6, 3), nn.ReLU(), nn.Conv2d(6, 4, 1))";
    C.Calls = json::array(
        {json::array({"ln_structured", "0", "weight", 0.5, 2.0, 0}),
         json::array({"ln_structured", "0", "weight", 1, 1.0, 1}),
         json::array({"ln_structured", "2", "weight", 0.25, 1.0, 1}),
         json::array({"ln_structured", "2", "weight", 1, 3.0, -4})});
    C.X = randn({2, 3, 5, 5});
    Cs.push_back(C);
  }
  {
    PruneCase C;
    C.Name = "combination";
    C.Build = [] {
      return std::make_shared<Sequential>(
          std::make_shared<Conv2d>(3, 4, 3), std::make_shared<ReLU>(),
          std::make_shared<Flatten>(), std::make_shared<Linear>(36, 10),
          std::make_shared<ReLU>(), std::make_shared<Linear>(10, 5));
    };
    C.TorchModule = "nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), "
                    "nn.Flatten(), nn.Linear(36, 10), nn.ReLU(), "
                    "nn.Linear(10, 5))";
    C.Calls =
        json::array({json::array({"identity", "5", "bias"}),
                     json::array({"l1_unstructured", "0", "weight", 0.25}),
                     json::array({"ln_structured", "0", "weight", 1, 2.0, 0}),
                     json::array({"l1_unstructured", "0", "weight", 3}),
                     json::array({"custom_from_mask", "3", "bias", "@mask"}),
                     json::array({"global_unstructured",
                                  json::array({json::array({"3", "weight"}),
                                               json::array({"5", "weight"})}),
                                  "L1Unstructured", 0.4}),
                     json::array({"global_unstructured",
                                  json::array({json::array({"0", "weight"}),
                                               json::array({"3", "weight"}),
                                               json::array({"5", "weight"})}),
                                  "L1Unstructured", 50}),
                     json::array({"remove", "5", "weight"}),
                     json::array({"ln_structured", "3", "weight", 0.3, 1.0, 0}),
                     json::array({"remove", "0", "weight"})});
    C.X = randn({2, 3, 5, 5});
    C.Extra = {{"mask", (rand({10}) > 0.3).to(DType::F32)}};
    Cs.push_back(C);
  }
  {
    PruneCase C;
    C.Name = "random";
    C.Build = [] {
      return std::make_shared<Sequential>(std::make_shared<Linear>(6, 5),
                                          std::make_shared<ReLU>(),
                                          std::make_shared<Linear>(5, 3));
    };
    C.TorchModule =
        "nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))";
    C.Calls =
        json::array({json::array({"random_unstructured", "0", "weight", 0.5}),
                     json::array({"random_structured", "2", "weight", 1, 0}),
                     json::array({"random_unstructured", "0", "weight", 3}),
                     json::array({"random_unstructured", "2", "bias", 0.5})});
    C.X = randn({4, 6});
    C.Random = true;
    Cs.push_back(C);
  }
  return Cs;
}

} // namespace

TEST_F(PruneTorch, StateDictsMatchAndLoadBothWays) {
  std::vector<PruneCase> Cs = cases();
  std::string Skip = runOracle(Cs);
  if (!Skip.empty())
    GTEST_SKIP() << "SKIPPED: " << Skip;
  if (::testing::Test::HasFailure())
    return;
  for (const PruneCase &C : Cs)
    check(C);
}
