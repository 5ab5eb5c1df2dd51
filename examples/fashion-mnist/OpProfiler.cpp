//===- OpProfiler.cpp - Timing every dispatched operation -----------------===//
//
// The mode is popped while call() runs (Dispatch.h), so dispatch::call here
// runs the op eagerly and records autograd exactly as without the mode;
// ops dispatched from inside it (none today, but a composite could) see the
// mode again, which the nesting stack accounts for.
//
//===----------------------------------------------------------------------===//

#include "OpProfiler.h"

#include "nngraph/ir/OpSchema.h"

#include <algorithm>

namespace fmnist {

std::vector<nng::Tensor>
OpProfiler::call(const nng::dispatch::OpCall &C) {
  using Clock = std::chrono::steady_clock;
  NestedSeconds.push_back(0.0);
  Clock::time_point Start = Clock::now();
  std::vector<nng::Tensor> Out;
  try {
    Out = nng::dispatch::call(C.Op, C.Inputs, C.Attrs, C.NumOutputs);
  } catch (...) {
    NestedSeconds.pop_back();
    throw;
  }
  double Total = std::chrono::duration<double>(Clock::now() - Start).count();
  double Nested = NestedSeconds.back();
  NestedSeconds.pop_back();
  if (!NestedSeconds.empty())
    NestedSeconds.back() += Total;
  Stat &S = Stats[std::string(nng::ir::getOpSchema(C.Op).Name)];
  ++S.Calls;
  S.Seconds += Total - Nested;
  return Out;
}

void OpProfiler::report(std::FILE *Out, double WallSeconds, size_t Top) const {
  std::vector<std::pair<std::string, Stat>> Sorted(Stats.begin(), Stats.end());
  std::sort(Sorted.begin(), Sorted.end(), [](const auto &A, const auto &B) {
    return A.second.Seconds > B.second.Seconds;
  });
  double InOps = 0;
  for (const auto &[Name, S] : Sorted)
    InOps += S.Seconds;
  std::fprintf(Out,
               "profile: %.2f s in dispatched ops of %.2f s profiled "
               "(%.1f%%; the rest: autograd engine, optimizer bookkeeping, "
               "batch assembly)\n",
               InOps, WallSeconds,
               WallSeconds > 0 ? 100.0 * InOps / WallSeconds : 0.0);
  std::fprintf(Out, "  %-28s %9s %10s %11s %7s\n", "op", "calls", "total s",
               "mean us", "share");
  for (size_t I = 0; I < Sorted.size() && I < Top; ++I) {
    const auto &[Name, S] = Sorted[I];
    std::fprintf(Out, "  %-28s %9lld %10.3f %11.1f %6.1f%%\n", Name.c_str(),
                 static_cast<long long>(S.Calls), S.Seconds,
                 1e6 * S.Seconds / double(std::max<int64_t>(S.Calls, 1)),
                 WallSeconds > 0 ? 100.0 * S.Seconds / WallSeconds : 0.0);
  }
  if (Sorted.size() > Top)
    std::fprintf(Out, "  (%zu more ops)\n", Sorted.size() - Top);
}

} // namespace fmnist
