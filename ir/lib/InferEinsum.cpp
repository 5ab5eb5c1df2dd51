//===- InferEinsum.cpp - Einsum equations and their inference -------------===//
//
// Parses Einsum equations (see nngraph/ir/EinsumEquation.h): terms of
// letters with at most one ellipsis each, an optional "->" output, spaces
// ignored; and infers Einsum's output type from the labels' extents (a
// letter's extents must agree across its axes, ellipsis axes broadcast).
//
//===----------------------------------------------------------------------===//

#include "InferUtils.h"
#include "nngraph/ir/EinsumEquation.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace nng::ir {

using namespace infer;

namespace {

/// One term of the equation: its letters, and where the ellipsis sits
/// (Ellipsis = -1 when there is none).
struct Term {
  std::string Letters;
  int Ellipsis = -1;
};

/// Parses a term ("ij", "...ij", "i...j"); false with Error set on a bad
/// character or a second ellipsis.
bool parseTerm(std::string_view S, Term &T, std::string &Error) {
  for (size_t I = 0; I < S.size();) {
    char Ch = S[I];
    if (std::isalpha(static_cast<unsigned char>(Ch))) {
      T.Letters += Ch;
      ++I;
    } else if (S.substr(I, 3) == "...") {
      if (T.Ellipsis >= 0) {
        Error = "term '" + std::string(S) + "' has more than one ellipsis";
        return false;
      }
      T.Ellipsis = static_cast<int>(T.Letters.size());
      I += 3;
    } else {
      Error = "term '" + std::string(S) + "' has an invalid character '" +
              std::string(1, Ch) +
              "' (labels are letters; '...' is the "
              "ellipsis)";
      return false;
    }
  }
  return true;
}

/// Splits S at each Sep.
std::vector<std::string_view> splitAt(std::string_view S, char Sep) {
  std::vector<std::string_view> Out;
  size_t Start = 0;
  for (size_t I = 0; I <= S.size(); ++I)
    if (I == S.size() || S[I] == Sep) {
      Out.push_back(S.substr(Start, I - Start));
      Start = I + 1;
    }
  return Out;
}

} // namespace

bool planEinsum(std::string_view Equation, const std::vector<int64_t> &Ranks,
                EinsumPlan &Plan, std::string &Error) {
  std::string Eq;
  for (char Ch : Equation)
    if (!std::isspace(static_cast<unsigned char>(Ch)))
      Eq += Ch;
  std::string_view Lhs = Eq, Rhs;
  size_t Arrow = Eq.find("->");
  bool Explicit = Arrow != std::string::npos;
  if (Explicit) {
    Lhs = std::string_view(Eq).substr(0, Arrow);
    Rhs = std::string_view(Eq).substr(Arrow + 2);
    if (Rhs.find("->") != std::string_view::npos) {
      Error = "equation '" + std::string(Equation) + "' has more than one '->'";
      return false;
    }
  }
  std::vector<std::string_view> TermText = splitAt(Lhs, ',');
  if (TermText.size() != Ranks.size()) {
    Error = "equation '" + std::string(Equation) + "' has " +
            std::to_string(TermText.size()) + " input terms but the node has " +
            std::to_string(Ranks.size()) + " inputs";
    return false;
  }
  std::vector<Term> Terms(TermText.size());
  std::vector<int64_t> EllRanks(Terms.size(), 0);
  int64_t MaxEll = 0;
  for (size_t I = 0; I < Terms.size(); ++I) {
    if (!parseTerm(TermText[I], Terms[I], Error))
      return false;
    int64_t Letters = static_cast<int64_t>(Terms[I].Letters.size());
    if (Terms[I].Ellipsis < 0 ? Letters != Ranks[I] : Letters > Ranks[I]) {
      Error = "term '" + std::string(TermText[I]) + "' of input " +
              std::to_string(I) + " has " + std::to_string(Letters) +
              " labels but the input has rank " + std::to_string(Ranks[I]);
      return false;
    }
    if (Terms[I].Ellipsis >= 0)
      EllRanks[I] = Ranks[I] - Letters;
    MaxEll = std::max(MaxEll, EllRanks[I]);
  }
  Plan = EinsumPlan();
  Plan.EllipsisRank = static_cast<int>(MaxEll);
  for (int J = 0; J < Plan.EllipsisRank; ++J)
    Plan.LabelNames.push_back("...[" + std::to_string(J) + "]");
  std::map<char, int> LetterLabel, Count;
  auto LabelOf = [&](char Ch) {
    auto [It, New] =
        LetterLabel.try_emplace(Ch, static_cast<int>(Plan.LabelNames.size()));
    if (New)
      Plan.LabelNames.push_back(std::string(1, Ch));
    return It->second;
  };
  bool AnyEllipsis = false;
  for (size_t I = 0; I < Terms.size(); ++I) {
    const Term &T = Terms[I];
    std::vector<int> Labels;
    for (size_t P = 0; P <= T.Letters.size(); ++P) {
      if (static_cast<int>(P) == T.Ellipsis) {
        AnyEllipsis = true;
        for (int64_t J = 0; J < EllRanks[I]; ++J)
          Labels.push_back(static_cast<int>(MaxEll - EllRanks[I] + J));
      }
      if (P < T.Letters.size()) {
        Labels.push_back(LabelOf(T.Letters[P]));
        ++Count[T.Letters[P]];
      }
    }
    Plan.InputLabels.push_back(std::move(Labels));
  }
  if (Explicit) {
    Term Out;
    if (!parseTerm(Rhs, Out, Error))
      return false;
    for (size_t P = 0; P <= Out.Letters.size(); ++P) {
      if (static_cast<int>(P) == Out.Ellipsis)
        for (int J = 0; J < Plan.EllipsisRank; ++J)
          Plan.OutputLabels.push_back(J);
      if (P == Out.Letters.size())
        break;
      char Ch = Out.Letters[P];
      if (!LetterLabel.count(Ch)) {
        Error = "output label '" + std::string(1, Ch) +
                "' appears in no input term of '" + std::string(Equation) + "'";
        return false;
      }
      if (Out.Letters.find(Ch) != P) {
        Error = "output label '" + std::string(1, Ch) + "' repeats in '" +
                std::string(Equation) + "'";
        return false;
      }
      Plan.OutputLabels.push_back(LetterLabel[Ch]);
    }
  } else {
    if (AnyEllipsis)
      for (int J = 0; J < Plan.EllipsisRank; ++J)
        Plan.OutputLabels.push_back(J);
    for (const auto &[Ch, N] : Count) // std::map: alphabetical (ASCII).
      if (N == 1)
        Plan.OutputLabels.push_back(LetterLabel[Ch]);
  }
  Plan.NumLabels = static_cast<int>(Plan.LabelNames.size());
  return true;
}

/// Einsum(Inputs...): operands of one dtype; the output has one axis per
/// output label, with that label's extent.
void inferEinsum(InferContext &C) {
  for (size_t I = 1; I < C.numInputs(); ++I)
    checkSameDType(C, 0, I);
  DType T = C.inputType(0).dtype();
  if (T == DType::Bool)
    C.fail("operands must be numeric, not bool");
  std::vector<int64_t> Ranks;
  for (size_t I = 0; I < C.numInputs(); ++I) {
    if (!C.inputType(I).hasRank()) {
      C.setOutputType(0, TensorType(T));
      return;
    }
    Ranks.push_back(C.inputType(I).rank());
  }
  EinsumPlan Plan;
  std::string Error;
  if (!planEinsum(C.attrString("equation"), Ranks, Plan, Error))
    C.fail(Error);
  std::vector<std::optional<Dim>> Extent(Plan.NumLabels);
  for (size_t I = 0; I < C.numInputs(); ++I) {
    const TensorType &X = C.inputType(I);
    for (int64_t A = 0; A < X.rank(); ++A) {
      int L = Plan.InputLabels[I][A];
      const Dim &D = X.dim(A);
      std::optional<Dim> &E = Extent[L];
      if (!E) {
        E = D;
      } else if (L < Plan.EllipsisRank) {
        auto B = broadcastDim(*E, D);
        if (!B)
          C.fail("the ellipsis axes of the operands do not broadcast: ",
                 operandName(C, I), " ", X.toString(), " has extent ",
                 D.toString(), " where another operand has ", E->toString());
        E = *B;
      } else if (!dimsCompatible(*E, D)) {
        C.fail("label '", Plan.LabelNames[L], "' has extent ", E->toString(),
               " and extent ", D.toString(), " (axis ", A, " of ",
               operandName(C, I), " ", X.toString(), ")");
      } else if (D.isStatic() || (E->isUnknown() && D.isSymbolic())) {
        E = D;
      }
    }
  }
  std::vector<Dim> Out;
  for (int L : Plan.OutputLabels)
    Out.push_back(Extent[L] ? *Extent[L] : Dim(1));
  C.setOutputType(0, TensorType(T, std::move(Out)));
}

} // namespace nng::ir
