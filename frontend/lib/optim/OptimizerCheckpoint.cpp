//===- OptimizerCheckpoint.cpp - The optimizer checkpoint file format -----===//
//
// Writes and reads "NNGOPTCK" files (docs/optim.md has the layout). All
// integers and floats are little-endian; the 32-byte header carries the
// payload size and its 64-bit FNV-1a checksum, so truncation and bit
// flips are reported before the payload is parsed. The parser still
// bounds-checks every read and every count against the bytes left, so a
// hostile file cannot make it allocate or read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/optim/OptimizerCheckpoint.h"
#include "nngraph/runtime/Error.h"
#include "nngraph/frontend/optim/TorchFormat.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/FileIO.h"

#include <cctype>

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>

namespace nng::optim {

static_assert(std::endian::native == std::endian::little,
              "the checkpoint writer assumes a little-endian host");

namespace {

constexpr char Magic[8] = {'N', 'N', 'G', 'O', 'P', 'T', 'C', 'K'};
constexpr uint32_t Version = 1;
constexpr size_t HeaderSize = 32;
constexpr uint32_t MaxRank = 64;

enum ValueTag : uint8_t { TagNone, TagBool, TagInt, TagFloat, TagTuple };
enum StateTag : uint8_t { StateNone, StateTensor, StateNumber };

uint64_t fnv1a(const char *Data, size_t N) {
  uint64_t H = 0xcbf29ce484222325ULL;
  for (size_t I = 0; I < N; ++I) {
    H ^= static_cast<unsigned char>(Data[I]);
    H *= 0x100000001b3ULL;
  }
  return H;
}

// --- Writing
// -------------------------------------------------------------------

class Writer {
public:
  std::string Out;

  template <typename T> void pod(T V) {
    Out.append(reinterpret_cast<const char *>(&V), sizeof(V));
  }
  void str(const std::string &S) {
    pod<uint32_t>(static_cast<uint32_t>(S.size()));
    Out += S;
  }
  void value(const OptionValue &V) {
    const auto &S = V.storage();
    if (std::holds_alternative<std::monostate>(S)) {
      pod<uint8_t>(TagNone);
    } else if (const bool *B = std::get_if<bool>(&S)) {
      pod<uint8_t>(TagBool);
      pod<uint8_t>(*B ? 1 : 0);
    } else if (const int64_t *I = std::get_if<int64_t>(&S)) {
      pod<uint8_t>(TagInt);
      pod<int64_t>(*I);
    } else if (const double *D = std::get_if<double>(&S)) {
      pod<uint8_t>(TagFloat);
      pod<double>(*D);
    } else {
      const std::vector<double> &T = std::get<std::vector<double>>(S);
      pod<uint8_t>(TagTuple);
      pod<uint32_t>(static_cast<uint32_t>(T.size()));
      for (double D : T)
        pod<double>(D);
    }
  }
  void dict(const OptionDict &D) {
    pod<uint32_t>(static_cast<uint32_t>(D.size()));
    for (const auto &[Key, V] : D) {
      str(Key);
      value(V);
    }
  }
  void tensor(const Tensor &T) {
    rt::Tensor C = T.data().contiguous();
    str(std::string(dtypeName(C.dtype())));
    pod<uint32_t>(static_cast<uint32_t>(C.rank()));
    for (int64_t D : C.shape())
      pod<int64_t>(D);
    pod<uint64_t>(C.nbytes());
    Out.append(static_cast<const char *>(C.rawData()), C.nbytes());
  }
};

std::string serialize(const OptimizerCheckpoint &C) {
  Writer W;
  W.str(C.optimizer);
  W.pod<uint32_t>(static_cast<uint32_t>(C.state.param_groups.size()));
  for (const OptimizerStateDict::Group &G : C.state.param_groups) {
    W.dict(G.options);
    W.pod<uint32_t>(static_cast<uint32_t>(G.params.size()));
    for (int64_t I : G.params)
      W.pod<int64_t>(I);
  }
  W.pod<uint32_t>(static_cast<uint32_t>(C.state.state.size()));
  for (const auto &[Index, S] : C.state.state) {
    W.pod<int64_t>(Index);
    W.pod<uint32_t>(static_cast<uint32_t>(S.size()));
    for (const auto &[Key, V] : S) {
      W.str(Key);
      if (const Tensor *T = std::get_if<Tensor>(&V)) {
        if (!T->defined())
          fail(ErrorKind::InvalidArgument, "write_checkpoint: state '", Key,
               "' of parameter ", Index, " is an undefined tensor");
        W.pod<uint8_t>(StateTensor);
        W.tensor(*T);
      } else if (const double *D = std::get_if<double>(&V)) {
        W.pod<uint8_t>(StateNumber);
        W.pod<double>(*D);
      } else {
        W.pod<uint8_t>(StateNone);
      }
    }
  }
  W.pod<uint8_t>(C.scheduler ? 1 : 0);
  if (C.scheduler) {
    W.str(*C.scheduler);
    W.dict(C.scheduler_state);
  }
  return std::move(W.Out);
}

// --- Reading
// -------------------------------------------------------------------

class Reader {
public:
  Reader(const std::string &Data, size_t Begin, std::string File)
      : Data(Data), Pos(Begin), File(std::move(File)) {}

  [[noreturn]] void bad(const std::string &What) const {
    fail(ErrorKind::Parse, "optimizer checkpoint ", File, ": ", What,
         " (at byte ", Pos,
         "); the file is corrupted or not a checkpoint "
         "written by nng::optim::save");
  }
  size_t left() const { return Data.size() - Pos; }
  void need(size_t N, const char *What) const {
    if (N > left())
      bad("truncated: " + std::to_string(N) + " bytes needed for " + What +
          ", " + std::to_string(left()) + " left");
  }
  template <typename T> T pod(const char *What) {
    need(sizeof(T), What);
    T V;
    std::memcpy(&V, Data.data() + Pos, sizeof(T));
    Pos += sizeof(T);
    return V;
  }
  /// A count of items of at least MinItemSize bytes each.
  uint32_t count(const char *What, size_t MinItemSize) {
    uint32_t N = pod<uint32_t>(What);
    if (static_cast<uint64_t>(N) * MinItemSize > left())
      bad(std::string("implausible ") + What + " " + std::to_string(N));
    return N;
  }
  std::string str(const char *What) {
    uint32_t N = pod<uint32_t>(What);
    need(N, What);
    std::string S = Data.substr(Pos, N);
    Pos += N;
    return S;
  }
  OptionValue value(const std::string &Key) {
    uint8_t Tag = pod<uint8_t>("a value tag");
    switch (Tag) {
    case TagNone:
      return OptionValue();
    case TagBool: {
      uint8_t B = pod<uint8_t>("a bool");
      if (B > 1)
        bad("bool value " + std::to_string(B) + " of '" + Key + "'");
      return OptionValue(B == 1);
    }
    case TagInt:
      return OptionValue(pod<int64_t>("an int"));
    case TagFloat:
      return OptionValue(pod<double>("a float"));
    case TagTuple: {
      uint32_t N = count("tuple length", sizeof(double));
      std::vector<double> T(N);
      for (double &D : T)
        D = pod<double>("a tuple element");
      return OptionValue(std::move(T));
    }
    default:
      bad("unknown value tag " + std::to_string(Tag) + " of '" + Key + "'");
    }
  }
  OptionDict dict(const char *What) {
    OptionDict D;
    uint32_t N = count(What, 5);
    for (uint32_t I = 0; I < N; ++I) {
      std::string Key = str("a key");
      if (D.contains(Key))
        bad("key '" + Key + "' appears twice in " + What);
      D.set(Key, value(Key));
    }
    return D;
  }
  Tensor tensor(const std::string &Key) {
    std::string Name = str("a dtype");
    std::optional<DType> Type = parseDType(Name);
    if (!Type)
      bad("unknown dtype '" + Name + "' of state '" + Key + "'");
    uint32_t Rank = pod<uint32_t>("a rank");
    if (Rank > MaxRank)
      bad("rank " + std::to_string(Rank) + " of state '" + Key + "'");
    Shape Sh;
    uint64_t Numel = 1;
    for (uint32_t I = 0; I < Rank; ++I) {
      int64_t D = pod<int64_t>("a dimension");
      if (D < 0 || (D > 0 && Numel > left() / static_cast<uint64_t>(D)))
        bad("dimension " + std::to_string(D) + " of state '" + Key + "'");
      Numel *= static_cast<uint64_t>(D);
      Sh.push_back(D);
    }
    uint64_t NBytes = pod<uint64_t>("a byte count");
    if (NBytes != Numel * dtypeSize(*Type))
      bad("state '" + Key + "' has " + std::to_string(NBytes) +
          " bytes of data but its shape " + Sh.toString() + " and dtype " +
          Name + " need " + std::to_string(Numel * dtypeSize(*Type)));
    need(NBytes, "tensor data");
    rt::Tensor T = rt::Tensor::empty(Sh, *Type);
    if (NBytes)
      std::memcpy(T.rawData(), Data.data() + Pos, NBytes);
    Pos += NBytes;
    return Tensor(std::move(T));
  }

  const std::string &Data;
  size_t Pos;
  std::string File;
};

OptimizerCheckpoint parse(const std::string &Data, const std::string &File) {
  Reader R(Data, 0, File);
  if (Data.size() < HeaderSize || std::memcmp(Data.data(), Magic, 8) != 0)
    R.bad(Data.size() < 8 || std::memcmp(Data.data(), Magic, 8) != 0
              ? "no NNGOPTCK magic at the start"
              : "truncated header");
  R.Pos = 8;
  uint32_t V = R.pod<uint32_t>("the version");
  if (V != Version)
    fail(ErrorKind::Unsupported, "optimizer checkpoint ", File,
         ": format version ", V, "; this nngraph reads version ", Version);
  R.pod<uint32_t>("the flags");
  uint64_t Size = R.pod<uint64_t>("the payload size");
  uint64_t Sum = R.pod<uint64_t>("the checksum");
  if (Size != Data.size() - HeaderSize)
    R.bad("the header says " + std::to_string(Size) +
          " payload bytes, the file has " +
          std::to_string(Data.size() - HeaderSize) +
          (Size > Data.size() - HeaderSize ? " (truncated)" : ""));
  if (fnv1a(Data.data() + HeaderSize, Size) != Sum)
    R.bad("checksum mismatch: the payload was changed after it was written");

  OptimizerCheckpoint C;
  C.optimizer = R.str("the optimizer name");
  uint32_t NumGroups = R.count("param group count", 8);
  for (uint32_t G = 0; G < NumGroups; ++G) {
    OptimizerStateDict::Group Group;
    Group.options = R.dict("param group options");
    uint32_t N = R.count("parameter count", sizeof(int64_t));
    for (uint32_t I = 0; I < N; ++I)
      Group.params.push_back(R.pod<int64_t>("a parameter index"));
    C.state.param_groups.push_back(std::move(Group));
  }
  uint32_t NumStates = R.count("state count", 12);
  for (uint32_t I = 0; I < NumStates; ++I) {
    int64_t Index = R.pod<int64_t>("a state index");
    if (C.state.state.count(Index))
      R.bad("state of parameter " + std::to_string(Index) + " appears twice");
    ParamState &S = C.state.state[Index];
    uint32_t N = R.count("state entry count", 5);
    for (uint32_t E = 0; E < N; ++E) {
      std::string Key = R.str("a state name");
      if (S.count(Key))
        R.bad("state '" + Key + "' appears twice");
      uint8_t Tag = R.pod<uint8_t>("a state tag");
      if (Tag == StateTensor)
        S[Key] = R.tensor(Key);
      else if (Tag == StateNumber)
        S[Key] = R.pod<double>("a number");
      else if (Tag == StateNone)
        S[Key] = std::monostate();
      else
        R.bad("unknown state tag " + std::to_string(Tag) + " of '" + Key + "'");
    }
  }
  uint8_t HasScheduler = R.pod<uint8_t>("the scheduler flag");
  if (HasScheduler > 1)
    R.bad("scheduler flag " + std::to_string(HasScheduler));
  if (HasScheduler) {
    C.scheduler = R.str("the scheduler name");
    C.scheduler_state = R.dict("scheduler fields");
  }
  if (R.left() != 0)
    R.bad(std::to_string(R.left()) + " unexpected bytes after the end");
  return C;
}

} // namespace

void write_checkpoint(const OptimizerCheckpoint &C,
                      const std::filesystem::path &Path) {
  std::string Payload = serialize(C);
  std::string Header(Magic, 8);
  auto Append = [&](auto V) {
    Header.append(reinterpret_cast<const char *>(&V), sizeof(V));
  };
  Append(Version);
  Append(uint32_t(0));
  Append(static_cast<uint64_t>(Payload.size()));
  Append(fnv1a(Payload.data(), Payload.size()));

  // Atomic: a temporary file next to Path, flushed and renamed over it; on
  // failure Path is untouched and no temporary file remains.
  try {
    rt::writeFileAtomic(Path.string(), Header + Payload);
  } catch (const Error &E) {
    fail(ErrorKind::IO, "optimizer checkpoint ", Path.string(), ": ",
         E.message(), "; check that the folder exists and is writable");
  }
}

OptimizerCheckpoint read_checkpoint(const std::filesystem::path &Path) {
  std::ifstream IS(Path, std::ios::binary);
  if (!IS)
    fail(ErrorKind::IO, "optimizer checkpoint ", Path.string(),
         ": cannot open it (", std::strerror(errno), ")");
  std::string Data((std::istreambuf_iterator<char>(IS)),
                   std::istreambuf_iterator<char>());
  if (IS.bad())
    fail(ErrorKind::IO, "optimizer checkpoint ", Path.string(),
         ": reading failed");
  return parse(Data, Path.string());
}

namespace {

/// True for the paths save() writes as torch.save would (.pt, .pth).
bool isTorchPath(const std::filesystem::path &Path) {
  std::string Ext = Path.extension().string();
  for (char &C : Ext)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return Ext == ".pt" || Ext == ".pth";
}

/// True when the file at Path starts with Prefix.
bool startsWith(const std::filesystem::path &Path, std::string_view Prefix) {
  std::ifstream IS(Path, std::ios::binary);
  std::string Head(Prefix.size(), '\0');
  IS.read(Head.data(), static_cast<std::streamsize>(Head.size()));
  return IS.gcount() == static_cast<std::streamsize>(Prefix.size()) &&
         Head == Prefix;
}

/// True when load() reads Path as a .pt file: a zip archive (torch.save),
/// or a .pt/.pth path without this format's magic (the .pt reader then
/// says what is wrong with it).
bool readsAsTorch(const std::filesystem::path &Path) {
  if (startsWith(Path, std::string_view("PK\x03\x04", 4)))
    return true;
  return isTorchPath(Path) &&
         !startsWith(Path, std::string_view(Magic, sizeof(Magic)));
}

/// Loads a .pt file: an optimizer state_dict at the root, or a dict with
/// 'optimizer' (and 'scheduler' or 'lr_scheduler') entries, as PyTorch
/// training scripts save them.
void loadTorch(Optimizer &Opt, const std::filesystem::path &Path,
               LRScheduler *Scheduler) {
  std::string Where = "optimizer checkpoint " + Path.string();
  weights::Object Root = weights::readPt(Path.string());
  const weights::Object *OptObj = &Root, *SchedObj = nullptr;
  if (Root.isDict() && !Root.find("param_groups")) {
    OptObj = Root.find("optimizer");
    if (!OptObj)
      fail(ErrorKind::InvalidArgument, Where,
           ": it holds neither an optimizer state_dict nor an 'optimizer' "
           "entry (found ",
           Root.summary(1), ")");
    SchedObj = Root.find("scheduler");
    if (!SchedObj)
      SchedObj = Root.find("lr_scheduler");
  }
  OptimizerStateDict SD = optimizer_state_dict_from_object(*OptObj, Where);
  SchedulerStateDict SchedSD;
  if (Scheduler) {
    if (!SchedObj)
      fail(ErrorKind::InvalidArgument, Where,
           ": it holds no scheduler state (no 'scheduler' or 'lr_scheduler' "
           "entry); load without one");
    SchedSD = scheduler_state_dict_from_object(*SchedObj, Where + ": scheduler");
    Scheduler->check_state_dict(SchedSD);
  }
  Opt.load_state_dict(SD); // Atomic: throws before changing anything.
  if (Scheduler)
    Scheduler->load_state_dict(SchedSD);
}

} // namespace

void save(const Optimizer &Opt, const std::filesystem::path &Path,
          const LRScheduler *Scheduler) {
  if (isTorchPath(Path)) {
    weights::Object Root = to_object(Opt.state_dict());
    if (Scheduler)
      Root = weights::Object::dict(
          {{weights::Object::string("optimizer"), std::move(Root)},
           {weights::Object::string("scheduler"),
            to_object(Scheduler->state_dict())}});
    weights::writePt(Path.string(), Root);
    return;
  }
  OptimizerCheckpoint C;
  C.optimizer = Opt.name();
  C.state = Opt.state_dict();
  if (Scheduler) {
    C.scheduler = Scheduler->name();
    C.scheduler_state = Scheduler->state_dict();
  }
  write_checkpoint(C, Path);
}

void load(Optimizer &Opt, const std::filesystem::path &Path,
          LRScheduler *Scheduler) {
  if (readsAsTorch(Path))
    return loadTorch(Opt, Path, Scheduler);
  OptimizerCheckpoint C = read_checkpoint(Path);
  std::string Where = "optimizer checkpoint " + Path.string();
  if (C.optimizer != Opt.name())
    fail(ErrorKind::InvalidArgument, Where, ": it holds the state of ",
         C.optimizer, ", not of ", Opt.name(),
         "; load it into the same kind of optimizer");
  if (Scheduler) {
    if (!C.scheduler)
      fail(ErrorKind::InvalidArgument, Where,
           ": it holds no scheduler state "
           "(saved without a scheduler); load without one");
    if (*C.scheduler != Scheduler->name())
      fail(ErrorKind::InvalidArgument, Where, ": it holds the state of a ",
           *C.scheduler, ", not of a ", Scheduler->name());
    Scheduler->check_state_dict(C.scheduler_state);
  }
  Opt.load_state_dict(C.state); // Atomic: throws before changing anything.
  if (Scheduler)
    Scheduler->load_state_dict(C.scheduler_state);
}

} // namespace nng::optim
