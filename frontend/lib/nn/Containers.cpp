//===- Containers.cpp - Sequential, ModuleList, ModuleDict, ... ----------===//
//
// The container modules over ModuleBase's registered slots: index
// normalisation with Python's rules (negative from the end, errors naming
// the container and its size), PyTorch's renumbering on insert and
// removal, Sequential's chained forward, and the parameter containers'
// PyTorch-style extra_repr.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/runtime/DTypeNames.h"
#include "nngraph/runtime/Error.h"

#include <algorithm>

namespace nng::nn {

namespace detail {
void failWrongType(const ModuleBase &Container, const std::string &Where,
                   const ModuleBase &Got, const std::type_info &Want) {
  fail(ErrorKind::InvalidArgument, Container.type_name(), "[", Where,
       "] is a ", Got.type_name(), ", not a ", demangleTypeName(Want));
}
} // namespace detail

namespace {

/// Index in [0, Size) from a Python index in [-Size, Size).
size_t normIndex(const ModuleBase &C, int64_t Index, size_t Size) {
  int64_t N = static_cast<int64_t>(Size);
  if (Index < -N || Index >= N)
    fail(ErrorKind::InvalidArgument, C.type_name(), ": index ", Index,
         " is out of range for ", Size, " entries");
  return static_cast<size_t>(Index < 0 ? Index + N : Index);
}

/// Insert position in [0, Size] from a Python index (clamped like
/// list.insert when Clamp, else checked like Sequential.insert).
size_t insertIndex(const ModuleBase &C, int64_t Index, size_t Size,
                   bool Clamp) {
  int64_t N = static_cast<int64_t>(Size);
  if (!Clamp && (Index < -N || Index > N))
    fail(ErrorKind::InvalidArgument, C.type_name(), ".insert: index ", Index,
         " is out of range for ", Size, " entries");
  if (Index < 0)
    Index = std::max<int64_t>(Index + N, 0);
  return static_cast<size_t>(std::min<int64_t>(Index, N));
}

/// The positions of Python's range(Size)[Start:End:Step].
std::vector<size_t> slicePositions(const ModuleBase &C, int64_t Start,
                                   int64_t End, int64_t Step, size_t Size) {
  if (Step == 0)
    fail(ErrorKind::InvalidArgument, C.type_name(),
         ".slice: the step can't be zero");
  int64_t N = static_cast<int64_t>(Size);
  auto Clip = [&](int64_t I, int64_t Lo, int64_t Hi) {
    if (I < 0)
      I += N;
    return std::clamp(I, Lo, Hi);
  };
  std::vector<size_t> R;
  if (Step > 0) {
    for (int64_t I = Clip(Start, 0, N), E = Clip(End, 0, N); I < E; I += Step)
      R.push_back(static_cast<size_t>(I));
  } else {
    for (int64_t I = Clip(Start, -1, N - 1), E = Clip(End, -1, N - 1); I > E;
         I += Step)
      R.push_back(static_cast<size_t>(I));
  }
  return R;
}

NamedModules renumbered(const NamedModules &Entries) {
  NamedModules R;
  for (size_t I = 0; I < Entries.size(); ++I)
    R.emplace_back(std::to_string(I), Entries[I].second);
  return R;
}

void checkModule(const ModuleBase &C, const ModulePtr &M, const char *What) {
  if (!M)
    fail(ErrorKind::InvalidArgument, C.type_name(), ".", What,
         ": the module is null");
}

} // namespace

// --- Sequential ----------------------------------------------------------------------

Sequential::Sequential(const std::vector<ModulePtr> &Modules) {
  extend(Modules);
}

Sequential::Sequential(const NamedModules &Modules) {
  for (const auto &[Name, M] : Modules)
    append(Name, M);
}

Value Sequential::forward(const Value &Input) {
  Value X = Input;
  for (const auto &[Name, M] : Children)
    X = M->call({X});
  return X;
}

Sequential &Sequential::append(ModulePtr M) {
  return append(std::to_string(Children.size()), std::move(M));
}

Sequential &Sequential::append(const std::string &Name, ModulePtr M) {
  checkModule(*this, M, "append");
  register_module(Name, std::move(M));
  return *this;
}

Sequential &Sequential::extend(const std::vector<ModulePtr> &Modules) {
  for (const ModulePtr &M : Modules)
    append(M);
  return *this;
}

Sequential &Sequential::insert(int64_t Index, ModulePtr M) {
  checkModule(*this, M, "insert");
  size_t Pos = insertIndex(*this, Index, Children.size(), false);
  if (M.get() == this)
    fail(ErrorKind::InvalidArgument, "Sequential.insert: a module cannot "
                                     "contain itself");
  // PyTorch: entries "i" for i > Pos move to "i+1"; the new one is "Pos".
  NamedModules New = Children.items();
  New.insert(New.begin() + static_cast<std::ptrdiff_t>(Pos),
             {std::to_string(Pos), M});
  for (size_t I = Pos + 1; I < New.size(); ++I)
    if (New[I].first == std::to_string(I - 1))
      New[I].first = std::to_string(I);
  setChildren(std::move(New));
  return *this;
}

ModulePtr Sequential::pop(int64_t Index) {
  size_t Pos = normIndex(*this, Index, Children.size());
  ModulePtr M = Children.items()[Pos].second;
  NamedModules New = Children.items();
  New.erase(New.begin() + static_cast<std::ptrdiff_t>(Pos));
  setChildren(renumbered(New));
  return M;
}

void Sequential::set(int64_t Index, ModulePtr M) {
  checkModule(*this, M, "set");
  size_t Pos = normIndex(*this, Index, Children.size());
  replace_module(Children.items()[Pos].first, std::move(M));
}

ModulePtr Sequential::operator[](int64_t Index) const {
  return Children.items()[normIndex(*this, Index, Children.size())].second;
}

ModulePtr Sequential::operator[](const std::string &Name) const {
  if (const ModulePtr *M = Children.find(Name))
    return *M;
  fail(ErrorKind::InvalidArgument, "Sequential has no entry named '", Name,
       "' (it has ", Children.size(), " entries)");
}

std::shared_ptr<Sequential> Sequential::slice(int64_t Start, int64_t End,
                                              int64_t Step) const {
  NamedModules Picked;
  for (size_t I : slicePositions(*this, Start, End, Step, Children.size()))
    Picked.push_back(Children.items()[I]);
  return std::make_shared<Sequential>(Picked);
}

// --- ModuleList -------------------------------------------------------------------------

ModuleList::ModuleList(const std::vector<ModulePtr> &Modules) {
  extend(Modules);
}

ModuleList &ModuleList::append(ModulePtr M) {
  checkModule(*this, M, "append");
  register_module(std::to_string(Children.size()), std::move(M));
  return *this;
}

ModuleList &ModuleList::extend(const std::vector<ModulePtr> &Modules) {
  for (const ModulePtr &M : Modules)
    append(M);
  return *this;
}

ModuleList &ModuleList::insert(int64_t Index, ModulePtr M) {
  checkModule(*this, M, "insert");
  if (M.get() == this)
    fail(ErrorKind::InvalidArgument,
         "ModuleList.insert: a module cannot contain itself");
  size_t Pos = insertIndex(*this, Index, Children.size(), true);
  NamedModules New = Children.items();
  New.insert(New.begin() + static_cast<std::ptrdiff_t>(Pos), {"", M});
  setChildren(renumbered(New));
  return *this;
}

ModulePtr ModuleList::pop(int64_t Index) {
  size_t Pos = normIndex(*this, Index, Children.size());
  ModulePtr M = Children.items()[Pos].second;
  NamedModules New = Children.items();
  New.erase(New.begin() + static_cast<std::ptrdiff_t>(Pos));
  setChildren(renumbered(New));
  return M;
}

void ModuleList::set(int64_t Index, ModulePtr M) {
  checkModule(*this, M, "set");
  size_t Pos = normIndex(*this, Index, Children.size());
  replace_module(Children.items()[Pos].first, std::move(M));
}

ModulePtr ModuleList::operator[](int64_t Index) const {
  return Children.items()[normIndex(*this, Index, Children.size())].second;
}

std::shared_ptr<ModuleList> ModuleList::slice(int64_t Start, int64_t End,
                                              int64_t Step) const {
  std::vector<ModulePtr> Picked;
  for (size_t I : slicePositions(*this, Start, End, Step, Children.size()))
    Picked.push_back(Children.items()[I].second);
  return std::make_shared<ModuleList>(Picked);
}

// --- ModuleDict and ParameterDict: Python dicts over the module's slots ----------

namespace {
/// Slots[Key]; Type names the container in the error.
template <typename V>
const V &entryAt(const OrderedMap<V> &Slots, const std::string &Key,
                 const char *Type) {
  if (const V *E = Slots.find(Key))
    return *E;
  fail(ErrorKind::InvalidArgument, Type, " has no key '", Key, "'");
}

/// The values of Slots, in order.
template <typename V> std::vector<V> valuesOf(const OrderedMap<V> &Slots) {
  std::vector<V> R;
  R.reserve(Slots.size());
  for (const auto &[K, E] : Slots)
    R.push_back(E);
  return R;
}
} // namespace

// --- ModuleDict ---------------------------------------------------------------------------

ModuleDict::ModuleDict(const NamedModules &Modules) { update(Modules); }

ModuleDict &ModuleDict::insert(const std::string &Key, ModulePtr M) {
  checkModule(*this, M, "insert");
  if (contains(Key))
    replace_module(Key, std::move(M));
  else
    register_module(Key, std::move(M));
  return *this;
}

ModuleDict &ModuleDict::update(const NamedModules &Modules) {
  for (const auto &[K, M] : Modules)
    insert(K, M);
  return *this;
}

ModulePtr ModuleDict::operator[](const std::string &Key) const {
  return entryAt(Children, Key, "ModuleDict");
}

bool ModuleDict::contains(const std::string &Key) const {
  return Children.contains(Key);
}

ModulePtr ModuleDict::pop(const std::string &Key) {
  entryAt(Children, Key, "ModuleDict");
  return remove_module(Key);
}

void ModuleDict::clear() { setChildren({}); }

std::vector<std::string> ModuleDict::keys() const { return Children.keys(); }

std::vector<ModulePtr> ModuleDict::values() const { return valuesOf(Children); }

// --- ParameterList and ParameterDict -----------------------------------------------

namespace {

std::string sizeString(const Tensor &T) {
  std::string S;
  for (int64_t D : T.sizes()) {
    if (!S.empty())
      S += 'x';
    S += std::to_string(D);
  }
  return S;
}

/// torch.float32 etc. (p.dtype) and torch.FloatTensor etc. (torch.typename).
std::string torchDTypeName(DType T) {
  const char *N = torchName(T);
  return "torch." + (N ? std::string(N) : std::string(dtypeName(T)));
}

std::string torchTypeName(DType T) {
  const char *N = torchTensorTypeName(T);
  return N ? "torch." + std::string(N) : torchDTypeName(T);
}

std::string paramLines(const NamedTensors &Ps, bool TypeNames) {
  std::string S;
  for (const auto &[K, P] : Ps) {
    if (!S.empty())
      S += "\n";
    S += "  (" + K + "): Parameter containing: [" +
         (TypeNames ? torchTypeName(P.dtype()) : torchDTypeName(P.dtype())) +
         " of size " + sizeString(P) + "]";
  }
  return S;
}

} // namespace

ParameterList::ParameterList(const std::vector<Tensor> &Ps) { extend(Ps); }

ParameterList &ParameterList::append(Tensor P) {
  if (!P.defined())
    fail(ErrorKind::InvalidArgument,
         "ParameterList.append: the tensor is undefined");
  register_parameter(std::to_string(Params.size()), std::move(P));
  return *this;
}

ParameterList &ParameterList::extend(const std::vector<Tensor> &Ps) {
  for (const Tensor &P : Ps)
    append(P);
  return *this;
}

void ParameterList::set(int64_t Index, Tensor P) {
  size_t Pos = normIndex(*this, Index, Params.size());
  replace_parameter(Params.items()[Pos].first, std::move(P));
}

Tensor ParameterList::operator[](int64_t Index) const {
  return Params.items()[normIndex(*this, Index, Params.size())].second;
}

std::string ParameterList::extra_repr() const {
  return paramLines(Params.items(), false);
}

ParameterDict::ParameterDict(const NamedTensors &Ps) { update(Ps); }

ParameterDict &ParameterDict::insert(const std::string &Key, Tensor P) {
  if (!P.defined())
    fail(ErrorKind::InvalidArgument, "ParameterDict.insert('", Key,
         "'): the tensor is undefined");
  if (contains(Key))
    replace_parameter(Key, std::move(P));
  else
    register_parameter(Key, std::move(P));
  return *this;
}

ParameterDict &ParameterDict::update(const NamedTensors &Ps) {
  for (const auto &[K, P] : Ps)
    insert(K, P);
  return *this;
}

Tensor ParameterDict::operator[](const std::string &Key) const {
  return entryAt(Params, Key, "ParameterDict");
}

bool ParameterDict::contains(const std::string &Key) const {
  return Params.contains(Key);
}

Tensor ParameterDict::pop(const std::string &Key) {
  entryAt(Params, Key, "ParameterDict");
  return remove_parameter(Key);
}

void ParameterDict::clear() { Params = OrderedMap<Tensor>(); }

std::vector<std::string> ParameterDict::keys() const { return Params.keys(); }

std::vector<Tensor> ParameterDict::values() const { return valuesOf(Params); }

std::string ParameterDict::extra_repr() const {
  return paramLines(Params.items(), true);
}

} // namespace nng::nn
