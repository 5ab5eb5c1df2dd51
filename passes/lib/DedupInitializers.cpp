//===- DedupInitializers.cpp - dedup-initializers: share equal weights ----===//
//
// Initializers with the same dtype, shape and bytes are one tensor: every use
// of a later copy is pointed at the first (which keeps its name) and the copy
// is erased. Bytes, not values, are compared, so 0.0 and -0.0 (or NaNs with
// different payloads) stay apart. Candidates are bucketed by the content
// hash of the text format, then compared byte for byte.
//
// Statistics: "initializers-merged", "bytes-saved"; declines (also printed
// under --debug-only=dedup-initializers): "declined: data is elided" (an
// initializer printed by reference has no bytes to compare) and "declined:
// duplicate is a graph output" (merging would rename the output).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Printer.h"
#include "nngraph/passes/Debug.h"
#include "nngraph/passes/Passes.h"

#include <cstring>
#include <unordered_map>

namespace nng::passes {
namespace {

class DedupInitializersPass final : public Pass {
public:
  std::string_view name() const override { return "dedup-initializers"; }
  std::string_view summary() const override {
    return "share initializers with identical dtype, shape and bytes";
  }

  bool run(ir::Graph &G) override {
    std::unordered_map<std::string, std::vector<ir::Value *>> ByHash;
    std::vector<ir::Value *> Dups;
    int64_t BytesSaved = 0;
    // Copy the list: it is not modified until the end, but stay safe.
    std::vector<ir::Value *> Inits = G.initializers();
    for (ir::Value *V : Inits) {
      if (!V->data().defined()) {
        decline(*V, "data is elided");
        continue;
      }
      std::vector<ir::Value *> &Bucket = ByHash[ir::tensorHash(V->data())];
      ir::Value *First = nullptr;
      for (ir::Value *C : Bucket)
        if (sameBytes(C->data(), V->data())) {
          First = C;
          break;
        }
      if (!First) {
        Bucket.push_back(V);
        continue;
      }
      if (G.isOutput(V)) {
        decline(*V, "duplicate is a graph output");
        continue;
      }
      if (debugEnabled(name()))
        debugStream() << "[dedup-initializers] %" << V->name()
                      << " is a copy of %" << First->name() << "\n";
      G.replaceAllUsesWith(V, First);
      Dups.push_back(V);
      BytesSaved += static_cast<int64_t>(V->data().nbytes());
    }
    for (ir::Value *V : Dups)
      G.eraseValue(V);
    bumpStatistic("initializers-merged", static_cast<int64_t>(Dups.size()));
    bumpStatistic("bytes-saved", BytesSaved);
    return !Dups.empty();
  }

private:
  void decline(const ir::Value &V, std::string_view Reason) {
    bumpStatistic("declined: " + std::string(Reason));
    if (debugEnabled(name()))
      debugStream() << "[dedup-initializers] declined at %" << V.name() << ": "
                    << Reason << "\n";
  }

  static bool sameBytes(const Tensor &A, const Tensor &B) {
    if (A.dtype() != B.dtype() || A.shape() != B.shape())
      return false;
    Tensor CA = A.contiguous(), CB = B.contiguous();
    return std::memcmp(CA.rawData(), CB.rawData(), CA.nbytes()) == 0;
  }
};

} // namespace

std::unique_ptr<Pass> createDedupInitializersPass() {
  return std::make_unique<DedupInitializersPass>();
}

} // namespace nng::passes
