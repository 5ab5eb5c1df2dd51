//===- ParametrizeTest.cpp - nn::utils::parametrize against PyTorch -------===//
//
// register_parametrization, chains, right_inverse, several originals
// (weight_norm) and spectral_norm against PyTorch 1.13 through
// TorchOracle.h: state_dict keys (parametrizations.weight.original, the
// parametrization modules' own parameters and buffers), outputs, gradients
// of the originals, buffers after a training forward (spectral_norm's
// power iteration), SGD steps and print(module). Then what PyTorch has no
// oracle for here: removal, the Cached scope, buffers, and errors. The
// oracle tests SKIP when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/utils/Parametrizations.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;
namespace parametrize = nng::nn::utils::parametrize;
namespace parametrizations = nng::nn::utils::parametrizations;

namespace {

/// X's upper triangle mirrored (PyTorch's tutorial example).
struct Symmetric : nn::Module<Symmetric> {
  Tensor forward(const Tensor &X) {
    return triu(X) + triu(X, 1).transpose(0, 1);
  }
};

/// X times a trained scale (a parametrization with a parameter).
struct Scale : nn::Module<Scale> {
  Scale() { scale = register_parameter("scale", full({1}, 1.5)); }
  Tensor forward(const Tensor &X) { return X * scale; }
  Tensor scale;
};

/// 2 X, with its right inverse: the original is half the weight.
struct Double : nn::Module<Double> {
  Tensor forward(const Tensor &X) { return X * 2.0; }
  Tensor right_inverse(const Tensor &Y) { return Y / 2.0; }
};

const char *Prelude = R"(
P = torch.nn.utils.parametrize
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(0, 1)
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.full((1,), 1.5))
    def forward(self, X):
        return X * self.scale
class Double(nn.Module):
    def forward(self, X):
        return X * 2
    def right_inverse(self, Y):
        return Y / 2
# PyTorch 2.1's torch.nn.utils.parametrizations._WeightNorm.
class _WeightNorm(nn.Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = dim
    def forward(self, weight_g, weight_v):
        return torch._weight_norm(weight_v, weight_g, self.dim)
    def right_inverse(self, weight):
        weight_g = torch.norm_except_dim(weight, 2, self.dim)
        return weight_g, weight
def parametrized(m, *ps, unsafe=False):
    for p in ps:
        P.register_parametrization(m, "weight", p, unsafe=unsafe)
    return m
)";

OracleCase linearCase(const std::string &Torch,
                      std::shared_ptr<nn::Linear> Lin, Shape In) {
  OracleCase C;
  C.Name = Torch;
  C.Module = Lin;
  C.TorchModule = Torch;
  C.Inputs = {randn(In.dims())};
  C.Forward = [Lin](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*Lin)(X[0])};
  };
  return C;
}

} // namespace

TEST(Parametrize, AgainstPyTorch) {
  manual_seed(21);
  TorchOracle O(Prelude);
  {
    auto Lin = nn::make<nn::Linear>(3, 3);
    parametrize::register_parametrization(*Lin, "weight", nn::make<Symmetric>());
    OracleCase C = linearCase("parametrized(nn.Linear(3, 3), Symmetric())",
                              Lin, Shape({4, 3}));
    C.Train = true;
    C.Sgd = OracleSgd{};
    C.Steps = 2;
    O.add(C);
  }
  {
    // A chain; the second parametrization has a parameter of its own.
    auto Lin = nn::make<nn::Linear>(3, 3);
    parametrize::register_parametrization(*Lin, "weight", nn::make<Symmetric>());
    parametrize::register_parametrization(*Lin, "weight", nn::make<Scale>());
    O.add(linearCase("parametrized(nn.Linear(3, 3), Symmetric(), Scale())",
                     Lin, Shape({2, 3})));
  }
  {
    auto Lin = nn::make<nn::Linear>(4, 2);
    parametrize::register_parametrization(*Lin, "weight", nn::make<Double>());
    O.add(linearCase("parametrized(nn.Linear(4, 2), Double())", Lin,
                     Shape({3, 4})));
  }
  {
    auto Lin = nn::make<nn::Linear>(4, 3);
    parametrizations::weight_norm(*Lin);
    OracleCase C = linearCase(
        "parametrized(nn.Linear(4, 3), _WeightNorm(0), unsafe=True)", Lin,
        Shape({5, 4}));
    C.Train = true;
    C.Sgd = OracleSgd{};
    C.Steps = 2;
    O.add(C);
  }
  {
    auto Lin = nn::make<nn::Linear>(5, 4);
    parametrizations::spectral_norm(*Lin);
    OracleCase C = linearCase(
        "torch.nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4))", Lin,
        Shape({3, 5}));
    C.Train = true; // One power-iteration step; _u, _v compared after it.
    O.add(C);
    auto Eval = nn::make<nn::Linear>(5, 4);
    parametrizations::spectral_norm(*Eval);
    O.add(linearCase(
        "torch.nn.utils.parametrizations.spectral_norm(nn.Linear(5, 4))", Eval,
        Shape({3, 5})));
  }
  {
    auto Conv = nn::make<nn::Conv2d>(2, 3, 3);
    parametrizations::spectral_norm(*Conv);
    OracleCase C;
    C.Name = "spectral_norm(Conv2d)";
    C.Module = Conv;
    C.TorchModule =
        "torch.nn.utils.parametrizations.spectral_norm(nn.Conv2d(2, 3, 3))";
    C.Inputs = {randn({1, 2, 6, 6})};
    C.Train = true;
    C.Forward = [Conv](const std::vector<Tensor> &X) {
      return std::vector<Tensor>{(*Conv)(X[0])};
    };
    O.add(C);
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(Parametrize, RemoveLeavesTheValueOrTheOriginal) {
  manual_seed(22);
  nn::Linear Lin(3, 3);
  Tensor W0 = Lin.weight.detach().clone();
  parametrize::register_parametrization(Lin, "weight", nn::make<Double>());
  EXPECT_TRUE(parametrize::is_parametrized(Lin));
  EXPECT_TRUE(parametrize::is_parametrized(Lin, "weight"));
  EXPECT_FALSE(parametrize::is_parametrized(Lin, "bias"));
  EXPECT_EQ(Lin.type_name(), "ParametrizedLinear");
  EXPECT_TRUE(allclose(parametrize::value(Lin, "weight"), W0));
  EXPECT_TRUE(allclose(Lin.get_parameter("parametrizations.weight.original"),
                       W0 / 2.0));
  parametrize::remove_parametrizations(Lin, "weight");
  EXPECT_EQ(Lin.type_name(), "Linear");
  std::vector<std::string> Keys;
  for (const auto &[K, V] : Lin.state_dict())
    Keys.push_back(K);
  EXPECT_EQ(Keys, (std::vector<std::string>{"bias", "weight"}));
  EXPECT_TRUE(allclose(Lin.weight, W0));
  EXPECT_TRUE(Lin.weight.requires_grad());

  nn::Linear Lin2(3, 3);
  Tensor V0 = Lin2.weight.detach().clone();
  parametrize::register_parametrization(Lin2, "weight", nn::make<Double>());
  parametrize::remove_parametrizations(Lin2, "weight",
                                       /*LeaveParametrized=*/false);
  EXPECT_TRUE(allclose(Lin2.weight, V0 / 2.0)); // The original.
}

namespace {
/// Counts its calls.
struct Counted : nn::Module<Counted> {
  int *Calls;
  explicit Counted(int *Calls) : Calls(Calls) {}
  Tensor forward(const Tensor &X) {
    ++*Calls;
    return X;
  }
};
} // namespace

TEST(Parametrize, CachedComputesOnceAndBuffersWork) {
  nn::Linear Lin(2, 2);
  int Calls = 0;
  parametrize::register_parametrization(Lin, "weight",
                                        nn::make<Counted>(&Calls));
  Calls = 0;
  {
    parametrize::Cached Scope;
    Lin(randn({1, 2}));
    Lin(randn({1, 2}));
    parametrize::value(Lin, "weight");
  }
  EXPECT_EQ(Calls, 1);
  Lin(randn({1, 2}));
  EXPECT_EQ(Calls, 2);

  // A buffer: the original is a buffer too.
  nn::BatchNorm1d Bn(3);
  parametrize::register_parametrization(Bn, "running_var", nn::make<Double>());
  std::vector<std::string> Keys;
  for (const auto &[K, V] : Bn.state_dict())
    Keys.push_back(K);
  EXPECT_NE(std::find(Keys.begin(), Keys.end(),
                      "parametrizations.running_var.original"),
            Keys.end());
  EXPECT_TRUE(Bn.get_buffer("parametrizations.running_var.original").defined());
}

TEST(Parametrize, ShapeChangesNeedUnsafeAndErrorsSayWhat) {
  struct Flat : nn::Module<Flat> {
    Tensor forward(const Tensor &X) { return flatten(X); }
  };
  nn::Linear Lin(3, 2);
  try {
    parametrize::register_parametrization(Lin, "weight", nn::make<Flat>());
    FAIL() << "no error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("unsafe"), std::string::npos)
        << E.what();
  }
  EXPECT_FALSE(parametrize::is_parametrized(Lin));
  EXPECT_THROW(parametrize::register_parametrization(Lin, "nothing",
                                                     nn::make<Double>()),
               Error);
  EXPECT_THROW(parametrize::remove_parametrizations(Lin, "weight"), Error);
  // The container went away with the last parametrization; removing a
  // submodule that is not there is an error.
  EXPECT_THROW(Lin.remove_module("parametrizations"), Error);
}
