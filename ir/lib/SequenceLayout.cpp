//===- SequenceLayout.cpp - Sequences packed into two dense tensors -------===//
//
// Decoding and encoding of the 'shapes' half of a packed sequence (per
// element: rank, then dims) and ONNX's position rules. Every count is
// checked before use, so a hostile 'shapes' tensor yields a message, never
// an out-of-bounds read or an overflow. Also SplitToSequence's part sizes.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/SequenceLayout.h"

#include <limits>

namespace nng::ir {

void SequenceLayout::push(const Shape &S) {
  Shapes.push_back(S);
  Offsets.push_back(Offsets.back() + S.numel());
}

std::vector<int64_t> SequenceLayout::encode() const {
  std::vector<int64_t> Out;
  for (const Shape &S : Shapes) {
    Out.push_back(static_cast<int64_t>(S.rank()));
    Out.insert(Out.end(), S.begin(), S.end());
  }
  return Out;
}

std::optional<SequenceLayout>
decodeSequenceShapes(const std::vector<int64_t> &Encoded, int64_t DataLength,
                     std::string &Why) {
  constexpr int64_t Max = std::numeric_limits<int64_t>::max();
  SequenceLayout L;
  size_t I = 0;
  while (I < Encoded.size()) {
    size_t Elem = L.size();
    int64_t Rank = Encoded[I];
    if (Rank < 0 || static_cast<uint64_t>(Rank) > Encoded.size() - I - 1) {
      Why = "the shapes entry of element " + std::to_string(Elem) +
            " (at index " + std::to_string(I) + ") gives rank " +
            std::to_string(Rank) + " but " +
            std::to_string(Encoded.size() - I - 1) +
            " values follow; 'shapes' must hold per element its rank, then "
            "its dims";
      return std::nullopt;
    }
    std::vector<int64_t> Dims(Encoded.begin() + static_cast<int64_t>(I) + 1,
                              Encoded.begin() + static_cast<int64_t>(I) + 1 +
                                  Rank);
    int64_t Numel = 1;
    for (int64_t D : Dims) {
      if (D < 0) {
        Why = "element " + std::to_string(Elem) + " has the negative dim " +
              std::to_string(D) + " in 'shapes'";
        return std::nullopt;
      }
      if (D != 0 && Numel > Max / D) {
        Why = "the element count of element " + std::to_string(Elem) +
              " overflows int64";
        return std::nullopt;
      }
      Numel *= D;
    }
    if (Numel > Max - L.dataLength()) {
      Why = "the element counts of the sequence overflow int64";
      return std::nullopt;
    }
    L.Shapes.emplace_back(std::move(Dims));
    L.Offsets.push_back(L.dataLength() + Numel);
    I += 1 + static_cast<size_t>(Rank);
  }
  if (DataLength >= 0 && L.dataLength() != DataLength) {
    Why = "'shapes' describes " + std::to_string(L.size()) + " elements with " +
          std::to_string(L.dataLength()) + " values in all, but 'data' holds " +
          std::to_string(DataLength);
    return std::nullopt;
  }
  return L;
}

std::optional<int64_t> resolveSequencePosition(int64_t Pos, int64_t Length,
                                               bool AllowEnd) {
  int64_t Hi = AllowEnd ? Length : Length - 1;
  if (Pos < -Length || Pos > Hi)
    return std::nullopt;
  return Pos < 0 ? Pos + Length : Pos;
}

std::string sequencePositionError(int64_t Pos, int64_t Length, bool AllowEnd) {
  int64_t Hi = AllowEnd ? Length : Length - 1;
  std::string S = "position " + std::to_string(Pos) +
                  " is out of range for a sequence of length " +
                  std::to_string(Length);
  if (Hi < -Length)
    return S + " (the sequence is empty)";
  return S + " (valid: " + std::to_string(-Length) + " to " +
         std::to_string(Hi) + ")";
}

std::optional<std::vector<int64_t>>
sequenceSplitSizes(int64_t D, const std::vector<int64_t> *Split,
                   bool ScalarSplit, std::string &Why) {
  if (!Split)
    return std::vector<int64_t>(static_cast<size_t>(D), 1);
  if (ScalarSplit) {
    int64_t Len = Split->empty() ? 0 : Split->front();
    if (Len <= 0) {
      Why = "split " + std::to_string(Len) + " must be positive";
      return std::nullopt;
    }
    std::vector<int64_t> Sizes(static_cast<size_t>(D / Len), Len);
    if (D % Len)
      Sizes.push_back(D % Len);
    return Sizes;
  }
  int64_t Sum = 0;
  for (int64_t V : *Split) {
    if (V < 0) {
      Why = "split " + intsToString(*Split) + " has a negative size";
      return std::nullopt;
    }
    if (__builtin_add_overflow(Sum, V, &Sum))
      Sum = -1; // Past int64: cannot equal D.
    if (Sum < 0)
      break;
  }
  if (Sum != D) {
    Why =
        "split " + intsToString(*Split) + " adds up to " +
        (Sum < 0 ? std::string("more than int64 holds") : std::to_string(Sum)) +
        " but the axis has extent " + std::to_string(D);
    return std::nullopt;
  }
  return *Split;
}

} // namespace nng::ir
