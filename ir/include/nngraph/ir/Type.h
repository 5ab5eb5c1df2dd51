//===- Type.h - Value types: dtype plus a possibly symbolic shape -*- C++ -*-===//
//
// TensorType is the type of an IR value: an element type and a shape whose
// dims are each a constant, a named symbol ("N") or unknown ("?"); the rank
// itself may be unknown ("*"). Printed as "f32[N,3,224,224]", "i64[]",
// "f32[?,10]", "f32[*]".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"
#include "nngraph/runtime/Shape.h"

#include <optional>
#include <string>
#include <vector>

namespace nng::ir {

/// One dimension of a TensorType: static, symbolic or unknown.
class Dim {
public:
  Dim() = default; ///< Unknown.
  Dim(int64_t V) : Value(V) {}
  static Dim symbol(std::string Name) {
    Dim D;
    D.Sym = std::move(Name);
    return D;
  }
  static Dim unknown() { return Dim(); }

  bool isStatic() const { return Value >= 0; }
  bool isSymbolic() const { return Value < 0 && !Sym.empty(); }
  bool isUnknown() const { return Value < 0 && Sym.empty(); }
  /// The static extent; only valid when isStatic().
  int64_t value() const { return Value; }
  const std::string &symbol() const { return Sym; }
  /// "3", "N" or "?".
  std::string toString() const;
  bool operator==(const Dim &O) const = default;

private:
  int64_t Value = -1;
  std::string Sym;
};

/// The type of a value: dtype and shape (rank may be unknown).
class TensorType {
public:
  TensorType() = default;
  /// Unknown rank.
  explicit TensorType(DType T) : Elem(T) {}
  TensorType(DType T, std::vector<Dim> D) : Elem(T), Dims(std::move(D)) {}
  TensorType(DType T, const Shape &S);

  DType dtype() const { return Elem; }
  void setDType(DType T) { Elem = T; }
  bool hasRank() const { return Dims.has_value(); }
  /// Rank; only valid when hasRank().
  int64_t rank() const { return static_cast<int64_t>(Dims->size()); }
  const std::vector<Dim> &dims() const { return *Dims; }
  std::vector<Dim> &dims() { return *Dims; }
  const Dim &dim(int64_t I) const { return (*Dims)[I]; }
  /// True when the rank and every dim are known constants.
  bool isStatic() const;
  /// The concrete shape when isStatic(), else nullopt.
  std::optional<Shape> staticShape() const;
  /// Static element count, or nullopt.
  std::optional<int64_t> staticNumel() const;
  /// "f32[N,3,224,224]".
  std::string toString() const;
  bool operator==(const TensorType &O) const = default;

  /// Parses "f32[N,3]"; nullopt on malformed text.
  static std::optional<TensorType> parse(std::string_view S);

private:
  DType Elem = DType::F32;
  std::optional<std::vector<Dim>> Dims;
};

/// Merges what two types know about the same value (used when a declared
/// type meets an inferred one): a static dim beats a symbol or unknown, a
/// symbol beats unknown. Returns nullopt when they contradict (different
/// dtypes, ranks, or different static dims).
std::optional<TensorType> mergeTypes(const TensorType &A, const TensorType &B);

} // namespace nng::ir
