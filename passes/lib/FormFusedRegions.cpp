//===- FormFusedRegions.cpp - form-fused-regions: elementwise groups ------===//
//
// Groups chains of f32 elementwise nodes of one shape (operands broadcast;
// a Transpose of a value from outside may start a chain: its loads become
// permuted), with at most one row reduction (Softmax, LogSoftmax, LayerNormalization
// over the last axis) and its elementwise prologue and epilogue, into
// nng.FusedRegion nodes whose body holds the group (ir/FusedRegion.h); a
// backend runs a region as one kernel (the cpu backend: kernel IR and LLVM
// ORC JIT). Which nodes a region can hold is what the kernel translator
// takes (backends/kernel/RegionKernel.h).
//
// Walking the nodes in order, a node joins the region of one of its
// producers when both have the same result type, the region has no second
// reduction, and no node outside the region that comes before it reads a
// value of the region (the region is placed where its last node was, so
// such a reader would come before what it reads). A value of the region
// read outside it (or a graph output) becomes an output of the region.
// Regions of fewer than min-size nodes stay as they are. The nodes the cpu
// lowering takes into a quantized product's primitive (its rescale, bias
// and activation; a QDQ residual join) are left to it: the backend says
// which (backends/cpu/FusionRules.h); the float epilogues of convolutions
// and products are fused nodes before this pass runs (cpu-fuse-epilogues).
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/cpu/FusionRules.h"
#include "nngraph/backends/kernel/RegionKernel.h"
#include "nngraph/ir/FusedRegion.h"
#include "nngraph/passes/Passes.h"

#include <unordered_map>
#include <unordered_set>

namespace nng::passes {
namespace {

using ir::OpKind;

struct Region {
  std::vector<ir::Node *> Members;
  std::unordered_set<const ir::Node *> Set;
  bool HasReduction = false;
  ir::TensorType Type;
};

class FormFusedRegionsPass final : public Pass {
public:
  FormFusedRegionsPass() {
    declareOption("min-size", 2, "fewest nodes a region holds");
  }
  std::string_view name() const override { return "form-fused-regions"; }
  std::string_view summary() const override {
    return "group elementwise chains and a row reduction with its prologue "
           "and epilogue into nng.FusedRegion nodes (one kernel each)";
  }

  /// Regions' bodies too (If's branches, Loop's and Scan's bodies): a
  /// fused region inside one reads its operands as its other nodes do, and
  /// the body keeps its signature.
  bool entersRegions() const override { return true; }

  bool run(ir::Graph &G) override {
    std::unordered_map<const ir::Node *, size_t> Pos;
    for (const auto &N : G.nodes())
      Pos.emplace(N.get(), Pos.size());
    std::vector<Region> Regions;
    std::unordered_map<const ir::Node *, size_t> RegionOf;
    std::vector<ir::Node *> Order;
    for (const auto &NP : G.nodes())
      Order.push_back(NP.get());
    for (ir::Node *N : Order) {
      bool Reduction = backends::kernel::regionCanHoldRowReduction(*N);
      // A Transpose only starts a region (its loads become permuted): what
      // it transposes comes from outside.
      bool Transpose = backends::kernel::regionCanHoldTranspose(*N);
      if (!Reduction && !Transpose &&
          !backends::kernel::regionCanHoldElementwise(*N))
        continue;
      if (!N->isPure() || !N->output(0)->type().hasRank())
        continue;
      if (!Reduction && !Transpose &&
          backends::cpu::loweringTakesIntoProduct(G, *N)) {
        bumpStatistic("left-to-library");
        continue;
      }
      const ir::TensorType &T = N->output(0)->type();
      std::optional<size_t> Joined;
      for (ir::Value *V : Transpose ? std::vector<ir::Value *>{} : N->inputs()) {
        if (!V || !V->producer())
          continue;
        auto It = RegionOf.find(V->producer());
        if (It == RegionOf.end())
          continue;
        Region &R = Regions[It->second];
        if (!(R.Type == T) || (Reduction && R.HasReduction))
          continue;
        if (readBefore(G, R, *N, Pos)) {
          bumpStatistic("declined-reader-in-between");
          continue;
        }
        Joined = It->second;
        break;
      }
      if (!Joined) {
        Regions.push_back({});
        Regions.back().Type = T;
        Joined = Regions.size() - 1;
      }
      Region &R = Regions[*Joined];
      R.Members.push_back(N);
      R.Set.insert(N);
      R.HasReduction |= Reduction;
      RegionOf[N] = *Joined;
    }
    int64_t MinSize = intOption("min-size");
    bool Changed = false;
    for (Region &R : Regions) {
      if (static_cast<int64_t>(R.Members.size()) < std::max<int64_t>(MinSize, 1))
        continue;
      replaceByRegion(G, R);
      bumpStatistic("regions");
      bumpStatistic("nodes-fused", static_cast<int64_t>(R.Members.size()));
      Changed = true;
    }
    return Changed;
  }

private:
  /// True when a node outside R other than N, placed before N, reads a
  /// value of R.
  static bool readBefore(const ir::Graph &G, const Region &R,
                         const ir::Node &N,
                         const std::unordered_map<const ir::Node *, size_t> &Pos) {
    size_t At = Pos.at(&N);
    for (const ir::Node *M : R.Members)
      for (const ir::Value *V : M->outputs())
        for (const ir::Use &U : V->uses())
          if (U.User != &N && !R.Set.count(U.User) && Pos.at(U.User) < At)
            return true;
    return false;
  }

  /// True when V is an f32 scalar initializer (copied into the body).
  static bool inlineConstant(const ir::Value *V) {
    return V->isInitializer() && V->data().defined() &&
           V->data().numel() == 1 && V->data().dtype() == DType::F32;
  }

  static void replaceByRegion(ir::Graph &G, Region &R) {
    auto Body = std::make_unique<ir::Graph>();
    std::unordered_map<const ir::Value *, ir::Value *> Map;
    std::vector<ir::Value *> Inputs;
    for (ir::Node *M : R.Members)
      for (ir::Value *V : M->inputs()) {
        if (!V || Map.count(V) ||
            (V->producer() && R.Set.count(V->producer())))
          continue;
        if (inlineConstant(V)) {
          Map[V] = Body->addInitializer(V->name(), V->data());
          continue;
        }
        Map[V] = Body->addInput(V->name(), V->type());
        Inputs.push_back(V);
      }
    std::vector<ir::Value *> Outputs;
    for (ir::Node *M : R.Members) {
      std::vector<ir::Value *> Ins;
      for (ir::Value *V : M->inputs())
        Ins.push_back(V ? Map.at(V) : nullptr);
      std::vector<std::string> Names;
      for (ir::Value *V : M->outputs())
        Names.push_back(V->name());
      ir::Node *C = Body->addNode(M->op(), std::move(Ins), std::move(Names),
                                  M->attrs());
      C->setName(M->name());
      C->setScope(M->scope());
      for (size_t I = 0; I < M->numOutputs(); ++I) {
        ir::Value *V = M->output(I);
        C->output(I)->setType(V->type());
        Map[V] = C->output(I);
        bool ReadOutside = G.isOutput(V);
        for (const ir::Use &U : V->uses())
          ReadOutside |= !R.Set.count(U.User);
        if (ReadOutside) {
          Body->addOutput(C->output(I));
          Outputs.push_back(V);
        }
      }
    }
    ir::Node *Last = R.Members.back();
    ir::AttrMap A;
    A.set("body", ir::Attribute(ir::printRegionBody(*Body)));
    std::vector<std::string> Names;
    for (ir::Value *V : Outputs)
      Names.push_back(G.uniqueName(V->name() + ".region"));
    ir::Node *F = G.addNode(OpKind::FusedRegion, Inputs, Names, std::move(A),
                            Last);
    F->setName(Last->name().empty() ? "" : Last->name() + ".region");
    F->setScope(Last->scope());
    for (size_t I = 0; I < Outputs.size(); ++I) {
      F->output(I)->setType(Outputs[I]->type());
      G.replaceAllUsesWith(Outputs[I], F->output(I));
    }
    std::vector<std::string> OldNames;
    for (ir::Value *V : Outputs)
      OldNames.push_back(V->name());
    for (size_t I = R.Members.size(); I-- > 0;)
      G.eraseNode(R.Members[I]);
    for (size_t I = 0; I < Outputs.size(); ++I)
      G.rename(F->output(I), OldNames[I]);
  }
};

} // namespace

std::unique_ptr<Pass> createFormFusedRegionsPass() {
  return std::make_unique<FormFusedRegionsPass>();
}

} // namespace nng::passes
