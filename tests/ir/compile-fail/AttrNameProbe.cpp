//===- AttrNameProbe.cpp - Reads attributes by checked names -------------===//
//
// Compiled, never linked, by CheckAttrNames.cmake (ctest ir.attr-names-*):
// with PROBE_CASE 0 it reads and sets attributes Ops.def declares and must
// compile; every other case reads or sets a name Ops.def lacks, or a name
// with the wrong type, and must fail to compile with the check's message.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/Graph.h"

#ifndef PROBE_CASE
#error "define PROBE_CASE"
#endif

int64_t probe(nng::ir::Node &N) {
#if PROBE_CASE == 0 // Correct names and types.
  N.setAttr("axis", int64_t(1));
  N.setAttr("epsilon", 1e-5f);
  N.setAttr("auto_pad", "VALID");
  N.setAttr("pads", std::vector<int64_t>{0, 0});
  N.setAttr("axis", nng::ir::Attribute(int64_t(2)));
  N.setAttrByName("axsi", nng::ir::Attribute(int64_t(2)));
  nng::ir::AttrMap M;
  M.set("perm", std::vector<int64_t>{1, 0});
  return N.attrInt("axis") + static_cast<int64_t>(N.attrFloat("epsilon")) +
         N.attrString("auto_pad").size() + N.attrInts("pads").size() +
         N.attrs().has("then_branch") + N.attrByName("axsi").i();
#elif PROBE_CASE == 1 // Misspelt: "axsi".
  return N.attrInt("axsi");
#elif PROBE_CASE == 2 // Declared, but as an int: "axis" read as a string.
  return N.attrString("axis").size();
#elif PROBE_CASE == 3 // Misspelt in an AttrMap lookup.
  return N.attrs().has("then_branhc");
#elif PROBE_CASE == 4 // Misspelt in a setting: "epsilom".
  N.setAttr("epsilom", 1e-5f);
  return 0;
#elif PROBE_CASE == 5 // Declared as a float, set to an int.
  N.setAttr("epsilon", int64_t(1));
  return 0;
#elif PROBE_CASE == 6 // Misspelt in an AttrMap setting.
  nng::ir::AttrMap M;
  M.set("prem", std::vector<int64_t>{1, 0});
  return 0;
#endif
}
