//===- Pass.cpp - The pass base class -------------------------------------===//
//
// Default option handling (none accepted) and statistics bookkeeping shared
// by every pass.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/Pass.h"
#include "nngraph/runtime/Error.h"

namespace nng::passes {

Pass::~Pass() = default;

void Pass::setOption(std::string_view Key, std::string_view Value) {
  fail(ErrorKind::InvalidArgument, "pass '", name(), "' has no option '", Key,
       "' (it takes no options)");
}

void Pass::bumpStatistic(std::string_view Name, int64_t Delta) {
  auto It = Stats.find(Name);
  if (It == Stats.end())
    Stats.emplace(std::string(Name), Delta);
  else
    It->second += Delta;
}

} // namespace nng::passes
