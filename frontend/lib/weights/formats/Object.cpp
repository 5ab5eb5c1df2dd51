//===- Object.cpp - The value tree a checkpoint file holds ------*- C++ -*-===//
//
// Constructors, checked accessors and the short Python-like summary of
// weights::Object (Object.h). Accessors on the wrong kind throw an
// nng::Error naming the kind asked for and the kind found.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/weights/Object.h"
#include "nngraph/runtime/Error.h"

#include <cmath>
#include <sstream>

namespace nng::weights {

Object Object::boolean(bool B) {
  Object O;
  O.K = Kind::Bool;
  O.B = B;
  return O;
}

Object Object::integer(int64_t I) {
  Object O;
  O.K = Kind::Int;
  O.I = I;
  return O;
}

Object Object::floating(double D) {
  Object O;
  O.K = Kind::Float;
  O.D = D;
  return O;
}

Object Object::string(std::string S) {
  Object O;
  O.K = Kind::String;
  O.S = std::move(S);
  return O;
}

Object Object::tensor(rt::Tensor T) {
  Object O;
  O.K = Kind::Tensor;
  O.T = std::move(T);
  return O;
}

Object Object::list(std::vector<Object> Elements) {
  Object O;
  O.K = Kind::List;
  O.Elems = std::move(Elements);
  return O;
}

Object Object::tuple(std::vector<Object> Elements) {
  Object O;
  O.K = Kind::Tuple;
  O.Elems = std::move(Elements);
  return O;
}

Object Object::dict(std::vector<DictEntry> Entries) {
  for (const DictEntry &E : Entries)
    NNG_CHECK(E.first.K == Kind::String || E.first.K == Kind::Int,
              "weights::Object::dict: a key is a ", kindName(E.first.K),
              "; dict keys must be strings or integers");
  Object O;
  O.K = Kind::Dict;
  O.Entries = std::move(Entries);
  return O;
}

const char *Object::kindName(Kind K) {
  switch (K) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::String:
    return "string";
  case Kind::Tensor:
    return "tensor";
  case Kind::List:
    return "list";
  case Kind::Tuple:
    return "tuple";
  case Kind::Dict:
    return "dict";
  }
  return "?";
}

[[noreturn]] static void expectKind(Object::Kind Have, const char *Want) {
  fail(ErrorKind::InvalidArgument, "weights::Object: expected a ", Want,
       " but the value is a ", Object::kindName(Have));
}

bool Object::toBool() const {
  if (K != Kind::Bool)
    expectKind(K, "bool");
  return B;
}

int64_t Object::toInt() const {
  if (K != Kind::Int)
    expectKind(K, "int");
  return I;
}

double Object::toDouble() const {
  if (K == Kind::Float)
    return D;
  if (K == Kind::Int)
    return static_cast<double>(I);
  if (K == Kind::Bool)
    return B ? 1.0 : 0.0;
  expectKind(K, "float, int or bool");
}

const std::string &Object::toStringRef() const {
  if (K != Kind::String)
    expectKind(K, "string");
  return S;
}

const rt::Tensor &Object::toTensor() const {
  if (K != Kind::Tensor)
    expectKind(K, "tensor");
  return T;
}

const std::vector<Object> &Object::elements() const {
  if (!isSequence())
    expectKind(K, "list or tuple");
  return Elems;
}

std::vector<Object> &Object::elements() {
  if (!isSequence())
    expectKind(K, "list or tuple");
  return Elems;
}

const std::vector<Object::DictEntry> &Object::entries() const {
  if (K != Kind::Dict)
    expectKind(K, "dict");
  return Entries;
}

std::vector<Object::DictEntry> &Object::entries() {
  if (K != Kind::Dict)
    expectKind(K, "dict");
  return Entries;
}

const Object *Object::find(const std::string &Key) const {
  if (K != Kind::Dict)
    expectKind(K, "dict");
  for (const DictEntry &E : Entries)
    if (E.first.K == Kind::String && E.first.S == Key)
      return &E.second;
  return nullptr;
}

static void quote(std::ostringstream &OS, const std::string &S) {
  OS << '\'';
  for (char C : S) {
    if (C == '\'' || C == '\\')
      OS << '\\' << C;
    else if (static_cast<unsigned char>(C) < 0x20)
      OS << "\\x" << "0123456789abcdef"[(C >> 4) & 15]
         << "0123456789abcdef"[C & 15];
    else
      OS << C;
  }
  OS << '\'';
}

static void render(std::ostringstream &OS, const Object &O, int Depth) {
  switch (O.kind()) {
  case Object::Kind::None:
    OS << "None";
    return;
  case Object::Kind::Bool:
    OS << (O.toBool() ? "True" : "False");
    return;
  case Object::Kind::Int:
    OS << O.toInt();
    return;
  case Object::Kind::Float: {
    double D = O.toDouble();
    if (std::isnan(D))
      OS << "nan";
    else if (std::isinf(D))
      OS << (D < 0 ? "-inf" : "inf");
    else
      OS << D;
    return;
  }
  case Object::Kind::String:
    quote(OS, O.toStringRef());
    return;
  case Object::Kind::Tensor: {
    const rt::Tensor &T = O.toTensor();
    if (!T.defined()) {
      OS << "tensor(undefined)";
      return;
    }
    OS << "tensor(" << dtypeName(T.dtype()) << T.shape().toString() << ")";
    return;
  }
  case Object::Kind::List:
  case Object::Kind::Tuple: {
    bool IsList = O.kind() == Object::Kind::List;
    const auto &E = O.elements();
    OS << (IsList ? '[' : '(');
    if (Depth <= 0 && !E.empty()) {
      OS << "..." << E.size() << " elements";
    } else {
      for (size_t I = 0; I < E.size(); ++I) {
        if (I)
          OS << ", ";
        if (I == 8) {
          OS << "...+" << (E.size() - I);
          break;
        }
        render(OS, E[I], Depth - 1);
      }
      if (!IsList && E.size() == 1)
        OS << ',';
    }
    OS << (IsList ? ']' : ')');
    return;
  }
  case Object::Kind::Dict: {
    const auto &E = O.entries();
    OS << '{';
    if (Depth <= 0 && !E.empty()) {
      OS << "..." << E.size() << " entries";
    } else {
      for (size_t I = 0; I < E.size(); ++I) {
        if (I)
          OS << ", ";
        if (I == 8) {
          OS << "...+" << (E.size() - I);
          break;
        }
        render(OS, E[I].first, 0);
        OS << ": ";
        render(OS, E[I].second, Depth - 1);
      }
    }
    OS << '}';
    return;
  }
  }
}

std::string Object::summary(int MaxDepth) const {
  std::ostringstream OS;
  render(OS, *this, MaxDepth);
  return OS.str();
}

} // namespace nng::weights
