//===- Schedule.cpp - A compiled cpu schedule as text ---------------------===//
//
// printSchedule() writes what a Program runs, step by step, for
// nngraph-run --print-schedule and the lit tests of the lowering: the
// compile's stages (their times and decisions), then each step's kind (a
// oneDNN primitive and the implementation oneDNN chose, the backend's own
// loop, a node kernel), its description, and its operands with dtype,
// shape (a dim the graph leaves open as its symbol and this schedule's
// extent: N=1), where their bytes live (an input, a constant, a range of
// the arena, graph output K written in place: output[K]) and their layout
// in oneDNN's tag notation (aBcd16b: dim b blocked by 16) when it is not
// the plain row-major one.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace nng::backends::cpu {

namespace {

/// MD's layout as oneDNN names it (dims ordered by stride, outer blocks in
/// capitals, inner blocks appended); "plain" for the row-major layout.
std::string layoutTag(const dnnl::memory::desc &MD) {
  const dnnl_memory_desc_t &D = MD.data;
  if (D.format_kind != dnnl_blocked || D.ndims <= 0)
    return "plain";
  const dnnl_blocking_desc_t &B = D.format_desc.blocking;
  std::vector<int> Order(D.ndims);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](int X, int Y) {
    return B.strides[X] > B.strides[Y];
  });
  bool Plain = B.inner_nblks == 0;
  for (int I = 0; I < D.ndims && Plain; ++I)
    Plain = Order[I] == I || D.dims[Order[I]] == 1;
  if (Plain)
    return "plain";
  std::vector<bool> Blocked(D.ndims, false);
  for (int I = 0; I < B.inner_nblks; ++I)
    Blocked[B.inner_idxs[I]] = true;
  std::string Tag;
  for (int Dim : Order)
    Tag += static_cast<char>((Blocked[Dim] ? 'A' : 'a') + Dim);
  for (int I = 0; I < B.inner_nblks; ++I)
    Tag += std::to_string(B.inner_blks[I]) +
           static_cast<char>('a' + B.inner_idxs[I]);
  return Tag;
}

std::string describeSlot(const Program &P, int S) {
  const ValueSlot &V = P.Slots[S];
  std::ostringstream Out;
  Out << '%' << (V.Name.empty() ? "scratch" : V.Name) << ' '
      << dtypeName(V.Type) << '[';
  // A dim the graph's type leaves open prints as its symbol (or ?) and
  // this schedule's extent: "N=1", "?=6".
  const ir::TensorType *Graph = nullptr;
  if (V.Of && V.Of->type().hasRank() &&
      V.Of->type().rank() == static_cast<int64_t>(V.S.rank()))
    Graph = &V.Of->type();
  for (size_t I = 0; I < V.S.rank(); ++I) {
    Out << (I ? "," : "");
    if (Graph && !Graph->dim(I).isStatic())
      Out << Graph->dim(I).toString() << '=';
    Out << V.S[I];
  }
  Out << ']';
  switch (V.Kind) {
  case SlotKind::Input:
    Out << " input";
    break;
  case SlotKind::Constant:
    Out << " const";
    break;
  case SlotKind::Buffer: {
    const BufferSlot &B = P.Buffers[V.Buffer];
    if (B.External >= 0)
      Out << " output[" << P.Externals[B.External].Output << "]";
    else
      Out << " arena[" << B.Offset << "+" << B.Bytes << "]";
    break;
  }
  }
  if (V.MD && V.Blocked)
    Out << ' ' << layoutTag(V.MD);
  return Out.str();
}

} // namespace

std::string PrimitiveStep::kind() const {
  if (Own)
    return "loop (packed product)";
  const_dnnl_primitive_desc_t PD = nullptr;
  if (!Prim || dnnl_primitive_get_primitive_desc(Prim.get(), &PD) !=
                   dnnl_success)
    return "oneDNN";
  dnnl_primitive_kind_t K = dnnl_undefined_primitive;
  const char *Impl = nullptr;
  dnnl_primitive_desc_query(PD, dnnl_query_primitive_kind, 0, &K);
  dnnl_primitive_desc_query(PD, dnnl_query_impl_info_str, 0, &Impl);
  std::string Out = std::string("oneDNN ") + dnnl_prim_kind2str(K);
  if (Impl)
    Out += std::string(" ") + Impl;
  return Out;
}

std::string printSchedule(const Program &P) {
  std::ostringstream Out;
  const ProgramStats &S = P.Stats;
  Out << "schedule: " << P.Steps.size() << " steps (" << S.DnnlSteps
      << " oneDNN, " << S.OwnKernels << " own loops, " << S.Fallbacks.size()
      << " node kernels), " << S.Reorders << " reorders, arena "
      << S.ArenaBytes << " bytes\n";
  if (!S.Stages.empty()) {
    Out << "stages:";
    const char *Sep = " ";
    for (const ProgramStats::Stage &St : S.Stages) {
      char Ms[32];
      std::snprintf(Ms, sizeof(Ms), "%.2f ms", St.Ms);
      Out << Sep << St.Name << " (" << Ms
          << (St.Decided.empty() ? "" : ": " + St.Decided) << ")";
      Sep = ", ";
    }
    Out << "\n";
  }
  for (int I : P.InputSlots)
    Out << "  input " << describeSlot(P, I) << "\n";
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    const Step &St = *P.Steps[I];
    Out << "  #" << I << " " << St.kind() << ": " << St.Desc;
    const char *Sep = " | reads ";
    for (int R : St.Reads) {
      Out << Sep << describeSlot(P, R);
      Sep = ", ";
    }
    Sep = " | writes ";
    for (int W : St.Writes) {
      Out << Sep << describeSlot(P, W);
      Sep = ", ";
    }
    Out << "\n";
  }
  for (int O : P.OutputSlots)
    Out << "  output " << describeSlot(P, O) << "\n";
  return Out.str();
}

} // namespace nng::backends::cpu
