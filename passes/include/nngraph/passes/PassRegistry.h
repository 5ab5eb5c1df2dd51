//===- PassRegistry.h - Passes by name --------------------------*- C++ -*-===//
//
// The registry maps kebab-case pass names to factories. Built-in passes are
// registered when the registry is first used (explicitly, not by static
// constructors, which a static library may drop); more can be added with
// registerPass().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/rewrite/Pass.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nng::passes {

/// What the registry knows of one pass.
struct PassInfo {
  std::string Name;
  std::string Summary;
  std::function<std::unique_ptr<Pass>()> Create;
};

/// Registers a pass; throws Error(InvalidArgument) when Name is taken or is
/// not kebab-case.
void registerPass(PassInfo Info);
/// The pass registered under Name, or null.
const PassInfo *lookupPass(std::string_view Name);
/// Every registered pass, sorted by name.
std::vector<const PassInfo *> registeredPasses();
/// A new instance of pass Name; throws Error(InvalidArgument) listing the
/// valid names when there is none.
std::unique_ptr<Pass> createPass(std::string_view Name);
/// "dce, shape-infer": the valid names, for messages.
std::string registeredPassNames();

} // namespace nng::passes
