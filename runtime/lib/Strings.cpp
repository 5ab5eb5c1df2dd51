//===- Strings.cpp - The process-wide pool of interned strings -----------===//
//
// An append-only pool: a deque of strings (elements never move, so the
// string_views handed out stay valid) and a hash index from contents to id,
// behind a reader-writer lock. Id 0 is the empty string, interned at start.
// Also the text helpers trimSpace and quoteForDisplay.
//
//===----------------------------------------------------------------------===//

#include "nngraph/runtime/Strings.h"
#include "nngraph/runtime/Error.h"

#include <cctype>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace nng::rt {

namespace {
struct Pool {
  std::shared_mutex M;
  std::deque<std::string> Strings;
  std::unordered_map<std::string_view, uint64_t> Index;
  size_t Bytes = 0;
  Pool() {
    Strings.emplace_back();
    Index.emplace(std::string_view(Strings.back()), 0);
  }
};

Pool &pool() {
  static Pool *P = new Pool(); // Never destroyed: ids outlive static dtors.
  return *P;
}
} // namespace

StringId internString(std::string_view S) {
  Pool &P = pool();
  {
    std::shared_lock<std::shared_mutex> L(P.M);
    if (auto It = P.Index.find(S); It != P.Index.end())
      return StringId{It->second};
  }
  std::unique_lock<std::shared_mutex> L(P.M);
  if (auto It = P.Index.find(S); It != P.Index.end())
    return StringId{It->second};
  uint64_t Id = P.Strings.size();
  P.Strings.emplace_back(S);
  P.Index.emplace(std::string_view(P.Strings.back()), Id);
  P.Bytes += S.size();
  return StringId{Id};
}

std::string_view stringOf(StringId Id) {
  Pool &P = pool();
  std::shared_lock<std::shared_mutex> L(P.M);
  NNG_CHECK(Id.Id < P.Strings.size(), "string id ", Id.Id,
            " was never interned (the pool holds ", P.Strings.size(),
            " strings): a str tensor's elements must come from "
            "rt::internString");
  return P.Strings[Id.Id];
}

size_t internedStringCount() {
  Pool &P = pool();
  std::shared_lock<std::shared_mutex> L(P.M);
  return P.Strings.size();
}

size_t internedStringBytes() {
  Pool &P = pool();
  std::shared_lock<std::shared_mutex> L(P.M);
  return P.Bytes;
}

std::string_view trimSpace(std::string_view S) {
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.front())))
    S.remove_prefix(1);
  while (!S.empty() && std::isspace(static_cast<unsigned char>(S.back())))
    S.remove_suffix(1);
  return S;
}

std::string quoteForDisplay(std::string_view S) {
  static const char Hex[] = "0123456789abcdef";
  bool HasSingle = S.find('\'') != std::string_view::npos;
  bool HasDouble = S.find('"') != std::string_view::npos;
  char Q = HasSingle && !HasDouble ? '"' : '\'';
  std::string Out(1, Q);
  for (char C : S) {
    unsigned char U = static_cast<unsigned char>(C);
    if (C == Q || C == '\\') {
      Out += '\\';
      Out += C;
    } else if (C == '\n') {
      Out += "\\n";
    } else if (C == '\t') {
      Out += "\\t";
    } else if (C == '\r') {
      Out += "\\r";
    } else if (U < 0x20 || U == 0x7f) {
      Out += "\\x";
      Out += Hex[U >> 4];
      Out += Hex[U & 15];
    } else {
      Out += C;
    }
  }
  return Out + Q;
}

} // namespace nng::rt
