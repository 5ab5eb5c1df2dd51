//===- TypedRegions.h - Regions typed in place for one inference -*- C++
//-*-===//
//
// Internal to ir/lib. inferTypes types a node's regions in place for its
// input types (inferRegionTypes) and then runs the node's inference; an
// If's inference would type copies of its branches again, and inside each
// copy every nested If would do the same: twice the work per level, 2^30
// for the 30 levels protobuf lets a model nest (an untrusted file's
// denial of service). While a TypedRegionsScope is alive, the If's
// inference reads the types of the branches typed in place instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Graph.h"

#include <algorithm>
#include <vector>

namespace nng::ir {

/// Marks N's regions as typed for N's current input types while alive (a
/// null N marks none); scopes nest (a region's own inference inside).
class TypedRegionsScope {
public:
  explicit TypedRegionsScope(const Node *N) : Saved(std::move(current())) {
    current().clear();
    if (N)
      for (const Graph *R : N->regions())
        current().push_back(R);
  }
  ~TypedRegionsScope() { current() = std::move(Saved); }
  TypedRegionsScope(const TypedRegionsScope &) = delete;
  TypedRegionsScope &operator=(const TypedRegionsScope &) = delete;

  /// True when R was typed in place for the node being inferred.
  static bool typed(const Graph &R) {
    const std::vector<const Graph *> &C = current();
    return std::find(C.begin(), C.end(), &R) != C.end();
  }

private:
  static std::vector<const Graph *> &current() {
    thread_local std::vector<const Graph *> Typed;
    return Typed;
  }
  std::vector<const Graph *> Saved;
};

/// Marks the inference of a typed copy of a region (instantiateRegion)
/// while alive. Only the copy's outputs are read, so the regions of its
/// nodes need not be typed in place (their nodes' inference types copies
/// of them); and every copy counts against a bound, so a model that nests
/// loops whose carried types change at every level cannot make inference
/// run for hours: it fails, saying so.
class RegionCopyScope {
public:
  /// Copies typed within one outermost inference, at most.
  static constexpr int64_t MaxCopies = 100000;
  RegionCopyScope() {
    if (depth()++ == 0)
      count() = 0;
  }
  ~RegionCopyScope() { --depth(); }
  RegionCopyScope(const RegionCopyScope &) = delete;
  RegionCopyScope &operator=(const RegionCopyScope &) = delete;
  /// True while a copy is being typed.
  static bool inCopy() { return depth() > 0; }
  /// Counts one more copy; false past MaxCopies.
  static bool another() { return ++count() <= MaxCopies; }

private:
  static int &depth() {
    thread_local int D = 0;
    return D;
  }
  static int64_t &count() {
    thread_local int64_t N = 0;
    return N;
  }
};

} // namespace nng::ir
