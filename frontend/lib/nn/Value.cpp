//===- Value.cpp - The dynamic values modules take and return ------------===//
//
// nn::Value's accessors, with errors that name the kind that was wanted
// and the kind that was there, its Python-like printing, and the tensor
// flattening that module backward hooks use.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Value.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <sstream>

namespace nng::nn {

Value::Value(Tensor X) {
  if (X.defined()) {
    K = Kind::Tensor;
    T = std::move(X);
  }
}

Value Value::tuple(std::vector<Value> Elements) {
  Value V(std::move(Elements));
  V.K = Kind::Tuple;
  return V;
}

Value Value::list(std::vector<Value> Elements) {
  return Value(std::move(Elements));
}

Value Value::dict(std::vector<std::pair<std::string, Value>> Entries) {
  Value V;
  V.K = Kind::Dict;
  for (auto &[Key, E] : Entries) {
    for (const std::string &Existing : V.Keys)
      if (Existing == Key)
        fail(ErrorKind::InvalidArgument, "Value::dict: the key '", Key,
             "' appears twice");
    V.Keys.push_back(Key);
    V.Elems.push_back(std::move(E));
  }
  return V;
}

const char *Value::kindName(Kind K) {
  switch (K) {
  case Kind::None:
    return "None";
  case Kind::Tensor:
    return "Tensor";
  case Kind::Double:
    return "float";
  case Kind::Int:
    return "int";
  case Kind::Bool:
    return "bool";
  case Kind::String:
    return "str";
  case Kind::List:
    return "list";
  case Kind::Tuple:
    return "tuple";
  case Kind::Dict:
    return "dict";
  }
  return "?";
}

void Value::wrongKind(const char *Wanted) const {
  fail(ErrorKind::InvalidArgument, "expected a ", Wanted, " value but got ",
       kindName(K), " (", toString(), ")");
}

Tensor Value::toTensor() const {
  if (K == Kind::Tensor)
    return T;
  if (K == Kind::None)
    return Tensor();
  wrongKind("Tensor");
}

double Value::toDouble() const {
  switch (K) {
  case Kind::Double:
    return D;
  case Kind::Int:
    return static_cast<double>(I);
  case Kind::Bool:
    return B ? 1.0 : 0.0;
  default:
    wrongKind("number");
  }
}

int64_t Value::toInt() const {
  switch (K) {
  case Kind::Int:
    return I;
  case Kind::Bool:
    return B ? 1 : 0;
  case Kind::Double:
    if (std::trunc(D) == D)
      return static_cast<int64_t>(D);
    [[fallthrough]];
  default:
    wrongKind("int");
  }
}

bool Value::toBool() const {
  if (K == Kind::Bool)
    return B;
  if (K == Kind::Int && (I == 0 || I == 1))
    return I != 0;
  wrongKind("bool");
}

const std::string &Value::toStringRef() const {
  if (K != Kind::String)
    wrongKind("str");
  return S;
}

const std::vector<Value> &Value::elements() const {
  if (K != Kind::List && K != Kind::Tuple && K != Kind::Dict)
    wrongKind("list, tuple or dict");
  return Elems;
}

std::vector<Value> &Value::elements() {
  if (K != Kind::List && K != Kind::Tuple && K != Kind::Dict)
    wrongKind("list, tuple or dict");
  return Elems;
}

const std::vector<std::string> &Value::keys() const {
  if (K != Kind::Dict)
    wrongKind("dict");
  return Keys;
}

bool Value::contains(const std::string &Key) const {
  for (const std::string &K2 : keys())
    if (K2 == Key)
      return true;
  return false;
}

const Value &Value::at(const std::string &Key) const {
  const std::vector<std::string> &Ks = keys();
  for (size_t J = 0; J < Ks.size(); ++J)
    if (Ks[J] == Key)
      return Elems[J];
  fail(ErrorKind::InvalidArgument, "the dict value has no key '", Key,
       "'; its keys: ", toString());
}

size_t Value::size() const { return elements().size(); }

std::vector<Tensor> Value::tensors() const {
  std::vector<Tensor> R;
  if (K == Kind::Tensor)
    R.push_back(T);
  else if (K == Kind::List || K == Kind::Tuple || K == Kind::Dict)
    for (const Value &E : Elems)
      for (Tensor &X : E.tensors())
        R.push_back(std::move(X));
  return R;
}

std::string Value::toString() const {
  std::ostringstream OS;
  switch (K) {
  case Kind::None:
    return "None";
  case Kind::Tensor:
    return "Tensor(shape=" + T.shape().toString() + ", dtype=" +
           std::string(dtypeName(T.dtype())) + ")";
  case Kind::Double:
    OS << D;
    return OS.str();
  case Kind::Int:
    return std::to_string(I);
  case Kind::Bool:
    return B ? "True" : "False";
  case Kind::String:
    return "'" + S + "'";
  case Kind::List:
  case Kind::Tuple: {
    OS << (K == Kind::List ? '[' : '(');
    for (size_t J = 0; J < Elems.size(); ++J)
      OS << (J ? ", " : "") << Elems[J].toString();
    if (K == Kind::Tuple && Elems.size() == 1)
      OS << ',';
    OS << (K == Kind::List ? ']' : ')');
    return OS.str();
  }
  case Kind::Dict:
    OS << '{';
    for (size_t J = 0; J < Elems.size(); ++J)
      OS << (J ? ", " : "") << "'" << Keys[J] << "': " << Elems[J].toString();
    OS << '}';
    return OS.str();
  }
  return "?";
}

namespace detail {
void checkArity(const Value &V, size_t N, const char *What) {
  if (!V.isSequence())
    fail(ErrorKind::InvalidArgument, "cannot convert a ",
         Value::kindName(V.kind()), " value to ", What, " of ", N,
         " elements: expected a tuple or list");
  if (V.elements().size() != N)
    fail(ErrorKind::InvalidArgument, "cannot convert a ",
         Value::kindName(V.kind()), " of ", V.elements().size(),
         " elements to ", What, " of ", N, " elements");
}
} // namespace detail

} // namespace nng::nn
