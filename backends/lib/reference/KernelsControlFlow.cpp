//===- KernelsControlFlow.cpp - If, Loop and Scan ------------------------===//
//
// RegionRunner (ControlFlow.h) and the reference kernels of If, Loop and
// Scan, which run the regions on the reference backend. Loop follows ONNX's
// pseudocode: keep going while iter_num < M (when M is given) and the
// condition holds (when cond is given: the cond input, then each
// iteration's cond_out; without it the body's cond_out is ignored); zero
// iterations give the initial values and empty scan outputs. Scan slices
// its scan inputs along their axes (from the end for direction 1), passes
// the states on, and stacks each scan output along its axis (reversed for
// direction 1).
//
//===----------------------------------------------------------------------===//

#include "ControlFlow.h"
#include "nngraph/backends/reference/ReferenceBackend.h"
#include "nngraph/ir/Regions.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace nng::backends::reference {

RegionRunner::RegionRunner(const ir::Node &N, RegionCompiler Compile)
    : N(N), Compile(std::move(Compile)) {}

Executable &RegionRunner::region(const std::string &Name) {
  std::lock_guard<std::mutex> Lock(Mu);
  for (auto &[K, E] : Compiled)
    if (K == Name)
      return *E;
  const ir::Attribute *A = N.attrs().findByName(Name);
  if (!A || A->type() != ir::AttrType::Graph || !A->graphPtr())
    fail(ErrorKind::Verify, N.describe(), ": region '", Name, "' is missing");
  std::unique_ptr<ir::Graph> G = ir::liftRegion(A->g());
  Compiled.emplace_back(Name, Compile(*G));
  return *Compiled.back().second;
}

std::vector<Tensor> RegionRunner::captured(const KernelContext &C,
                                           const std::string &Name) {
  std::vector<Tensor> T;
  for (const ir::Value *V : N.attrs().findByName(Name)->g().captures())
    T.push_back(C.Inputs.at(V->captureIndex()));
  return T;
}

void RegionRunner::run(KernelContext &C) {
  if (N.op() == ir::OpKind::If)
    return runIf(C);
  if (N.op() == ir::OpKind::Loop)
    return runLoop(C);
  if (N.op() == ir::OpKind::Scan)
    return runScan(C);
  C.fail("has no regions to run");
}

namespace {

bool truth(const KernelContext &C, const Tensor &T, const char *What) {
  if (T.numel() != 1)
    C.fail(What, " must hold one element, got shape ", T.shape().toString());
  return T.getFlat(0) != 0;
}

/// The steps' values of one scan output stacked along a new axis 0.
Tensor stack(const KernelContext &C, const std::vector<Tensor> &Steps,
             const ir::TensorType &Inferred, size_t Output) {
  if (Steps.empty()) {
    // No iteration: [0, dims the type knows (else 0)].
    std::vector<int64_t> Dims{0};
    if (Inferred.hasRank())
      for (int64_t I = 1; I < Inferred.rank(); ++I)
        Dims.push_back(Inferred.dim(I).isStatic() ? Inferred.dim(I).value()
                                                  : 0);
    return Tensor::empty(Shape(Dims), Inferred.dtype());
  }
  const Shape &S = Steps[0].shape();
  std::vector<int64_t> Dims{static_cast<int64_t>(Steps.size())};
  for (int64_t D : S)
    Dims.push_back(D);
  Tensor Out = Tensor::empty(Shape(Dims), Steps[0].dtype());
  char *P = static_cast<char *>(Out.rawData());
  for (size_t I = 0; I < Steps.size(); ++I) {
    if (Steps[I].shape() != S || Steps[I].dtype() != Steps[0].dtype())
      C.fail("scan output ", Output, " is ", dtypeName(Steps[0].dtype()),
             S.toString(), " at iteration 0 but ",
             dtypeName(Steps[I].dtype()), Steps[I].shape().toString(),
             " at iteration ", I, "; every iteration must give one shape");
    Tensor T = Steps[I].contiguous();
    if (T.nbytes())
      std::memcpy(P, T.rawData(), T.nbytes());
    P += T.nbytes();
  }
  return Out;
}

} // namespace

void RegionRunner::runIf(KernelContext &C) {
  std::string Name =
      truth(C, C.in(0), "the condition") ? "then_branch" : "else_branch";
  std::vector<Tensor> Outs = region(Name).run(captured(C, Name));
  if (Outs.size() != N.numOutputs())
    C.fail("branch '", Name, "' gave ", Outs.size(), " outputs, not ",
           N.numOutputs());
  C.Outputs = std::move(Outs);
}

void RegionRunner::runLoop(KernelContext &C) {
  const ir::Graph &Body = N.attrs().find("body")->g();
  size_t NumCarried = Body.inputs().size() - 2;
  size_t NumScan = N.numOutputs() - NumCarried;
  int64_t M = std::numeric_limits<int64_t>::max();
  if (C.hasInput(0)) {
    if (C.in(0).numel() != 1)
      C.fail("the trip count must hold one element, got shape ",
             C.in(0).shape().toString());
    M = C.in(0).getFlatInt(0);
  }
  bool Keep = C.hasInput(1) ? truth(C, C.in(1), "the condition") : true;
  std::vector<Tensor> Carried;
  for (size_t J = 0; J < NumCarried; ++J)
    Carried.push_back(C.in(2 + J));
  std::vector<Tensor> Captured = captured(C, "body");
  std::vector<std::vector<Tensor>> Scans(NumScan);
  Executable &E = region("body");
  std::vector<Tensor> Ins;
  for (int64_t I = 0; I < M && Keep; ++I) {
    Ins.clear();
    Ins.push_back(Tensor::scalar<int64_t>(I));
    Ins.push_back(Tensor::scalar<bool>(Keep));
    Ins.insert(Ins.end(), Carried.begin(), Carried.end());
    Ins.insert(Ins.end(), Captured.begin(), Captured.end());
    std::vector<Tensor> Outs = E.run(Ins);
    // Without a cond input the body's condition is ignored (ONNX's "for"
    // and infinite forms).
    if (C.hasInput(1))
      Keep = truth(C, Outs[0], "the body's condition");
    for (size_t J = 0; J < NumCarried; ++J)
      Carried[J] = std::move(Outs[1 + J]);
    for (size_t K = 0; K < NumScan; ++K)
      Scans[K].push_back(std::move(Outs[1 + NumCarried + K]));
  }
  C.Outputs.assign(N.numOutputs(), Tensor());
  for (size_t J = 0; J < NumCarried; ++J)
    C.Outputs[J] = Carried[J];
  for (size_t K = 0; K < NumScan; ++K)
    C.Outputs[NumCarried + K] =
        stack(C, Scans[K], C.OutTypes.at(NumCarried + K), K);
}

void RegionRunner::runScan(KernelContext &C) {
  const ir::Graph &Body = N.attrs().find("body")->g();
  size_t M = static_cast<size_t>(N.attrInt("num_scan_inputs"));
  size_t NumStates = Body.inputs().size() - M;
  size_t NumScan = N.numOutputs() - NumStates;
  auto Ints = [&](ir::IntsAttrName Name, size_t Count) {
    std::vector<int64_t> V = N.attrInts(Name);
    if (V.empty())
      V.assign(Count, 0);
    return V;
  };
  std::vector<int64_t> InAxes = Ints("scan_input_axes", M);
  std::vector<int64_t> InDirs = Ints("scan_input_directions", M);
  std::vector<int64_t> OutAxes = Ints("scan_output_axes", NumScan);
  std::vector<int64_t> OutDirs = Ints("scan_output_directions", NumScan);
  int64_t Length = -1;
  for (size_t I = 0; I < M; ++I) {
    const Tensor &T = C.in(NumStates + I);
    int64_t R = static_cast<int64_t>(T.rank());
    if (InAxes[I] < 0)
      InAxes[I] += R;
    if (InAxes[I] < 0 || InAxes[I] >= R)
      C.fail("scan_input_axes[", I, "] is out of range for rank ", R);
    int64_t L = T.size(InAxes[I]);
    if (Length >= 0 && L != Length)
      C.fail("scan input ", I, " has ", L, " steps but another has ", Length);
    Length = L;
  }
  std::vector<Tensor> States;
  for (size_t J = 0; J < NumStates; ++J)
    States.push_back(C.in(J));
  std::vector<Tensor> Captured = captured(C, "body");
  std::vector<std::vector<Tensor>> Scans(NumScan);
  Executable &E = region("body");
  std::vector<Tensor> Ins;
  for (int64_t Step = 0; Step < Length; ++Step) {
    Ins = States;
    for (size_t I = 0; I < M; ++I) {
      const Tensor &T = C.in(NumStates + I);
      int64_t At = InDirs[I] ? Length - 1 - Step : Step;
      std::vector<int64_t> Dims(T.shape().begin(), T.shape().end());
      Dims.erase(Dims.begin() + InAxes[I]);
      Ins.push_back(
          T.slice(InAxes[I], At, At + 1).contiguous().reshape(Shape(Dims)));
    }
    Ins.insert(Ins.end(), Captured.begin(), Captured.end());
    std::vector<Tensor> Outs = E.run(Ins);
    for (size_t J = 0; J < NumStates; ++J)
      States[J] = std::move(Outs[J]);
    for (size_t K = 0; K < NumScan; ++K)
      Scans[K].push_back(std::move(Outs[NumStates + K]));
  }
  C.Outputs.assign(N.numOutputs(), Tensor());
  for (size_t J = 0; J < NumStates; ++J)
    C.Outputs[J] = States[J];
  for (size_t K = 0; K < NumScan; ++K) {
    if (OutDirs[K])
      std::reverse(Scans[K].begin(), Scans[K].end());
    // Stacked along axis 0 (the inferred type with its scan axis first),
    // then moved to the output axis.
    const ir::TensorType &T = C.OutTypes.at(NumStates + K);
    int64_t R = T.hasRank() ? T.rank()
                : Scans[K].empty()
                    ? 1
                    : static_cast<int64_t>(Scans[K][0].rank()) + 1;
    int64_t Axis = OutAxes[K] < 0 ? OutAxes[K] + R : OutAxes[K];
    ir::TensorType First = T;
    if (T.hasRank() && Axis != 0) {
      std::vector<ir::Dim> D = T.dims();
      std::rotate(D.begin(), D.begin() + Axis, D.begin() + Axis + 1);
      First = ir::TensorType(T.dtype(), std::move(D));
    }
    Tensor S = stack(C, Scans[K], First, K);
    if (Axis != 0) {
      std::vector<int64_t> Perm;
      for (int64_t A = 1; A <= Axis; ++A)
        Perm.push_back(A);
      Perm.push_back(0);
      for (int64_t A = Axis + 1; A < R; ++A)
        Perm.push_back(A);
      S = S.permute(Perm).contiguous();
    }
    C.Outputs[NumStates + K] = S;
  }
}

namespace {

std::unique_ptr<Executable> compileOnReference(const ir::Graph &G) {
  return referenceBackend().compile(G);
}

} // namespace

void kernelIf(KernelContext &C) {
  RegionRunner(C.N, compileOnReference).run(C);
}

void kernelLoop(KernelContext &C) {
  RegionRunner(C.N, compileOnReference).run(C);
}

void kernelScan(KernelContext &C) {
  RegionRunner(C.N, compileOnReference).run(C);
}

} // namespace nng::backends::reference
