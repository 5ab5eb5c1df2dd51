//===- TorchModuleBehaviourTest.cpp - nn::Module behaviour vs PyTorch -----===//
//
// The documented nn::Module behaviours that PyTorch defines, checked by
// building the same module tree in C++ and in Python (TorchOracle.h) and
// comparing what each reports: state_dict keys in order (own parameters,
// own buffers, then children, whatever the registration interleaving;
// non-persistent buffers and reserved empty names left out), named_
// parameters / named_buffers / named_modules (a shared submodule or tied
// parameter once), to(f64) keeping integral buffers, load_state_dict's
// missing and unexpected keys and errors, parameter counts, and printing.
// SKIPPED when no Python imports torch.
//
//===----------------------------------------------------------------------===//

#include "TorchOracle.h"

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace nng;
using namespace nng::test;

namespace {

/// A leaf with a parameter, a persistent float buffer, a non-persistent
/// buffer and an integral buffer (like BatchNorm's num_batches_tracked).
struct Leaf : nn::Module<Leaf> {
  Tensor Weight, Stat, Tmp, Steps;
  Leaf(int64_t In, int64_t Out) {
    Weight = register_parameter("weight", randn({Out, In}));
    Stat = register_buffer("stat", zeros({Out}));
    Tmp = register_buffer("tmp", zeros({Out}), /*Persistent=*/false);
    Steps = register_buffer("steps", zeros({}, DType::I64));
  }
  Tensor forward(const Tensor &X) { return matmul(X, Weight.t()); }
  std::string extra_repr() const override {
    return "in=" + std::to_string(Weight.size(1)) +
           ", out=" + std::to_string(Weight.size(0));
  }
};

/// A middle level: a child, then its own parameter.
struct Inner : nn::Module<Inner> {
  std::shared_ptr<Leaf> Deep = register_module("deep", nn::make<Leaf>(3, 2));
  Tensor Bias = register_parameter("bias", zeros({2}));
  Tensor forward(const Tensor &X) { return (*Deep)(X) + Bias; }
};

/// Registration interleaves children, parameters and buffers; PyTorch's
/// order is still own parameters, own buffers, children.
struct Tree : nn::Module<Tree> {
  std::shared_ptr<Leaf> First = register_module("first", nn::make<Leaf>(4, 3));
  Tensor Reserved = register_parameter("reserved", Tensor());
  Tensor Scale = register_parameter("scale", ones({3}));
  std::shared_ptr<Inner> In = register_module("inner", nn::make<Inner>());
  Tensor Count = register_buffer("count", zeros({2}));
  Tensor forward(const Tensor &X) { return (*In)((*First)(X) * Scale); }
};

/// A submodule registered twice and a parameter tied across modules.
struct Shared : nn::Module<Shared> {
  std::shared_ptr<Leaf> A = register_module("a", nn::make<Leaf>(2, 2));
  std::shared_ptr<Leaf> B = register_module("b", A);
  std::shared_ptr<Leaf> C = register_module("c", nn::make<Leaf>(2, 2));
  Shared() { C->Weight = C->replace_parameter("weight", A->Weight); }
  Tensor forward(const Tensor &X) { return (*C)((*B)((*A)(X))); }
};

/// Every container kind, nested: entries keep insertion order (a dict
/// given as (key, value) pairs keeps it in PyTorch too).
struct WithContainers : nn::Module<WithContainers> {
  std::shared_ptr<nn::Sequential> Body = register_module(
      "body", nn::make<nn::Sequential>(nn::make<Leaf>(4, 3), nn::make<Inner>()));
  std::shared_ptr<nn::ModuleList> Heads = register_module(
      "heads",
      nn::make<nn::ModuleList>(nn::make<Leaf>(2, 2), nn::make<Leaf>(2, 1)));
  std::shared_ptr<nn::ModuleDict> ByName = register_module(
      "by_name", nn::make<nn::ModuleDict>(nn::NamedModules{
                     {"zeta", nn::make<Leaf>(1, 1)}, {"alpha", nn::make<Inner>()}}));
  std::shared_ptr<nn::ParameterList> Extra = register_module(
      "extra", nn::make<nn::ParameterList>(
                   std::vector<Tensor>{randn({3, 4}), randn({2})}));
  std::shared_ptr<nn::ParameterDict> Gains = register_module(
      "gains", nn::make<nn::ParameterDict>(
                   nn::NamedTensors{{"b", ones({2})}, {"a", zeros({1})}}));
  std::shared_ptr<nn::Sequential> Named = register_module(
      "named", nn::make<nn::Sequential>(nn::NamedModules{
                   {"enc", nn::make<Leaf>(2, 2)}, {"dec", nn::make<Leaf>(2, 2)}}));
  Tensor Own = register_parameter("own", zeros({1}));
  Tensor forward(const Tensor &X) { return X; }
};

const char *Prelude = R"py(
from collections import OrderedDict
class Leaf(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(o, i))
        self.register_buffer("stat", torch.zeros(o))
        self.register_buffer("tmp", torch.zeros(o), persistent=False)
        self.register_buffer("steps", torch.tensor(0, dtype=torch.long))
    def forward(self, x):
        return x @ self.weight.t()
    def extra_repr(self):
        return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"

class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.deep = Leaf(3, 2)
        self.bias = nn.Parameter(torch.zeros(2))
    def forward(self, x):
        return self.deep(x) + self.bias

class Tree(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Leaf(4, 3)
        self.register_parameter("reserved", None)
        self.scale = nn.Parameter(torch.ones(3))
        self.inner = Inner()
        self.register_buffer("count", torch.zeros(2))
    def forward(self, x):
        return self.inner(self.first(x) * self.scale)

class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf(2, 2)
        self.b = self.a
        self.c = Leaf(2, 2)
        self.c.weight = self.a.weight
    def forward(self, x):
        return self.c(self.b(self.a(x)))

class WithContainers(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(Leaf(4, 3), Inner())
        self.heads = nn.ModuleList([Leaf(2, 2), Leaf(2, 1)])
        self.by_name = nn.ModuleDict([("zeta", Leaf(1, 1)), ("alpha", Inner())])
        self.extra = nn.ParameterList([nn.Parameter(torch.randn(3, 4)),
                                       nn.Parameter(torch.randn(2))])
        self.gains = nn.ParameterDict([("b", nn.Parameter(torch.ones(2))),
                                       ("a", nn.Parameter(torch.zeros(1)))])
        self.named = nn.Sequential(OrderedDict([("enc", Leaf(2, 2)),
                                                ("dec", Leaf(2, 2))]))
        self.own = nn.Parameter(torch.zeros(1))
    def forward(self, x):
        return x
)py";

std::vector<std::string> names(const auto &Pairs) {
  std::vector<std::string> R;
  for (const auto &[Name, X] : Pairs)
    R.push_back(Name);
  return R;
}

std::vector<std::string> keysOf(const nn::ModuleBase &M) {
  return M.state_dict().keys();
}

/// Compares everything describe() reports with the C++ module.
void expectSameDescription(const std::string &What, const nn::ModuleBase &M,
                           const TorchReport &R) {
  ASSERT_EQ(R.Error, "") << What;
  EXPECT_EQ(compareKeys(keysOf(M), R.Keys), "") << What;
  EXPECT_EQ(names(M.named_parameters()), R.ParamNames)
      << What << ": named_parameters";
  EXPECT_EQ(names(M.named_buffers()), R.BufferNames)
      << What << ": named_buffers";
  EXPECT_EQ(names(M.named_modules()), R.ModuleNames)
      << What << ": named_modules";
  EXPECT_EQ(M.num_parameters(), R.NumParams) << What << ": parameter count";
  EXPECT_EQ(M.to_string(), R.Repr) << What << ": print(model)";
}

} // namespace

TEST(TorchModuleBehaviour, StateDictOrderAndNamesMatchPyTorch) {
  TorchOracle O(Prelude);
  size_t T = O.describe("Tree", "Tree()");
  NNG_RUN_TORCH_ORACLE(O);
  auto M = nn::make<Tree>();
  expectSameDescription("Tree", *M, O.report(T));
  // The left-out entries, spelled out.
  std::vector<std::string> Keys = keysOf(*M);
  for (const char *Absent : {"reserved", "first.tmp", "inner.deep.tmp"})
    EXPECT_EQ(std::count(Keys.begin(), Keys.end(), Absent), 0) << Absent;
}

TEST(TorchModuleBehaviour, ContainersMatchPyTorch) {
  TorchOracle O(Prelude);
  size_t W = O.describe("WithContainers", "WithContainers()");
  NNG_RUN_TORCH_ORACLE(O);
  expectSameDescription("WithContainers", *nn::make<WithContainers>(),
                        O.report(W));
}

TEST(TorchModuleBehaviour, SharedSubmoduleAndTiedParameterMatchPyTorch) {
  TorchOracle O(Prelude);
  size_t S = O.describe("Shared", "Shared()");
  NNG_RUN_TORCH_ORACLE(O);
  auto M = nn::make<Shared>();
  expectSameDescription("Shared", *M, O.report(S));
  EXPECT_EQ(M->parameters().size(), 1u);
}

/// A small layer model: conv, batch norm (num_batches_tracked), linear.
static std::shared_ptr<nn::Sequential> layerModel() {
  return nn::make<nn::Sequential>(
      nn::make<nn::Conv2d>(3, 4, 3), nn::make<nn::BatchNorm2d>(4),
      nn::make<nn::ReLU>(), nn::make<nn::Flatten>(), nn::make<nn::Linear>(4, 2),
      nn::make<nn::LayerNorm>(2));
}
static const char *const LayerModel =
    "nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), "
    "nn.Flatten(), nn.Linear(4, 2), nn.LayerNorm(2))";

TEST(TorchModuleBehaviour, ToF64KeepsIntegralBuffersLikePyTorch) {
  TorchOracle O(Prelude);
  size_t T = O.describe("Tree.to(float64)", "Tree()",
                        {"m = m.to(torch.float64)"});
  size_t L = O.describe("layers.to(float64)", LayerModel,
                        {"m = m.to(torch.float64)"});
  NNG_RUN_TORCH_ORACLE(O);
  auto CheckDTypes = [](const std::string &What, const nn::ModuleBase &M,
                        const TorchReport &R) {
    ASSERT_EQ(R.Error, "") << What;
    for (const auto &[Key, Tn] : M.state_dict()) {
      ASSERT_TRUE(R.StateDTypes.count(Key)) << What << " " << Key;
      EXPECT_EQ(std::string(dtypeName(Tn.dtype())), R.StateDTypes.at(Key))
          << What << " " << Key;
    }
  };
  auto M = nn::make<Tree>();
  M->to(DType::F64);
  CheckDTypes("Tree", *M, O.report(T));
  EXPECT_EQ(M->First->Steps.dtype(), DType::I64);
  auto S = layerModel();
  S->to(DType::F64);
  CheckDTypes("layers", *S, O.report(L));
  EXPECT_EQ(S->get_buffer("1.num_batches_tracked").dtype(), DType::I64);
}

TEST(TorchModuleBehaviour, LayerModelNamesCountsAndPrintingMatchPyTorch) {
  TorchOracle O(Prelude);
  size_t L = O.describe("layers", LayerModel);
  NNG_RUN_TORCH_ORACLE(O);
  expectSameDescription("layers", *layerModel(), O.report(L));
}

TEST(TorchModuleBehaviour, LoadStateDictReportsTheSameKeysAsPyTorch) {
  struct Mismatch {
    std::string What;
    std::vector<std::string> Drop;
    std::vector<std::pair<std::string, std::vector<int64_t>>> Add;
  };
  // Add with an existing key replaces it with a tensor of that shape.
  std::vector<Mismatch> Cases = {
      {"missing keys", {"scale", "inner.deep.stat"}, {}},
      {"unexpected keys", {}, {{"first.extra", {2}}, {"zzz", {1}}}},
      {"both", {"first.weight"}, {{"inner.deep.tmp", {2}}}},
      {"shape mismatch", {}, {{"inner.bias", {3}}}},
      {"shape mismatch and missing", {"count"}, {{"first.weight", {4, 4}}}},
      {"reserved empty slot", {}, {{"reserved", {3}}}},
      {"non-persistent buffer", {}, {{"first.tmp", {3}}}},
      {"nothing wrong", {}, {}},
  };
  TorchOracle O(Prelude);
  std::vector<nn::StateDict> SDs;
  std::vector<size_t> Idx;
  for (const Mismatch &C : Cases) {
    nn::StateDict SD = nn::make<Tree>()->state_dict();
    for (const std::string &K : C.Drop)
      SD.erase(K);
    for (const auto &[K, Shape] : C.Add)
      SD.insert(K, randn(Shape));
    Idx.push_back(O.loadReport(C.What, "Tree()", SD));
    SDs.push_back(SD);
  }
  NNG_RUN_TORCH_ORACLE(O);
  for (size_t I = 0; I < Cases.size(); ++I) {
    const TorchReport &R = O.report(Idx[I]);
    const std::string &What = Cases[I].What;
    ASSERT_EQ(R.Error, "") << What;
    // strict=False: the same keys reported, or the same kind of refusal.
    auto M = nn::make<Tree>();
    try {
      nn::LoadStateDictResult L = M->load_state_dict(SDs[I], false);
      EXPECT_EQ(R.NonStrictError, "")
          << What << ": C++ accepted what PyTorch refused (strict=False)";
      EXPECT_EQ(L.missing_keys, R.Missing) << What << ": missing keys";
      EXPECT_EQ(L.unexpected_keys, R.Unexpected) << What << ": unexpected";
    } catch (const Error &E) {
      EXPECT_NE(R.NonStrictError, "")
          << What << ": C++ refused what PyTorch accepted (strict=False): "
          << E.what();
    }
    // strict=True: an error exactly when PyTorch gives one, naming every
    // key PyTorch names; the module unchanged after an error.
    auto S = nn::make<Tree>();
    nn::StateDict SBefore = S->state_dict();
    std::vector<rt::Tensor> SSaved;
    for (const auto &[K, T] : SBefore)
      SSaved.push_back(T.data().clone());
    std::string Msg;
    try {
      S->load_state_dict(SDs[I], true);
    } catch (const Error &E) {
      Msg = E.what();
    }
    EXPECT_EQ(Msg.empty(), R.StrictError.empty())
        << What << ": C++ error '" << Msg << "', PyTorch's '" << R.StrictError
        << "'";
    if (!Msg.empty()) {
      for (const std::string &K : R.Missing)
        EXPECT_NE(Msg.find(K), std::string::npos) << What << ": " << K;
      for (const std::string &K : R.Unexpected)
        EXPECT_NE(Msg.find(K), std::string::npos) << What << ": " << K;
      for (const auto &[K, Shape] : Cases[I].Add)
        if (SBefore.contains(K))
          EXPECT_NE(Msg.find(K), std::string::npos) << What << ": " << K;
      size_t J = 0;
      for (const auto &[K, T] : S->state_dict())
        EXPECT_TRUE(T.data().equals(SSaved[J++]))
            << What << ": " << K << " changed by a failed load";
    }
  }
}

/// Forward pre-hooks replacing the input, forward hooks replacing the
/// output and full backward hooks replacing grad_input compose like
/// PyTorch's _call_impl (the backward hook sees the gradient with respect
/// to the pre-hooked input).
TEST(TorchModuleBehaviour, HooksReplaceLikePyTorch) {
  manual_seed(51);
  auto M = nn::make<nn::Linear>(4, 3);
  M->register_forward_pre_hook(
      [](nn::ModuleBase &, const std::vector<nn::Value> &In) {
        return std::vector<nn::Value>{nn::Value(In[0].toTensor() * 2.0)};
      });
  M->register_forward_hook([](nn::ModuleBase &,
                              const std::vector<nn::Value> &,
                              const nn::Value &Out) {
    return nn::Value(Out.toTensor() + 1.0);
  });
  M->register_full_backward_hook([](nn::ModuleBase &,
                                    const std::vector<Tensor> &GradIn,
                                    const std::vector<Tensor> &) {
    return std::vector<Tensor>{GradIn[0] * 3.0};
  });
  OracleCase C;
  C.Name = "Linear with pre-hook x2, hook +1, backward hook x3";
  C.Module = M;
  C.TorchModule = "nn.Linear(4, 3)";
  C.TorchSetup = {
      "m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 2,))",
      "m.register_forward_hook(lambda mod, inp, out: out + 1)",
      "m.register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 3,))"};
  C.Inputs = {randn({5, 4})};
  C.Forward = [M](const std::vector<Tensor> &X) {
    return std::vector<Tensor>{(*M)(X[0])};
  };
  TorchOracle O;
  O.add(std::move(C));
  NNG_RUN_TORCH_ORACLE(O);
}
