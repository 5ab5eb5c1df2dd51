//===- Debug.h - --debug-only output of passes -------------------*- C++ -*-===//
//
// Passes explain themselves under `nngraph-opt --debug-only=PASS`: why a
// candidate was declined, what was rewritten. debugEnabled(Pass) says whether
// that output is on; debugStream() is where it goes (stderr by default).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// Turns debug output on for the named passes ("all" or "*" for every pass);
/// an empty list turns it off.
void setDebugOnly(std::vector<std::string> PassNames);
/// True when debug output is on for PassName.
bool debugEnabled(std::string_view PassName);
/// The stream debug output goes to.
std::ostream &debugStream();
/// Redirects debug output (null: back to stderr).
void setDebugStream(std::ostream *OS);

} // namespace nng::passes
