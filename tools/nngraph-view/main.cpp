//===- main.cpp - nngraph-view: a model as a self-contained HTML page -----===//
//
// The program is the library's driver (tools/lib/ViewDriver.cpp); see
// `nngraph-view --help`.
//
//===----------------------------------------------------------------------===//

#include "nngraph/tools/ViewDriver.h"

#include <iostream>

int main(int argc, char **argv) {
  return nng::tools::runViewDriver({argv, argv + argc}, std::cout, std::cerr);
}
