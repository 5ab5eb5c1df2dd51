//===- UpwardCallProbe.cpp - A call the link check must refuse -----------===//
//
// Built into nngraph_linkcheck_probe, a library that links nngraph_eager
// only, yet calls autograd: its link check (cmake/NngraphLibrary.cmake)
// must fail with the undefined reference. The test
// layering.link-check-refuses-upward-calls builds that check on demand and
// passes only when it does.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Autograd.h"

void nngraphLinkCheckProbe() { nng::autograd::backward({}); }
