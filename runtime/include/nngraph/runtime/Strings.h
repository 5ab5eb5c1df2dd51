//===- Strings.h - The process-wide pool of interned strings ----*- C++ -*-===//
//
// Elements of str tensors are StringIds (DType.h): 8-byte handles into one
// process-wide, append-only, thread-safe pool of interned strings. So string
// tensors stay trivially copyable: every kernel that moves elements by their
// size works on them unchanged, and since equal strings get equal ids,
// equality compares ids. Interned strings are never freed: str tensors are
// for small preprocessing tables (labels, stopwords, categories), not bulk
// text. Two text helpers sit beside the pool: trimSpace and
// quoteForDisplay.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/DType.h"

#include <string>
#include <string_view>
#include <vector>

namespace nng::rt {

/// The id of S in the pool, adding it on first use. Thread-safe.
StringId internString(std::string_view S);
/// The string of Id; valid for the life of the process. Throws
/// Error(InvalidArgument) for an id the pool never handed out.
std::string_view stringOf(StringId Id);
/// Number of distinct strings interned so far (the empty string included).
size_t internedStringCount();

/// Bytes of the strings interned so far (their characters, not the index).
size_t internedStringBytes();

/// S without leading and trailing white space (std::isspace in the C
/// locale): for parsing numbers, pipeline strings and list files.
std::string_view trimSpace(std::string_view S);

/// S quoted for display the way numpy prints a string element: 'text' in
/// single quotes, or "text" in double quotes when S holds a single quote
/// and no double quote; backslashes, the quote and control bytes escaped
/// (\\n, \\t, \\r, \\xHH); bytes >= 0x80 copied.
std::string quoteForDisplay(std::string_view S);

} // namespace nng::rt
