//===- GradMode.h - Whether operations record gradients ---------*- C++ -*-===//
//
// The thread's grad mode (torch.is_grad_enabled) and inference-mode flag,
// and the guards that set them for a scope: NoGradGuard (torch.no_grad),
// InferenceMode (torch.inference_mode), EnableGradGuard
// (torch.enable_grad). Like PyTorch's c10 GradMode, this state belongs to
// the eager library, below autograd: eager dispatch asks it before
// recording, and code that only turns recording off needs nothing more.
// Autograd.h includes this header.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace nng::autograd {

/// Whether operations record backward nodes (thread-local; on by default).
bool isGradEnabled();
void setGradEnabled(bool On);
/// Whether an InferenceMode scope is open on this thread.
bool isInferenceModeEnabled();
void setInferenceModeEnabled(bool On);

} // namespace nng::autograd

namespace nng {

/// Disables gradient recording for its lifetime (torch.no_grad()).
class NoGradGuard {
public:
  NoGradGuard() : Prev(autograd::isGradEnabled()) {
    autograd::setGradEnabled(false);
  }
  ~NoGradGuard() { autograd::setGradEnabled(Prev); }
  NoGradGuard(const NoGradGuard &) = delete;
  NoGradGuard &operator=(const NoGradGuard &) = delete;

private:
  bool Prev;
};

/// torch.inference_mode(): no gradient recording for its lifetime, and
/// autograd::isInferenceModeEnabled() says so (layers may skip work kept
/// only for backward). Unlike PyTorch, tensors made inside are ordinary
/// tensors (not "inference tensors" refused by autograd later).
class InferenceMode {
public:
  InferenceMode()
      : PrevGrad(autograd::isGradEnabled()),
        PrevInference(autograd::isInferenceModeEnabled()) {
    autograd::setGradEnabled(false);
    autograd::setInferenceModeEnabled(true);
  }
  ~InferenceMode() {
    autograd::setInferenceModeEnabled(PrevInference);
    autograd::setGradEnabled(PrevGrad);
  }
  InferenceMode(const InferenceMode &) = delete;
  InferenceMode &operator=(const InferenceMode &) = delete;

private:
  bool PrevGrad, PrevInference;
};

/// Enables gradient recording for its lifetime (torch.enable_grad()).
class EnableGradGuard {
public:
  EnableGradGuard() : Prev(autograd::isGradEnabled()) {
    autograd::setGradEnabled(true);
  }
  ~EnableGradGuard() { autograd::setGradEnabled(Prev); }
  EnableGradGuard(const EnableGradGuard &) = delete;
  EnableGradGuard &operator=(const EnableGradGuard &) = delete;

private:
  bool Prev;
};

} // namespace nng
