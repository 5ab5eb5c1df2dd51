//===- TextSyntax.h - Lexical rules of the printer and parser -*- C++ -*-===//
//-*-===//
//
// The small lexical rules of the text format (*.nng) that the printer and the
// lexer must agree on for the output to round-trip: which value names,
// identifiers and dim symbols print bare, how strings are quoted, and how
// numbers are spelled (floats in their shortest round-trip form, always
// recognisable as floats). Private to the ir library.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/ir/Type.h"
#include "nngraph/runtime/Tensor.h"

#include <string>
#include <string_view>

namespace nng::ir::text {

/// True for the characters of a bare value name: [A-Za-z0-9_.:/-].
bool isValueNameChar(char C);
/// True when Name prints bare after '%': non-empty, only value-name
/// characters, and not ending in ':' (so "%x: f32[2]" stays unambiguous).
bool isBareValueName(std::string_view Name);
/// True for the first character of an identifier: [A-Za-z_].
bool isIdentStart(char C);
/// True for the other characters of an identifier: [A-Za-z0-9_.].
bool isIdentChar(char C);
/// True when S is a non-empty identifier.
bool isIdentifier(std::string_view S);

/// S in double quotes with C escapes (\" \\ \n \t \r and \xHH for other
/// control bytes); bytes >= 0x80 are copied unchanged.
std::string quoteString(std::string_view S);
/// "%name" or "%\"quoted name\"".
std::string formatValueName(std::string_view Name);
/// Like TensorType::toString, but a dim symbol that is not an identifier is
/// quoted so that it parses back.
std::string formatType(const TensorType &T);

/// The shortest text that parses back to exactly F, always containing '.',
/// 'e', "inf" or "nan" so that it reads as a float ("1.0", "1e-05", "-inf").
std::string formatFloat(float F);
/// The same for double.
std::string formatDouble(double D);

/// Appends the flat row-major values of T (contiguous or not) to Out,
/// separated by ", ": floats shortest round-trip (f16/bf16 through float),
/// integers in decimal, bools as true/false, strings quoted (quoteString).
void appendTensorValues(const rt::Tensor &T, std::string &Out);

} // namespace nng::ir::text
