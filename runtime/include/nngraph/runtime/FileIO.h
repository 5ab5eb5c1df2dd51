//===- FileIO.h - Whole-file reads and atomic writes -------------*- C++ -*-===//
//
// Every tool and format writer that produces a file writes it through
// writeFileAtomic, so a failed run never leaves a truncated output or
// touches an existing file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace nng::rt {

/// Writes Contents to Path atomically: a temporary file in Path's directory
/// is written, flushed to disk and renamed over Path. On failure the
/// temporary file is removed, Path is untouched and Error(IO) is thrown.
void writeFileAtomic(const std::string &Path, std::string_view Contents);

/// Reads a whole file; throws Error(IO) naming the path and the reason.
std::string readFile(const std::string &Path);

} // namespace nng::rt
