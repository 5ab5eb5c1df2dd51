//===- ModuleHookExtrasTest.cpp - always_call hooks, registration hooks --===//
//
// PyTorch 2 hooks that PyTorch 1.13 (the oracle) lacks, so checked in C++
// against PyTorch 2's documented behaviour: forward hooks registered with
// always_call run when the call throws (with a None output, after the
// pre-hooks or forward or an earlier hook failed; once; their own
// exceptions dropped; the original exception rethrown), own and global;
// and the global registration hooks
// (register_module_{module,parameter,buffer}_registration_hook), which see
// every submodule, parameter and buffer a module registers or replaces and
// may return a replacement, with RemovableHandles.
//
//===----------------------------------------------------------------------===//

#include "ModuleTestUtils.h"

#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace nng;
using namespace nng::nn;
using namespace nng::nn::testing;

namespace {

/// Throws from forward when its input is negative.
struct Picky : Module<Picky> {
  Tensor forward(const Tensor &X) {
    if (X.sum().item<double>() < 0)
      fail(ErrorKind::InvalidArgument, "Picky: negative input");
    if (X.sum().item<double>() > 100)
      throw std::runtime_error("too big");
    return X * 2.0;
  }
};

/// Records its calls: (name, whether the output was None).
struct Recorder {
  std::vector<std::string> *Log;
  std::string Name;
  std::optional<Value> operator()(ModuleBase &, const std::vector<Value> &,
                                  const Value &Out) const {
    Log->push_back(Name + (Out.isNone() ? ":none" : ":out"));
    return std::nullopt;
  }
};

} // namespace

TEST(ModuleHookExtras, AlwaysCalledHooksRunWhenForwardThrows) {
  auto M = std::make_shared<Picky>();
  std::vector<std::string> Log;
  M->register_forward_hook(Recorder{&Log, "plain"});
  M->register_forward_hook(Recorder{&Log, "always"}, {.always_call = true});
  // A normal call: both run, once, with the output.
  (*M)(ones({2}));
  EXPECT_EQ(Log, (std::vector<std::string>{"plain:out", "always:out"}));
  // forward throws: only the always-called hook runs, with None; the
  // error is the original one, with its module context.
  Log.clear();
  std::string Msg = errorText([&] { (*M)(-ones({2})); });
  EXPECT_NE(Msg.find("Picky: negative input"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("in module <root> (Picky)"), std::string::npos) << Msg;
  EXPECT_EQ(Log, std::vector<std::string>{"always:none"});
  // Any exception type, rethrown as it is.
  Log.clear();
  EXPECT_THROW((*M)(full({2}, 60.0)), std::runtime_error);
  EXPECT_EQ(Log, std::vector<std::string>{"always:none"});
}

TEST(ModuleHookExtras, AlwaysCalledHooksRunOnceAndTheirErrorsAreDropped) {
  auto M = std::make_shared<Picky>();
  std::vector<std::string> Log;
  // An always-called hook that ran before a later hook threw is not run
  // again; one after it runs with None.
  M->register_forward_hook(Recorder{&Log, "first"}, {.always_call = true});
  M->register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &, const Value &) {
        fail(ErrorKind::InvalidArgument, "hook failed");
      });
  M->register_forward_hook(Recorder{&Log, "last"}, {.always_call = true});
  // An always-called hook that throws itself: dropped, the others still run.
  RemovableHandle Throwing = M->register_forward_hook(
      [](ModuleBase &, const std::vector<Value> &, const Value &Out) {
        if (Out.isNone())
          throw std::runtime_error("cleanup failed");
      },
      {.prepend = true, .always_call = true});
  std::string Msg = errorText([&] { (*M)(ones({2})); });
  EXPECT_NE(Msg.find("hook failed"), std::string::npos) << Msg;
  EXPECT_EQ(Msg.find("cleanup failed"), std::string::npos) << Msg;
  EXPECT_EQ(Log, (std::vector<std::string>{"first:out", "last:none"}));
  // A pre-hook that throws: the always-called hooks run too.
  Log.clear();
  RemovableHandle Pre = M->register_forward_pre_hook(
      [](ModuleBase &, const std::vector<Value> &) {
        fail(ErrorKind::InvalidArgument, "pre-hook failed");
      });
  Msg = errorText([&] { (*M)(ones({2})); });
  EXPECT_NE(Msg.find("pre-hook failed"), std::string::npos) << Msg;
  EXPECT_EQ(Log, (std::vector<std::string>{"first:none", "last:none"}));
  // Removing a hook removes its always_call too.
  Pre.remove();
  Throwing.remove();
  Log.clear();
  Msg = errorText([&] { (*M)(-ones({2})); });
  EXPECT_EQ(Log, (std::vector<std::string>{"first:none", "last:none"}));
}

TEST(ModuleHookExtras, GlobalAlwaysCalledHooks) {
  auto Outer = std::make_shared<Sequential>(std::make_shared<Act>(),
                                            std::make_shared<Picky>());
  std::vector<std::string> Log;
  RemovableHandle H = register_module_forward_hook(
      [&](ModuleBase &M, const std::vector<Value> &, const Value &Out) {
        Log.push_back(M.type_name() + (Out.isNone() ? ":none" : ":out"));
      },
      {.always_call = true});
  // A call that succeeds: every module's hook with its output.
  std::string Msg = errorText([&] { (*Outer)(ones({2})); });
  H.remove();
  EXPECT_TRUE(Msg.empty()) << Msg;
  EXPECT_EQ(Log, (std::vector<std::string>{"Act:out", "Picky:out",
                                           "Sequential:out"}));
  Log.clear();
  H = register_module_forward_hook(
      [&](ModuleBase &M, const std::vector<Value> &, const Value &Out) {
        Log.push_back(M.type_name() + (Out.isNone() ? ":none" : ":out"));
      },
      {.always_call = true});
  auto Direct = std::make_shared<Sequential>(std::make_shared<Picky>());
  Msg = errorText([&] { (*Direct)(-ones({2})); });
  H.remove();
  EXPECT_NE(Msg.find("negative input"), std::string::npos) << Msg;
  // The inner module's hook, then the container's, both with None.
  EXPECT_EQ(Log, (std::vector<std::string>{"Picky:none", "Sequential:none"}));
  Log.clear();
  errorText([&] { (*Direct)(-ones({2})); });
  EXPECT_TRUE(Log.empty()); // Removed.
}

TEST(ModuleHookExtras, RegistrationHooksSeeAndReplaceEntries) {
  std::vector<std::string> Log;
  RemovableHandle HM = register_module_module_registration_hook(
      [&](ModuleBase &Parent, const std::string &Name,
          const ModulePtr &Child) -> ModulePtr {
        Log.push_back("module " + Parent.type_name() + "." + Name + "=" +
                      (Child ? Child->type_name() : "null"));
        // Every Lin with a bias becomes one without.
        if (auto L = std::dynamic_pointer_cast<Lin>(Child);
            L && L->bias.defined())
          return std::make_shared<Lin>(L->In, L->Out, false);
        return nullptr;
      });
  RemovableHandle HP = register_module_parameter_registration_hook(
      [&](ModuleBase &M, const std::string &Name, const Tensor &P) -> Tensor {
        Log.push_back("param " + M.type_name() + "." + Name);
        if (Name == "weight")
          return full(P.sizes(), 0.5); // Requires no grad: as returned.
        return Tensor();
      });
  RemovableHandle HB = register_module_buffer_registration_hook(
      [&](ModuleBase &M, const std::string &Name, const Tensor &) {
        Log.push_back("buffer " + M.type_name() + "." + Name);
      });
  struct Net : Module<Net> {
    std::shared_ptr<Lin> fc =
        register_module("fc", std::make_shared<Lin>(2, 3));
    Tensor running = register_buffer("running", zeros({3}));
  };
  auto N = std::make_shared<Net>();
  auto Seq = std::make_shared<Sequential>(std::make_shared<Act>());
  // Registration hooks are not call hooks: calls keep the direct path.
  EXPECT_FALSE(N->needsValueCall());
  HM.remove();
  HP.remove();
  HB.remove();
  // The replacement is what the member and state_dict hold.
  EXPECT_FALSE(N->fc->bias.defined());
  EXPECT_EQ(N->state_dict().keys(),
            (std::vector<std::string>{"running", "fc.weight"}));
  EXPECT_EQ(N->fc->weight.to_vector<double>()[0], 0.5);
  EXPECT_TRUE(N->fc->weight.is_same(N->get_parameter("fc.weight")));
  // Every registration was seen: the Lin built inside the hook too (its
  // own weight replaced), the container's entries.
  for (const char *Needle :
       {"param Lin.weight", "param Lin.bias", "module Net.fc=Lin",
        "buffer Net.running", "module Sequential.0=Act"})
    EXPECT_NE(std::find(Log.begin(), Log.end(), Needle), Log.end()) << Needle;
  // Removed: a new module is left alone.
  Log.clear();
  auto Plain = std::make_shared<Net>();
  EXPECT_TRUE(Log.empty());
  EXPECT_TRUE(Plain->fc->bias.defined());
}

TEST(ModuleHookExtras, RegistrationHooksOnReplaceAndTypeErrors) {
  std::vector<std::string> Log;
  RemovableHandle HP = register_module_parameter_registration_hook(
      [&](ModuleBase &, const std::string &Name, const Tensor &) {
        Log.push_back(Name);
      });
  auto L = std::make_shared<Lin>(2, 2);
  Log.clear();
  L->replace_parameter("weight", ones({2, 2}));
  EXPECT_EQ(Log, std::vector<std::string>{"weight"});
  HP.remove();
  // A hook returning a module of another type than the registration
  // returns: an error naming both.
  RemovableHandle HM = register_module_module_registration_hook(
      [](ModuleBase &, const std::string &, const ModulePtr &) -> ModulePtr {
        return std::make_shared<Act>();
      });
  struct Holder : Module<Holder> {};
  auto H = std::make_shared<Holder>();
  std::string Msg =
      errorText([&] { H->register_module("fc", std::make_shared<Lin>(2, 2)); });
  HM.remove();
  EXPECT_NE(Msg.find("replaced submodule 'fc' with a Act"), std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("returns a Lin"), std::string::npos) << Msg;
  // A non-leaf replacement parameter is refused.
  Tensor Leaf = ones({2}, TensorOptions().requires_grad(true));
  HP = register_module_parameter_registration_hook(
      [&](ModuleBase &, const std::string &, const Tensor &P) {
        return P * 2.0;
      });
  Msg = errorText([&] { H->register_parameter("p", Leaf); });
  HP.remove();
  EXPECT_NE(Msg.find("non-leaf"), std::string::npos) << Msg;
}
