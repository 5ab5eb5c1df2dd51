//===- Tensor.cpp - A strided view of a Storage --------------------------===//

#include "nngraph/runtime/Tensor.h"
#include "nngraph/runtime/DTypeVisit.h"
#include "nngraph/runtime/Strings.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace nng::rt {

Tensor::Tensor(std::shared_ptr<Storage> S, Shape Shp, Strides Str,
               int64_t Off, DType T)
    : Store(std::move(S)), Sh(std::move(Shp)), St(std::move(Str)), Offset(Off),
      Type(T) {
  Sh.validate();
  NNG_CHECK(St.size() == Sh.rank(), "tensor view: ", St.size(),
            " strides for shape ", Sh.toString());
  NNG_CHECK(Store, "tensor view: null storage");
  if (Sh.numel() == 0)
    return;
  // The lowest and highest element reached must lie inside the storage.
  int64_t Lo = Offset, Hi = Offset;
  for (size_t I = 0; I < Sh.rank(); ++I) {
    int64_t Span = (Sh[I] - 1) * St[I];
    (Span < 0 ? Lo : Hi) += Span;
  }
  int64_t Elems = static_cast<int64_t>(Store->bytes() / dtypeSize(T));
  NNG_CHECK(Lo >= 0 && Hi < Elems, "tensor view ", dtypeName(T),
            Sh.toString(), " at offset ", Offset,
            " reaches elements [", Lo, ", ", Hi, "] outside its storage of ",
            Elems, " elements");
}

Tensor Tensor::empty(const Shape &Sh, DType T, Device D) {
  Sh.validate();
  size_t Bytes = static_cast<size_t>(Sh.numel()) * dtypeSize(T);
  return Tensor(Storage::allocate(Bytes, D), Sh, contiguousStrides(Sh), 0, T);
}

Tensor Tensor::fromBlob(void *Data, const Shape &Sh, DType T,
                        std::shared_ptr<const void> Owner) {
  Sh.validate();
  size_t Bytes = static_cast<size_t>(Sh.numel()) * dtypeSize(T);
  return Tensor(Storage::wrap(Data, Bytes, std::move(Owner)), Sh,
                contiguousStrides(Sh), 0, T);
}

Tensor Tensor::fromStrings(const std::vector<std::string> &Values,
                           const Shape &Sh) {
  std::vector<StringId> Ids;
  Ids.reserve(Values.size());
  for (const std::string &V : Values)
    Ids.push_back(internString(V));
  return fromVector(Ids, Sh);
}

bool Tensor::isContiguous() const {
  if (numel() == 0)
    return true; // No element to misplace.
  int64_t Expected = 1;
  for (size_t I = Sh.rank(); I-- > 0;) {
    if (Sh[I] == 1)
      continue;
    if (St[I] != Expected)
      return false;
    Expected *= Sh[I];
  }
  return true;
}

namespace {
/// Reading or writing a meta tensor's data is a mistake of the caller.
[[noreturn]] void failMetaData(const Tensor &T) {
  fail(ErrorKind::InvalidArgument, "a tensor ", dtypeName(T.dtype()),
       T.shape().toString(),
       " on the meta device has a shape but no data: move the module or "
       "tensor to a real device first (to_empty(Device::cpu()) then "
       "initialize it, or load_state_dict(..., assign=true))");
}
} // namespace

void *Tensor::rawData() {
  NNG_CHECK(defined(), "access to the data of an undefined tensor");
  if (Store->device().isMeta())
    failMetaData(*this);
  // A writable pointer may be written through: derived copies are stale.
  Store->bumpVersion();
  return static_cast<char *>(Store->data()) + Offset * elementSize();
}
const void *Tensor::rawData() const {
  NNG_CHECK(defined(), "access to the data of an undefined tensor");
  if (Store->device().isMeta())
    failMetaData(*this);
  return static_cast<const char *>(Store->data()) + Offset * elementSize();
}

void Tensor::checkType(DType T) const {
  NNG_CHECK(T == Type, "tensor of dtype ", dtypeName(Type),
            " accessed as ", dtypeName(T));
}

namespace {
/// The rows of a copy between two strided views of one shape: the axes
/// merged where both views step through them as through one, the last
/// (merged) axis the row; forEach visits every row's first element in
/// both views, advancing an odometer (no division per element).
struct StridedRows {
  std::vector<int64_t> Sizes, SrcSt, DstSt; ///< The outer (merged) axes.
  int64_t Inner = 1, InnerSrc = 0, InnerDst = 0;

  StridedRows(const Shape &Sh, const Strides &S, const Strides &D) {
    for (size_t A = 0; A < Sh.rank(); ++A) {
      if (Sh[A] == 1)
        continue;
      if (!Sizes.empty() && SrcSt.back() == S[A] * Sh[A] &&
          DstSt.back() == D[A] * Sh[A]) {
        Sizes.back() *= Sh[A];
        SrcSt.back() = S[A];
        DstSt.back() = D[A];
        continue;
      }
      Sizes.push_back(Sh[A]);
      SrcSt.push_back(S[A]);
      DstSt.push_back(D[A]);
    }
    if (!Sizes.empty()) {
      Inner = Sizes.back(), InnerSrc = SrcSt.back(), InnerDst = DstSt.back();
      Sizes.pop_back(), SrcSt.pop_back(), DstSt.pop_back();
    }
  }

  template <typename Fn> void forEach(Fn &&F) const {
    size_t R = Sizes.size();
    std::vector<int64_t> Idx(R, 0);
    int64_t SOff = 0, DOff = 0;
    while (true) {
      F(SOff, DOff);
      size_t A = R;
      while (A > 0) {
        --A;
        SOff += SrcSt[A], DOff += DstSt[A];
        if (++Idx[A] < Sizes[A])
          break;
        SOff -= Idx[A] * SrcSt[A], DOff -= Idx[A] * DstSt[A];
        Idx[A] = 0;
        if (A == 0)
          return;
      }
      if (R == 0)
        return;
    }
  }
};

/// One row of a same-dtype copy of elements of type T (by bits).
template <typename T>
void copyRow(char *Dst, const char *Src, const StridedRows &Rows) {
  for (int64_t I = 0; I < Rows.Inner; ++I) {
    T V;
    std::memcpy(&V, Src + I * Rows.InnerSrc * static_cast<int64_t>(sizeof(T)),
                sizeof(T));
    std::memcpy(Dst + I * Rows.InnerDst * static_cast<int64_t>(sizeof(T)), &V,
                sizeof(T));
  }
}

/// Element offset of flat row-major position I in a strided view.
int64_t stridedOffset(const Shape &Sh, const Strides &St, int64_t I) {
  int64_t Off = 0;
  for (size_t D = Sh.rank(); D-- > 0;) {
    int64_t Ext = Sh[D];
    Off += (I % Ext) * St[D];
    I /= Ext;
  }
  return Off;
}
} // namespace

double Tensor::getFlat(int64_t I) const {
  NNG_CHECK(I >= 0 && I < numel(), "element ", I, " out of range for ",
            dtypeName(Type), Sh.toString());
  const char *Base = static_cast<const char *>(rawData());
  int64_t Off = stridedOffset(Sh, St, I);
  return visitDType(Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    T V;
    std::memcpy(&V, Base + Off * sizeof(T), sizeof(T));
    return toDouble(V);
  });
}

int64_t Tensor::getFlatInt(int64_t I) const {
  NNG_CHECK(I >= 0 && I < numel(), "element ", I, " out of range for ",
            dtypeName(Type), Sh.toString());
  const char *Base = static_cast<const char *>(rawData());
  int64_t Off = stridedOffset(Sh, St, I);
  return visitDType(Type, [&](auto Tag) -> int64_t {
    using T = typename decltype(Tag)::type;
    T V;
    std::memcpy(&V, Base + Off * sizeof(T), sizeof(T));
    if constexpr (std::is_integral_v<T>)
      return static_cast<int64_t>(V);
    else
      return static_cast<int64_t>(toDouble(V));
  });
}

double Tensor::getDouble(const std::vector<int64_t> &Index) const {
  NNG_CHECK(Index.size() == rank(), "index of rank ", Index.size(),
            " for tensor of rank ", rank());
  int64_t Flat = 0;
  for (size_t D = 0; D < Index.size(); ++D) {
    NNG_CHECK(Index[D] >= 0 && Index[D] < Sh[D], "index ", Index[D],
              " out of range for axis ", D, " of extent ", Sh[D]);
    Flat = Flat * Sh[D] + Index[D];
  }
  return getFlat(Flat);
}

void Tensor::setFlat(int64_t I, double V) {
  NNG_CHECK(I >= 0 && I < numel(), "element ", I, " out of range for ",
            dtypeName(Type), Sh.toString());
  NNG_CHECK(Store->isWritable(), "write to a read-only tensor");
  char *Base = static_cast<char *>(rawData());
  int64_t Off = stridedOffset(Sh, St, I);
  visitDType(Type, [&](auto Tag) {
    using T = typename decltype(Tag)::type;
    T X = fromDouble<T>(V);
    std::memcpy(Base + Off * sizeof(T), &X, sizeof(T));
  });
}

namespace {
/// The elements of T in row-major order, each converted by Conv (one
/// dtype dispatch, rows walked by an odometer).
template <typename R, typename ConvFn>
std::vector<R> flatValues(const Tensor &T, ConvFn Conv) {
  std::vector<R> Out(static_cast<size_t>(T.numel()));
  if (Out.empty())
    return Out;
  const char *Base = static_cast<const char *>(T.rawData());
  StridedRows Rows(T.shape(), T.strides(), contiguousStrides(T.shape()));
  visitDType(T.dtype(), [&](auto Tag) {
    using E = typename decltype(Tag)::type;
    Rows.forEach([&](int64_t SOff, int64_t DOff) {
      for (int64_t I = 0; I < Rows.Inner; ++I) {
        E V;
        std::memcpy(&V,
                    Base + (SOff + I * Rows.InnerSrc) *
                               static_cast<int64_t>(sizeof(E)),
                    sizeof(E));
        Out[static_cast<size_t>(DOff + I * Rows.InnerDst)] = Conv(V);
      }
    });
  });
  return Out;
}
} // namespace

std::vector<int64_t> Tensor::toIntVector() const {
  if (Type == DType::I64 && isContiguous()) { // Shapes and axes: the usual.
    std::vector<int64_t> Out(static_cast<size_t>(numel()));
    if (!Out.empty())
      std::memcpy(Out.data(), rawData(), Out.size() * sizeof(int64_t));
    return Out;
  }
  return flatValues<int64_t>(*this, [](auto V) -> int64_t {
    if constexpr (std::is_integral_v<decltype(V)>)
      return static_cast<int64_t>(V);
    else
      return static_cast<int64_t>(toDouble(V));
  });
}

std::vector<double> Tensor::toDoubleVector() const {
  return flatValues<double>(*this, [](auto V) { return toDouble(V); });
}

std::vector<std::string> Tensor::toStrings() const {
  NNG_CHECK(isString(Type), "toStrings() of a ", dtypeName(Type),
            " tensor; only str tensors hold strings");
  const char *Base = static_cast<const char *>(rawData());
  std::vector<std::string> R(static_cast<size_t>(numel()));
  for (int64_t I = 0; I < numel(); ++I) {
    StringId Id;
    std::memcpy(&Id, Base + stridedOffset(Sh, St, I) * sizeof(StringId),
                sizeof(StringId));
    R[I] = std::string(stringOf(Id));
  }
  return R;
}

Tensor Tensor::reshape(const Shape &NewShape) const {
  std::vector<int64_t> Dims = NewShape.dims();
  int64_t Known = 1;
  int Infer = -1;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (Dims[I] == -1) {
      NNG_CHECK(Infer < 0, "reshape to ", NewShape.toString(),
                ": more than one -1");
      Infer = static_cast<int>(I);
    } else {
      NNG_CHECK(Dims[I] >= 0, "reshape to ", NewShape.toString(),
                ": negative extent");
      Known *= Dims[I];
    }
  }
  if (Infer >= 0) {
    NNG_CHECK(Known != 0 && numel() % Known == 0, "reshape of ",
              Sh.toString(), " to ", NewShape.toString(),
              ": cannot infer the -1 extent");
    Dims[Infer] = numel() / Known;
  }
  Shape Out(Dims);
  NNG_CHECK_KIND(Out.numel() == numel(), ShapeMismatch, "reshape of ",
                 Sh.toString(), " (", numel(), " elements) to ",
                 Out.toString(), " (", Out.numel(), " elements)");
  if (!isContiguous())
    return contiguous().reshape(Out);
  return Tensor(Store, Out, contiguousStrides(Out), Offset, Type);
}

Tensor Tensor::permute(const std::vector<int64_t> &Perm) const {
  NNG_CHECK(Perm.size() == rank(), "permute with ", Perm.size(),
            " axes of a tensor of rank ", rank());
  std::vector<bool> Seen(rank());
  Shape NS;
  Strides NSt;
  for (int64_t P : Perm) {
    int64_t A = normalizeAxis(P, static_cast<int64_t>(rank()), "perm axis");
    NNG_CHECK(!Seen[A], "permute: axis ", P, " repeated");
    Seen[A] = true;
    NS.push_back(Sh[A]);
    NSt.push_back(St[A]);
  }
  return Tensor(Store, NS, NSt, Offset, Type);
}

Tensor Tensor::slice(int64_t Axis, int64_t Start, int64_t End,
                     int64_t Step) const {
  int64_t A = normalizeAxis(Axis, static_cast<int64_t>(rank()));
  NNG_CHECK(Step > 0, "slice step must be positive, got ", Step);
  int64_t N = Sh[A];
  Start = std::clamp<int64_t>(Start < 0 ? Start + N : Start, 0, N);
  End = std::clamp<int64_t>(End < 0 ? End + N : End, 0, N);
  int64_t Len = End > Start ? (End - Start + Step - 1) / Step : 0;
  Shape NS = Sh;
  Strides NSt = St;
  NS[A] = Len;
  NSt[A] = St[A] * Step;
  return Tensor(Store, NS, NSt, Len ? Offset + Start * St[A] : Offset, Type);
}

Tensor Tensor::broadcastTo(const Shape &Target) const {
  NNG_CHECK_KIND(Target.rank() >= rank(), ShapeMismatch, "cannot broadcast ",
                 Sh.toString(), " to ", Target.toString());
  size_t Lead = Target.rank() - rank();
  Strides NSt(Target.rank(), 0);
  for (size_t I = 0; I < rank(); ++I) {
    if (Sh[I] == Target[Lead + I])
      NSt[Lead + I] = St[I];
    else
      NNG_CHECK_KIND(Sh[I] == 1, ShapeMismatch, "cannot broadcast ",
                     Sh.toString(), " to ", Target.toString());
  }
  return Tensor(Store, Target, NSt, Offset, Type);
}

void Tensor::copyFrom(const Tensor &Src) {
  NNG_CHECK_KIND(Src.shape() == Sh, ShapeMismatch, "copy of ",
                 Src.shape().toString(), " into ", Sh.toString());
  NNG_CHECK(Store->isWritable(), "write to a read-only tensor");
  if (Src.dtype() == Type && Src.isContiguous() && isContiguous()) {
    if (nbytes())
      std::memcpy(rawData(), Src.rawData(), nbytes());
    return;
  }
  if (numel() == 0)
    return;
  char *Dst = static_cast<char *>(rawData());
  const char *SrcBase = static_cast<const char *>(Src.rawData());
  StridedRows Rows(Sh, Src.St, St);
  if (Src.dtype() == Type) {
    // Same dtype (str handles included): rows of elements moved by size,
    // a whole row at once where both sides are dense along it.
    size_t ES = elementSize();
    bool Dense = Rows.InnerSrc == 1 && Rows.InnerDst == 1;
    Rows.forEach([&](int64_t SOff, int64_t DOff) {
      const char *S = SrcBase + SOff * static_cast<int64_t>(ES);
      char *D = Dst + DOff * static_cast<int64_t>(ES);
      if (Dense) {
        std::memcpy(D, S, static_cast<size_t>(Rows.Inner) * ES);
        return;
      }
      switch (ES) {
      case 1:
        copyRow<uint8_t>(D, S, Rows);
        break;
      case 2:
        copyRow<uint16_t>(D, S, Rows);
        break;
      case 4:
        copyRow<uint32_t>(D, S, Rows);
        break;
      case 8:
        copyRow<uint64_t>(D, S, Rows);
        break;
      default:
        for (int64_t I = 0; I < Rows.Inner; ++I)
          std::memcpy(D + I * Rows.InnerDst * static_cast<int64_t>(ES),
                      S + I * Rows.InnerSrc * static_cast<int64_t>(ES), ES);
      }
    });
    return;
  }
  NNG_CHECK_KIND(isNumeric(Type) && isNumeric(Src.dtype()), Unsupported,
                 "copy of a ", dtypeName(Src.dtype()), " tensor into a ",
                 dtypeName(Type),
                 " tensor: strings convert to and from numbers only through "
                 "the Cast op");
  visitDType(Type, [&](auto DTag) {
    using D = typename decltype(DTag)::type;
    visitDType(Src.dtype(), [&](auto STag) {
      using S = typename decltype(STag)::type;
      Rows.forEach([&](int64_t SOff, int64_t DOff) {
        for (int64_t I = 0; I < Rows.Inner; ++I) {
          S V;
          std::memcpy(&V,
                      SrcBase + (SOff + I * Rows.InnerSrc) *
                                    static_cast<int64_t>(sizeof(S)),
                      sizeof(S));
          D X = fromDouble<D>(toDouble(V));
          std::memcpy(Dst + (DOff + I * Rows.InnerDst) *
                                static_cast<int64_t>(sizeof(D)),
                      &X, sizeof(D));
        }
      });
    });
  });
}

Tensor Tensor::contiguous() const {
  if (isContiguous())
    return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor R = empty(Sh, Type, device());
  R.copyFrom(*this);
  return R;
}

Tensor Tensor::to(DType T) const {
  Tensor R = empty(Sh, T, device());
  R.copyFrom(*this);
  return R;
}

bool Tensor::equals(const Tensor &O) const {
  if (Type != O.Type || Sh != O.Sh)
    return false;
  if (isString(Type))
    return toStrings() == O.toStrings();
  for (int64_t I = 0; I < numel(); ++I) {
    double A = getFlat(I), B = O.getFlat(I);
    if (!(A == B || (std::isnan(A) && std::isnan(B))))
      return false;
  }
  return true;
}

std::string Tensor::toString(int64_t MaxElements) const {
  std::ostringstream OS;
  if (!defined())
    return "undefined";
  OS << dtypeName(Type) << Sh.toString();
  if (device().isMeta())
    OS << " (meta)";
  else if (numel() <= MaxElements) {
    OS << " {";
    if (isString(Type)) {
      std::vector<std::string> V = toStrings();
      for (size_t I = 0; I < V.size(); ++I)
        OS << (I ? ", " : "") << quoteForDisplay(V[I]);
    } else {
      for (int64_t I = 0; I < numel(); ++I)
        OS << (I ? ", " : "") << getFlat(I);
    }
    OS << "}";
  }
  return OS.str();
}

} // namespace nng::rt
