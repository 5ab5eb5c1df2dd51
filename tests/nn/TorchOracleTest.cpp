//===- TorchOracleTest.cpp - The PyTorch oracle harness checks itself -----===//
//
// TorchOracle (TorchOracle.h) on hand-written modules built from tensor
// operations, with the same module written in Python: the comparison passes
// when both compute the same thing, and reports a failure naming the tensor
// when they do not (a wrong output, a wrong gradient, a different
// state_dict key order, a different buffer after forward), so the layer
// tests built on it cannot pass vacuously. Also checks the tensor
// comparison itself. SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Functional.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Module.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>

using namespace nng;
using namespace nng::test;

namespace {

/// relu(x W^T + b) with a counter buffer bumped by each forward; Wrong
/// gives a deliberately different output.
struct Affine : nn::Module<Affine> {
  Tensor Weight = register_parameter("weight", randn({3, 4}));
  Tensor Bias = register_parameter("bias", randn({3}));
  Tensor Calls = register_buffer("calls", zeros({1}));
  bool Wrong = false;
  Tensor forward(const Tensor &X) {
    {
      NoGradGuard G;
      Calls.add_(1.0);
    }
    Tensor Y = F::relu(matmul(X, Weight.t()) + Bias);
    return Wrong ? Y * 1.001 : Y;
  }
};

/// The same module in Python; Order "bw" registers bias first.
const char *Prelude = R"py(
class Affine(nn.Module):
    def __init__(self, order="wb"):
        super().__init__()
        if order == "wb":
            self.weight = nn.Parameter(torch.zeros(3, 4))
            self.bias = nn.Parameter(torch.zeros(3))
        else:
            self.bias = nn.Parameter(torch.zeros(3))
            self.weight = nn.Parameter(torch.zeros(3, 4))
        self.register_buffer("calls", torch.zeros(1))
    def forward(self, x):
        self.calls += 1
        return torch.relu(x @ self.weight.t() + self.bias)

class SkipGrad(Affine):
    def forward(self, x):
        self.calls += 1
        return torch.relu(x.detach() @ self.weight.t() + self.bias)

class NoCount(Affine):
    def forward(self, x):
        return torch.relu(x @ self.weight.t() + self.bias)
)py";

OracleCase affineCase(const std::string &TorchModule, bool Wrong = false) {
  manual_seed(7);
  auto M = std::make_shared<Affine>();
  M->Wrong = Wrong;
  OracleCase C;
  C.Name = "Affine as " + TorchModule;
  C.Module = M;
  C.TorchModule = TorchModule;
  C.Inputs = {randn({5, 4})};
  C.Forward = [M](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*M)(X[0])};
  };
  return C;
}

} // namespace

TEST(TorchOracle, CompareTensorsReportsTheWorstElement) {
  Tensor A = tensor({1.0, 2.0, 3.0}), B = tensor({1.0, 2.5, 3.0 + 1e-7});
  EXPECT_EQ(compareTensors(A, A, 1e-5, 0), "");
  std::string Msg = compareTensors(A, B, 1e-5, 0);
  EXPECT_NE(Msg.find("max abs error 0.5"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("1 of 3 values"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("flat index 1"), std::string::npos) << Msg;
  EXPECT_NE(compareTensors(A, tensor({1.0, 2.0}), 1, 1).find("[2]"),
            std::string::npos);
  EXPECT_NE(compareTensors(A, A.to(DType::F64), 1, 1).find("f64"),
            std::string::npos);
  EXPECT_NE(compareTensors(tensor({NAN}), tensor({1.0}), 1, 1), "");
  EXPECT_EQ(compareTensors(tensor({NAN}), tensor({NAN}), 0, 0), "");
  EXPECT_NE(compareKeys({"a", "b"}, {"b", "a"}), "");
  EXPECT_EQ(compareKeys({"a", "b"}, {"a", "b"}), "");
}

TEST(TorchOracle, MatchingModulePasses) {
  TorchOracle O(Prelude);
  O.add(affineCase("Affine()"));
  OracleCase Train = affineCase("Affine()");
  Train.Train = true;
  Train.Sgd = OracleSgd{0.1, 0.9};
  Train.Steps = 2;
  O.add(std::move(Train));
  NNG_RUN_TORCH_ORACLE(O);
  EXPECT_FALSE(O.torchVersion().empty());
}

/// Each mismatch must make the oracle fail with a message naming the case
/// and the tensor; all cases run in one Python batch.
TEST(TorchOracle, MismatchesAreReported) {
  struct Mismatch {
    std::string TorchModule;
    bool Wrong;
    std::string Expected;
  } Cases[] = {
      {"Affine()", true, "output 0: max abs error"},
      {"SkipGrad()", false, "gradient of input 0"},
      {"Affine('bw')", false, "state_dict keys differ"},
      {"NoCount()", false, "state_dict['calls']"},
  };
  TorchOracle O(Prelude);
  for (const Mismatch &M : Cases)
    O.add(affineCase(M.TorchModule, M.Wrong));
  ::testing::TestPartResultArray Results;
  std::string WhyNot;
  {
    ::testing::ScopedFakeTestPartResultReporter Reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &Results);
    WhyNot = O.run();
  }
  if (!WhyNot.empty())
    GTEST_SKIP() << "SKIPPED: " << WhyNot;
  std::string All;
  for (int I = 0; I < Results.size(); ++I)
    All += std::string(Results.GetTestPartResult(I).message()) + "\n";
  for (const Mismatch &M : Cases) {
    bool Found = false;
    for (int I = 0; I < Results.size(); ++I) {
      std::string Msg = Results.GetTestPartResult(I).message();
      Found |= Msg.find(M.Expected) != std::string::npos &&
               Msg.find("Affine as " + M.TorchModule) != std::string::npos;
    }
    EXPECT_TRUE(Found) << "expected a failure of 'Affine as " << M.TorchModule
                       << "' mentioning '" << M.Expected << "', got:\n"
                       << All;
  }
}
