//===- ModuleStateDictTest.cpp - state_dict() and load_state_dict() ------===//
//
// state_dict's keys and order (own parameters, own persistent buffers, then
// children, whatever the registration interleaving), its values (detached,
// sharing data; keep_vars), prefixes; load_state_dict's in-place copies
// with dtype conversion, strict and non-strict key reports, the one error
// listing every offending key with both shapes, and the module left
// unchanged by any failed load; the StateDict container itself.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

/// Registration interleaves children, buffers and parameters on purpose.
struct Net : Module<Net> {
  std::shared_ptr<Lin> First = register_module("first", std::make_shared<Lin>(2, 3));
  Tensor count = register_buffer("count", zeros({}, DType::I64));
  Tensor scale = register_parameter("scale", ones({3}));
  std::shared_ptr<Sequential> Layers = register_module(
      "layers", std::make_shared<Sequential>(std::make_shared<Norm>(3),
                                             std::make_shared<Act>(),
                                             std::make_shared<Lin>(3, 2, false)));
  Tensor gate = register_parameter("gate", full({2}, 0.5));
  Tensor forward(const Tensor &X) {
    return (*Layers)((*First)(X) * scale).toTensor() * gate;
  }
};

std::vector<std::string> expectedKeys() {
  return {"scale",
          "gate",
          "count",
          "first.weight",
          "first.bias",
          "layers.0.weight",
          "layers.0.running_mean",
          "layers.0.num_batches_tracked",
          "layers.2.weight"};
}

/// A copy of every tensor's values, to check a module is unchanged.
std::vector<std::vector<double>> snapshot(const ModuleBase &M) {
  std::vector<std::vector<double>> R;
  for (const auto &[K, T] : M.state_dict())
    R.push_back(T.to_vector<double>());
  return R;
}

} // namespace

TEST(ModuleStateDict, KeysInPyTorchOrder) {
  Net N;
  StateDict SD = N.state_dict();
  EXPECT_EQ(SD.keys(), expectedKeys());
  EXPECT_FALSE(SD.contains("layers.0.scratch")); // Non-persistent.
  EXPECT_FALSE(SD.contains("layers.2.bias"));    // Reserved, empty.
  EXPECT_EQ(SD.at("layers.0.num_batches_tracked").dtype(), DType::I64);
  std::vector<std::string> Prefixed;
  for (const auto &[K, T] : N.state_dict("model"))
    Prefixed.push_back(K);
  EXPECT_EQ(Prefixed.front(), "model.scale");
  EXPECT_EQ(Prefixed.back(), "model.layers.2.weight");
  EXPECT_EQ(N.state_dict("model.").keys().front(), "model.scale");
}

TEST(ModuleStateDict, ValuesAreDetachedAndShareData) {
  Net N;
  StateDict SD = N.state_dict();
  const Tensor &W = SD.at("first.weight");
  EXPECT_FALSE(W.requires_grad());
  EXPECT_FALSE(W.is_same(N.First->weight));
  Tensor Alias = W;
  Alias.fill_(7.0); // Writes through to the parameter.
  EXPECT_EQ(N.First->weight.to_vector<double>()[0], 7.0);
  StateDict Vars = N.state_dict("", /*KeepVars=*/true);
  EXPECT_TRUE(Vars.at("first.weight").is_same(N.First->weight));
  EXPECT_TRUE(Vars.at("first.weight").requires_grad());
}

TEST(ModuleStateDict, LoadCopiesInPlaceWithDTypeConversion) {
  Net Src, Dst;
  {
    NoGradGuard NoGrad;
    for (Tensor P : Src.parameters())
      P.fill_(0.25);
    Src.count.fill_(9);
  }
  Tensor Before = Dst.First->weight;
  StateDict SD;
  for (const auto &[K, T] : Src.state_dict())
    SD.insert(K, T.is_floating_point() ? T.to(DType::F64) : T);
  LoadStateDictResult R = Dst.load_state_dict(SD);
  EXPECT_TRUE(R.missing_keys.empty());
  EXPECT_TRUE(R.unexpected_keys.empty());
  EXPECT_TRUE(Before.is_same(Dst.First->weight)); // Same tensor, new values.
  EXPECT_EQ(Dst.First->weight.dtype(), DType::F32);
  EXPECT_EQ(Dst.First->weight.to_vector<double>()[0], 0.25);
  EXPECT_EQ(Dst.count.item<int64_t>(), 9);
  EXPECT_TRUE(Dst.First->weight.requires_grad());
  EXPECT_TRUE(allclose(Dst(ones({1, 2})), Src(ones({1, 2}))));
}

TEST(ModuleStateDict, StrictErrorListsEveryKeyAndChangesNothing) {
  Net Src, Dst;
  StateDict SD = Src.state_dict();
  {
    NoGradGuard NoGrad;
    for (Tensor P : Src.parameters())
      P.fill_(3.0);
  }
  SD.erase("gate");
  SD.erase("layers.0.running_mean");
  SD.insert("first.weight", zeros({4, 4}));
  SD.insert("extra.weight", zeros({5}));
  SD.insert("layers.9.bias", zeros({1}));
  auto Before = snapshot(Dst);
  std::string Msg = errorText([&] { Dst.load_state_dict(SD); });
  ASSERT_FALSE(Msg.empty());
  for (const char *Needle :
       {"Error(s) in loading state_dict for Net:",
        "Missing key(s) in state_dict: \"gate\" (shape [2]), "
        "\"layers.0.running_mean\" (shape [3]).",
        "Unexpected key(s) in state_dict: \"extra.weight\" (shape [5]), "
        "\"layers.9.bias\" (shape [1]).",
        "size mismatch for first.weight: copying a param with shape [4, 4] "
        "from checkpoint, the shape in current model is [3, 2].",
        "the module is unchanged"})
    EXPECT_NE(Msg.find(Needle), std::string::npos) << Needle << "\n" << Msg;
  EXPECT_EQ(snapshot(Dst), Before);
  // Only missing/unexpected keys: also an error under strict, naming the
  // way out.
  StateDict Partial = Src.state_dict();
  Partial.erase("scale");
  Msg = errorText([&] { Dst.load_state_dict(Partial); });
  EXPECT_NE(Msg.find("\"scale\" (shape [3])"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("strict=false"), std::string::npos) << Msg;
  EXPECT_EQ(snapshot(Dst), Before);
}

TEST(ModuleStateDict, NonStrictReportsKeysAndLoadsTheRest) {
  Net Src, Dst;
  {
    NoGradGuard NoGrad;
    for (Tensor P : Src.parameters())
      P.fill_(3.0);
  }
  StateDict SD = Src.state_dict();
  SD.erase("gate");
  SD.insert("extra", zeros({1}));
  LoadStateDictResult R = Dst.load_state_dict(SD, /*Strict=*/false);
  EXPECT_EQ(R.missing_keys, std::vector<std::string>{"gate"});
  EXPECT_EQ(R.unexpected_keys, std::vector<std::string>{"extra"});
  EXPECT_EQ(Dst.scale.to_vector<double>()[0], 3.0);
  EXPECT_EQ(Dst.gate.to_vector<double>()[0], 0.5); // Not in the dict.
  // A shape mismatch is an error even when not strict, and loads nothing.
  Net Other;
  auto Before = snapshot(Other);
  SD.insert("scale", zeros({7}));
  std::string Msg = errorText([&] { Other.load_state_dict(SD, false); });
  EXPECT_NE(Msg.find("size mismatch for scale"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("Missing key"), std::string::npos) << Msg;
  EXPECT_EQ(snapshot(Other), Before);
  // An undefined value is refused too.
  StateDict Bad = Src.state_dict();
  Bad.insert("scale", Tensor());
  Msg = errorText([&] { Other.load_state_dict(Bad, false); });
  EXPECT_NE(Msg.find("scale is an undefined tensor"), std::string::npos) << Msg;
}

TEST(ModuleStateDict, StateDictContainer) {
  StateDict SD{{"a", ones({1})}, {"b", zeros({2})}};
  EXPECT_EQ(SD.size(), 2u);
  SD.insert("c", ones({3}));
  SD.insert("a", zeros({4})); // Replaces in place.
  EXPECT_EQ(SD.keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SD.at("a").sizes(), std::vector<int64_t>{4});
  EXPECT_TRUE(SD.erase("b"));
  EXPECT_FALSE(SD.erase("b"));
  EXPECT_EQ(SD.keys(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(SD.at("c").sizes(), std::vector<int64_t>{3});
  std::string Msg = errorText([&] { SD.at("zz"); });
  EXPECT_NE(Msg.find("no key 'zz' (it has 2 keys: a, c)"), std::string::npos)
      << Msg;
  EXPECT_THROW((StateDict{{"x", ones({1})}, {"x", ones({1})}}), Error);
  size_t N = 0;
  for (const auto &[K, T] : SD)
    N += K.size() + static_cast<size_t>(T.numel());
  EXPECT_EQ(N, 2u + 4u + 3u);
}

TEST(ModuleStateDict, TiedWeightsLoadOnce) {
  struct Tied : Module<Tied> {
    std::shared_ptr<Lin> Enc = register_module("enc", std::make_shared<Lin>(2, 2));
    std::shared_ptr<Lin> Dec = register_module("dec", std::make_shared<Lin>(2, 2));
    Tied() { Dec->weight = Dec->replace_parameter("weight", Enc->weight); }
    Tensor forward(const Tensor &X) { return (*Dec)((*Enc)(X)); }
  } A, B;
  StateDict SD = A.state_dict();
  EXPECT_EQ(SD.keys(), (std::vector<std::string>{"enc.weight", "enc.bias",
                                                 "dec.weight", "dec.bias"}));
  SD.insert("enc.weight", full({2, 2}, 2.0));
  SD.insert("dec.weight", full({2, 2}, 2.0));
  B.load_state_dict(SD);
  EXPECT_TRUE(B.Enc->weight.is_same(B.Dec->weight));
  EXPECT_EQ(B.Dec->weight.to_vector<double>()[3], 2.0);
}
