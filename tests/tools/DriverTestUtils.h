//===- DriverTestUtils.h - Running a tool driver in-process in tests -*- C++ -*-===//
//
// What the driver tests share: the bundled small CNN, and running a tool's
// driver on an argument list (the program name prepended) with its exit
// status and both streams captured.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace nng::test {

/// examples/models/small_cnn.nng of the source tree.
inline const std::string SmallCnn =
    std::string(NNGRAPH_SOURCE_DIR) + "/examples/models/small_cnn.nng";

/// A driver run: exit status, stdout and stderr.
struct DriverResult {
  int Status = 0;
  std::string Out, Err;
};

/// A tool driver: argv (with the program name), stdout, stderr.
using DriverFn = std::function<int(const std::vector<std::string> &,
                                   std::ostream &, std::ostream &)>;

/// Runs Driver as program Name with Args.
inline DriverResult runDriver(const DriverFn &Driver, const char *Name,
                              std::vector<std::string> Args) {
  Args.insert(Args.begin(), Name);
  std::ostringstream Out, Err;
  int Status = Driver(Args, Out, Err);
  return {Status, Out.str(), Err.str()};
}

} // namespace nng::test
