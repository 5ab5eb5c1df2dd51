//===- ModuleRegistrationTest.cpp - Registering and finding module state ===//
//
// register_parameter / register_buffer / register_module with PyTorch's
// validation (empty name, '.', taken names, non-leaf parameters), reserved
// names, the named_* iterations (order, prefix, recurse, duplicate
// removal), lookups by dotted path, replace_*, type names, and the loud
// check against modules that are called but never registered.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/frontend/Dispatch.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

/// Expects Fn to throw an nng::Error whose text contains every Needle.
template <typename F>
void expectError(F &&Fn, std::initializer_list<std::string> Needles) {
  try {
    Fn();
    ADD_FAILURE() << "expected an nng::Error";
  } catch (const Error &E) {
    for (const std::string &N : Needles)
      EXPECT_NE(std::string(E.what()).find(N), std::string::npos)
          << "message lacks '" << N << "':\n"
          << E.what();
  }
}

struct Empty : Module<Empty> {
  Tensor forward(const Tensor &X) { return X; }
};

struct Block : Module<Block> {
  std::shared_ptr<Lin> Fc = register_module("fc", std::make_shared<Lin>(3, 3));
  std::shared_ptr<Norm> Bn = register_module("bn", std::make_shared<Norm>(3));
  Tensor forward(const Tensor &X) { return (*Bn)((*Fc)(X)); }
};

struct Net : Module<Net> {
  Tensor scale = register_parameter("scale", ones({3}));
  Tensor steps = register_buffer("steps", zeros({}, DType::I64));
  std::shared_ptr<Block> B1 = register_module("block1", std::make_shared<Block>());
  std::shared_ptr<Lin> Head = register_module("head", std::make_shared<Lin>(3, 2));
  Tensor forward(const Tensor &X) { return (*Head)((*B1)(X) * scale); }
};

} // namespace

TEST(ModuleRegistration, TypeNameIsTheClassName) {
  Net N;
  EXPECT_EQ(N.type_name(), "Net");
  EXPECT_EQ(N.B1->type_name(), "Block");
  Sequential S;
  EXPECT_EQ(S.type_name(), "Sequential");
}

TEST(ModuleRegistration, RegisterParameterSharesTheTensorAndSetsRequiresGrad) {
  Empty M;
  Tensor T = zeros({2, 2});
  Tensor P = M.register_parameter("w", T);
  EXPECT_TRUE(P.is_same(T));
  EXPECT_TRUE(T.requires_grad());
  Tensor Q = M.register_parameter("frozen", zeros({2}), false);
  EXPECT_FALSE(Q.requires_grad());
  auto Named = M.named_parameters();
  ASSERT_EQ(Named.size(), 2u);
  EXPECT_TRUE(Named[0].second.is_same(T));
  EXPECT_EQ(Named[1].first, "frozen");
}

TEST(ModuleRegistration, RejectsEmptyDottedAndTakenNames) {
  Empty M;
  M.register_parameter("w", zeros({1}));
  M.register_buffer("b", zeros({1}));
  M.register_module("m", std::make_shared<Empty>());
  expectError([&] { M.register_parameter("", zeros({1})); },
              {"Empty", "can't be empty"});
  expectError([&] { M.register_buffer("a.b", zeros({1})); },
              {"Empty", "a.b", "can't contain \".\""});
  expectError([&] { M.register_module("x.y", std::make_shared<Empty>()); },
              {"x.y"});
  expectError([&] { M.register_parameter("w", zeros({1})); },
              {"Empty", "'w'", "already taken by a parameter"});
  expectError([&] { M.register_parameter("b", zeros({1})); },
              {"'b'", "already taken by a buffer"});
  expectError([&] { M.register_buffer("m", zeros({1})); },
              {"'m'", "already taken by a submodule"});
  expectError([&] { M.register_module("w", std::make_shared<Empty>()); },
              {"'w'", "already taken by a parameter"});
  // A failed registration adds nothing.
  EXPECT_EQ(M.named_parameters().size(), 1u);
  EXPECT_EQ(M.named_buffers().size(), 1u);
  EXPECT_EQ(M.named_children().size(), 1u);
}

TEST(ModuleRegistration, RejectsNonLeafIntegerParametersAndSelf) {
  auto M = std::make_shared<Empty>();
  Tensor A = ones({2}, TensorOptions().requires_grad());
  Tensor NonLeaf = A * 2.0;
  expectError([&] { M->register_parameter("w", NonLeaf); },
              {"non-leaf", "'w'"});
  expectError([&] { M->register_parameter("i", zeros({2}, DType::I64)); },
              {"'i'", "i64", "floating-point"});
  // An integer tensor is fine without requires_grad.
  M->register_parameter("i", zeros({2}, DType::I64), false);
  expectError([&] { M->register_module("self", M); }, {"itself"});
}

TEST(ModuleRegistration, UndefinedTensorReservesTheName) {
  Empty M;
  Tensor B = M.register_parameter("bias", Tensor());
  EXPECT_FALSE(B.defined());
  M.register_buffer("mask", Tensor());
  EXPECT_TRUE(M.named_parameters().empty());
  EXPECT_TRUE(M.named_buffers().empty());
  EXPECT_EQ(M.state_dict().size(), 0u);
  expectError([&] { M.register_parameter("bias", zeros({1})); },
              {"already taken"});
  // replace_parameter fills the reserved slot.
  M.replace_parameter("bias", zeros({3}));
  ASSERT_EQ(M.named_parameters().size(), 1u);
  EXPECT_EQ(M.state_dict().keys(), std::vector<std::string>{"bias"});
}

TEST(ModuleRegistration, NamedParametersOrderPrefixAndRecurse) {
  Net N;
  EXPECT_EQ(namesOf(N.named_parameters()),
            (std::vector<std::string>{"scale", "block1.fc.weight",
                                      "block1.fc.bias", "block1.bn.weight",
                                      "head.weight", "head.bias"}));
  EXPECT_EQ(namesOf(N.named_parameters("model")),
            (std::vector<std::string>{
                "model.scale", "model.block1.fc.weight", "model.block1.fc.bias",
                "model.block1.bn.weight", "model.head.weight",
                "model.head.bias"}));
  EXPECT_EQ(namesOf(N.named_parameters("", false)),
            std::vector<std::string>{"scale"});
  EXPECT_EQ(N.parameters().size(), 6u);
  EXPECT_TRUE(N.parameters()[1].is_same(N.B1->Fc->weight));
  EXPECT_EQ(namesOf(N.named_buffers()),
            (std::vector<std::string>{"steps", "block1.bn.running_mean",
                                      "block1.bn.num_batches_tracked",
                                      "block1.bn.scratch"}));
  EXPECT_EQ(N.buffers(false).size(), 1u);
}

TEST(ModuleRegistration, ChildrenAndModules) {
  Net N;
  EXPECT_EQ(namesOf(N.named_children()),
            (std::vector<std::string>{"block1", "head"}));
  EXPECT_EQ(N.children()[1].get(), N.Head.get());
  EXPECT_EQ(namesOf(N.named_modules()),
            (std::vector<std::string>{"", "block1", "block1.fc", "block1.bn",
                                      "head"}));
  EXPECT_EQ(N.modules()[0].get(), &N);
  EXPECT_EQ(namesOf(N.named_modules("net")),
            (std::vector<std::string>{"net", "net.block1", "net.block1.fc",
                                      "net.block1.bn", "net.head"}));
}

TEST(ModuleRegistration, SharedModulesAndParametersAppearOnce) {
  struct Shared : Module<Shared> {
    std::shared_ptr<Lin> A = register_module("a", std::make_shared<Lin>(2, 2));
    std::shared_ptr<Lin> B = register_module("b", A);
    Tensor forward(const Tensor &X) { return (*B)((*A)(X)); }
  } S;
  EXPECT_EQ(namesOf(S.named_modules()),
            (std::vector<std::string>{"", "a"}));
  EXPECT_EQ(namesOf(S.named_modules("", false)),
            (std::vector<std::string>{"", "a", "b"}));
  EXPECT_EQ(namesOf(S.named_children()), std::vector<std::string>{"a"});
  EXPECT_EQ(namesOf(S.named_parameters()),
            (std::vector<std::string>{"a.weight", "a.bias"}));
  EXPECT_EQ(namesOf(S.named_parameters("", true, false)),
            (std::vector<std::string>{"a.weight", "a.bias", "b.weight",
                                      "b.bias"}));
  // A tied parameter in two different modules.
  struct Tied : Module<Tied> {
    std::shared_ptr<Lin> Enc = register_module("enc", std::make_shared<Lin>(2, 2));
    std::shared_ptr<Lin> Dec = register_module("dec", std::make_shared<Lin>(2, 2));
    Tied() { Dec->weight = Dec->replace_parameter("weight", Enc->weight); }
    Tensor forward(const Tensor &X) { return (*Dec)((*Enc)(X)); }
  } T;
  EXPECT_EQ(namesOf(T.named_parameters()),
            (std::vector<std::string>{"enc.weight", "enc.bias", "dec.bias"}));
  EXPECT_EQ(T.num_parameters(), 4 + 2 + 2);
  // state_dict keeps both names, as PyTorch does.
  EXPECT_EQ(T.state_dict().keys(),
            (std::vector<std::string>{"enc.weight", "enc.bias", "dec.weight",
                                      "dec.bias"}));
}

TEST(ModuleRegistration, LookupsByDottedPath) {
  Net N;
  EXPECT_EQ(N.get_submodule("block1.fc").get(), N.B1->Fc.get());
  EXPECT_EQ(N.get_submodule("").get(), &N);
  EXPECT_TRUE(N.get_parameter("block1.fc.weight").is_same(N.B1->Fc->weight));
  EXPECT_TRUE(N.get_parameter("scale").is_same(N.scale));
  EXPECT_TRUE(N.get_buffer("block1.bn.running_mean")
                  .is_same(N.B1->Bn->running_mean));
  EXPECT_EQ(N.get_submodule_as<Lin>("head").get(), N.Head.get());
  EXPECT_EQ(N.get_submodule_as<Norm>("head"), nullptr);
  expectError([&] { N.get_submodule("block1.conv"); },
              {"block1 (Block)", "no submodule 'conv'"});
  expectError([&] { N.get_parameter("block1.fc.gamma"); },
              {"Lin has no parameter 'gamma'"});
  expectError([&] { N.get_buffer("scale"); }, {"Net has no buffer 'scale'"});
}

TEST(ModuleRegistration, ReplaceModuleKeepsPosition) {
  Net N;
  auto NewHead = std::make_shared<Lin>(3, 5);
  N.replace_module("block1", std::make_shared<Block>());
  N.replace_module("head", NewHead);
  EXPECT_EQ(namesOf(N.named_children()),
            (std::vector<std::string>{"block1", "head"}));
  EXPECT_EQ(N.get_submodule("head").get(), NewHead.get());
  expectError([&] { N.replace_module("tail", NewHead); },
              {"no submodule of that name"});
  expectError([&] { N.replace_buffer("nope", zeros({1})); },
              {"no buffer of that name"});
}

namespace {
/// The trap: layers in a plain std::vector, never registered.
struct VectorTrap : Module<VectorTrap> {
  std::vector<std::shared_ptr<Lin>> Layers{std::make_shared<Lin>(2, 2),
                                           std::make_shared<Lin>(2, 2)};
  Tensor forward(const Tensor &X) {
    Tensor Y = X;
    for (auto &L : Layers)
      Y = (*L)(Y);
    return Y;
  }
};
struct Outer : Module<Outer> {
  std::shared_ptr<VectorTrap> Inner =
      register_module("inner", std::make_shared<VectorTrap>());
  Tensor forward(const Tensor &X) { return (*Inner)(X); }
};
} // namespace

TEST(ModuleRegistration, UnregisteredModuleCalledInForwardIsLoud) {
  VectorTrap T;
  EXPECT_TRUE(T.parameters().empty()); // What the trap silently loses.
  expectError([&] { T(ones({1, 2})); },
              {"Lin was called inside VectorTrap.forward but is not "
               "registered",
               "register_module", "nn::ModuleList/nn::Sequential"});
  Outer O;
  expectError([&] { O(ones({1, 2})); },
              {"inside inner (VectorTrap).forward", "in module <root> (Outer)"});
  // Held in a ModuleList instead, it works and is visible.
  struct Fixed : Module<Fixed> {
    std::shared_ptr<ModuleList> Layers = register_module(
        "layers", std::make_shared<ModuleList>(std::make_shared<Lin>(2, 2),
                                               std::make_shared<Lin>(2, 2)));
    Tensor forward(const Tensor &X) {
      Tensor Y = X;
      for (const ModulePtr &L : *Layers)
        Y = (*L)(Y);
      return Y;
    }
  } F;
  EXPECT_EQ(F(ones({1, 2})).sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(F.parameters().size(), 4u);
  // An unregistered module called at top level is just a root.
  Lin L(2, 2);
  EXPECT_EQ(L(ones({1, 2})).sizes(), (std::vector<int64_t>{1, 2}));
  // A deliberately separate module may opt out.
  for (auto &Layer : T.Layers)
    Layer->set_allow_unregistered_call();
  EXPECT_EQ(T(ones({1, 2})).sizes(), (std::vector<int64_t>{1, 2}));
}

TEST(ModuleRegistration, ModuleUnregisteredAgainAfterItsParentDies) {
  auto L = std::make_shared<Lin>(2, 2);
  {
    auto Holder = std::make_shared<Sequential>(L);
    VectorTrap T;
    T.Layers = {L};
    EXPECT_NO_THROW(T(ones({1, 2}))); // Registered (in Holder).
  }
  VectorTrap T;
  T.Layers = {L};
  expectError([&] { T(ones({1, 2})); }, {"not registered"});
}

TEST(ModuleRegistration, CallPathsAreDottedNamesFromTheRoot) {
  std::vector<std::string> Seen;
  struct Probe : Module<Probe> {
    std::vector<std::string> *Out = nullptr;
    Tensor forward(const Tensor &X) {
      const auto &S = dispatch::moduleScopes();
      Out->push_back(S.back().first + "|" + S.back().second);
      return X;
    }
  };
  struct Mid : Module<Mid> {
    std::shared_ptr<Probe> P = register_module("probe", std::make_shared<Probe>());
    Tensor forward(const Tensor &X) { return (*P)(X); }
  };
  struct Top : Module<Top> {
    std::shared_ptr<Mid> M = register_module("mid", std::make_shared<Mid>());
    std::shared_ptr<Sequential> Seq = register_module(
        "seq", std::make_shared<Sequential>(std::make_shared<Probe>()));
    Tensor forward(const Tensor &X) {
      (*M->P)(X); // A grandchild called directly.
      return (*Seq)((*M)(X));
    }
  } T;
  T.M->P->Out = &Seen;
  T.Seq->at<Probe>(0)->Out = &Seen;
  T(ones({1}));
  EXPECT_EQ(Seen, (std::vector<std::string>{"mid.probe|Probe",
                                            "mid.probe|Probe", "seq.0|Probe"}));
  EXPECT_TRUE(dispatch::moduleScopes().empty());
}
