//===- ModuleMemberBindingTest.cpp - Which member holds which slot -------===//
//
// Member bindings (Module.h): a data member initialised or assigned from a
// registration is bound to the registered name, locals and container
// elements are not; replace_parameter / replace_buffer / set_attr /
// register_* of a removed name rebind the member; bind_member for members
// the module cannot see (a subclass of a layer); remove_parameter /
// remove_buffer; the built-in layers bind every tensor they register; the
// hooks list finds a hook's callable by type.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/nn/NN.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <array>

using namespace nng;
using namespace nng::nn;

namespace {

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

struct Holder : Module<Holder> {
  Tensor scale = register_parameter("scale", ones({3}));
  Tensor mean = register_buffer("mean", zeros({3}));
  std::array<Tensor, 2> pair;
  std::vector<Tensor> list;
  Tensor late;
  Tensor local_copy;
  Holder() {
    pair[0] = register_parameter("p0", ones({2}));
    late = register_parameter("late", zeros({2}));
    list.push_back(register_parameter("in_list", ones({1})));
    Tensor Local = register_parameter("local", ones({1}));
    local_copy = Local; // A copy of a bound-nowhere local: not bound.
  }
  Tensor forward(const Tensor &X) { return X * scale; }
};

/// A subclass of a layer: its own member lies outside Linear's object.
struct ScaledLinear : Linear {
  Tensor gain;
  ScaledLinear() : Linear(3, 2) {
    gain = register_parameter("gain", ones({2}));
  }
};

} // namespace

TEST(ModuleMemberBinding, MembersFromRegistrationsAreBound) {
  Holder H;
  EXPECT_EQ(H.bound_member("scale"), &H.scale);
  EXPECT_EQ(H.bound_member("mean"), &H.mean);
  EXPECT_EQ(H.bound_member("p0"), &H.pair[0]);
  EXPECT_EQ(H.bound_member("late"), &H.late);
  EXPECT_TRUE(H.scale.is_same(H.get_parameter("scale")));
}

TEST(ModuleMemberBinding, LocalsAndContainerElementsAreNotBound) {
  Holder H;
  EXPECT_EQ(H.bound_member("in_list"), nullptr);
  EXPECT_EQ(H.bound_member("local"), nullptr);
  // A registration stored outside the module (here: a local of the test).
  Tensor Outside = H.register_parameter("outside", ones({1}));
  EXPECT_EQ(H.bound_member("outside"), nullptr);
  EXPECT_TRUE(Outside.is_same(H.get_parameter("outside")));
}

TEST(ModuleMemberBinding, ReplaceRebindsTheMember) {
  Holder H;
  Tensor W = ones({3}) * 2.0;
  Tensor Leaf = W.detach();
  H.replace_parameter("scale", Leaf);
  EXPECT_TRUE(H.scale.is_same(Leaf));
  EXPECT_TRUE(H.get_parameter("scale").is_same(Leaf));
  Tensor B = full({3}, 5.0);
  H.replace_buffer("mean", B);
  EXPECT_TRUE(H.mean.is_same(B));
}

TEST(ModuleMemberBinding, SetAttr) {
  Holder H;
  // A buffer is replaced (PyTorch's module.buf = t).
  Tensor B = full({3}, 4.0);
  H.set_attr("mean", B);
  EXPECT_TRUE(H.get_buffer("mean").is_same(B));
  EXPECT_TRUE(H.mean.is_same(B));
  // A parameter is refused.
  expectError([&] { H.set_attr("scale", ones({3})); },
              {"Holder", "'scale' is a parameter", "replace_parameter"});
  // A plain attribute: a removed parameter whose member stays bound.
  Tensor Old = H.remove_parameter("scale");
  EXPECT_TRUE(H.scale.is_same(Old));
  Tensor Plain = full({3}, 3.0);
  H.set_attr("scale", Plain);
  EXPECT_TRUE(H.scale.is_same(Plain));
  EXPECT_FALSE(H.state_dict().contains("scale"));
  // Nothing named so.
  expectError([&] { H.set_attr("nothing", ones({1})); },
              {"Holder", "set_attr('nothing')", "bind_member"});
}

TEST(ModuleMemberBinding, RemoveAndRegisterAgain) {
  Holder H;
  Tensor Scale = H.scale;
  EXPECT_TRUE(H.remove_parameter("scale").is_same(Scale));
  EXPECT_FALSE(H.state_dict().contains("scale"));
  // Registering the name again appends it and updates the member.
  Tensor New = ones({3}) * 7.0;
  H.register_parameter("scale", New.detach());
  EXPECT_TRUE(H.scale.is_same(H.get_parameter("scale")));
  std::vector<std::string> Keys = H.state_dict().keys();
  EXPECT_EQ(Keys.back(), "mean"); // Buffers come after parameters.
  std::vector<std::string> Params;
  for (auto &[N, T] : H.named_parameters())
    Params.push_back(N);
  EXPECT_EQ(Params.back(), "scale");
  EXPECT_TRUE(H.remove_buffer("mean").is_same(H.mean));
  EXPECT_FALSE(H.state_dict().contains("mean"));
  expectError([&] { H.remove_parameter("mean"); },
              {"Holder", "remove_parameter('mean')", "no parameter"});
  expectError([&] { H.remove_buffer("scale"); },
              {"remove_buffer('scale')", "it is a parameter"});
}

TEST(ModuleMemberBinding, BindMemberForASubclassOfALayer) {
  ScaledLinear S;
  EXPECT_EQ(S.bound_member("weight"), &S.weight);
  EXPECT_EQ(S.bound_member("gain"), nullptr); // Outside Linear's object.
  Tensor Plain;
  S.bind_member("gain", S.gain);
  EXPECT_EQ(S.bound_member("gain"), &S.gain);
  Tensor G = ones({2}) * 3.0;
  S.replace_parameter("gain", G.detach());
  EXPECT_TRUE(S.gain.is_same(S.get_parameter("gain")));
  // Binding a member sets it to the registered tensor.
  S.bind_member("gain", Plain);
  EXPECT_TRUE(Plain.is_same(S.get_parameter("gain")));
  EXPECT_EQ(S.bound_member("gain"), &Plain);
}

TEST(ModuleMemberBinding, LayersBindTheirTensors) {
  Linear L(3, 2);
  EXPECT_EQ(L.bound_member("weight"), &L.weight);
  EXPECT_EQ(L.bound_member("bias"), &L.bias);
  Conv2d C(2, 4, 3);
  EXPECT_EQ(C.bound_member("weight"), &C.weight);
  EXPECT_EQ(C.bound_member("bias"), &C.bias);
  BatchNorm2d B(4);
  EXPECT_EQ(B.bound_member("weight"), &B.weight);
  EXPECT_EQ(B.bound_member("running_mean"), &B.running_mean);
  EXPECT_EQ(B.bound_member("num_batches_tracked"), &B.num_batches_tracked);
  LayerNorm LN(4);
  EXPECT_EQ(LN.bound_member("weight"), &LN.weight);
  Embedding E(10, 3);
  EXPECT_EQ(E.bound_member("weight"), &E.weight);
  MultiheadAttention A(8, 2);
  EXPECT_EQ(A.bound_member("in_proj_weight"), &A.in_proj_weight);
  EXPECT_EQ(A.bound_member("in_proj_bias"), &A.in_proj_bias);
  // The layer's forward reads the member: replacing the parameter is
  // enough (weight tying without touching the member).
  Linear Head(3, 2);
  Tensor Tied = L.weight;
  Head.replace_parameter("weight", Tied);
  EXPECT_TRUE(Head.weight.is_same(L.weight));
  Tensor X = randn({1, 3});
  EXPECT_TRUE(allclose(Head(X) - Head.bias, L(X) - L.bias));
}

TEST(ModuleMemberBinding, HookCallablesAreFoundByType) {
  struct Marker {
    int Tag;
    std::optional<std::vector<Value>>
    operator()(ModuleBase &, const std::vector<Value> &) const {
      return std::nullopt;
    }
  };
  Linear L(2, 2);
  L.register_forward_pre_hook([](ModuleBase &, const std::vector<Value> &) {});
  L.register_forward_pre_hook(ForwardPreHook(Marker{42}));
  ASSERT_EQ(L.forward_pre_hooks().size(), 2u);
  EXPECT_EQ(L.forward_pre_hooks()[0].second.target<Marker>(), nullptr);
  const Marker *M = L.forward_pre_hooks()[1].second.target<Marker>();
  ASSERT_NE(M, nullptr);
  EXPECT_EQ(M->Tag, 42);
}
