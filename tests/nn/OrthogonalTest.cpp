//===- OrthogonalTest.cpp - parametrizations::orthogonal against PyTorch --===//
//
// orthogonal() on square, wide and tall Linear weights, for each map
// (matrix_exp, cayley, householder) with and without the trivialization,
// against PyTorch 1.13 through TorchOracle.h: the state_dict keys (the
// original and the base buffer), the parametrized output after loading the
// same state_dict, the gradients of the originals and two SGD steps; and
// the value and original a registration gives for the same weight (the
// QR-based initialization). Then what needs no oracle: W^T W = I (or W
// W^T for wide weights), assignment (right_inverse), and errors. The
// oracle tests SKIP when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Autograd.h"
#include "nngraph/frontend/Linalg.h"
#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/fx/Trace.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/utils/Parametrizations.h"
#include "nngraph/ir/Graph.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::test;
namespace parametrize = nng::nn::utils::parametrize;
namespace parametrizations = nng::nn::utils::parametrizations;

namespace {

const char *Prelude = R"(
orthogonal = torch.nn.utils.parametrizations.orthogonal
class InitOrth(nn.Module):
    # A Linear's weight and bias; forward registers orthogonal on a copy
    # and returns the parametrized weight and the original.
    def __init__(self, out_f, in_f, **kw):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_f, in_f))
        self.bias = nn.Parameter(torch.empty(out_f))
        self.kw = kw
    def forward(self, x):
        lin = nn.Linear(self.weight.shape[1], self.weight.shape[0])
        with torch.no_grad():
            lin.weight.copy_(self.weight)
        orthogonal(lin, **self.kw)
        return (lin.weight.detach(),
                lin.parametrizations.weight.original.detach())
class Batched(nn.Module):
    # A batch of matrices as one parameter.
    def __init__(self, *shape):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(*shape))
    def forward(self, x):
        return x @ self.weight
)";

/// A batch of matrices as one parameter (Batched in the prelude).
struct Batched : nn::Module<Batched> {
  explicit Batched(std::vector<int64_t> Shape) {
    weight = register_parameter("weight", randn(Shape));
  }
  Tensor forward(const Tensor &X) { return matmul(X, weight); }
  Tensor weight;
};

struct Config {
  int64_t In, Out;
  std::optional<std::string> Map;
  bool Triv;
};

std::string pyArgs(const Config &C) {
  std::string S;
  if (C.Map)
    S += ", orthogonal_map=\"" + *C.Map + "\"";
  S += std::string(", use_trivialization=") + (C.Triv ? "True" : "False");
  return S;
}

std::string describe(const Config &C) {
  return "orthogonal(Linear(" + std::to_string(C.In) + ", " +
         std::to_string(C.Out) + ")" + pyArgs(C) + ")";
}

bool isHouseholder(const Config &C) {
  return C.Map ? *C.Map == "householder" : C.In != C.Out;
}

std::vector<Config> configs() {
  std::vector<Config> R;
  // Square (In == Out), wide weight (Out < In), tall weight (Out > In).
  for (auto [In, Out] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}})
    for (std::optional<std::string> Map :
         {std::optional<std::string>(),
          std::optional<std::string>("matrix_exp"),
          std::optional<std::string>("cayley"),
          std::optional<std::string>("householder")})
      for (bool Triv : {true, false})
        R.push_back({In, Out, Map, Triv});
  return R;
}

/// The original moved away from its initial value (so that the weight and
/// the gradients are not trivial); the householder map's diagonal (its
/// signs) is kept.
void perturbOriginal(nn::Linear &Lin, const Config &C) {
  NoGradGuard NoGrad;
  Tensor O = Lin.get_parameter("parametrizations.weight.original");
  Tensor Noise = randn(O.shape().dims()) * 0.4;
  if (isHouseholder(C)) {
    int64_t R = O.shape()[0], K = O.shape()[1];
    Tensor Diag = slice(slice(eye(std::max(R, K)), 0, 0, R), 1, 0, K);
    Noise = Noise * (1.0 - Diag);
  }
  O.add_(Noise);
}

/// Max |W^T W - I| (or W W^T for a wide W).
double orthogonalityError(const Tensor &W) {
  Tensor G = W.shape()[0] >= W.shape()[1] ? matmul(W.t(), W) : matmul(W, W.t());
  return amax(abs(G - eye(G.shape()[0]))).item<double>();
}

} // namespace

TEST(Orthogonal, TrainsLikePyTorch) {
  manual_seed(31);
  TorchOracle O(Prelude);
  for (const Config &C : configs()) {
    auto Lin = nn::make<nn::Linear>(C.In, C.Out);
    parametrizations::orthogonal(*Lin, "weight", C.Map, C.Triv);
    perturbOriginal(*Lin, C);
    OracleCase Case;
    Case.Name = describe(C);
    Case.Module = Lin;
    Case.TorchModule = "orthogonal(nn.Linear(" + std::to_string(C.In) + ", " +
                       std::to_string(C.Out) + ")" + pyArgs(C) + ")";
    Case.Inputs = {randn({3, C.In})};
    Case.Forward = [Lin](const std::vector<Tensor> &X) {
      return std::vector<Tensor>{(*Lin)(X[0])};
    };
    Case.Train = true;
    Case.Sgd = OracleSgd{};
    Case.Steps = 2;
    Case.Atol = Case.Rtol = 3e-5;
    O.add(Case);
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(Orthogonal, BatchesOfMatrices) {
  manual_seed(35);
  TorchOracle O(Prelude);
  for (std::vector<int64_t> Shape :
       {std::vector<int64_t>{2, 3, 3}, {2, 4, 3}, {2, 3, 4}})
    for (const char *Map : {"matrix_exp", "cayley", "householder"})
      for (bool Triv : {true, false}) {
        auto M = nn::make<Batched>(Shape);
        parametrizations::orthogonal(*M, "weight", std::string(Map), Triv);
        {
          NoGradGuard NoGrad;
          Tensor Orig = M->get_parameter("parametrizations.weight.original");
          Tensor Noise = randn(Shape) * 0.3;
          if (std::string(Map) == "householder")
            Noise = tril(Noise, -1) + triu(Noise, 1); // Keep the diagonal.
          Orig.add_(Noise);
        }
        std::string Dims = std::to_string(Shape[0]) + ", " +
                           std::to_string(Shape[1]) + ", " +
                           std::to_string(Shape[2]);
        OracleCase Case;
        Case.Name =
            "Batched(" + Dims + ") " + Map + (Triv ? " trivialized" : "");
        Case.Module = M;
        Case.TorchModule =
            "orthogonal(Batched(" + Dims + "), orthogonal_map=\"" + Map +
            "\", use_trivialization=" + (Triv ? "True" : "False") + ")";
        Case.Inputs = {randn({2, 5, Shape[1]})};
        Case.Forward = [M](const std::vector<Tensor> &X) {
          return std::vector<Tensor>{(*M)(X[0])};
        };
        Case.Train = true;
        Case.Sgd = OracleSgd{};
        Case.Steps = 2;
        Case.Atol = Case.Rtol = 3e-5;
        Case.CheckRepr = false;
        O.add(Case);
        // Each matrix of the batch is orthogonal.
        Tensor W = parametrize::value(*M, "weight");
        for (int64_t B = 0; B < Shape[0]; ++B)
          EXPECT_LT(orthogonalityError(W[B]), 1e-5) << Case.Name;
      }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(Orthogonal, RegistrationInitializesLikePyTorch) {
  manual_seed(32);
  TorchOracle O(Prelude);
  for (const Config &C : configs()) {
    auto Lin = nn::make<nn::Linear>(C.In, C.Out);
    OracleCase Case;
    Case.Name = "init " + describe(C);
    Case.Module = Lin;
    std::string Kw = pyArgs(C).substr(2);
    Case.TorchModule = "InitOrth(" + std::to_string(C.Out) + ", " +
                       std::to_string(C.In) + ", " + Kw + ")";
    Case.Inputs = {randn({1, C.In})};
    Case.CheckRepr = false;
    Case.Forward = [Lin, C](const std::vector<Tensor> &) {
      nn::Linear Copy(C.In, C.Out);
      {
        NoGradGuard NoGrad;
        Copy.weight.copy_(Lin->weight);
      }
      parametrizations::orthogonal(Copy, "weight", C.Map, C.Triv);
      return std::vector<Tensor>{
          parametrize::value(Copy, "weight").detach(),
          Copy.get_parameter("parametrizations.weight.original").detach()};
    };
    O.add(Case);
  }
  NNG_RUN_TORCH_ORACLE(O);
}

TEST(Orthogonal, KeysAndOrthogonality) {
  manual_seed(33);
  for (const Config &C : configs()) {
    SCOPED_TRACE(describe(C));
    nn::Linear Lin(C.In, C.Out);
    parametrizations::orthogonal(Lin, "weight", C.Map, C.Triv);
    std::vector<std::string> Keys;
    for (const auto &[K, V] : Lin.state_dict())
      Keys.push_back(K);
    std::vector<std::string> Want = {"bias",
                                     "parametrizations.weight.original"};
    if (C.Triv)
      Want.push_back("parametrizations.weight.0.base");
    EXPECT_EQ(Keys, Want);
    EXPECT_EQ(Lin.type_name(), "ParametrizedLinear");
    perturbOriginal(Lin, C);
    Tensor W = parametrize::value(Lin, "weight");
    EXPECT_EQ(W.shape(), Shape({C.Out, C.In}));
    EXPECT_LT(orthogonalityError(W), 1e-5);
    // Gradients reach the original through the parametrization.
    Lin(randn({2, C.In})).sum().backward();
    Tensor G = Lin.get_parameter("parametrizations.weight.original").grad();
    ASSERT_TRUE(G.defined());
    EXPECT_GT(amax(abs(G)).item<double>(), 0.0);
  }
}

TEST(Orthogonal, OrthogonalWeightIsKeptAndAssignmentWorks) {
  manual_seed(34);
  // An orthogonal weight stays as it is when registered (f64).
  nn::Linear Lin(4, 4);
  Lin.to(DType::F64);
  Tensor Q;
  {
    NoGradGuard NoGrad;
    auto [X, Tau] = geqrf(randn({4, 4}, DType::F64));
    Q = linalg::householder_product(X, Tau);
    Lin.weight.copy_(Q);
  }
  parametrizations::orthogonal(Lin);
  EXPECT_TRUE(allclose(parametrize::value(Lin, "weight"), Q, 0, 1e-12));
  EXPECT_EQ(Lin.get_parameter("parametrizations.weight.original").dtype(),
            DType::F64);

  // Assigning an orthogonal matrix (right_inverse) makes it the value;
  // the original keeps its identity.
  for (const char *Map : {"matrix_exp", "cayley", "householder"}) {
    for (bool Triv : {true, false}) {
      SCOPED_TRACE(std::string(Map) + (Triv ? " trivialized" : ""));
      if (!Triv && std::string(Map) != "householder")
        continue;
      nn::Linear L2(5, 3);
      parametrizations::orthogonal(L2, "weight", std::string(Map), Triv);
      Tensor Orig = L2.get_parameter("parametrizations.weight.original");
      Tensor Target = randn({5, 3});
      {
        NoGradGuard NoGrad;
        auto [X, Tau] = geqrf(Target);
        Target = linalg::householder_product(X, Tau).t().contiguous();
      }
      parametrize::assign(L2, "weight", Target);
      EXPECT_TRUE(allclose(parametrize::value(L2, "weight"), Target, 0, 1e-5));
      EXPECT_TRUE(allclose(L2.weight, Target, 0, 1e-5));
      EXPECT_TRUE(
          Orig.is_same(L2.get_parameter("parametrizations.weight.original")));
    }
  }
  // Without the trivialization, matrix_exp and cayley cannot invert: the
  // registration keeps the weight as the original, assignment fails.
  nn::Linear L3(3, 3);
  Tensor W0 = L3.weight.detach().clone();
  parametrizations::orthogonal(L3, "weight", std::string("cayley"), false);
  EXPECT_TRUE(equal(L3.get_parameter("parametrizations.weight.original"), W0));
  EXPECT_THROW(parametrize::assign(L3, "weight", eye(3)),
               parametrize::NotImplemented);
}

TEST(Orthogonal, ConvertsWithTheModuleAndLoadsItsStateDict) {
  manual_seed(37);
  for (const char *Map : {"matrix_exp", "householder"}) {
    SCOPED_TRACE(Map);
    nn::Linear Lin(5, 3);
    parametrizations::orthogonal(Lin, "weight", std::string(Map));
    perturbOriginal(Lin, {5, 3, std::string(Map), true});
    Lin.to(DType::F64); // The base buffer converts too.
    EXPECT_EQ(Lin.get_buffer("parametrizations.weight.0.base").dtype(),
              DType::F64);
    Tensor Y = Lin(randn({2, 5}, DType::F64));
    EXPECT_EQ(Y.dtype(), DType::F64);
    // As orthogonal as the f32 base it was made from.
    EXPECT_LT(orthogonalityError(Lin.weight), 1e-6);
    // A second module loads the first one's state_dict: same weight.
    nn::Linear Other(5, 3);
    parametrizations::orthogonal(Other, "weight", std::string(Map));
    Other.to(DType::F64);
    Other.load_state_dict(Lin.state_dict());
    EXPECT_TRUE(allclose(parametrize::value(Other, "weight"),
                         parametrize::value(Lin, "weight"), 0, 1e-14));
  }
}

TEST(Orthogonal, ErrorsSayWhat) {
  nn::Linear Lin(3, 3);
  auto Message = [&](auto &&Fn) -> std::string {
    try {
      Fn();
    } catch (const Error &E) {
      return E.what();
    }
    return "no error";
  };
  EXPECT_NE(Message([&] {
              parametrizations::orthogonal(Lin, "weight", std::string("qr"));
            }).find("orthogonal_map has to be one of"),
            std::string::npos);
  EXPECT_NE(Message([&] {
              parametrizations::orthogonal(Lin, "bias");
            }).find("expected a matrix"),
            std::string::npos);
  EXPECT_NE(Message([&] {
              parametrizations::orthogonal(Lin, "nothing");
            }).find("has no parameter or buffer 'nothing'"),
            std::string::npos);
  EXPECT_FALSE(parametrize::is_parametrized(Lin));
  parametrizations::orthogonal(Lin);
  EXPECT_NE(Message([&] {
              parametrize::assign(Lin, "weight", eye(4));
            }).find("expected a matrix or batch of matrices of shape [3, 3]"),
            std::string::npos);
}

TEST(Orthogonal, TracesToTheSameFunction) {
  manual_seed(36);
  for (const char *Map : {"matrix_exp", "cayley", "householder"}) {
    SCOPED_TRACE(Map);
    auto Lin = nn::make<nn::Linear>(4, 3);
    parametrizations::orthogonal(*Lin, "weight", std::string(Map));
    perturbOriginal(*Lin, {4, 3, std::string(Map), true});
    fx::GraphModule GM = fx::symbolic_trace(*Lin, {fx::InputSpec({2, 4})});
    std::vector<std::string> Inits;
    for (const ir::Value *V : GM.graph().initializers())
      Inits.push_back(V->name());
    std::sort(Inits.begin(), Inits.end());
    EXPECT_EQ(Inits, (std::vector<std::string>{
                         "bias", "parametrizations.weight.0.base",
                         "parametrizations.weight.original"}));
    Tensor X = randn({2, 4});
    EXPECT_TRUE(allclose(GM({X}), (*Lin)(X), 1e-5, 1e-5));
    EXPECT_FALSE(Lin->weight.is_proxy());
  }
}

/// The example of docs/modules.md, "Orthogonal weights", as written there.
TEST(Orthogonal, DocsExample) {
  nn::Linear Proj(20, 40);
  parametrizations::orthogonal(Proj); // householder: the weight is not square
  std::vector<std::string> Keys;
  for (const auto &[K, V] : Proj.state_dict())
    Keys.push_back(K);
  EXPECT_EQ(Keys, (std::vector<std::string>{"bias",
                                            "parametrizations.weight.original",
                                            "parametrizations.weight.0.base"}));
  EXPECT_NE(Proj.to_string().find("(0): _Orthogonal()"), std::string::npos)
      << Proj.to_string();
  Tensor Q = parametrize::value(Proj, "weight");      // [40, 20]
  Tensor Err = amax(abs(matmul(Q.t(), Q) - eye(20))); // ~1e-7
  EXPECT_EQ(Q.shape(), Shape({40, 20}));
  EXPECT_LT(Err.item<double>(), 1e-5);

  nn::Linear Rot(8, 8);
  parametrizations::orthogonal(Rot, "weight",
                               "cayley"); // or "matrix_exp" (the default here)
  parametrize::assign(Rot, "weight", eye(8)); // now the identity
  EXPECT_TRUE(allclose(parametrize::value(Rot, "weight"), eye(8), 0, 1e-6));
}
