//===- ModuleStateDictHooksTest.cpp - state-dict extension points --------===//
//
// The ways a module customises its state dict, as PyTorch 1.13 does: extra
// state under "<prefix>_extra_state" (get/set_extra_state), overriding
// save_to_state_dict / load_from_state_dict (PyTorch's _save_to_state_dict
// / _load_from_state_dict: an old checkpoint layout), state-dict post-hooks
// (_register_state_dict_hook), load pre-hooks rewriting keys
// (_register_load_state_dict_pre_hook) and load post-hooks editing the
// incompatible keys (register_load_state_dict_post_hook); keys and reports
// are compared with PyTorch through TorchOracle (SKIPPED without torch).
// C++ only, since PyTorch 1.13 lacks them: state-dict pre-hooks and
// load_state_dict(sd, strict, assign=true). Also: a failed load changes
// nothing, even when it fails after the writes (a post-hook's keys).
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"
#include "TorchOracle.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;
using nng::test::TorchOracle;
using nng::test::TorchReport;

namespace {

/// A parameter, a buffer, a child and extra state (a step counter).
struct Stateful : Module<Stateful> {
  Tensor weight = register_parameter("weight", zeros({2}));
  Tensor count = register_buffer("count", zeros({1}));
  std::shared_ptr<Lin> lin =
      register_module("lin", std::make_shared<Lin>(2, 2));
  Tensor Steps = full({1}, 3.0);
  std::optional<Tensor> get_extra_state() const override { return Steps; }
  void set_extra_state(const Tensor &S) override { Steps = S; }
};

struct Holder : Module<Holder> {
  std::shared_ptr<Lin> head =
      register_module("head", std::make_shared<Lin>(2, 2));
  std::shared_ptr<Stateful> body =
      register_module("body", std::make_shared<Stateful>());
};

/// Loads an old layout that named the parameter "w".
struct Renamed : Module<Renamed> {
  Tensor weight = register_parameter("weight", zeros({3}));
  void load_from_state_dict(StateDict &SD, const std::string &Prefix,
                            LoadStateDictContext &Ctx) override {
    if (const Tensor *Old = SD.find(Prefix + "w")) {
      SD.insert(Prefix + "weight", *Old);
      SD.erase(Prefix + "w");
    }
    ModuleBase::load_from_state_dict(SD, Prefix, Ctx);
  }
};

/// Saves in the old layout.
struct SavesOld : Module<SavesOld> {
  Tensor weight = register_parameter("weight", full({3}, 2.0));
  void save_to_state_dict(StateDict &D, const std::string &Prefix,
                          bool KeepVars) const override {
    ModuleBase::save_to_state_dict(D, Prefix, KeepVars);
    D.insert(Prefix + "w", D.at(Prefix + "weight"));
    D.erase(Prefix + "weight");
  }
};

struct WrapRenamed : Module<WrapRenamed> {
  std::shared_ptr<Renamed> inner =
      register_module("inner", std::make_shared<Renamed>());
  Tensor bias = register_parameter("bias", zeros({3}));
};

std::shared_ptr<Sequential> twoLin() {
  return std::make_shared<Sequential>(std::make_shared<Lin>(2, 2),
                                      std::make_shared<Lin>(2, 2));
}

const char *Prelude = R"py(
class Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(2))
        self.register_buffer("count", torch.zeros(1))
        self.lin = nn.Linear(2, 2)
        self.steps = torch.tensor([3.0])
    def get_extra_state(self):
        return self.steps
    def set_extra_state(self, s):
        self.steps = s

class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 2)
        self.body = Stateful()

class Renamed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(3))
    def _load_from_state_dict(self, sd, prefix, meta, strict, missing,
                              unexpected, errors):
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")
        super()._load_from_state_dict(sd, prefix, meta, strict, missing,
                                      unexpected, errors)

class SavesOld(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(3))
    def _save_to_state_dict(self, dest, prefix, keep_vars):
        super()._save_to_state_dict(dest, prefix, keep_vars)
        dest[prefix + "w"] = dest.pop(prefix + "weight")

class WrapRenamed(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Renamed()
        self.bias = nn.Parameter(torch.zeros(3))

def drop_bias(mod, sd, prefix, meta):
    del sd[prefix + "bias"]

def only_weights(mod, sd, prefix, meta):
    return OrderedDict((k, v) for k, v in sd.items() if k.endswith("weight"))

def rename_enc(mod, sd, prefix, meta, strict, missing, unexpected, errors):
    for k in list(sd.keys()):
        if k.startswith(prefix + "enc."):
            sd[prefix + "0." + k[len(prefix) + 4:]] = sd.pop(k)

def forgive_missing(mod, keys):
    keys.missing_keys.clear()

def complain(mod, keys):
    keys.unexpected_keys.append("made.up")

def two_lin(pre=None, post=None):
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    if pre:
        m._register_load_state_dict_pre_hook(pre, with_module=True)
    if post:
        m[1].register_load_state_dict_post_hook(post)
    return m

from collections import OrderedDict
)py";

/// The C++ load report of SD into M (non-strict keys, strict's message).
struct CppLoad {
  std::vector<std::string> Missing, Unexpected;
  std::string StrictError;
};
template <typename Make>
CppLoad loadBoth(Make MakeModule, const StateDict &SD) {
  CppLoad R;
  LoadStateDictResult L = MakeModule()->load_state_dict(SD, false);
  R.Missing = L.missing_keys;
  R.Unexpected = L.unexpected_keys;
  R.StrictError = errorText([&] { MakeModule()->load_state_dict(SD, true); });
  return R;
}

void expectSameReport(const CppLoad &C, const TorchReport &T,
                      const std::string &What) {
  ASSERT_EQ(T.Error, "") << What;
  EXPECT_EQ(T.NonStrictError, "") << What;
  EXPECT_EQ(C.Missing, T.Missing) << What << ": missing keys";
  EXPECT_EQ(C.Unexpected, T.Unexpected) << What << ": unexpected keys";
  EXPECT_EQ(C.StrictError.empty(), T.StrictError.empty())
      << What << ": C++ strict error '" << C.StrictError << "', PyTorch's '"
      << T.StrictError << "'";
}

} // namespace

TEST(ModuleStateDictHooks, ExtraStateKeysAndLoadMatchPyTorch) {
  auto H = std::make_shared<Holder>();
  StateDict SD = H->state_dict();
  EXPECT_EQ(SD.keys(),
            (std::vector<std::string>{"head.weight", "head.bias", "body.weight",
                                      "body.count", "body._extra_state",
                                      "body.lin.weight", "body.lin.bias"}));
  // load passes the value to set_extra_state.
  StateDict New = SD;
  New.insert("body._extra_state", full({1}, 7.0));
  auto Dst = std::make_shared<Holder>();
  Dst->load_state_dict(New);
  EXPECT_EQ(Dst->body->Steps.item<double>(), 7.0);
  // A missing extra state is a missing key; on a module without extra
  // state the key is unexpected.
  StateDict NoExtra = SD;
  NoExtra.erase("body._extra_state");
  StateDict Stray = SD;
  Stray.insert("head._extra_state", ones({1}));
  std::string Msg =
      errorText([&] { std::make_shared<Holder>()->load_state_dict(NoExtra); });
  EXPECT_NE(Msg.find("\"body._extra_state\" (extra state)"), std::string::npos)
      << Msg;

  TorchOracle O(Prelude);
  size_t Described = O.describe("Holder", "Holder()");
  size_t Missing = O.loadReport("no extra state", "Holder()", NoExtra);
  size_t Unexpected = O.loadReport("stray extra state", "Holder()", Stray);
  NNG_RUN_TORCH_ORACLE(O);
  EXPECT_EQ(SD.keys(), O.report(Described).Keys);
  auto Make = [] { return std::make_shared<Holder>(); };
  expectSameReport(loadBoth(Make, NoExtra), O.report(Missing),
                   "no extra state");
  expectSameReport(loadBoth(Make, Stray), O.report(Unexpected),
                   "stray extra state");
}

TEST(ModuleStateDictHooks, SaveAndLoadOverridesMatchPyTorch) {
  // Saving the old layout, loading it into the new one (nested, so the
  // parent's unexpected-key rule sees "inner.w" under a child).
  StateDict Old = std::make_shared<SavesOld>()->state_dict();
  EXPECT_EQ(Old.keys(), std::vector<std::string>{"w"});
  auto R = std::make_shared<Renamed>();
  LoadStateDictResult L = R->load_state_dict(Old);
  EXPECT_TRUE(L.missing_keys.empty() && L.unexpected_keys.empty());
  EXPECT_EQ(R->weight.to_vector<double>(), (std::vector<double>{2, 2, 2}));
  StateDict Nested{{"inner.w", full({3}, 4.0)}, {"bias", ones({3})}};
  auto W = std::make_shared<WrapRenamed>();
  W->load_state_dict(Nested);
  EXPECT_EQ(W->inner->weight.to_vector<double>()[0], 4.0);
  // The caller's dict is not changed by the override's renaming.
  EXPECT_TRUE(Nested.contains("inner.w"));
  StateDict Wrong{{"inner.v", full({3}, 4.0)}, {"bias", ones({3})}};

  TorchOracle O(Prelude);
  size_t Saved = O.describe("SavesOld", "SavesOld()");
  size_t Good = O.loadReport("old layout", "WrapRenamed()", Nested);
  size_t Bad = O.loadReport("unknown layout", "WrapRenamed()", Wrong);
  NNG_RUN_TORCH_ORACLE(O);
  EXPECT_EQ(Old.keys(), O.report(Saved).Keys);
  auto Make = [] { return std::make_shared<WrapRenamed>(); };
  expectSameReport(loadBoth(Make, Nested), O.report(Good), "old layout");
  expectSameReport(loadBoth(Make, Wrong), O.report(Bad), "unknown layout");
}

TEST(ModuleStateDictHooks, StateDictPostHooksMatchPyTorch) {
  // A child's hook edits the dict in place; a root's hook returns a new one.
  auto A = twoLin();
  A->at<Lin>(0)->register_state_dict_post_hook(
      [](ModuleBase &, StateDict &SD, const std::string &Prefix) {
        SD.erase(Prefix + "bias");
      });
  auto B = twoLin();
  RemovableHandle Handle = B->register_state_dict_post_hook(
      [](ModuleBase &, StateDict &SD, const std::string &) {
        StateDict R;
        for (const auto &[K, T] : SD)
          if (K.size() >= 6 && K.compare(K.size() - 6, 6, "weight") == 0)
            R.insert(K, T);
        return R;
      });
  std::vector<std::string> KeysB = B->state_dict().keys();
  Handle.remove();
  EXPECT_EQ(B->state_dict().keys().size(), 4u); // Removed.

  TorchOracle O(Prelude);
  size_t RA = O.describe("child drops its bias", "two_lin()",
                         {"m[0]._register_state_dict_hook(drop_bias)"});
  size_t RB = O.describe("root keeps weights", "two_lin()",
                         {"m._register_state_dict_hook(only_weights)"});
  NNG_RUN_TORCH_ORACLE(O);
  EXPECT_EQ(A->state_dict().keys(), O.report(RA).Keys);
  EXPECT_EQ(KeysB, O.report(RB).Keys);
  EXPECT_EQ(KeysB, (std::vector<std::string>{"0.weight", "1.weight"}));
}

TEST(ModuleStateDictHooks, StateDictPreHooksRunBeforeEachModuleSaves) {
  // PyTorch 2's register_state_dict_pre_hook (not in 1.13): C++ only.
  auto M = twoLin();
  std::vector<std::string> Calls;
  auto Record = [&](ModuleBase &Mod, const std::string &Prefix, bool Keep) {
    Calls.push_back(Mod.type_name() + "@" + Prefix + (Keep ? "+" : "-"));
  };
  M->register_state_dict_pre_hook(Record);
  RemovableHandle H = M->at<Lin>(1)->register_state_dict_pre_hook(Record);
  M->state_dict("net", true);
  EXPECT_EQ(Calls,
            (std::vector<std::string>{"Sequential@net.+", "Lin@net.1.+"}));
  H.remove();
  Calls.clear();
  M->state_dict();
  EXPECT_EQ(Calls, std::vector<std::string>{"Sequential@-"});
}

TEST(ModuleStateDictHooks, LoadHooksMatchPyTorch) {
  // A pre-hook renames an old prefix; a post-hook forgives missing keys; a
  // post-hook adding a key makes strict fail.
  auto Rename = [](ModuleBase &, StateDict &SD, const std::string &Prefix) {
    for (const std::string &K : SD.keys())
      if (K.rfind(Prefix + "enc.", 0) == 0) {
        SD.insert(Prefix + "0." + K.substr(Prefix.size() + 4), SD.at(K));
        SD.erase(K);
      }
  };
  StateDict OldNames;
  for (const auto &[K, T] : twoLin()->state_dict())
    OldNames.insert(K.rfind("0.", 0) == 0 ? "enc." + K.substr(2) : K, T);
  StateDict Partial = twoLin()->state_dict();
  Partial.erase("1.bias");

  auto WithPre = [&] {
    auto M = twoLin();
    M->register_load_state_dict_pre_hook(Rename);
    return M;
  };
  auto Forgiving = [] {
    auto M = twoLin();
    M->at<Lin>(1)->register_load_state_dict_post_hook(
        [](ModuleBase &, LoadStateDictResult &Keys) {
          Keys.missing_keys.clear();
        });
    return M;
  };
  auto Complaining = [] {
    auto M = twoLin();
    M->at<Lin>(1)->register_load_state_dict_post_hook(
        [](ModuleBase &, LoadStateDictResult &Keys) {
          Keys.unexpected_keys.push_back("made.up");
        });
    return M;
  };
  TorchOracle O(Prelude);
  size_t RPlain = O.loadReport("old names, no hook", "two_lin()", OldNames);
  size_t RPre = O.loadReport("old names, renaming pre-hook",
                             "two_lin(pre=rename_enc)", OldNames);
  size_t RForgive = O.loadReport("missing key, forgiving post-hook",
                                 "two_lin(post=forgive_missing)", Partial);
  size_t RComplain =
      O.loadReport("complete, complaining post-hook", "two_lin(post=complain)",
                   twoLin()->state_dict());
  NNG_RUN_TORCH_ORACLE(O);
  expectSameReport(loadBoth(twoLin, OldNames), O.report(RPlain), "no hook");
  expectSameReport(loadBoth(WithPre, OldNames), O.report(RPre), "pre-hook");
  expectSameReport(loadBoth(Forgiving, Partial), O.report(RForgive),
                   "forgiving post-hook");
  expectSameReport(loadBoth(Complaining, twoLin()->state_dict()),
                   O.report(RComplain), "complaining post-hook");
  EXPECT_NE(O.report(RComplain).StrictError.find("made.up"), std::string::npos);
}

TEST(ModuleStateDictHooks, PostHooksSeeLoadedValuesChildrenFirst) {
  auto M = twoLin();
  std::vector<std::string> Order;
  std::vector<double> Seen;
  RemovableHandle Root = M->register_load_state_dict_post_hook(
      [&](ModuleBase &, LoadStateDictResult &) { Order.push_back("root"); });
  RemovableHandle Pre = M->register_load_state_dict_pre_hook(
      [&](ModuleBase &, StateDict &, const std::string &) {
        Order.push_back("pre");
      });
  RemovableHandle Child = M->at<Lin>(0)->register_load_state_dict_post_hook(
      [&](ModuleBase &Mod, LoadStateDictResult &) {
        Order.push_back("0");
        Seen.push_back(Mod.as<Lin>()->weight.to_vector<double>()[0]);
      });
  StateDict SD = M->state_dict();
  SD.insert("0.weight", full({2, 2}, 5.0));
  M->load_state_dict(SD);
  EXPECT_EQ(Order, (std::vector<std::string>{"pre", "0", "root"}));
  // State-dict hooks are not call hooks: calls keep the direct path.
  M->register_state_dict_pre_hook(
      [](ModuleBase &, const std::string &, bool) {});
  EXPECT_FALSE(M->needsValueCall());
  EXPECT_FALSE(M->at<Lin>(0)->needsValueCall());
  EXPECT_EQ(Seen, std::vector<double>{5.0});
  // Removed hooks no longer run.
  Root.remove();
  Pre.remove();
  Child.remove();
  Order.clear();
  M->load_state_dict(SD);
  EXPECT_TRUE(Order.empty());
}

TEST(ModuleStateDictHooks, FailingAfterTheWritesUndoesThem) {
  // A post-hook's added key fails strict after the values (and the extra
  // state) were written: everything is put back.
  auto H = std::make_shared<Holder>();
  H->body->register_load_state_dict_post_hook(
      [](ModuleBase &, LoadStateDictResult &Keys) {
        Keys.missing_keys.push_back("body.needed");
      });
  Tensor WeightBefore = H->head->weight;
  std::vector<double> Before = H->head->weight.to_vector<double>();
  StateDict SD = H->state_dict();
  SD.insert("head.weight", full({2, 2}, 9.0));
  SD.insert("body._extra_state", full({1}, 8.0));
  std::string Msg = errorText([&] { H->load_state_dict(SD); });
  EXPECT_NE(Msg.find("Missing key(s) in state_dict: \"body.needed\""),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("post-hooks"), std::string::npos) << Msg;
  EXPECT_EQ(H->head->weight.to_vector<double>(), Before);
  EXPECT_TRUE(H->head->weight.is_same(WeightBefore));
  EXPECT_EQ(H->body->Steps.item<double>(), 3.0);
  // Non-strict: the same load succeeds and reports the hook's key.
  LoadStateDictResult R = H->load_state_dict(SD, false);
  EXPECT_EQ(R.missing_keys, std::vector<std::string>{"body.needed"});
  EXPECT_EQ(H->head->weight.to_vector<double>()[0], 9.0);
  EXPECT_EQ(H->body->Steps.item<double>(), 8.0);
}

TEST(ModuleStateDictHooks, AThrowingSetExtraStateUndoesTheWritesBeforeIt) {
  struct PickyState : Module<PickyState> {
    Tensor weight = register_parameter("weight", zeros({2}));
    double Level = 1;
    std::optional<Tensor> get_extra_state() const override {
      return full({1}, Level);
    }
    void set_extra_state(const Tensor &S) override {
      if (S.item<double>() < 0)
        fail(ErrorKind::InvalidArgument, "PickyState: negative level");
      Level = S.item<double>();
    }
  };
  struct Pair : Module<Pair> {
    std::shared_ptr<Lin> head =
        register_module("head", std::make_shared<Lin>(2, 2));
    std::shared_ptr<PickyState> a =
        register_module("a", std::make_shared<PickyState>());
    std::shared_ptr<PickyState> b =
        register_module("b", std::make_shared<PickyState>());
  };
  auto P = std::make_shared<Pair>();
  std::vector<double> Before = P->head->weight.to_vector<double>();
  StateDict SD = P->state_dict();
  SD.insert("head.weight", full({2, 2}, 9.0));
  SD.insert("a.weight", full({2}, 9.0));
  SD.insert("a._extra_state", full({1}, 5.0));
  SD.insert("b._extra_state", full({1}, -1.0));
  std::string Msg = errorText([&] { P->load_state_dict(SD); });
  EXPECT_NE(Msg.find("negative level"), std::string::npos) << Msg;
  EXPECT_EQ(P->head->weight.to_vector<double>(), Before);
  EXPECT_EQ(P->a->weight.to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_EQ(P->a->Level, 1.0);
  SD.insert("b._extra_state", full({1}, 2.0));
  P->load_state_dict(SD);
  EXPECT_EQ(P->a->Level, 5.0);
  EXPECT_EQ(P->b->Level, 2.0);
  EXPECT_EQ(P->head->weight.to_vector<double>()[0], 9.0);
}

TEST(ModuleStateDictHooks, AssignTakesTheTensorsThemselves) {
  // PyTorch 2's load_state_dict(assign=True) (not in 1.13): C++ only.
  auto H = std::make_shared<Holder>();
  H->head->weight.requires_grad_(false); // Frozen: stays frozen.
  StateDict SD = H->state_dict();
  Tensor W = full({2, 2}, 1.5, DType::F64);
  Tensor B = full({2}, 0.5);
  B.requires_grad_(false);
  Tensor Count = full({1}, 4.0);
  SD.insert("head.weight", W);
  SD.insert("head.bias", B);
  SD.insert("body.count", Count);
  H->load_state_dict(SD, true, /*Assign=*/true);
  // The same data (no copy), the dtype of the checkpoint, the member follows.
  EXPECT_EQ(H->head->weight.data().rawData(), W.data().rawData());
  EXPECT_EQ(H->head->weight.dtype(), DType::F64);
  EXPECT_FALSE(H->head->weight.requires_grad());
  EXPECT_TRUE(H->head->weight.is_same(H->get_parameter("head.weight")));
  EXPECT_EQ(H->head->bias.data().rawData(), B.data().rawData());
  EXPECT_TRUE(H->head->bias.requires_grad()); // As the old parameter.
  EXPECT_FALSE(B.requires_grad());            // The caller's tensor untouched.
  EXPECT_TRUE(H->body->count.is_same(Count)); // A buffer: the tensor itself.
  // Without assign the same dict is copied into the existing storage.
  auto C = std::make_shared<Holder>();
  const void *Storage = C->head->weight.data().rawData();
  C->load_state_dict(SD);
  EXPECT_EQ(C->head->weight.data().rawData(), Storage);
  EXPECT_EQ(C->head->weight.dtype(), DType::F32);
  // A failed assign changes nothing.
  auto D = std::make_shared<Holder>();
  Tensor DW = D->head->weight;
  SD.insert("body.weight", zeros({5}));
  EXPECT_THROW(D->load_state_dict(SD, true, true), Error);
  EXPECT_TRUE(D->head->weight.is_same(DW));
  // An integral tensor cannot become a parameter that requires grad.
  StateDict Ints = std::make_shared<Holder>()->state_dict();
  Ints.insert("head.bias", zeros({2}, DType::I64));
  std::string Msg = errorText(
      [&] { std::make_shared<Holder>()->load_state_dict(Ints, true, true); });
  EXPECT_NE(Msg.find("cannot assign head.bias"), std::string::npos) << Msg;
}
