//===- Value.h - The dynamic values modules take and return ------*- C++ -*-===//
//
// nn::Value is the uniform form of a module's arguments and results, as
// Python passes arbitrary objects: None, a Tensor, a number, a bool, a
// string, a list, a tuple, or a string-keyed dict (insertion-ordered, like a
// Python dict). Module::operator() packs its C++ arguments into Values so
// hooks, containers (Sequential) and the tracer can see and replace them,
// then converts them back to the parameter types of forward. The
// conversions (toValue / fromValue, customisable through ValueTraits) cover
// Tensor, arithmetic types, bool, std::string, std::optional, std::vector,
// std::pair, std::tuple and std::map<std::string, T>. An undefined Tensor
// becomes None, and None converts back to an undefined Tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/Tensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nng::nn {

/// A dynamically typed value: None, Tensor, double, int64, bool, string,
/// list, tuple or dict.
class Value {
public:
  enum class Kind : uint8_t {
    None,
    Tensor,
    Double,
    Int,
    Bool,
    String,
    List,
    Tuple,
    Dict
  };

  /// None.
  Value() = default;
  Value(std::nullopt_t) {}
  /// A tensor; an undefined tensor gives None.
  Value(Tensor T);
  Value(double D) : K(Kind::Double), D(D) {}
  Value(float F) : K(Kind::Double), D(F) {}
  Value(bool B) : K(Kind::Bool), B(B) {}
  Value(int I) : K(Kind::Int), I(I) {}
  Value(long I) : K(Kind::Int), I(I) {}
  Value(long long I) : K(Kind::Int), I(I) {}
  Value(unsigned I) : K(Kind::Int), I(I) {}
  Value(unsigned long I) : K(Kind::Int), I(static_cast<int64_t>(I)) {}
  Value(unsigned long long I) : K(Kind::Int), I(static_cast<int64_t>(I)) {}
  Value(std::string S) : K(Kind::String), S(std::move(S)) {}
  Value(const char *S) : K(Kind::String), S(S) {}
  /// A list.
  Value(std::vector<Value> Elements)
      : K(Kind::List), Elems(std::move(Elements)) {}

  /// A tuple of Elements.
  static Value tuple(std::vector<Value> Elements);
  /// A list of Elements.
  static Value list(std::vector<Value> Elements);
  /// A dict with the entries in the given order.
  static Value dict(std::vector<std::pair<std::string, Value>> Entries);

  Kind kind() const { return K; }
  bool isNone() const { return K == Kind::None; }
  bool isTensor() const { return K == Kind::Tensor; }
  bool isDouble() const { return K == Kind::Double; }
  bool isInt() const { return K == Kind::Int; }
  bool isBool() const { return K == Kind::Bool; }
  bool isString() const { return K == Kind::String; }
  bool isList() const { return K == Kind::List; }
  bool isTuple() const { return K == Kind::Tuple; }
  bool isDict() const { return K == Kind::Dict; }
  /// A list or a tuple.
  bool isSequence() const { return K == Kind::List || K == Kind::Tuple; }

  /// The tensor (an undefined tensor for None); throws for other kinds.
  Tensor toTensor() const;
  /// A number (Double, Int or Bool) as double.
  double toDouble() const;
  /// An Int or Bool (a Double with an integral value too).
  int64_t toInt() const;
  bool toBool() const;
  const std::string &toStringRef() const;
  /// The elements of a list or tuple.
  const std::vector<Value> &elements() const;
  std::vector<Value> &elements();
  /// The keys of a dict, in insertion order (parallel to elements()).
  const std::vector<std::string> &keys() const;
  /// Dict lookup; throws naming the key when absent.
  const Value &at(const std::string &Key) const;
  bool contains(const std::string &Key) const;
  /// Number of elements of a list, tuple or dict.
  size_t size() const;

  /// Implicit use as a Tensor (a module returning a Value, Sequential).
  operator Tensor() const { return toTensor(); }

  /// Every tensor inside, depth first, in order.
  std::vector<Tensor> tensors() const;
  /// A copy with each tensor replaced by Fn(tensor), depth first.
  template <typename F> Value mapTensors(F &&Fn) const;

  /// Python-like text: None, 3, 2.5, True, 'abc', [..], (..), {'k': ..};
  /// tensors print as Tensor(shape=[2, 3], dtype=f32).
  std::string toString() const;
  /// The kind as a word ("Tensor", "tuple", ...), for error messages.
  static const char *kindName(Kind K);

private:
  Kind K = Kind::None;
  bool B = false;
  double D = 0.0;
  int64_t I = 0;
  Tensor T;
  std::string S;
  std::vector<Value> Elems;
  std::vector<std::string> Keys;

  [[noreturn]] void wrongKind(const char *Wanted) const;
};

template <typename F> Value Value::mapTensors(F &&Fn) const {
  if (K == Kind::Tensor)
    return Value(Fn(T));
  if (K != Kind::List && K != Kind::Tuple && K != Kind::Dict)
    return *this;
  Value R = *this;
  for (Value &E : R.Elems)
    E = E.mapTensors(Fn);
  return R;
}

/// Conversions between C++ types and Value; specialise for your own types.
template <typename T, typename Enable = void> struct ValueTraits;

/// Converts X to a Value.
template <typename T> Value toValue(T &&X) {
  return ValueTraits<std::remove_cvref_t<T>>::to(std::forward<T>(X));
}
/// Converts V to T (references and cv-qualifiers dropped); throws
/// nng::Error naming both kinds on a mismatch.
template <typename T> std::remove_cvref_t<T> fromValue(const Value &V) {
  return ValueTraits<std::remove_cvref_t<T>>::from(V);
}

template <> struct ValueTraits<Value> {
  static Value to(const Value &V) { return V; }
  static Value from(const Value &V) { return V; }
};
template <> struct ValueTraits<Tensor> {
  static Value to(const Tensor &X) { return Value(X); }
  static Tensor from(const Value &V) { return V.toTensor(); }
};
template <> struct ValueTraits<bool> {
  static Value to(bool X) { return Value(X); }
  static bool from(const Value &V) { return V.toBool(); }
};
template <> struct ValueTraits<std::string> {
  static Value to(std::string X) { return Value(std::move(X)); }
  static std::string from(const Value &V) { return V.toStringRef(); }
};
template <> struct ValueTraits<const char *> {
  static Value to(const char *X) { return Value(X); }
};
template <size_t N> struct ValueTraits<char[N]> {
  static Value to(const char *X) { return Value(X); }
};
template <> struct ValueTraits<std::nullopt_t> {
  static Value to(std::nullopt_t) { return Value(); }
};
template <typename T>
struct ValueTraits<T, std::enable_if_t<std::is_integral_v<T> &&
                                       !std::is_same_v<T, bool>>> {
  static Value to(T X) { return Value(static_cast<int64_t>(X)); }
  static T from(const Value &V) { return static_cast<T>(V.toInt()); }
};
template <typename T>
struct ValueTraits<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static Value to(T X) { return Value(static_cast<double>(X)); }
  static T from(const Value &V) { return static_cast<T>(V.toDouble()); }
};
template <typename T> struct ValueTraits<std::optional<T>> {
  static Value to(const std::optional<T> &X) {
    return X ? toValue(*X) : Value();
  }
  static std::optional<T> from(const Value &V) {
    if (V.isNone())
      return std::nullopt;
    return fromValue<T>(V);
  }
};
template <typename T> struct ValueTraits<std::vector<T>> {
  static Value to(const std::vector<T> &X) {
    std::vector<Value> E;
    E.reserve(X.size());
    for (const T &Y : X)
      E.push_back(toValue(Y));
    return Value::list(std::move(E));
  }
  static std::vector<T> from(const Value &V) {
    std::vector<T> R;
    R.reserve(V.elements().size());
    for (const Value &E : V.elements())
      R.push_back(fromValue<T>(E));
    return R;
  }
};
template <typename T> struct ValueTraits<std::map<std::string, T>> {
  static Value to(const std::map<std::string, T> &X) {
    std::vector<std::pair<std::string, Value>> E;
    for (const auto &[Key, Y] : X)
      E.emplace_back(Key, toValue(Y));
    return Value::dict(std::move(E));
  }
  static std::map<std::string, T> from(const Value &V);
};
template <typename A, typename B> struct ValueTraits<std::pair<A, B>> {
  static Value to(const std::pair<A, B> &X) {
    return Value::tuple({toValue(X.first), toValue(X.second)});
  }
  static std::pair<A, B> from(const Value &V);
};
template <typename... Ts> struct ValueTraits<std::tuple<Ts...>> {
  static Value to(const std::tuple<Ts...> &X) {
    return std::apply(
        [](const auto &...E) { return Value::tuple({toValue(E)...}); }, X);
  }
  static std::tuple<Ts...> from(const Value &V);
};

namespace detail {
/// Throws unless V is a sequence of exactly N elements.
void checkArity(const Value &V, size_t N, const char *What);
} // namespace detail

template <typename T>
std::map<std::string, T>
ValueTraits<std::map<std::string, T>>::from(const Value &V) {
  std::map<std::string, T> R;
  const std::vector<std::string> &Ks = V.keys();
  for (size_t I = 0; I < Ks.size(); ++I)
    R.emplace(Ks[I], fromValue<T>(V.elements()[I]));
  return R;
}

template <typename A, typename B>
std::pair<A, B> ValueTraits<std::pair<A, B>>::from(const Value &V) {
  detail::checkArity(V, 2, "std::pair");
  return {fromValue<A>(V.elements()[0]), fromValue<B>(V.elements()[1])};
}

template <typename... Ts>
std::tuple<Ts...> ValueTraits<std::tuple<Ts...>>::from(const Value &V) {
  detail::checkArity(V, sizeof...(Ts), "std::tuple");
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Ts...>(fromValue<Ts>(V.elements()[I])...);
  }(std::index_sequence_for<Ts...>{});
}

} // namespace nng::nn
