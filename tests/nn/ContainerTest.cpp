//===- ContainerTest.cpp - Sequential, ModuleList, ModuleDict, ... -------===//
//
// The container modules: Sequential (construction from modules or named
// pairs, chained forward, indexing by position and name, typed access,
// append/insert/pop/set/slice with PyTorch's numbering), ModuleList,
// ModuleDict, ParameterList and ParameterDict, and the state_dict keys
// they produce inside a model ("layers.0.weight"), checked against
// PyTorch when it is available.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

std::vector<double> vals(const Tensor &T) { return T.to_vector<double>(); }

struct AddN : Module<AddN> {
  double N;
  explicit AddN(double N) : N(N) {}
  Tensor forward(const Tensor &X) { return X + N; }
};

struct MulN : Module<MulN> {
  double N;
  explicit MulN(double N) : N(N) {}
  Tensor forward(const Tensor &X) { return X * N; }
};

std::vector<std::string> childNames(const ModuleBase &M) {
  return namesOf(M.named_children());
}

} // namespace

TEST(ContainerSequential, ChainsModulesInOrder) {
  auto S = std::make_shared<Sequential>(std::make_shared<AddN>(1.0),
                                        std::make_shared<MulN>(10.0),
                                        std::make_shared<AddN>(2.0));
  Tensor Y = (*S)(tensor({1.0, 2.0}));
  EXPECT_EQ(vals(Y), (std::vector<double>{22, 32}));
  EXPECT_EQ(childNames(*S), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(S->size(), 3u);
  Sequential Empty;
  EXPECT_EQ(vals(Empty(tensor({5.0}))), std::vector<double>{5});
  // Multi-output modules pass a tuple on as the next single input.
  struct Pairer : Module<Pairer> {
    std::tuple<Tensor, Tensor> forward(const Tensor &X) { return {X, X * 2.0}; }
  };
  struct Adder : Module<Adder> {
    Tensor forward(const std::tuple<Tensor, Tensor> &P) {
      return std::get<0>(P) + std::get<1>(P);
    }
  };
  Sequential T(std::make_shared<Pairer>(), std::make_shared<Adder>());
  EXPECT_EQ(vals(T(tensor({1.0}))), std::vector<double>{3});
}

TEST(ContainerSequential, NamedEntriesIndexingAndTypedAccess) {
  Sequential S(NamedModules{{"grow", std::make_shared<AddN>(1.0)},
                            {"scale", std::make_shared<MulN>(3.0)}});
  EXPECT_EQ(childNames(S), (std::vector<std::string>{"grow", "scale"}));
  EXPECT_EQ(vals(S(tensor({1.0}))), std::vector<double>{6});
  EXPECT_EQ(S["scale"].get(), S[1].get());
  EXPECT_EQ(S[-1].get(), S[1].get());
  EXPECT_EQ(S.at<MulN>("scale")->N, 3.0);
  EXPECT_EQ(S.at<AddN>(0)->N, 1.0);
  EXPECT_THROW(S[2], Error);
  EXPECT_THROW(S[-3], Error);
  EXPECT_THROW(S["missing"], Error);
  try {
    S.at<AddN>(1);
    ADD_FAILURE() << "expected a type error";
  } catch (const Error &E) {
    EXPECT_NE(std::string(E.what()).find("Sequential[1] is a MulN, not a AddN"),
              std::string::npos)
        << E.what();
  }
  std::vector<std::string> Types;
  for (const ModulePtr &M : S)
    Types.push_back(M->type_name());
  EXPECT_EQ(Types, (std::vector<std::string>{"AddN", "MulN"}));
  EXPECT_THROW(S.append("grow", std::make_shared<AddN>(0.0)), Error);
}

TEST(ContainerSequential, AppendInsertPopSetAndSliceNumberLikePyTorch) {
  auto A = std::make_shared<AddN>(1.0), B = std::make_shared<AddN>(2.0),
       C = std::make_shared<AddN>(3.0), D = std::make_shared<AddN>(4.0);
  Sequential S(A, B);
  S.append(C);
  EXPECT_EQ(childNames(S), (std::vector<std::string>{"0", "1", "2"}));
  S.insert(1, D); // [A, D, B, C]
  EXPECT_EQ(childNames(S), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(S[1].get(), D.get());
  EXPECT_EQ(S[3].get(), C.get());
  S.insert(-4, C); // At the front: [C, A, D, B, C]
  EXPECT_EQ(S[0].get(), C.get());
  EXPECT_THROW(S.insert(9, C), Error);
  EXPECT_EQ(S.pop(0).get(), C.get()); // [A, D, B, C], renumbered
  EXPECT_EQ(childNames(S), (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(S[0].get(), A.get());
  S.set(-1, A); // [A, D, B, A]
  EXPECT_EQ(S[3].get(), A.get());
  EXPECT_EQ(vals(S(tensor({0.0}))), std::vector<double>{8});
  auto Sl = S.slice(1, 3); // [D, B], keeping names "1", "2"
  EXPECT_EQ(childNames(*Sl), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ((*Sl)[0].get(), D.get());
  auto Rev = S.slice(-1, -5, -2); // [A (3), D (1)]
  EXPECT_EQ(childNames(*Rev), (std::vector<std::string>{"3", "1"}));
  EXPECT_THROW(S.slice(0, 1, 0), Error);
  S.extend({C});
  EXPECT_EQ(S.size(), 5u);
}

TEST(ContainerModuleList, HoldsAndRegistersModules) {
  ModuleList L(std::make_shared<Lin>(2, 2), std::make_shared<Act>());
  L.append(std::make_shared<Lin>(2, 3));
  EXPECT_EQ(childNames(L), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(namesOf(L.named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight",
                                      "2.bias"}));
  L.insert(0, std::make_shared<Act>());
  EXPECT_EQ(L[1]->type_name(), "Lin");
  EXPECT_EQ(namesOf(L.named_parameters()).front(), "1.weight");
  L.insert(-1, std::make_shared<Act>()); // Before the last, like list.insert.
  EXPECT_EQ(L[3]->type_name(), "Act");
  EXPECT_EQ(L[4]->type_name(), "Lin");
  EXPECT_EQ(L.pop(-1)->type_name(), "Lin");
  EXPECT_EQ(L.size(), 4u);
  EXPECT_EQ(L.at<Lin>(1)->Out, 2);
  auto Sub = L.slice(1, 3);
  EXPECT_EQ(childNames(*Sub), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ((*Sub)[0].get(), L[1].get());
  L.extend({std::make_shared<Act>()});
  L.set(0, std::make_shared<Lin>(2, 2));
  int NumLin = 0;
  for (const ModulePtr &M : L)
    NumLin += M->as<Lin>() != nullptr;
  EXPECT_EQ(NumLin, 2);
  EXPECT_THROW(L[7], Error);
  // Iterating a ModuleList in forward: the modules' outputs chain.
  struct Stack : Module<Stack> {
    std::shared_ptr<ModuleList> Layers = register_module(
        "layers", std::make_shared<ModuleList>(std::make_shared<AddN>(1.0),
                                               std::make_shared<MulN>(2.0)));
    Tensor forward(const Tensor &X) {
      Tensor Y = X;
      for (const ModulePtr &M : *Layers)
        Y = (*M)(Y);
      return Y;
    }
  } St;
  EXPECT_EQ(vals(St(tensor({1.0}))), std::vector<double>{4});
  EXPECT_EQ(namesOf(St.named_modules()),
            (std::vector<std::string>{"", "layers", "layers.0", "layers.1"}));
}

TEST(ContainerModuleDict, OrderedStringKeys) {
  ModuleDict D(NamedModules{{"b", std::make_shared<AddN>(1.0)},
                            {"a", std::make_shared<MulN>(2.0)}});
  EXPECT_EQ(D.keys(), (std::vector<std::string>{"b", "a"}));
  EXPECT_TRUE(D.contains("a"));
  EXPECT_FALSE(D.contains("c"));
  auto M = std::make_shared<MulN>(5.0);
  D.insert("b", M); // Replaces, keeping the position.
  D.insert("c", std::make_shared<AddN>(3.0));
  EXPECT_EQ(D.keys(), (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(D["b"].get(), M.get());
  EXPECT_EQ(D.at<MulN>("a")->N, 2.0);
  EXPECT_EQ(D.values().size(), 3u);
  EXPECT_EQ(D.pop("a")->type_name(), "MulN");
  EXPECT_EQ(D.keys(), (std::vector<std::string>{"b", "c"}));
  EXPECT_THROW(D["a"], Error);
  EXPECT_THROW(D.insert("x.y", M), Error);
  std::string Keys;
  for (const auto &[K, V] : D)
    Keys += K;
  EXPECT_EQ(Keys, "bc");
  D.update(NamedModules{{"d", std::make_shared<AddN>(0.0)}});
  EXPECT_EQ(D.size(), 3u);
  D.clear();
  EXPECT_TRUE(D.empty());
  EXPECT_TRUE(D.named_modules().size() == 1u);
}

TEST(ContainerParameters, ParameterListAndDict) {
  ParameterList PL(std::vector<Tensor>{zeros({2}), ones({3})});
  PL.append(full({1}, 4.0));
  EXPECT_EQ(PL.size(), 3u);
  EXPECT_TRUE(PL[0].requires_grad());
  EXPECT_EQ(vals(PL[-1]), std::vector<double>{4});
  EXPECT_EQ(namesOf(PL.named_parameters()),
            (std::vector<std::string>{"0", "1", "2"}));
  Tensor New = ones({5});
  PL.set(1, New);
  EXPECT_TRUE(PL[1].is_same(New));
  EXPECT_EQ(PL.state_dict().at("1").numel(), 5);
  int64_t Total = 0;
  for (const Tensor &P : PL)
    Total += P.numel();
  EXPECT_EQ(Total, 2 + 5 + 1);
  EXPECT_THROW(PL.append(Tensor()), Error);
  EXPECT_THROW(PL[3], Error);

  ParameterDict PD(NamedTensors{{"beta", zeros({2})}, {"alpha", ones({1})}});
  EXPECT_EQ(PD.keys(), (std::vector<std::string>{"beta", "alpha"}));
  PD.insert("beta", full({3}, 2.0));
  EXPECT_EQ(PD["beta"].numel(), 3);
  EXPECT_TRUE(PD["alpha"].requires_grad());
  EXPECT_TRUE(PD.contains("alpha"));
  EXPECT_EQ(PD.pop("alpha").numel(), 1);
  EXPECT_EQ(PD.state_dict().keys(), std::vector<std::string>{"beta"});
  EXPECT_THROW(PD["alpha"], Error);
  EXPECT_THROW(PD.insert("a.b", ones({1})), Error);
  PD.clear();
  EXPECT_TRUE(PD.parameters().empty());
}

TEST(ContainerKeys, NestedContainerKeysMatchPyTorch) {
  struct Net : Module<Net> {
    std::shared_ptr<Sequential> Layers = register_module(
        "layers", std::make_shared<Sequential>(std::make_shared<Lin>(2, 3),
                                               std::make_shared<Act>(),
                                               std::make_shared<Norm>(3)));
    std::shared_ptr<ModuleList> Heads = register_module(
        "heads", std::make_shared<ModuleList>(std::make_shared<Lin>(3, 1),
                                              std::make_shared<Lin>(3, 2, false)));
    std::shared_ptr<ModuleDict> Extra = register_module(
        "extra", std::make_shared<ModuleDict>(
                     NamedModules{{"proj", std::make_shared<Lin>(3, 3)}}));
    std::shared_ptr<ParameterList> Scales = register_module(
        "scales", std::make_shared<ParameterList>(std::vector<Tensor>{ones({1})}));
    Tensor forward(const Tensor &X) { return (*Layers)(X); }
  } N;
  std::vector<std::string> Ours = N.state_dict().keys();
  EXPECT_EQ(Ours, (std::vector<std::string>{
                      "layers.0.weight", "layers.0.bias", "layers.2.weight",
                      "layers.2.running_mean", "layers.2.num_batches_tracked",
                      "heads.0.weight", "heads.0.bias", "heads.1.weight",
                      "extra.proj.weight", "extra.proj.bias", "scales.0"}));
  std::string Why;
  std::optional<std::string> Torch = runTorch(R"PY(
class Norm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.register_buffer('running_mean', torch.zeros(n))
        self.register_buffer('num_batches_tracked', torch.tensor(0))
        self.register_buffer('scratch', torch.zeros(n), persistent=False)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), Norm(3))
        self.heads = nn.ModuleList([nn.Linear(3, 1), nn.Linear(3, 2, bias=False)])
        self.extra = nn.ModuleDict({'proj': nn.Linear(3, 3)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(1))])
for k in Net().state_dict().keys():
    print(k)
)PY",
                                              Why);
  if (!Torch)
    GTEST_SKIP() << "SKIPPED: no Python with torch (the fixed key list was "
                    "checked): "
                 << Why;
  ASSERT_EQ(Torch->rfind("SCRIPT-FAILED", 0), std::string::npos) << *Torch;
  EXPECT_EQ(Ours, lines(*Torch));
}
