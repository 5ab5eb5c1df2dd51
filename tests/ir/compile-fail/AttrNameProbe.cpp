//===- AttrNameProbe.cpp - Reads attributes by checked names -------------===//
//
// Compiled, never linked, by CheckAttrNames.cmake (ctest ir.attr-names-*):
// with PROBE_CASE 0 it reads attributes Ops.def declares and must compile;
// every other case reads a name Ops.def lacks, or a name with the wrong type,
// and must fail to compile with the check's message.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Graph.h"

#ifndef PROBE_CASE
#error "define PROBE_CASE"
#endif

int64_t probe(const nng::ir::Node &N) {
#if PROBE_CASE == 0 // Correct names and types.
  return N.attrInt("axis") + static_cast<int64_t>(N.attrFloat("epsilon")) +
         N.attrString("auto_pad").size() + N.attrInts("pads").size() +
         N.attrs().has("then_branch") + N.attrByName("axsi").i();
#elif PROBE_CASE == 1 // Misspelt: "axsi".
  return N.attrInt("axsi");
#elif PROBE_CASE == 2 // Declared, but as an int: "axis" read as a string.
  return N.attrString("axis").size();
#elif PROBE_CASE == 3 // Misspelt in an AttrMap lookup.
  return N.attrs().has("then_branhc");
#endif
}
