//===- Unpickler.cpp - The restricted unpickler of .pt files ----*- C++ -*-===//
//
// A pickle virtual machine (protocols 2-5) that can only build data: it
// knows the opcodes torch.save emits plus the other data opcodes of
// protocols 2-5, and resolves globals against a fixed allow-list (see
// Pickle.h). Calls (REDUCE, NEWOBJ) are interpreted, never executed: each
// allowed callable has a C++ rebuild that checks its arguments. Values on
// the stack are shared nodes (pickle memo references alias), converted to
// a weights::Object tree at STOP with limits on depth and size; containers
// are torn down iteratively so hostile nesting cannot overflow the stack.
// Every read is bounds-checked; errors name the archive member, the
// opcode or global and the byte offset.
//
//===----------------------------------------------------------------------===//

#include "Pickle.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"

#include <cstring>
#include <unordered_map>

namespace nng::weights::pickle {

namespace {

/// The allowed globals.
enum class Global {
  RebuildTensorV2,
  RebuildTensor,
  RebuildParameter,
  RebuildParameterWithState,
  OrderedDict,
  Set,
  FrozenSet,
  CodecsEncode,
  Device,
  StorageType,
};

struct PyVal;
using Ref = std::shared_ptr<PyVal>;

/// A value on the pickle stack.
struct PyVal {
  enum class Kind { Obj, List, Tuple, Dict, Set, Global, Storage } K;
  explicit PyVal(Kind K) : K(K) {}
  /// Scalars, strings and tensors.
  Object Scalar;
  std::vector<Ref> Items;
  std::vector<std::pair<Ref, Ref>> DictItems;
  std::unordered_map<std::string, size_t> KeyIndex;
  Global G = Global::OrderedDict;
  std::string GlobalName;
  DType Type = DType::F32;
  std::shared_ptr<Storage> St;
  std::string StKey;
  int64_t StNumel = 0;
};

const char *kindName(const PyVal &V) {
  switch (V.K) {
  case PyVal::Kind::Obj:
    return Object::kindName(V.Scalar.kind());
  case PyVal::Kind::List:
    return "list";
  case PyVal::Kind::Tuple:
    return "tuple";
  case PyVal::Kind::Dict:
    return "dict";
  case PyVal::Kind::Set:
    return "set";
  case PyVal::Kind::Global:
    return "global";
  case PyVal::Kind::Storage:
    return "storage";
  }
  return "?";
}

/// The torch dtypes accepted as globals besides those of the dtypes .pt
/// files hold (torch.float16): their aliases (torch.half) and the complex
/// dtypes.
const char *const TorchDTypeAliases[] = {
    "half",  "float",     "double",    "long",      "int",
    "short", "complex32", "complex64", "complex128"};

/// Whether torch.Name is a torch dtype the unpickler accepts.
bool isTorchDType(std::string_view Name) {
  for (int I = 0; I < NumDTypes; ++I) {
    DType T = static_cast<DType>(I);
    if (const char *N = torchName(T); N && torchStorageName(T) && Name == N)
      return true;
  }
  for (const char *A : TorchDTypeAliases)
    if (Name == A)
      return true;
  return false;
}

class Unpickler {
public:
  Unpickler(std::string_view Bytes, const std::string &Where,
            const StorageLoader &Load, const Limits &L)
      : In(Bytes), Where(Where), Load(Load), L(L) {
    if (this->L.MaxObjects == 0)
      this->L.MaxObjects = 100000 + 16 * static_cast<uint64_t>(Bytes.size());
  }
  ~Unpickler();
  Object run();

private:
  [[noreturn]] void error(const std::string &Msg) const {
    fail(ErrorKind::Parse, Where, ": ", Msg, " at byte offset ", OpPos);
  }
  const uint8_t *take(uint64_t N, const char *What) {
    if (N > In.size() - Pos)
      error(std::string("truncated pickle: ") + What + " needs " +
            std::to_string(N) + " bytes but only " +
            std::to_string(In.size() - Pos) + " remain");
    const uint8_t *P = reinterpret_cast<const uint8_t *>(In.data()) + Pos;
    Pos += N;
    return P;
  }
  uint64_t le(uint64_t N, const char *What) {
    const uint8_t *P = take(N, What);
    uint64_t V = 0;
    for (uint64_t I = 0; I < N; ++I)
      V |= static_cast<uint64_t>(P[I]) << (8 * I);
    return V;
  }
  std::string line(const char *What) {
    size_t E = In.find('\n', Pos);
    if (E == std::string_view::npos || E - Pos > 1024)
      error(std::string("unterminated or overlong ") + What + " line");
    std::string S(In.substr(Pos, E - Pos));
    Pos = E + 1;
    return S;
  }
  Ref make(PyVal::Kind K) {
    Ref R = std::make_shared<PyVal>(K);
    if (K != PyVal::Kind::Obj)
      Arena.push_back(R);
    return R;
  }
  Ref scalar(Object O) {
    Ref R = make(PyVal::Kind::Obj);
    R->Scalar = std::move(O);
    return R;
  }
  size_t base() const { return Marks.empty() ? 0 : Marks.back(); }
  Ref pop() {
    if (Stack.size() <= base())
      error("stack underflow (the pickle pops a value that is not there)");
    Ref R = std::move(Stack.back());
    Stack.pop_back();
    return R;
  }
  Ref &top() {
    if (Stack.size() <= base())
      error("stack underflow (the pickle uses a value that is not there)");
    return Stack.back();
  }
  std::vector<Ref> popMark() {
    if (Marks.empty())
      error("no MARK on the stack for an opcode that needs one");
    size_t B = Marks.back();
    Marks.pop_back();
    std::vector<Ref> Items(std::make_move_iterator(Stack.begin() + B),
                           std::make_move_iterator(Stack.end()));
    Stack.resize(B);
    return Items;
  }
  Ref resolve(const std::string &Module, const std::string &Name);
  Ref call(const Ref &Fn, const Ref &Args, const char *Op);
  Ref rebuildTensor(const std::vector<Ref> &A, const char *Fn);
  Ref persistentLoad(const Ref &Pid);
  void setItem(PyVal &D, Ref K, Ref V);
  int64_t intArg(const Ref &V, const char *What);
  std::vector<int64_t> intTuple(const Ref &V, const char *What);
  Object convert(const Ref &V, int Depth);

  std::string_view In;
  const std::string &Where;
  const StorageLoader &Load;
  Limits L;
  uint64_t Pos = 0, OpPos = 0, Produced = 0;
  std::vector<Ref> Stack;
  std::vector<size_t> Marks;
  std::unordered_map<uint64_t, Ref> Memo;
  std::vector<Ref> Arena;
};

Unpickler::~Unpickler() {
  // Children are kept alive by the arena, so clearing each container frees
  // nothing recursively; then every node dies with no children.
  for (const Ref &R : Arena) {
    R->Items.clear();
    R->DictItems.clear();
  }
}

Ref Unpickler::resolve(const std::string &Module, const std::string &Name) {
  auto G = [&](Global Gl) {
    Ref R = make(PyVal::Kind::Global);
    R->G = Gl;
    R->GlobalName = Module + "." + Name;
    return R;
  };
  if (Module == "torch._utils") {
    if (Name == "_rebuild_tensor_v2")
      return G(Global::RebuildTensorV2);
    if (Name == "_rebuild_tensor")
      return G(Global::RebuildTensor);
    if (Name == "_rebuild_parameter")
      return G(Global::RebuildParameter);
    if (Name == "_rebuild_parameter_with_state")
      return G(Global::RebuildParameterWithState);
  } else if (Module == "collections" && Name == "OrderedDict") {
    return G(Global::OrderedDict);
  } else if (Module == "builtins" || Module == "__builtin__") {
    if (Name == "set")
      return G(Global::Set);
    if (Name == "frozenset")
      return G(Global::FrozenSet);
  } else if (Module == "_codecs" && Name == "encode") {
    return G(Global::CodecsEncode);
  } else if (Module == "torch") {
    if (Name == "device")
      return G(Global::Device);
    if (std::optional<DType> T = dtypeFromTorchStorageName(Name)) {
      Ref R = G(Global::StorageType);
      R->Type = *T;
      return R;
    }
    if (isTorchDType(Name))
      return scalar(Object::string("torch." + Name));
  }
  error("the pickle names the global '" + Module + "." + Name +
        "', which is not allowed (only tensors, storages and plain "
        "containers are loaded; nothing is executed). If you trust the "
        "file, re-save just its state dict with torch.save(model.state_dict(), "
        "path)");
}

int64_t Unpickler::intArg(const Ref &V, const char *What) {
  if (V->K != PyVal::Kind::Obj || V->Scalar.kind() != Object::Kind::Int)
    error(std::string(What) + " must be an int, not a " + kindName(*V));
  return V->Scalar.toInt();
}

std::vector<int64_t> Unpickler::intTuple(const Ref &V, const char *What) {
  if (V->K != PyVal::Kind::Tuple && V->K != PyVal::Kind::List)
    error(std::string(What) + " must be a tuple of ints, not a " +
          kindName(*V));
  std::vector<int64_t> R;
  for (const Ref &E : V->Items)
    R.push_back(intArg(E, What));
  return R;
}

Ref Unpickler::rebuildTensor(const std::vector<Ref> &A, const char *Fn) {
  if (A.size() < 4)
    error(std::string(Fn) + " takes at least 4 arguments, got " +
          std::to_string(A.size()));
  if (A[0]->K != PyVal::Kind::Storage)
    error(std::string(Fn) + ": the first argument must be a storage, not a " +
          kindName(*A[0]));
  const PyVal &S = *A[0];
  int64_t Offset = intArg(A[1], "storage_offset");
  std::vector<int64_t> Sizes = intTuple(A[2], "size");
  std::vector<int64_t> Strides = intTuple(A[3], "stride");
  auto Bad = [&](const std::string &Why) {
    error(std::string(Fn) + ": tensor on storage '" + S.StKey + "' (" +
          std::to_string(S.StNumel) + " elements): " + Why);
  };
  if (Sizes.size() != Strides.size())
    Bad("size has " + std::to_string(Sizes.size()) + " dimensions but stride " +
        std::to_string(Strides.size()));
  if (Offset < 0)
    Bad("negative storage offset " + std::to_string(Offset));
  int64_t Numel = 1, Last = Offset;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    if (Sizes[I] < 0 || Strides[I] < 0)
      Bad("negative size or stride in dimension " + std::to_string(I));
    if (__builtin_mul_overflow(Numel, Sizes[I], &Numel))
      Bad("the element count overflows");
  }
  if (Numel > 0) {
    for (size_t I = 0; I < Sizes.size(); ++I) {
      int64_t Span;
      if (__builtin_mul_overflow(Sizes[I] - 1, Strides[I], &Span) ||
          __builtin_add_overflow(Last, Span, &Last))
        Bad("the view's extent overflows");
    }
    if (Last >= S.StNumel)
      Bad("offset " + std::to_string(Offset) + " and strides reach element " +
          std::to_string(Last) + ", past the end of the storage");
  } else if (Offset > S.StNumel) {
    Bad("offset " + std::to_string(Offset) + " is past the end of the storage");
  }
  rt::Tensor T(S.St, Shape(Sizes), Strides, Offset, S.Type);
  return scalar(Object::tensor(std::move(T)));
}

Ref Unpickler::persistentLoad(const Ref &Pid) {
  if (Pid->K != PyVal::Kind::Tuple || Pid->Items.size() != 5)
    error("a persistent id must be the tuple ('storage', storage_type, key, "
          "location, numel), not a " +
          std::string(kindName(*Pid)));
  const auto &I = Pid->Items;
  if (I[0]->K != PyVal::Kind::Obj || I[0]->Scalar.kind() != Object::Kind::String ||
      I[0]->Scalar.toStringRef() != "storage")
    error("only persistent ids of kind 'storage' are allowed");
  if (I[1]->K != PyVal::Kind::Global || I[1]->G != Global::StorageType)
    error("the persistent id's storage type is not a torch storage class");
  std::string Key;
  if (I[2]->K == PyVal::Kind::Obj && I[2]->Scalar.kind() == Object::Kind::String)
    Key = I[2]->Scalar.toStringRef();
  else if (I[2]->K == PyVal::Kind::Obj && I[2]->Scalar.kind() == Object::Kind::Int)
    Key = std::to_string(I[2]->Scalar.toInt());
  else
    error("the persistent id's storage key is not a string");
  int64_t Numel = intArg(I[4], "the persistent id's numel");
  if (Numel < 0)
    error("storage '" + Key + "' has a negative element count");
  Ref R = make(PyVal::Kind::Storage);
  R->Type = I[1]->Type;
  R->StKey = Key;
  R->StNumel = Numel;
  R->St = Load(Key, R->Type, Numel);
  return R;
}

void Unpickler::setItem(PyVal &D, Ref K, Ref V) {
  if (D.K != PyVal::Kind::Dict)
    error(std::string("SETITEM(S) on a ") + kindName(D) + ", not a dict");
  std::string Canon;
  if (K->K == PyVal::Kind::Obj && K->Scalar.kind() == Object::Kind::String)
    Canon = "s" + K->Scalar.toStringRef();
  else if (K->K == PyVal::Kind::Obj && K->Scalar.kind() == Object::Kind::Int)
    Canon = "i" + std::to_string(K->Scalar.toInt());
  else
    error(std::string("a dict key is a ") + kindName(*K) +
          "; only string and integer keys are supported");
  auto [It, New] = D.KeyIndex.emplace(std::move(Canon), D.DictItems.size());
  if (New)
    D.DictItems.emplace_back(std::move(K), std::move(V));
  else
    D.DictItems[It->second].second = std::move(V);
}

Ref Unpickler::call(const Ref &Fn, const Ref &Args, const char *Op) {
  if (Fn->K != PyVal::Kind::Global)
    error(std::string(Op) + " calls a " + kindName(*Fn) +
          ", which is not an allowed callable");
  if (Args->K != PyVal::Kind::Tuple)
    error(std::string(Op) + " on '" + Fn->GlobalName +
          "' with arguments that are a " + kindName(*Args) + ", not a tuple");
  const std::vector<Ref> &A = Args->Items;
  switch (Fn->G) {
  case Global::RebuildTensorV2:
  case Global::RebuildTensor:
    return rebuildTensor(A, Fn->GlobalName.c_str());
  case Global::RebuildParameter:
  case Global::RebuildParameterWithState:
    if (A.empty() || A[0]->K != PyVal::Kind::Obj ||
        A[0]->Scalar.kind() != Object::Kind::Tensor)
      error(Fn->GlobalName + ": the first argument must be a tensor");
    return A[0];
  case Global::OrderedDict: {
    Ref D = make(PyVal::Kind::Dict);
    if (A.empty())
      return D;
    if (A.size() != 1 ||
        (A[0]->K != PyVal::Kind::List && A[0]->K != PyVal::Kind::Tuple))
      error("collections.OrderedDict takes one list of (key, value) pairs");
    for (const Ref &P : A[0]->Items) {
      if ((P->K != PyVal::Kind::List && P->K != PyVal::Kind::Tuple) ||
          P->Items.size() != 2)
        error("collections.OrderedDict: an item is not a (key, value) pair");
      setItem(*D, P->Items[0], P->Items[1]);
    }
    return D;
  }
  case Global::Set:
  case Global::FrozenSet: {
    Ref S = make(PyVal::Kind::Set);
    if (A.empty())
      return S;
    if (A.size() != 1 ||
        (A[0]->K != PyVal::Kind::List && A[0]->K != PyVal::Kind::Tuple))
      error(Fn->GlobalName + " takes one list");
    S->Items = A[0]->Items;
    return S;
  }
  case Global::CodecsEncode:
    if (A.empty() || A[0]->K != PyVal::Kind::Obj ||
        A[0]->Scalar.kind() != Object::Kind::String)
      error("_codecs.encode takes a string");
    return A[0];
  case Global::Device: {
    if (A.empty() || A[0]->K != PyVal::Kind::Obj ||
        A[0]->Scalar.kind() != Object::Kind::String)
      error("torch.device takes a string");
    std::string D = A[0]->Scalar.toStringRef();
    if (A.size() > 1)
      D += ":" + std::to_string(intArg(A[1], "the device index"));
    return scalar(Object::string(D));
  }
  case Global::StorageType:
    error(std::string(Op) + " on the storage class '" + Fn->GlobalName +
          "' is not allowed (storages come from persistent ids)");
  }
  error("unhandled global");
}

Object Unpickler::convert(const Ref &V, int Depth) {
  if (Depth > L.MaxDepth)
    error("the object nests deeper than " + std::to_string(L.MaxDepth) +
          " levels (or refers to itself)");
  if (++Produced > L.MaxObjects)
    error("the object expands to more than " + std::to_string(L.MaxObjects) +
          " values (shared references)");
  switch (V->K) {
  case PyVal::Kind::Obj:
    return V->Scalar;
  case PyVal::Kind::List:
  case PyVal::Kind::Tuple:
  case PyVal::Kind::Set: {
    std::vector<Object> E;
    E.reserve(V->Items.size());
    for (const Ref &I : V->Items)
      E.push_back(convert(I, Depth + 1));
    return V->K == PyVal::Kind::Tuple ? Object::tuple(std::move(E))
                                      : Object::list(std::move(E));
  }
  case PyVal::Kind::Dict: {
    std::vector<Object::DictEntry> E;
    E.reserve(V->DictItems.size());
    for (const auto &[K, Val] : V->DictItems)
      E.emplace_back(K->Scalar, convert(Val, Depth + 1));
    return Object::dict(std::move(E));
  }
  case PyVal::Kind::Global:
    error("the result contains the bare global '" + V->GlobalName +
          "', which is not data");
  case PyVal::Kind::Storage:
    error("the result contains a bare storage ('" + V->StKey +
          "'); only tensors are supported");
  }
  error("unhandled value");
}

Object Unpickler::run() {
  while (true) {
    OpPos = Pos;
    uint8_t Op = *take(1, "an opcode");
    switch (Op) {
    case 0x80: { // PROTO
      uint8_t V = *take(1, "PROTO");
      if (V > 5)
        error("unsupported pickle protocol " + std::to_string(V));
      break;
    }
    case 0x95: // FRAME
      le(8, "FRAME");
      break;
    case '.': { // STOP
      Ref R = pop();
      OpPos = Pos - 1;
      return convert(R, 0);
    }
    case '(':
      Marks.push_back(Stack.size());
      break;
    case '0':
      pop();
      break;
    case '1':
      popMark();
      break;
    case '2': {
      Ref T = top();
      Stack.push_back(T);
      break;
    }
    case 'N':
      Stack.push_back(scalar(Object()));
      break;
    case 0x88:
      Stack.push_back(scalar(Object::boolean(true)));
      break;
    case 0x89:
      Stack.push_back(scalar(Object::boolean(false)));
      break;
    case 'J':
      Stack.push_back(scalar(Object::integer(
          static_cast<int32_t>(static_cast<uint32_t>(le(4, "BININT"))))));
      break;
    case 'K':
      Stack.push_back(scalar(Object::integer(static_cast<int64_t>(le(1, "BININT1")))));
      break;
    case 'M':
      Stack.push_back(scalar(Object::integer(static_cast<int64_t>(le(2, "BININT2")))));
      break;
    case 0x8a:   // LONG1
    case 0x8b: { // LONG4
      uint64_t N = Op == 0x8a ? le(1, "LONG1") : le(4, "LONG4");
      if (N > 8)
        error("an integer of " + std::to_string(N) +
              " bytes does not fit in 64 bits");
      uint64_t V = N ? le(N, "a long integer") : 0;
      if (N && N < 8 && (V >> (8 * N - 1)) & 1)
        V |= ~uint64_t(0) << (8 * N); // sign-extend
      Stack.push_back(scalar(Object::integer(static_cast<int64_t>(V))));
      break;
    }
    case 'G': { // BINFLOAT, big-endian
      const uint8_t *P = take(8, "BINFLOAT");
      uint64_t Bits = 0;
      for (int I = 0; I < 8; ++I)
        Bits = (Bits << 8) | P[I];
      double D;
      std::memcpy(&D, &Bits, 8);
      Stack.push_back(scalar(Object::floating(D)));
      break;
    }
    case 'X':    // BINUNICODE
    case 0x8c:   // SHORT_BINUNICODE
    case 0x8d:   // BINUNICODE8
    case 'T':    // BINSTRING
    case 'U':    // SHORT_BINSTRING
    case 'B':    // BINBYTES
    case 'C':    // SHORT_BINBYTES
    case 0x8e: { // BINBYTES8
      uint64_t N = (Op == 0x8c || Op == 'U' || Op == 'C') ? le(1, "a length")
                   : (Op == 0x8d || Op == 0x8e)           ? le(8, "a length")
                                                          : le(4, "a length");
      const uint8_t *P = take(N, "a string");
      Stack.push_back(scalar(Object::string(
          std::string(reinterpret_cast<const char *>(P), N))));
      break;
    }
    case ')':
      Stack.push_back(make(PyVal::Kind::Tuple));
      break;
    case ']':
      Stack.push_back(make(PyVal::Kind::List));
      break;
    case '}':
      Stack.push_back(make(PyVal::Kind::Dict));
      break;
    case 0x8f: // EMPTY_SET
      Stack.push_back(make(PyVal::Kind::Set));
      break;
    case 't':
    case 'l': {
      Ref R = make(Op == 't' ? PyVal::Kind::Tuple : PyVal::Kind::List);
      R->Items = popMark();
      Stack.push_back(R);
      break;
    }
    case 0x91: { // FROZENSET
      Ref R = make(PyVal::Kind::Set);
      R->Items = popMark();
      Stack.push_back(R);
      break;
    }
    case 0x85:
    case 0x86:
    case 0x87: {
      size_t N = Op - 0x84;
      Ref R = make(PyVal::Kind::Tuple);
      R->Items.resize(N);
      for (size_t I = N; I-- > 0;)
        R->Items[I] = pop();
      Stack.push_back(R);
      break;
    }
    case 'd': {
      std::vector<Ref> Items = popMark();
      if (Items.size() % 2)
        error("DICT with an odd number of items");
      Ref D = make(PyVal::Kind::Dict);
      for (size_t I = 0; I < Items.size(); I += 2)
        setItem(*D, Items[I], Items[I + 1]);
      Stack.push_back(D);
      break;
    }
    case 'a': {
      Ref V = pop();
      PyVal &Lst = *top();
      if (Lst.K != PyVal::Kind::List)
        error(std::string("APPEND to a ") + kindName(Lst) + ", not a list");
      Lst.Items.push_back(std::move(V));
      break;
    }
    case 'e':
    case 0x90: { // APPENDS, ADDITEMS
      std::vector<Ref> Items = popMark();
      PyVal &Lst = *top();
      if (Lst.K != (Op == 'e' ? PyVal::Kind::List : PyVal::Kind::Set))
        error(std::string(Op == 'e' ? "APPENDS" : "ADDITEMS") + " to a " +
              kindName(Lst));
      for (Ref &I : Items)
        Lst.Items.push_back(std::move(I));
      break;
    }
    case 's': {
      Ref V = pop();
      Ref K = pop();
      setItem(*top(), std::move(K), std::move(V));
      break;
    }
    case 'u': {
      std::vector<Ref> Items = popMark();
      if (Items.size() % 2)
        error("SETITEMS with an odd number of items");
      PyVal &D = *top();
      for (size_t I = 0; I < Items.size(); I += 2)
        setItem(D, Items[I], Items[I + 1]);
      break;
    }
    case 'q':
    case 'r':
    case 0x94: { // BINPUT, LONG_BINPUT, MEMOIZE
      uint64_t Idx = Op == 'q'   ? le(1, "BINPUT")
                     : Op == 'r' ? le(4, "LONG_BINPUT")
                                 : Memo.size();
      Memo[Idx] = top();
      break;
    }
    case 'h':
    case 'j': {
      uint64_t Idx = Op == 'h' ? le(1, "BINGET") : le(4, "LONG_BINGET");
      auto It = Memo.find(Idx);
      if (It == Memo.end())
        error("memo entry " + std::to_string(Idx) + " is read before it is set");
      Stack.push_back(It->second);
      break;
    }
    case 'c': { // GLOBAL
      std::string Module = line("GLOBAL module");
      std::string Name = line("GLOBAL name");
      Stack.push_back(resolve(Module, Name));
      break;
    }
    case 0x93: { // STACK_GLOBAL
      Ref Name = pop();
      Ref Module = pop();
      if (Name->K != PyVal::Kind::Obj || Module->K != PyVal::Kind::Obj ||
          Name->Scalar.kind() != Object::Kind::String ||
          Module->Scalar.kind() != Object::Kind::String)
        error("STACK_GLOBAL needs two strings");
      Stack.push_back(
          resolve(Module->Scalar.toStringRef(), Name->Scalar.toStringRef()));
      break;
    }
    case 'R': { // REDUCE
      Ref Args = pop();
      Ref Fn = pop();
      Stack.push_back(call(Fn, Args, "REDUCE"));
      break;
    }
    case 0x81: { // NEWOBJ
      Ref Args = pop();
      Ref Cls = pop();
      if (Cls->K != PyVal::Kind::Global ||
          (Cls->G != Global::OrderedDict && Cls->G != Global::Set &&
           Cls->G != Global::FrozenSet))
        error(std::string("NEWOBJ on a ") +
              (Cls->K == PyVal::Kind::Global ? "'" + Cls->GlobalName + "'"
                                             : std::string(kindName(*Cls))) +
              ", which is not an allowed class");
      Stack.push_back(call(Cls, Args, "NEWOBJ"));
      break;
    }
    case 'b': { // BUILD
      Ref State = pop();
      PyVal &Inst = *top();
      bool Ok = Inst.K == PyVal::Kind::Dict ||
                (Inst.K == PyVal::Kind::Obj &&
                 Inst.Scalar.kind() == Object::Kind::Tensor);
      if (!Ok)
        error(std::string("BUILD on a ") +
              (Inst.K == PyVal::Kind::Global ? "'" + Inst.GlobalName + "'"
                                             : std::string(kindName(Inst))) +
              "; only dicts and tensors accept state");
      break; // the state (e.g. a state dict's _metadata) is dropped
    }
    case 'Q': { // BINPERSID
      Ref Pid = pop();
      Stack.push_back(persistentLoad(Pid));
      break;
    }
    default:
      error("unsupported pickle opcode 0x" +
            std::string(1, "0123456789abcdef"[Op >> 4]) +
            std::string(1, "0123456789abcdef"[Op & 15]) +
            " (only the data opcodes of protocols 2-5 are accepted)");
    }
  }
}

} // namespace

Object unpickle(std::string_view Bytes, const std::string &Where,
                const StorageLoader &Load, const Limits &L) {
  Unpickler U(Bytes, Where, Load, L);
  return U.run();
}

} // namespace nng::weights::pickle
