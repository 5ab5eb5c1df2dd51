//===- WindowGeometry.cpp - Conv and pool windows, resolved --------------===//
//
// Reads the window attributes of Conv, ConvTranspose and the pools with the
// op table's defaults, and resolves them for input extents into pads and
// output extents (see WindowGeometry.h).
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/WindowGeometry.h"
#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/Type.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/Shape.h"

#include <algorithm>

namespace nng::ir {

namespace {

/// The attribute Name of Attrs, else its default in S; null when neither.
const Attribute *findAttr(const OpSchema &S, const AttrMap &Attrs,
                          AnyAttrName Name) {
  if (const Attribute *A = Attrs.find(Name))
    return A;
  const AttrSchema *AS = S.findAttr(Name);
  return AS && AS->Default ? &*AS->Default : nullptr;
}

/// Keeps the first error: sets Err to Msg unless it already says something.
void setError(std::string &Err, std::string Msg) {
  if (Err.empty())
    Err = std::move(Msg);
}

/// Reads an ints attribute of length N (Fill repeated when absent) and
/// checks that every entry is at least Min; on failure sets Err and returns
/// Fill repeated.
std::vector<int64_t> readInts(const OpSchema &S, const AttrMap &Attrs,
                              IntsAttrName Name, size_t N, int64_t Fill,
                              int64_t Min, std::string &Err) {
  const Attribute *A = findAttr(S, Attrs, Name);
  std::vector<int64_t> V = A ? A->ints() : std::vector<int64_t>{};
  if (V.empty())
    V.assign(N, Fill);
  if (V.size() != N) {
    setError(Err, detail::concat("attribute ", Name.str(), " ", intsToString(V),
                                 " has ", V.size(), " entries; expected ", N));
    return std::vector<int64_t>(N, Fill);
  }
  for (int64_t X : V)
    if (X < Min) {
      setError(Err,
               detail::concat("attribute ", Name.str(), " ", intsToString(V),
                              " has entry ", X, "; entries must be >= ", Min));
      return std::vector<int64_t>(N, Fill);
    }
  return V;
}

/// Reads the ints attribute Name when S has it, else Fill repeated.
std::vector<int64_t> readOptionalInts(const OpSchema &S, const AttrMap &Attrs,
                                      IntsAttrName Name, size_t N, int64_t Fill,
                                      int64_t Min, std::string &Err) {
  if (!S.findAttr(Name))
    return std::vector<int64_t>(N, Fill);
  return readInts(S, Attrs, Name, N, Fill, Min, Err);
}

/// The auto_pad value; sets Err (and returns NotSet) when it is none of
/// ONNX's four.
AutoPad readAutoPad(const OpSchema &S, const AttrMap &Attrs, std::string &Err) {
  const Attribute *A = findAttr(S, Attrs, "auto_pad");
  std::string V = A ? A->s() : "NOTSET";
  if (V == "NOTSET")
    return AutoPad::NotSet;
  if (V == "SAME_UPPER")
    return AutoPad::SameUpper;
  if (V == "SAME_LOWER")
    return AutoPad::SameLower;
  if (V == "VALID")
    return AutoPad::Valid;
  setError(Err, detail::concat(
                    "attribute auto_pad is '", V,
                    "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  return AutoPad::NotSet;
}

int64_t ceilDiv(int64_t A, int64_t B) { return (A + B - 1) / B; }

bool isSame(AutoPad P) {
  return P == AutoPad::SameUpper || P == AutoPad::SameLower;
}

/// The padding at the beginning when Total is split evenly: the odd one at
/// the end for SAME_UPPER, else at the beginning.
int64_t splitPadBegin(AutoPad P, int64_t Total) {
  return P == AutoPad::SameUpper ? Total / 2 : Total - Total / 2;
}

/// A geometry for A and In with the attribute-level fields filled in and
/// the resolved ones zeroed; Error set (and nothing else) when A is bad or
/// does not match In's rank.
WindowGeometry startGeometry(const WindowAttrs &A,
                             const std::vector<int64_t> &In) {
  WindowGeometry G;
  if (!A.ok()) {
    G.Error = A.Error;
    return G;
  }
  size_t R = In.size();
  if (A.rank() != R || (!A.Kernel.empty() && A.Kernel.size() != R)) {
    G.Error = detail::concat("the window (kernel ", intsToString(A.Kernel),
                             ", strides ", intsToString(A.Strides),
                             ") does not fit the input's ", R, " spatial axes");
    return G;
  }
  G.In = In;
  G.Kernel = A.Kernel;
  G.Strides = A.Strides;
  G.Dilations = A.Dilations;
  G.PadBegin.assign(R, 0);
  G.PadEnd.assign(R, 0);
  G.Out.assign(R, UnknownExtent);
  return G;
}

} // namespace

std::vector<int64_t> spatialExtents(const TensorType &X, size_t R) {
  std::vector<int64_t> In(R, UnknownExtent);
  if (X.hasRank())
    for (size_t I = 0; I < R && static_cast<int64_t>(2 + I) < X.rank(); ++I)
      if (X.dim(2 + I).isStatic())
        In[I] = X.dim(2 + I).value();
  return In;
}

WindowAttrs readWindowAttrs(const OpSchema &S, const AttrMap &Attrs, size_t R,
                            std::vector<int64_t> Kernel) {
  WindowAttrs W;
  std::string &Err = W.Error;
  const AttrSchema *KS = S.findAttr("kernel_shape");
  if (Attrs.has("kernel_shape"))
    Kernel = readInts(S, Attrs, "kernel_shape", R, 1, 1, Err);
  else if (KS && KS->Required)
    setError(Err, "attribute 'kernel_shape' is required");
  for (int64_t K : Kernel)
    if (K < 1)
      setError(Err, detail::concat("kernel extents ", intsToString(Kernel),
                                   " must be positive"));
  W.Kernel = std::move(Kernel);
  W.Strides = readInts(S, Attrs, "strides", R, 1, 1, Err);
  W.Dilations = readOptionalInts(S, Attrs, "dilations", R, 1, 1, Err);
  W.Pad = readAutoPad(S, Attrs, Err);
  W.Pads = W.Pad == AutoPad::NotSet
               ? readOptionalInts(S, Attrs, "pads", 2 * R, 0, 0, Err)
               : std::vector<int64_t>(2 * R, 0);
  const Attribute *Ceil =
      S.findAttr("ceil_mode") ? findAttr(S, Attrs, "ceil_mode") : nullptr;
  W.CeilMode = Ceil && Ceil->i() != 0;
  W.OutputPadding = readOptionalInts(S, Attrs, "output_padding", R, 0, 0, Err);
  if (const Attribute *OS = Attrs.find("output_shape")) {
    std::vector<int64_t> V = OS->ints();
    if (V.size() == R + 2)
      V.erase(V.begin(), V.begin() + 2);
    if (!V.empty() && V.size() != R)
      setError(Err, detail::concat(
                        "attribute output_shape ", intsToString(OS->ints()),
                        " must have one entry per spatial axis (", R, ")"));
    else
      W.OutputShape = std::move(V);
  }
  return W;
}

int64_t WindowGeometry::outNumel() const {
  int64_t N = 1;
  for (int64_t O : Out)
    N *= O;
  return N;
}

int64_t WindowGeometry::kernelNumel() const {
  int64_t N = 1;
  for (int64_t K : Kernel)
    N *= K;
  return N;
}

WindowGeometry forwardWindow(const WindowAttrs &A,
                             const std::vector<int64_t> &In) {
  WindowGeometry G = startGeometry(A, In);
  if (!G.ok())
    return G;
  size_t R = In.size();
  for (size_t I = 0; I < R; ++I) {
    if (In[I] == UnknownExtent || A.Kernel.empty())
      continue;
    int64_t N = In[I], S = A.Strides[I];
    int64_t Eff = (A.Kernel[I] - 1) * A.Dilations[I] + 1;
    if (isSame(A.Pad)) {
      G.Out[I] = ceilDiv(N, S);
      int64_t Total = std::max<int64_t>(0, (G.Out[I] - 1) * S + Eff - N);
      G.PadBegin[I] = splitPadBegin(A.Pad, Total);
      G.PadEnd[I] = Total - G.PadBegin[I];
      continue;
    }
    G.PadBegin[I] = A.Pads[I];
    G.PadEnd[I] = A.Pads[I + R];
    int64_t Padded = N + G.PadBegin[I] + G.PadEnd[I], Span = Padded - Eff;
    if (Span < 0) {
      G.Error = detail::concat(
          "spatial axis ", 2 + I, " of X has extent ", N, " (", Padded,
          " with pads) but the kernel spans ", Eff, " (kernel ", A.Kernel[I],
          ", dilation ", A.Dilations[I],
          "); pad the input or use a smaller kernel");
      return G;
    }
    G.Out[I] = (A.CeilMode ? ceilDiv(Span, S) : Span / S) + 1;
    // With ceil_mode, a window that would start in the end padding is
    // dropped (as PyTorch and ONNX Runtime do).
    if (A.CeilMode && (G.Out[I] - 1) * S >= N + G.PadBegin[I])
      --G.Out[I];
  }
  return G;
}

WindowGeometry transposedWindow(const WindowAttrs &A,
                                const std::vector<int64_t> &In) {
  WindowGeometry G = startGeometry(A, In);
  if (!G.ok())
    return G;
  size_t R = In.size();
  bool HasOutShape = !A.OutputShape.empty();
  for (size_t I = 0; I < R; ++I) {
    if (HasOutShape)
      G.Out[I] = A.OutputShape[I];
    if (In[I] == UnknownExtent || A.Kernel.empty())
      continue;
    int64_t N = In[I], S = A.Strides[I];
    int64_t Eff = (A.Kernel[I] - 1) * A.Dilations[I] + 1;
    int64_t Full = S * (N - 1) + A.OutputPadding[I] + Eff;
    if (HasOutShape || isSame(A.Pad)) {
      // The output extent is given (or In * stride); the padding that gets
      // there is split evenly (a negative total means no padding).
      if (!HasOutShape)
        G.Out[I] = N * S;
      G.PadBegin[I] =
          splitPadBegin(A.Pad, std::max<int64_t>(0, Full - G.Out[I]));
    } else {
      G.PadBegin[I] = A.Pads[I];
      G.Out[I] = Full - A.Pads[I] - A.Pads[I + R];
    }
    if (G.Out[I] < 0) {
      G.Error = detail::concat(
          "spatial axis ", 2 + I, " of the output would have extent ", G.Out[I],
          " (input extent ", N, ", pads ", intsToString(A.Pads), ")");
      return G;
    }
    G.PadEnd[I] = S * (N - 1) + Eff - G.PadBegin[I] - G.Out[I];
  }
  return G;
}

} // namespace nng::ir
