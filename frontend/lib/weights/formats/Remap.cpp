//===- Remap.cpp - Renaming the keys of a state dict ----------------------===//
//
// Prefix stripping, regex renames and prefix adding over a list of keys,
// with a per-step report and collision detection. Runtime only: no
// nng::Tensor, no nn::.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Remap.h"
#include "nngraph/runtime/Error.h"

#include <regex>
#include <sstream>
#include <unordered_map>

namespace nng::weights {

namespace {

std::regex compileRule(const RenameRule &R) {
  try {
    return std::regex(R.Pattern, std::regex::ECMAScript);
  } catch (const std::regex_error &E) {
    fail(ErrorKind::InvalidArgument, "rename rule '", R.text(),
         "': the pattern '", R.Pattern, "' is not a valid regular expression (",
         E.what(), "); use ECMAScript syntax, e.g. '^backbone\\.(.*)=$1'");
  }
}

} // namespace

RenameRule parseRenameRule(const std::string &Text) {
  size_t Eq = Text.find('=');
  if (Eq == std::string::npos)
    fail(ErrorKind::InvalidArgument, "rename rule '", Text,
         "' has no '='; write PATTERN=REPLACEMENT, e.g. "
         "'^features\\.(\\d+)=layers.$1'");
  RenameRule R{Text.substr(0, Eq), Text.substr(Eq + 1)};
  if (R.Pattern.empty())
    fail(ErrorKind::InvalidArgument, "rename rule '", Text,
         "' has an empty pattern; write PATTERN=REPLACEMENT");
  compileRule(R); // Validate now so bad rules fail before any work.
  return R;
}

std::vector<std::string> RemapReport::unmatched() const {
  std::vector<std::string> R;
  for (const RemapStep &S : Steps)
    if (S.Changed == 0)
      R.push_back(S.Description);
  return R;
}

std::string RemapReport::toString() const {
  std::ostringstream OS;
  for (const RemapStep &S : Steps)
    OS << S.Description << ": " << S.Changed << " key"
       << (S.Changed == 1 ? "" : "s") << " changed"
       << (S.Changed == 0 ? " (matched nothing)" : "") << "\n";
  return OS.str();
}

std::vector<std::string> remapKeyList(const std::vector<std::string> &Keys,
                                      const RemapOptions &Opts,
                                      RemapReport *Report) {
  std::vector<std::string> Out = Keys;
  std::vector<RemapStep> Steps;

  if (!Opts.StripPrefix.empty()) {
    RemapStep S{"strip-prefix '" + Opts.StripPrefix + "'", 0};
    for (std::string &K : Out)
      if (K.compare(0, Opts.StripPrefix.size(), Opts.StripPrefix) == 0) {
        K.erase(0, Opts.StripPrefix.size());
        ++S.Changed;
      }
    Steps.push_back(S);
  }
  for (const RenameRule &R : Opts.Renames) {
    std::regex Re = compileRule(R);
    RemapStep S{"rename '" + R.text() + "'", 0};
    for (std::string &K : Out) {
      std::string New = std::regex_replace(K, Re, R.Replacement);
      if (New != K) {
        K = std::move(New);
        ++S.Changed;
      }
    }
    Steps.push_back(S);
  }
  if (!Opts.AddPrefix.empty()) {
    RemapStep S{"add-prefix '" + Opts.AddPrefix + "'", 0};
    for (std::string &K : Out)
      K = Opts.AddPrefix + K;
    S.Changed = Out.size();
    Steps.push_back(S);
  }

  // Empty names and collisions.
  std::unordered_map<std::string, size_t> Seen;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Out[I].empty())
      fail(ErrorKind::InvalidArgument, "key remapping: key '", Keys[I],
           "' becomes empty; check --strip-prefix / --rename");
    auto [It, Inserted] = Seen.emplace(Out[I], I);
    if (!Inserted)
      fail(ErrorKind::InvalidArgument, "key remapping: keys '",
           Keys[It->second], "' and '", Keys[I], "' both become '", Out[I],
           "'; a state dict needs unique keys, so adjust the rules so that "
           "they map to different names");
  }

  if (Report) {
    Report->Steps = std::move(Steps);
    Report->Renamed.clear();
    for (size_t I = 0; I < Out.size(); ++I)
      if (Out[I] != Keys[I])
        Report->Renamed.emplace_back(Keys[I], Out[I]);
  }
  return Out;
}

TensorMap remapKeys(const TensorMap &M, const RemapOptions &Opts,
                    RemapReport *Report) {
  std::vector<std::string> New = remapKeyList(M.keys(), Opts, Report);
  std::vector<TensorMap::Entry> Es;
  Es.reserve(M.size());
  size_t I = 0;
  for (const auto &[K, T] : M)
    Es.emplace_back(New[I++], T);
  return TensorMap(std::move(Es));
}

} // namespace nng::weights
