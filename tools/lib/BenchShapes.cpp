//===- BenchShapes.cpp - nngraph-bench's statistics and shape lists ------===//
//
// Latency percentiles, and the shape-list mode of nngraph-bench
// (BenchShapes.h): parsing --dim-range and --shapes, drawing the shapes,
// running the requests and reporting per-request latency and the
// new-shape cost.
//
//===----------------------------------------------------------------------===//

#include "BenchShapes.h"
#include "RunSetup.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/runtime/SplitMix64.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
#include <ostream>

namespace nng::tools {
using nlohmann::json;

double percentile(const std::vector<double> &Sorted, double P) {
  double Pos = P / 100.0 * static_cast<double>(Sorted.size() - 1);
  size_t Lo = static_cast<size_t>(std::floor(Pos));
  size_t Hi = std::min(Lo + 1, Sorted.size() - 1);
  return Sorted[Lo] +
         (Sorted[Hi] - Sorted[Lo]) * (Pos - static_cast<double>(Lo));
}

Latency summarize(std::vector<double> Runs) {
  Latency L;
  L.Runs = Runs;
  if (Runs.empty())
    return L;
  std::sort(Runs.begin(), Runs.end());
  L.Min = Runs.front();
  L.Max = Runs.back();
  L.Mean = std::accumulate(Runs.begin(), Runs.end(), 0.0) /
           static_cast<double>(Runs.size());
  L.P50 = percentile(Runs, 50);
  L.P90 = percentile(Runs, 90);
  L.P99 = percentile(Runs, 99);
  return L;
}

json latencyJson(const Latency &L) {
  return {{"min", L.Min}, {"p50", L.P50},   {"p90", L.P90},  {"p99", L.P99},
          {"max", L.Max}, {"mean", L.Mean}, {"runs", L.Runs}};
}

std::string fixed(double V, int Digits) {
  char Buf[48];
  std::snprintf(Buf, sizeof(Buf), "%.*f", Digits, V);
  return Buf;
}

namespace {

/// A positive integer, or nullopt.
std::optional<int64_t> positive(std::string_view Text) {
  int64_t V = 0;
  auto [Ptr, Ec] = std::from_chars(Text.data(), Text.data() + Text.size(), V);
  if (Ec != std::errc() || Ptr != Text.data() + Text.size() || V <= 0)
    return std::nullopt;
  return V;
}


} // namespace

DimRange parseDimRange(std::string_view Text) {
  size_t Eq = Text.find('=');
  size_t Colon = Text.find(':', Eq == std::string_view::npos ? 0 : Eq);
  NNG_CHECK(Eq != std::string_view::npos && Eq > 0 &&
                Colon != std::string_view::npos,
            "bad dim range '", Text, "': expected NAME=LO:HI, e.g. S=8:256");
  std::optional<int64_t> Lo = positive(Text.substr(Eq + 1, Colon - Eq - 1));
  std::optional<int64_t> Hi = positive(Text.substr(Colon + 1));
  NNG_CHECK(Lo && Hi, "bad dim range '", Text,
            "': LO and HI must be positive integers, e.g. S=8:256");
  NNG_CHECK(*Lo <= *Hi, "bad dim range '", Text, "': LO (", *Lo,
            ") is above HI (", *Hi, ")");
  return {std::string(Text.substr(0, Eq)), *Lo, *Hi};
}

std::vector<DimBindings> drawShapes(const std::vector<DimRange> &Ranges,
                                    size_t Count, uint64_t Seed) {
  SplitMix64 Gen(Seed);
  std::vector<DimBindings> Shapes(Count);
  for (DimBindings &D : Shapes)
    for (const DimRange &R : Ranges) {
      // The modulo's bias is below 2^-40 for any range of dims.
      uint64_t Span = static_cast<uint64_t>(R.Hi - R.Lo) + 1;
      D[R.Name] = R.Lo + static_cast<int64_t>(Gen.next() % Span);
    }
  return Shapes;
}

std::vector<DimBindings> readShapesFile(const std::string &Path) {
  std::ifstream IS(Path);
  NNG_CHECK_KIND(IS.good(), IO, "cannot read the shapes file '", Path, "'");
  std::vector<DimBindings> Shapes;
  std::string Line;
  for (int LineNo = 1; std::getline(IS, Line); ++LineNo) {
    std::replace(Line.begin(), Line.end(), ',', ' ');
    std::replace(Line.begin(), Line.end(), '\t', ' ');
    size_t First = Line.find_first_not_of(" \r");
    if (First == std::string::npos || Line[First] == '#')
      continue;
    DimBindings D;
    size_t Pos = First;
    while (Pos < Line.size()) {
      size_t End = Line.find_first_of(" \r", Pos);
      std::string_view Word(Line.data() + Pos,
                            (End == std::string::npos ? Line.size() : End) -
                                Pos);
      try {
        parseDimBinding(Word, D);
      } catch (const Error &E) {
        fail(ErrorKind::InvalidArgument, Path, ":", LineNo, ": ", E.what());
      }
      Pos = End == std::string::npos ? Line.size()
                                     : Line.find_first_not_of(" \r", End);
      if (Pos == std::string::npos)
        break;
    }
    Shapes.push_back(std::move(D));
  }
  NNG_CHECK(!Shapes.empty(), "the shapes file '", Path,
            "' lists no request (one line per request, e.g. \"S=17 N=2\")");
  return Shapes;
}

ShapeListRunner::ShapeListRunner(backends::Executable &Exe, const ir::Graph &G,
                                 DimBindings Base, uint64_t Seed)
    : Exe(Exe), G(G), Base(std::move(Base)), Seed(Seed) {}

DimBindings ShapeListRunner::fullDims(const DimBindings &Request) const {
  DimBindings Full;
  for (const std::string &S : inputSymbols(G)) {
    auto R = Request.find(S);
    auto B = Base.find(S);
    Full[S] = R != Request.end() ? R->second : B != Base.end() ? B->second : 1;
  }
  return Full;
}

void ShapeListRunner::markSeen(const DimBindings &Request) {
  Seen.insert(fullDims(Request));
}

ShapeRun ShapeListRunner::run(const DimBindings &Request) {
  ShapeRun R;
  R.Dims = fullDims(Request);
  std::vector<Tensor> Inputs = makeDeterministicInputs(G, R.Dims, Seed);
  auto Start = std::chrono::steady_clock::now();
  Exe.run(Inputs);
  R.Ms = millisSince(Start);
  R.New = Seen.insert(R.Dims).second;
  if (R.New) {
    Start = std::chrono::steady_clock::now();
    Exe.run(Inputs);
    R.RepeatMs = millisSince(Start);
  }
  return R;
}

json dimsJson(const DimBindings &Dims) {
  json J = json::object();
  for (const auto &[Name, Value] : Dims)
    J[Name] = Value;
  return J;
}

std::string shapeText(const DimBindings &Dims) {
  std::string T;
  for (const auto &[Name, Value] : Dims)
    T += (T.empty() ? "" : " ") + Name + "=" + std::to_string(Value);
  return T.empty() ? "(no symbolic dims)" : T;
}

ShapeListSummary summarizeShapeList(const std::vector<ShapeRun> &Runs) {
  ShapeListSummary S;
  std::vector<double> All, Repeats, Seen, Costs;
  std::set<DimBindings> Distinct;
  double MaxCost = -INFINITY;
  for (const ShapeRun &R : Runs) {
    All.push_back(R.Ms);
    Distinct.insert(R.Dims);
    if (!R.New) {
      Seen.push_back(R.Ms);
      continue;
    }
    Repeats.push_back(R.RepeatMs);
    Costs.push_back(R.Ms - R.RepeatMs);
    if (Costs.back() > MaxCost) {
      MaxCost = Costs.back();
      S.MaxCostDims = R.Dims;
    }
  }
  S.Requests = summarize(All);
  S.Repeats = summarize(Repeats);
  if (!Seen.empty())
    S.SeenShape = summarize(Seen);
  S.NewCost = summarize(Costs);
  S.Distinct = Distinct.size();
  return S;
}

namespace {

/// Per distinct shape, in order of first request: the first run, the
/// repeat run and the later requests' runs.
struct PerShape {
  DimBindings Dims;
  std::optional<double> FirstMs, RepeatMs;
  std::vector<double> LaterMs;
};

std::vector<PerShape> perShape(const std::vector<ShapeRun> &Runs) {
  std::vector<PerShape> Shapes;
  std::map<DimBindings, size_t> Index;
  for (const ShapeRun &R : Runs) {
    auto [It, Inserted] = Index.try_emplace(R.Dims, Shapes.size());
    if (Inserted)
      Shapes.push_back({R.Dims, {}, {}, {}});
    PerShape &P = Shapes[It->second];
    if (R.New) {
      P.FirstMs = R.Ms;
      P.RepeatMs = R.RepeatMs;
    } else {
      P.LaterMs.push_back(R.Ms);
    }
  }
  return Shapes;
}

std::string sourceText(const ShapeListSource &Src) {
  if (!Src.File.empty())
    return "from " + Src.File;
  std::string T;
  for (const DimRange &R : Src.Ranges)
    T += (T.empty() ? "" : ", ") + R.Name + " drawn from " +
         std::to_string(R.Lo) + ":" + std::to_string(R.Hi);
  return T + " (shape seed " + std::to_string(Src.ShapeSeed) + ")";
}

/// Distinct shapes listed in the text report; more go to --json only.
constexpr size_t MaxShapesInText = 16;

} // namespace

void printShapeListText(std::ostream &Out, const ShapeListSource &Src,
                        const std::vector<ShapeRun> &Runs, int Rounds,
                        int64_t Specializations, int64_t Reshapes) {
  ShapeListSummary S = summarizeShapeList(Runs);
  size_t News = S.NewCost.Runs.size();
  Out << "shapes: " << Runs.size() << " requests in " << Rounds
      << (Rounds == 1 ? " round" : " rounds") << ", " << sourceText(Src) << "; "
      << S.Distinct << " distinct shapes, " << News << " new to the process\n";
  const Latency &L = S.Requests;
  Out << "latency per request: min " << fixed(L.Min) << " ms, p50 "
      << fixed(L.P50) << " ms, p90 " << fixed(L.P90) << " ms, p99 "
      << fixed(L.P99) << " ms, max " << fixed(L.Max) << " ms, mean "
      << fixed(L.Mean) << " ms (first runs at new shapes included)\n";
  if (S.SeenShape)
    Out << "  at shapes seen before: " << S.SeenShape->Runs.size()
        << " requests, p50 " << fixed(S.SeenShape->P50) << " ms, p99 "
        << fixed(S.SeenShape->P99) << " ms\n";
  if (News > 0) {
    Out << "  repeat run at a new shape: p50 " << fixed(S.Repeats.P50)
        << " ms, p99 " << fixed(S.Repeats.P99) << " ms, max "
        << fixed(S.Repeats.Max) << " ms\n";
    Out << "new-shape cost (first run minus repeat run, " << News
        << (News == 1 ? " shape" : " shapes") << "): median "
        << fixed(S.NewCost.P50) << " ms, max " << fixed(S.NewCost.Max)
        << " ms (" << shapeText(S.MaxCostDims) << "), mean "
        << fixed(S.NewCost.Mean) << " ms\n";
  } else {
    Out << "new-shape cost: no new shape (every request was at a shape "
           "seen before)\n";
  }
  if (Specializations >= 0)
    Out << "cpu backend: " << Specializations << " shape "
        << (Specializations == 1 ? "specialisation" : "specialisations")
        << " compiled (the warm-up's included)"
        << (Reshapes >= 0 ? ", " + std::to_string(Reshapes) + " reshaped" : "")
        << "\n";
  std::vector<PerShape> Shapes = perShape(Runs);
  if (Shapes.size() > MaxShapesInText) {
    Out << "per shape: " << Shapes.size() << " shapes, see --json\n";
    return;
  }
  char Buf[200];
  std::snprintf(Buf, sizeof(Buf), "  %-24s %9s %10s %10s %10s %13s\n", "shape",
                "requests", "first ms", "repeat ms", "cost ms", "later p50 ms");
  Out << "per shape:\n" << Buf;
  for (const PerShape &P : Shapes) {
    auto Ms = [](std::optional<double> V) {
      return V ? fixed(*V) : std::string("-");
    };
    std::optional<double> Cost;
    if (P.FirstMs)
      Cost = *P.FirstMs - *P.RepeatMs;
    std::optional<double> Later;
    if (!P.LaterMs.empty())
      Later = summarize(P.LaterMs).P50;
    std::snprintf(Buf, sizeof(Buf), "  %-24s %9zu %10s %10s %10s %13s\n",
                  shapeText(P.Dims).c_str(),
                  P.LaterMs.size() + (P.FirstMs ? 1 : 0), Ms(P.FirstMs).c_str(),
                  Ms(P.RepeatMs).c_str(), Ms(Cost).c_str(), Ms(Later).c_str());
    Out << Buf;
  }
}

json shapeListJson(const ShapeListSource &Src,
                   const std::vector<ShapeRun> &Runs, int64_t Specializations,
                   int64_t Reshapes) {
  ShapeListSummary S = summarizeShapeList(Runs);
  json J;
  if (!Src.File.empty()) {
    J["source"] = "file";
    J["file"] = Src.File;
  } else {
    J["source"] = "dim-range";
    json Ranges = json::object();
    for (const DimRange &R : Src.Ranges)
      Ranges[R.Name] = {R.Lo, R.Hi};
    J["ranges"] = Ranges;
    J["shape_seed"] = Src.ShapeSeed;
  }
  J["distinct"] = S.Distinct;
  J["new_shapes"] = S.NewCost.Runs.size();
  J["requests"] = json::array();
  for (const ShapeRun &R : Runs) {
    json Q = {{"dims", dimsJson(R.Dims)}, {"ms", R.Ms}, {"new", R.New}};
    if (R.New)
      Q["repeat_ms"] = R.RepeatMs;
    J["requests"].push_back(std::move(Q));
  }
  J["per_shape"] = json::array();
  for (const PerShape &P : perShape(Runs)) {
    json Q = {{"dims", dimsJson(P.Dims)}, {"later_ms", P.LaterMs}};
    Q["first_ms"] = P.FirstMs ? json(*P.FirstMs) : json(nullptr);
    Q["repeat_ms"] = P.RepeatMs ? json(*P.RepeatMs) : json(nullptr);
    J["per_shape"].push_back(std::move(Q));
  }
  J["repeat_latency_ms"] = latencyJson(S.Repeats);
  J["seen_shape_latency_ms"] =
      S.SeenShape ? latencyJson(*S.SeenShape) : json(nullptr);
  json Cost = {{"count", S.NewCost.Runs.size()}};
  if (!S.NewCost.Runs.empty()) {
    Cost["median"] = S.NewCost.P50;
    Cost["max"] = S.NewCost.Max;
    Cost["mean"] = S.NewCost.Mean;
    Cost["max_dims"] = dimsJson(S.MaxCostDims);
  }
  J["new_shape_cost_ms"] = std::move(Cost);
  if (Specializations >= 0)
    J["specializations"] = Specializations;
  if (Reshapes >= 0)
    J["reshaped"] = Reshapes;
  return J;
}

} // namespace nng::tools
