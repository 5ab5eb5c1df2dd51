//===- PassRegistry.cpp - Passes by name ----------------------------------===//
//
// The process-wide table of passes. It is created on first use with the
// built-in passes, so nothing depends on static constructors surviving the
// link of a static library.
//
//===----------------------------------------------------------------------===//

#include "nngraph/passes/PassRegistry.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>
#include <map>

namespace nng::passes {
namespace {

using Registry = std::map<std::string, PassInfo, std::less<>>;

bool isKebabCase(std::string_view S) {
  if (S.empty() || S.front() == '-' || S.back() == '-')
    return false;
  return std::all_of(S.begin(), S.end(), [](char C) {
    return (C >= 'a' && C <= 'z') || (C >= '0' && C <= '9') || C == '-';
  });
}

void add(Registry &R, PassInfo Info) {
  NNG_CHECK(isKebabCase(Info.Name), "registerPass: pass name '", Info.Name,
            "' is not kebab-case (lower-case letters, digits and '-')");
  NNG_CHECK(Info.Create, "registerPass: pass '", Info.Name, "' has no factory");
  NNG_CHECK(!R.count(Info.Name), "registerPass: a pass named '", Info.Name,
            "' is already registered");
  std::string Name = Info.Name;
  R.emplace(std::move(Name), std::move(Info));
}

/// Registers a built-in pass, taking its name and summary from an instance
/// so that they are written down once, in the pass's own file.
void addBuiltin(Registry &R, std::unique_ptr<Pass> (*Factory)()) {
  std::unique_ptr<Pass> P = Factory();
  add(R, PassInfo{std::string(P->name()), std::string(P->summary()), Factory});
}

Registry &registry() {
  static Registry R = [] {
    Registry R;
#define NNG_PASS(Factory) addBuiltin(R, Factory);
#include "nngraph/passes/Passes.def"
    return R;
  }();
  return R;
}

} // namespace

void registerPass(PassInfo Info) { add(registry(), std::move(Info)); }

const PassInfo *lookupPass(std::string_view Name) {
  auto &R = registry();
  auto It = R.find(Name);
  return It == R.end() ? nullptr : &It->second;
}

std::vector<const PassInfo *> registeredPasses() {
  std::vector<const PassInfo *> Result;
  for (auto &[Name, Info] : registry())
    Result.push_back(&Info);
  return Result;
}

std::string registeredPassNames() {
  std::string S;
  for (const PassInfo *P : registeredPasses()) {
    if (!S.empty())
      S += ", ";
    S += P->Name;
  }
  return S;
}

std::unique_ptr<Pass> createPass(std::string_view Name) {
  const PassInfo *Info = lookupPass(Name);
  if (!Info)
    fail(ErrorKind::InvalidArgument, "unknown pass '", Name,
         "'; valid passes: ", registeredPassNames());
  return Info->Create();
}

} // namespace nng::passes
