//===- Sensitivity.cpp - Per-layer quantization error ---------------------===//
//
// Both graphs run on the same batches, each with the values to compare made
// extra outputs: in the float graph every activation that got a Q/DQ pair,
// in the quantized graph its dequantized counterpart (the report maps one
// name to the other). Sums of squares per value give the SQNR; a node's
// drop is what its own quantization added to the error of its inputs,
// which ranks the layers to keep in float.
//
//===----------------------------------------------------------------------===//

#include "nngraph/backends/Backend.h"
#include "nngraph/passes/Quantize.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nng::passes::quant {

namespace {

struct Accum {
  double Signal = 0, Noise = 0, MaxAbs = 0;
  double sqnr() const {
    if (Noise <= 0)
      return std::numeric_limits<double>::infinity();
    return 10 * std::log10(std::max(Signal, 1e-300) / Noise);
  }
  void add(const rt::Tensor &A, const rt::Tensor &B) {
    const rt::Tensor X = A.isContiguous() ? A : A.contiguous();
    const rt::Tensor Y = B.isContiguous() ? B : B.contiguous();
    NNG_CHECK(X.numel() == Y.numel(), "sensitivity: shapes differ (",
              X.shape().toString(), " vs ", Y.shape().toString(), ")");
    const float *P = X.data<float>(), *Q = Y.data<float>();
    for (int64_t I = 0, N = X.numel(); I < N; ++I) {
      double D = double(P[I]) - Q[I];
      if (!std::isfinite(D))
        continue;
      Signal += double(P[I]) * P[I];
      Noise += D * D;
      MaxAbs = std::max(MaxAbs, std::fabs(D));
    }
  }
};

} // namespace

SensitivityResult measureSensitivity(const ir::Graph &Float,
                                     const ir::Graph &Quantized,
                                     const QuantizeReport &Report,
                                     const std::vector<Batch> &Batches,
                                     const std::string &Backend) {
  NNG_CHECK(!Batches.empty(), "sensitivity: the data set is empty");
  std::unique_ptr<ir::Graph> F = Float.clone(), Q = Quantized.clone();
  size_t Outs = F->outputs().size();
  NNG_CHECK(Q->outputs().size() == Outs,
            "sensitivity: the graphs have different output counts");
  std::vector<std::string> Names;
  for (const auto &[FName, QName] : Report.Dequantized) {
    ir::Value *A = F->lookup(FName), *B = Q->lookup(QName);
    if (!A || !B || A->type().dtype() != DType::F32 ||
        B->type().dtype() != DType::F32)
      continue;
    Names.push_back(FName);
    F->addOutput(A);
    Q->addOutput(B);
  }
  auto &Be = backends::getBackend(Backend);
  auto FE = Be.compile(*F), QE = Be.compile(*Q);
  std::vector<Accum> Acc(Outs + Names.size());
  for (const Batch &B : Batches) {
    auto A = FE->run(B), C = QE->run(B);
    for (size_t I = 0; I < Acc.size(); ++I)
      if (A[I].dtype() == DType::F32 && C[I].dtype() == DType::F32)
        Acc[I].add(A[I], C[I]);
  }
  SensitivityResult R;
  R.OutputSqnrDb = std::numeric_limits<double>::infinity();
  for (size_t I = 0; I < Outs; ++I)
    R.OutputSqnrDb = std::min(R.OutputSqnrDb, Acc[I].sqnr());
  std::map<std::string, size_t> Index;
  for (size_t I = 0; I < Names.size(); ++I)
    Index[Names[I]] = Outs + I;
  for (const auto &E : Report.Nodes) {
    auto It = Index.find(E.Output);
    if (!E.Quantized || It == Index.end())
      continue;
    LayerSensitivity L{E.Node, E.Op, E.Output, Acc[It->second].sqnr(),
                       Acc[It->second].MaxAbs, 0};
    double In = std::numeric_limits<double>::infinity();
    for (const std::string &X : E.Inputs)
      if (auto J = Index.find(X); J != Index.end())
        In = std::min(In, Acc[J->second].sqnr());
    // Error-free values (inf dB) count as 100 dB, far above any int8 SQNR.
    L.DropDb = std::min(In, 100.0) - std::min(L.SqnrDb, 100.0);
    R.Layers.push_back(std::move(L));
  }
  return R;
}

} // namespace nng::passes::quant
