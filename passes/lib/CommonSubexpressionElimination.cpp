//===- CommonSubexpressionElimination.cpp - cse: merge equal nodes --------===//
//
// Two nodes with the same op, the same inputs (the same values, in order;
// for a commutative op of the op table, its first two in either order) and
// equal attributes compute the same results, so the later one is
// replaced by the earlier one. Constant nodes are compared by the tensor they
// produce, so `value_floats = [1.0]` and `value = tensor<f32[1]> [1.0]`
// merge too. One walk in topological order suffices: merging a node updates
// its users' inputs before they are visited.
//
// Declines (counted as "declined: REASON", explained under --debug-only=cse):
// nodes that are not pure (ir::Node::isPure, from the op table's traits:
// random ops such as Dropout whose training_mode is not constant false, and
// impure ones such as nng.ModuleCall, whose callbacks may do anything), and
// pairs whose merge would make two graph outputs one value.
//
//===----------------------------------------------------------------------===//

#include "nngraph/rewrite/RewriteUtils.h"
#include "nngraph/ir/Printer.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/rewrite/Debug.h"
#include "nngraph/passes/Passes.h"

#include <cstring>
#include <functional>
#include <unordered_map>

namespace nng::passes {
namespace {

using namespace detail;

class CSEPass final : public Pass {
public:
  std::string_view name() const override { return "cse"; }
  bool entersRegions() const override { return true; }
  std::string_view summary() const override {
    return "merge nodes with the same op, inputs and attributes";
  }

  bool run(ir::Graph &G) override {
    std::unordered_map<size_t, std::vector<ir::Node *>> Buckets;
    std::vector<ir::Node *> Merged;
    std::vector<ir::Node *> Order;
    for (const auto &N : G.nodes())
      Order.push_back(N.get());
    for (ir::Node *N : Order) {
      // Two random draws, or two calls of a leaf module (whose callback
      // may be impure), need not agree: never merge them.
      if (!N->isPure()) {
        decline(*N, N->schema().has(ir::OpTrait::Impure)
                        ? "impure op (" + N->schema().qualifiedName() + ")"
                        : std::string("random op"));
        continue;
      }
      std::vector<ir::Node *> &Bucket = Buckets[hashNode(*N)];
      ir::Node *Twin = nullptr;
      for (ir::Node *C : Bucket)
        if (equivalent(*C, *N)) {
          Twin = C;
          break;
        }
      if (!Twin) {
        Bucket.push_back(N);
        continue;
      }
      if (!merge(G, *Twin, *N))
        continue;
      Merged.push_back(N);
      bumpStatistic(N->op() == ir::OpKind::Constant ? "constants-merged"
                                                    : "nodes-merged");
    }
    for (ir::Node *N : Merged)
      G.eraseNode(N);
    return !Merged.empty();
  }

private:
  void decline(const ir::Node &N, std::string_view Reason) {
    bumpStatistic("declined: " + std::string(Reason));
    if (debugEnabled(name()))
      debugStream() << "[cse] declined at " << N.describe() << ": " << Reason
                    << "\n";
  }

  /// N's inputs, the first two in address order when the op is
  /// commutative (so a + b and b + a merge).
  static std::vector<const ir::Value *> inputsInOrder(const ir::Node &N) {
    std::vector<const ir::Value *> In(N.inputs().begin(), N.inputs().end());
    if (In.size() >= 2 && N.schema().has(ir::OpTrait::Commutative) &&
        std::less<const ir::Value *>()(In[1], In[0]))
      std::swap(In[0], In[1]);
    return In;
  }

  static size_t hashNode(const ir::Node &N) {
    size_t H = std::hash<int>()(static_cast<int>(N.op()));
    auto Mix = [&](size_t V) {
      H ^= V + 0x9e3779b97f4a7c15ULL + (H << 6) + (H >> 2);
    };
    Mix(N.numOutputs());
    std::vector<const ir::Value *> In = inputsInOrder(N);
    for (const ir::Value *V : In)
      Mix(std::hash<const void *>()(V));
    if (N.op() == ir::OpKind::Constant)
      if (Tensor T = constantNodeTensor(N); T.defined())
        Mix(std::hash<std::string>()(ir::tensorHash(T)));
    return H;
  }

  static bool equivalent(const ir::Node &A, const ir::Node &B) {
    if (A.op() != B.op() || inputsInOrder(A) != inputsInOrder(B) ||
        A.numOutputs() != B.numOutputs())
      return false;
    if (A.op() != ir::OpKind::Constant)
      return A.attrs() == B.attrs();
    Tensor TA = constantNodeTensor(A), TB = constantNodeTensor(B);
    if (!TA.defined() || !TB.defined()) // String constants.
      return !TA.defined() && !TB.defined() && A.attrs() == B.attrs();
    return sameBytes(TA, TB);
  }

  /// Same dtype, shape and bytes (so -0.0 and 0.0 differ, NaN payloads too).
  static bool sameBytes(const Tensor &A, const Tensor &B) {
    if (A.dtype() != B.dtype() || A.shape() != B.shape())
      return false;
    Tensor CA = A.contiguous(), CB = B.contiguous();
    return std::memcmp(CA.rawData(), CB.rawData(), CA.nbytes()) == 0;
  }

  /// Points Dup's results at Keep's; false (declined) when that would merge
  /// two graph outputs.
  bool merge(ir::Graph &G, ir::Node &Keep, ir::Node &Dup) {
    for (size_t I = 0; I < Dup.numOutputs(); ++I)
      if (const char *Why = replaceBlocker(G, Dup.output(I), Keep.output(I))) {
        decline(Dup, Why);
        return false;
      }
    for (size_t I = 0; I < Dup.numOutputs(); ++I) {
      ir::Value *From = Dup.output(I), *To = Keep.output(I);
      bool WasOutput = G.isOutput(From);
      G.replaceAllUsesWith(From, To);
      if (WasOutput) {
        // The graph's interface keeps its name.
        std::string Name = From->name();
        G.rename(From, G.uniqueName(Name + ".merged"));
        G.rename(To, Name);
      }
    }
    if (debugEnabled(name()))
      debugStream() << "[cse] merged " << Dup.describe() << " into "
                    << Keep.describe() << "\n";
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

} // namespace nng::passes
