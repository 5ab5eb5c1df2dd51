//===- Pickler.cpp - Writes the data.pkl of a .pt file ----------*- C++ -*-===//
//
// Pickles a weights::Object tree with protocol 2 the way torch.save does:
// tensors as torch._utils._rebuild_tensor_v2(persistent storage id, offset,
// size, stride, False, OrderedDict()), dicts of tensors as
// collections.OrderedDict so key order survives, other dicts, lists and
// tuples with the batched MARK/SETITEMS/APPENDS opcodes, in the subset of
// opcodes that torch 1.13's weights_only unpickler accepts (floats need
// BINFLOAT, which that unpickler does not know; torch >= 2.0 loads them).
//
//===----------------------------------------------------------------------===//

#include "Pickle.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"

#include <cstring>

namespace nng::weights::pickle {

namespace {

class Pickler {
public:
  explicit Pickler(const std::function<TensorRef(const rt::Tensor &)> &Describe)
      : Describe(Describe) {}
  std::string run(const Object &Root) {
    Out += "\x80\x02";
    save(Root, 0);
    Out += '.';
    return std::move(Out);
  }

private:
  void op(uint8_t C) { Out.push_back(static_cast<char>(C)); }
  void le(uint64_t V, int N) {
    for (int I = 0; I < N; ++I)
      Out.push_back(static_cast<char>((V >> (8 * I)) & 0xFF));
  }
  void saveInt(int64_t V) {
    if (V >= 0 && V < 256) {
      op('K');
      le(static_cast<uint64_t>(V), 1);
    } else if (V >= 0 && V < 65536) {
      op('M');
      le(static_cast<uint64_t>(V), 2);
    } else if (V >= INT32_MIN && V <= INT32_MAX) {
      op('J');
      le(static_cast<uint32_t>(static_cast<int32_t>(V)), 4);
    } else {
      // LONG1: minimal two's complement, little-endian.
      uint64_t U = static_cast<uint64_t>(V);
      int N = 8;
      while (N > 1) {
        int64_t Shifted = V >> (8 * (N - 1) - 1);
        if (Shifted != 0 && Shifted != -1)
          break;
        --N;
      }
      op(0x8a);
      le(static_cast<uint64_t>(N), 1);
      le(U, N);
    }
  }
  void saveString(const std::string &S) {
    op('X');
    le(S.size(), 4);
    Out += S;
  }
  void global(const char *Module, const char *Name) {
    op('c');
    Out += Module;
    Out += '\n';
    Out += Name;
    Out += '\n';
  }
  void saveIntTuple(const std::vector<int64_t> &V) {
    op('(');
    for (int64_t I : V)
      saveInt(I);
    op('t');
  }
  void saveTensor(const rt::Tensor &T) {
    TensorRef R = Describe(T);
    const char *Type = torchStorageName(R.Storage.Type);
    NNG_CHECK(Type, "writePt: tensor of dtype ", dtypeName(R.Storage.Type),
              " cannot be stored in a .pt file (supported: f32, f64, f16, "
              "bf16, i64, i32, i16, i8, u8, bool); convert it first");
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    // Persistent id ('storage', torch.XStorage, key, 'cpu', numel).
    op('(');
    saveString("storage");
    global("torch", Type);
    saveString(R.Storage.Key);
    saveString("cpu");
    saveInt(R.Storage.Numel);
    op('t');
    op('Q');
    saveInt(R.Offset);
    saveIntTuple(R.Sizes);
    saveIntTuple(R.Strides);
    op(0x89); // requires_grad False
    global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }
  void save(const Object &O, int Depth) {
    NNG_CHECK(Depth < 1000, "writePt: the object nests deeper than 1000 levels");
    switch (O.kind()) {
    case Object::Kind::None:
      op('N');
      return;
    case Object::Kind::Bool:
      op(O.toBool() ? 0x88 : 0x89);
      return;
    case Object::Kind::Int:
      saveInt(O.toInt());
      return;
    case Object::Kind::Float: {
      double D = O.toDouble();
      uint64_t Bits;
      std::memcpy(&Bits, &D, 8);
      op('G');
      for (int I = 7; I >= 0; --I)
        Out.push_back(static_cast<char>((Bits >> (8 * I)) & 0xFF));
      return;
    }
    case Object::Kind::String:
      saveString(O.toStringRef());
      return;
    case Object::Kind::Tensor:
      NNG_CHECK(O.toTensor().defined(), "writePt: an undefined tensor");
      saveTensor(O.toTensor());
      return;
    case Object::Kind::List: {
      op(']');
      const auto &E = O.elements();
      for (size_t I = 0; I < E.size(); I += 1000) {
        op('(');
        for (size_t J = I; J < E.size() && J < I + 1000; ++J)
          save(E[J], Depth + 1);
        op('e');
      }
      return;
    }
    case Object::Kind::Tuple: {
      op('(');
      for (const Object &E : O.elements())
        save(E, Depth + 1);
      op('t');
      return;
    }
    case Object::Kind::Dict: {
      const auto &E = O.entries();
      bool AllTensors = !E.empty();
      for (const auto &KV : E)
        AllTensors = AllTensors && KV.second.isTensor();
      if (AllTensors) {
        global("collections", "OrderedDict");
        op(')');
        op('R');
      } else {
        op('}');
      }
      for (size_t I = 0; I < E.size(); I += 1000) {
        op('(');
        for (size_t J = I; J < E.size() && J < I + 1000; ++J) {
          save(E[J].first, Depth + 1);
          save(E[J].second, Depth + 1);
        }
        op('u');
      }
      return;
    }
    }
  }

  const std::function<TensorRef(const rt::Tensor &)> &Describe;
  std::string Out;
};

} // namespace

std::string pickle(const Object &Root,
                   const std::function<TensorRef(const rt::Tensor &)> &Describe) {
  return Pickler(Describe).run(Root);
}

} // namespace nng::weights::pickle
