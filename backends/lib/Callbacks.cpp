//===- Callbacks.cpp - The registry of nng.ModuleCall callbacks ----------===//
//
// A process-wide, mutex-guarded map from callback id to function. Ids start
// at a random offset (so an id written by another process almost never
// names a live callback here) and count up without reuse, which tells an
// expired id (its owner was destroyed) from a foreign one (the graph was
// saved and reloaded). runModuleCall turns every failure into an Error that
// names the node and the leaf module.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Callbacks.h"
#include "nngraph/runtime/Error.h"

#include <mutex>
#include <random>
#include <unordered_map>

namespace nng::backends {

namespace {

struct Registry {
  std::mutex M;
  std::unordered_map<int64_t, ModuleCallback> Fns;
  int64_t First; ///< The first id handed out.
  int64_t Next;  ///< The next id to hand out.
  Registry() {
    std::random_device RD;
    uint64_t R = (static_cast<uint64_t>(RD()) << 20) ^ RD();
    // [2^40, 2^52): far from small hand-written ids, and exact in a double.
    First = static_cast<int64_t>((uint64_t(1) << 40) +
                                 (R % ((uint64_t(1) << 52) - (uint64_t(1) << 41))));
    Next = First;
  }
};

Registry &registry() {
  static Registry *R = new Registry; // Never destroyed: handles may outlive
                                     // static destruction order.
  return *R;
}

std::string moduleDesc(const ir::Node &N) {
  const ir::Attribute *M = N.attrs().find("module");
  const ir::Attribute *T = N.attrs().find("module_type");
  std::string S = "leaf module '";
  S += M && M->type() == ir::AttrType::String ? M->s() : std::string("?");
  S += "'";
  if (T && T->type() == ir::AttrType::String && !T->s().empty())
    S += " (" + T->s() + ")";
  return S;
}

/// Checks output I of the callback against the node's declared type.
void checkOutput(const ir::Node &N, size_t I, const rt::Tensor &T) {
  const ir::TensorType &D = N.output(I)->type();
  auto Bad = [&](const std::string &What) {
    Error E(ErrorKind::ShapeMismatch,
            moduleDesc(N) + " returned " +
                (T.defined() ? std::string(dtypeName(T.dtype())) +
                                   T.shape().toString()
                             : std::string("an undefined tensor")) +
                " for output " + std::to_string(I) + " but the graph declares " +
                D.toString() + " (" + What +
                "): a leaf module must return the dtypes and shapes it "
                "returned when it was traced; retrace with inputs like these");
    E.addContext("in " + N.describe());
    throw E;
  };
  if (!T.defined())
    Bad("no tensor");
  // An unset declared type (f32 of unknown rank) makes no claim.
  bool Unset = !D.hasRank() && D.dtype() == DType::F32;
  if (Unset)
    return;
  if (T.dtype() != D.dtype())
    Bad("dtype differs");
  if (!D.hasRank())
    return;
  if (static_cast<int64_t>(T.rank()) != D.rank())
    Bad("rank differs");
  for (int64_t K = 0; K < D.rank(); ++K)
    if (D.dim(K).isStatic() && D.dim(K).value() != T.shape()[K])
      Bad("dim " + std::to_string(K) + " differs");
}

} // namespace

CallbackHandle::~CallbackHandle() {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  R.Fns.erase(Id);
}

std::shared_ptr<CallbackHandle> registerCallback(ModuleCallback F) {
  NNG_CHECK(static_cast<bool>(F),
            "registerCallback: the callback is empty; pass a function that "
            "runs the leaf module");
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  int64_t Id = R.Next++;
  R.Fns.emplace(Id, std::move(F));
  return std::shared_ptr<CallbackHandle>(new CallbackHandle(Id));
}

ModuleCallback lookupCallback(int64_t Id) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  auto It = R.Fns.find(Id);
  return It == R.Fns.end() ? ModuleCallback() : It->second;
}

bool isCallbackIdFromThisProcess(int64_t Id) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  return Id >= R.First && Id < R.Next;
}

size_t numRegisteredCallbacks() {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  return R.Fns.size();
}

std::vector<rt::Tensor> runModuleCall(const ir::Node &N,
                                      const std::vector<rt::Tensor> &Inputs) {
  if (N.op() != ir::OpKind::ModuleCall)
    fail(ErrorKind::Internal, "runModuleCall on ", N.describe(),
         ", which is not an nng.ModuleCall");
  const ir::Attribute *A = N.attrs().find("callback");
  auto Throw = [&](ErrorKind K, const std::string &Msg) {
    Error E(K, Msg);
    E.addContext("in " + N.describe());
    throw E;
  };
  if (!A || A->type() != ir::AttrType::Int)
    Throw(ErrorKind::InvalidArgument,
          "nng.ModuleCall of " + moduleDesc(N) +
              " has no int attribute 'callback'");
  int64_t Id = A->i();
  ModuleCallback F = lookupCallback(Id);
  if (!F) {
    if (isCallbackIdFromThisProcess(Id))
      Throw(ErrorKind::InvalidArgument,
            "the callback " + std::to_string(Id) + " of " + moduleDesc(N) +
                " is no longer registered: the GraphModule that owned this "
                "leaf module was destroyed; keep it alive while its graph "
                "runs");
    Throw(ErrorKind::Unsupported,
          "no callback " + std::to_string(Id) + " for " + moduleDesc(N) +
              " in this process: graphs with nng.ModuleCall cannot run "
              "after being saved and reloaded: trace without leaf modules");
  }
  std::vector<rt::Tensor> Outs;
  try {
    Outs = F(Inputs);
  } catch (Error &E) {
    E.addContext("in " + moduleDesc(N) + " called by " + N.describe());
    throw;
  } catch (const std::exception &E) {
    Throw(ErrorKind::InvalidArgument,
          moduleDesc(N) + " threw: " + std::string(E.what()));
  }
  if (Outs.size() != N.numOutputs())
    Throw(ErrorKind::ShapeMismatch,
          moduleDesc(N) + " returned " + std::to_string(Outs.size()) +
              " tensors but the graph declares " +
              std::to_string(N.numOutputs()) +
              " outputs: a leaf module must return what it returned when "
              "it was traced");
  for (size_t I = 0; I < Outs.size(); ++I)
    checkOutput(N, I, Outs[I]);
  return Outs;
}

} // namespace nng::backends
