//===- Json.h - A tiny strict JSON reader for file headers ------*- C++ -*-===//
//
// The safetensors header is a JSON object. This private parser reads exactly
// RFC 8259 JSON (no comments, no trailing commas, no NaN, strings valid
// UTF-8) into a small value tree whose objects keep their key order and
// refuse duplicate keys. It never recurses deeper than a fixed limit and
// checks every index against the input, so any byte sequence gives either a
// value or an nng::Error(Parse) that says where the input went wrong. Numbers
// keep their text; callers convert them with toUInt64/toInt64, which refuse
// fractions, exponents and overflow. jsonQuote() writes a JSON string.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nng::weights::json {

struct Member;

/// One JSON value. Only the members of its kind are meaningful.
struct Value {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind K = Kind::Null;
  bool B = false;
  /// The number's text (Number) or the decoded string (String).
  std::string Text;
  std::vector<Value> Elements;
  /// An object's members in file order (a struct, not a std::pair, so the
  /// recursive type also compiles with clang and libstdc++).
  std::vector<Member> Members;

  bool isObject() const { return K == Kind::Object; }
  bool isArray() const { return K == Kind::Array; }
  bool isString() const { return K == Kind::String; }
  bool isNumber() const { return K == Kind::Number; }
  /// The member called Key, or null.
  const Value *find(std::string_view Key) const;
  /// The value as an unsigned integer: nullopt unless it is a Number written
  /// as a non-negative integer (no fraction, no exponent) below 2^64.
  std::optional<uint64_t> toUInt64() const;
  /// The value as an integer in int64's range; nullopt otherwise.
  std::optional<int64_t> toInt64() const;
};

/// One member of a JSON object.
struct Member {
  std::string Name;
  Value V;
};

/// "object", "array", ... for messages.
const char *kindName(Value::Kind K);

/// Parses Text as one JSON value with optional surrounding whitespace.
/// Throws Error(Parse) with the byte offset of the problem; What (e.g.
/// "'x.safetensors': header") starts the message.
Value parse(std::string_view Text, const std::string &What);

/// True when S is well-formed UTF-8 (no overlongs, no surrogates).
bool isValidUtf8(std::string_view S);

/// S as a JSON string literal with quotes; S must be valid UTF-8.
std::string quote(std::string_view S);

} // namespace nng::weights::json
