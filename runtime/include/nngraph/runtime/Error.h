//===- Error.h - The error type that carries context ------------*- C++ -*-===//
//
// nng::Error is the one exception type of the library. It has a kind, a
// message that says what went wrong, and a stack of context lines (where:
// file, node, key, module path) added as the error travels outwards. Bad
// input never aborts; it throws an Error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace nng {

/// What kind of failure an Error reports.
enum class ErrorKind {
  InvalidArgument, ///< A value the caller passed is not acceptable.
  ShapeMismatch,   ///< Shapes or dtypes do not fit together.
  Parse,           ///< A file or string could not be parsed.
  Verify,          ///< A graph breaks an IR invariant.
  Unsupported,     ///< A valid request that is not implemented.
  IO,              ///< Reading or writing a file failed.
  Internal,        ///< A bug in nngraph.
};

/// Returns a lower-case name for K ("invalid argument", ...).
const char *errorKindName(ErrorKind K);

/// The exception thrown for every recoverable failure.
class Error : public std::exception {
public:
  Error(ErrorKind Kind, std::string Message);

  ErrorKind kind() const { return Kind; }
  /// The message without context lines.
  const std::string &message() const { return Message; }
  /// Context lines, innermost first.
  const std::vector<std::string> &context() const { return Context; }
  /// Adds a line of context ("in node %conv1 (Conv)"); returns *this.
  Error &addContext(std::string Line);
  /// Message followed by the context lines, each on its own line.
  const char *what() const noexcept override { return Full.c_str(); }

private:
  void rebuild();
  ErrorKind Kind;
  std::string Message;
  std::vector<std::string> Context;
  std::string Full;
};

namespace detail {
template <typename... Args> std::string concat(const Args &...A) {
  std::ostringstream OS;
  (OS << ... << A);
  return OS.str();
}
} // namespace detail

/// Throws an Error of kind K whose message is the streamed arguments.
template <typename... Args>
[[noreturn]] void fail(ErrorKind K, const Args &...A) {
  throw Error(K, detail::concat(A...));
}

} // namespace nng

/// Throws nng::Error(InvalidArgument) with the streamed message unless Cond.
#define NNG_CHECK(Cond, ...)                                                   \
  do {                                                                         \
    if (!(Cond))                                                               \
      ::nng::fail(::nng::ErrorKind::InvalidArgument, __VA_ARGS__);             \
  } while (false)

/// Like NNG_CHECK with an explicit ErrorKind.
#define NNG_CHECK_KIND(Cond, Kind, ...)                                        \
  do {                                                                         \
    if (!(Cond))                                                               \
      ::nng::fail(::nng::ErrorKind::Kind, __VA_ARGS__);                        \
  } while (false)
