//===- SymInt.h - Possibly symbolic integers for tensor sizes ----*- C++ -*-===//
//
// nng::SymInt is what Tensor::size(i) returns, like PyTorch's c10::SymInt:
// a concrete int64 in eager code, or, while a trace runs, a symbolic size
// standing for an IR value (a 0-d i64 computed by Shape -> Gather from a
// dynamic dim). Arithmetic (+, -, *, floor /) on symbolic SymInts records
// nodes; view/reshape/expand take SymIntLists and, when an entry is
// symbolic, record Shape/Gather/Concat nodes instead of a constant shape.
// A concrete SymInt converts to int64_t silently, so eager code keeps
// compiling and runs as before (a concrete SymInt is two words, no
// allocation); converting a symbolic one throws fx::TraceError naming the
// module and what to do. Comparisons use the example extent the tracer gave
// the dim (see docs/fx.md): they never record nodes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <vector>

namespace nng {

class SymInt;

namespace detail {
/// Records A Op B ('+', '-', '*', '/') on the active tracer (one side at
/// least symbolic).
SymInt symArith(char Op, const SymInt &A, const SymInt &B);
/// Throws fx::TraceError: a symbolic size was converted to a C++ integer.
[[noreturn]] void failSymbolicToInt(const SymInt &S);
} // namespace detail

/// A tensor size: a concrete integer, or a symbolic one during a trace.
class SymInt {
public:
  constexpr SymInt() = default;
  /// Any integer converts implicitly (a concrete SymInt).
  template <std::integral T>
  constexpr SymInt(T V) : V(static_cast<int64_t>(V)) {}
  /// A symbolic size: Example is the extent the trace runs with, Node the
  /// tracer's IR value (an ir::Value*, owned by the traced graph).
  static SymInt symbolic(int64_t Example, const void *Node) {
    SymInt S(Example);
    S.Node = Node;
    return S;
  }

  bool isSymbolic() const { return Node != nullptr; }
  /// The concrete value, or the example extent of a symbolic one.
  int64_t example() const { return V; }
  /// The tracer's IR value of a symbolic SymInt (null when concrete).
  const void *node() const { return Node; }
  /// The value; throws fx::TraceError when symbolic.
  int64_t expect_int() const {
    if (Node)
      detail::failSymbolicToInt(*this);
    return V;
  }
  /// Implicit use as an integer (eager code); throws when symbolic.
  operator int64_t() const { return expect_int(); }

private:
  int64_t V = 0;
  const void *Node = nullptr;
};

// --- Arithmetic: concrete stays concrete (inline), symbolic records nodes --
#define NNG_SYMINT_ARITH(OP, CH, EXPR)                                         \
  inline SymInt operator OP(const SymInt &A, const SymInt &B) {                \
    if (!A.isSymbolic() && !B.isSymbolic()) {                                  \
      int64_t X = A.example(), Y = B.example();                                \
      return SymInt(EXPR);                                                     \
    }                                                                          \
    return detail::symArith(CH, A, B);                                         \
  }                                                                            \
  template <std::integral T> SymInt operator OP(const SymInt &A, T B) {        \
    return A OP SymInt(B);                                                     \
  }                                                                            \
  template <std::integral T> SymInt operator OP(T A, const SymInt &B) {        \
    return SymInt(A) OP B;                                                     \
  }
NNG_SYMINT_ARITH(+, '+', X + Y)
NNG_SYMINT_ARITH(-, '-', X - Y)
NNG_SYMINT_ARITH(*, '*', X * Y)
/// Floor division (Python's //); a zero divisor gives 0 (checked elsewhere).
NNG_SYMINT_ARITH(/, '/',
                 Y == 0 ? 0 : (X / Y - ((X % Y != 0) && ((X < 0) != (Y < 0)))))
#undef NNG_SYMINT_ARITH

// --- Comparisons: on the concrete value or the example extent -------------
#define NNG_SYMINT_CMP(OP)                                                     \
  inline bool operator OP(const SymInt &A, const SymInt &B) {                  \
    return A.example() OP B.example();                                         \
  }                                                                            \
  template <std::integral T> bool operator OP(const SymInt &A, T B) {          \
    return A.example() OP static_cast<int64_t>(B);                             \
  }                                                                            \
  template <std::integral T> bool operator OP(T A, const SymInt &B) {          \
    return static_cast<int64_t>(A) OP B.example();                             \
  }
NNG_SYMINT_CMP(==)
NNG_SYMINT_CMP(!=)
NNG_SYMINT_CMP(<)
NNG_SYMINT_CMP(<=)
NNG_SYMINT_CMP(>)
NNG_SYMINT_CMP(>=)
#undef NNG_SYMINT_CMP

/// Prints the value, or "sym(example)" for a symbolic one.
std::ostream &operator<<(std::ostream &OS, const SymInt &S);

/// A list of sizes for view/reshape/expand: built from braces of integers
/// and SymInts, a std::vector<int64_t> or a std::vector<SymInt>.
class SymIntList {
public:
  SymIntList(std::initializer_list<SymInt> L) : V(L) {}
  SymIntList(const std::vector<int64_t> &L) : V(L.begin(), L.end()) {}
  SymIntList(std::vector<SymInt> L) : V(std::move(L)) {}

  const std::vector<SymInt> &values() const { return V; }
  size_t size() const { return V.size(); }
  const SymInt &operator[](size_t I) const { return V[I]; }
  /// True when an entry is symbolic.
  bool isSymbolic() const {
    for (const SymInt &S : V)
      if (S.isSymbolic())
        return true;
    return false;
  }
  /// The concrete values / example extents.
  std::vector<int64_t> examples() const {
    std::vector<int64_t> R;
    R.reserve(V.size());
    for (const SymInt &S : V)
      R.push_back(S.example());
    return R;
  }

private:
  std::vector<SymInt> V;
};

} // namespace nng
