//===- GradMode.cpp - The thread's grad and inference modes ---------------===//
//
// The flags of GradMode.h: thread-local, grad mode on by default.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/GradMode.h"

namespace nng::autograd {

namespace {
thread_local bool GradEnabled = true;
thread_local bool InferenceModeOn = false;
} // namespace

bool isGradEnabled() { return GradEnabled; }
void setGradEnabled(bool On) { GradEnabled = On; }

bool isInferenceModeEnabled() { return InferenceModeOn; }
void setInferenceModeEnabled(bool On) { InferenceModeOn = On; }

} // namespace nng::autograd
