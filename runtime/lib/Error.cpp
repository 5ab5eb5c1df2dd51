//===- Error.cpp - The error type that carries context -------------------===//

#include "nngraph/runtime/Error.h"

namespace nng {

const char *errorKindName(ErrorKind K) {
  switch (K) {
  case ErrorKind::InvalidArgument:
    return "invalid argument";
  case ErrorKind::ShapeMismatch:
    return "shape mismatch";
  case ErrorKind::Parse:
    return "parse error";
  case ErrorKind::Verify:
    return "verification failed";
  case ErrorKind::Unsupported:
    return "unsupported";
  case ErrorKind::IO:
    return "I/O error";
  case ErrorKind::Internal:
    return "internal error";
  }
  return "error";
}

Error::Error(ErrorKind Kind, std::string Message)
    : Kind(Kind), Message(std::move(Message)) {
  rebuild();
}

Error &Error::addContext(std::string Line) {
  Context.push_back(std::move(Line));
  rebuild();
  return *this;
}

void Error::rebuild() {
  Full = Message;
  for (const std::string &C : Context)
    Full += "\n  " + C;
}

} // namespace nng
