//===- PtZipTest.cpp - The zip container of .pt files --------------------===//
//
// zip::Writer and zip::Reader (frontend/lib/weights/formats/Zip.h) on their
// own: 64-byte aligned stored entries, zip64 records when the entry count
// needs them (checked with Python's zipfile too when a python3 exists),
// deflated entries, and views of stored entries that alias the archive.
//
//===----------------------------------------------------------------------===//

#include "../../frontend/lib/weights/formats/Zip.h"
#include "PtTestUtils.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace nng;
using namespace nng::weights;
using namespace nng::weights::pttest;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<Storage> toStorage(const std::string &S) {
  auto St = Storage::allocate(S.size());
  std::memcpy(St->data(), S.data(), S.size());
  return St;
}

std::string entryText(const zip::Reader &R, const zip::Entry &E) {
  auto S = R.read(E);
  return std::string(static_cast<const char *>(S->data()), S->bytes());
}

} // namespace

TEST(PtZip, AlignedStoredEntriesAreViews) {
  std::ostringstream OS;
  zip::Writer W(OS);
  W.add("a/x", "hello", 5);
  W.add("a/data/0", "0123456789", 10);
  W.finish();
  auto Archive = toStorage(OS.str());
  zip::Reader R(Archive, "t.zip");
  ASSERT_EQ(R.entries().size(), 2u);
  const zip::Entry *E = R.find("a/data/0");
  ASSERT_TRUE(E);
  EXPECT_EQ(E->DataOffset % 64, 0u);
  EXPECT_EQ(entryText(R, *E), "0123456789");
  EXPECT_EQ(R.read(*E)->data(),
            static_cast<const char *>(Archive->data()) + E->DataOffset);
  EXPECT_EQ(R.find("nope"), nullptr);
}

TEST(PtZip, Zip64EntryCount) {
  fs::path D = freshDir();
  std::ostringstream OS;
  zip::Writer W(OS);
  const int N = 70000; // > 65535: needs the zip64 end records
  for (int I = 0; I < N; ++I) {
    std::string V = std::to_string(I);
    W.add("z/" + V, V.data(), V.size(), 1);
  }
  W.finish();
  std::string Bytes = OS.str();
  zip::Reader R(toStorage(Bytes), "many.zip");
  ASSERT_EQ(R.entries().size(), size_t(N));
  EXPECT_EQ(entryText(R, R.entries()[69999]), "69999");
  spit(D / "many.zip", Bytes);
  // Python's zipfile as the oracle (the set-up installs python3).
  std::string Cmd =
      nng::test::shellQuote(nng::test::pythonCandidates().front()) +
      " -c \"import zipfile,sys; "
      "z=zipfile.ZipFile(sys.argv[1]); "
      "assert len(z.namelist())==70000; "
      "assert z.testzip() is None; "
      "assert z.read('z/12345')==b'12345'\" " +
      nng::test::shellQuote((D / "many.zip").string());
  EXPECT_EQ(std::system(Cmd.c_str()), 0) << "Python's zipfile disagrees";
}

TEST(PtZip, DeflatedEntries) {
  std::string Text(5000, 'a');
  for (size_t I = 0; I < Text.size(); I += 7)
    Text[I] = char('a' + I % 26);
  uint32_t Crc = 0;
  {
    // The CRC of the uncompressed text, from a stored copy.
    std::ostringstream OS;
    zip::Writer W(OS);
    W.add("t", Text.data(), Text.size());
    W.finish();
    zip::Reader R(toStorage(OS.str()), "s.zip");
    Crc = R.entries()[0].Crc32;
  }
  std::string Z = makeZip(
      {{"d/text", deflateRaw(Text), 8, int64_t(Text.size()), int64_t(Crc)}});
  zip::Reader R(toStorage(Z), "d.zip");
  EXPECT_EQ(entryText(R, R.entries()[0]), Text);
  // One byte short of the stream: an error naming the entry.
  std::string Cut = deflateRaw(Text);
  Cut.pop_back();
  std::string Z2 =
      makeZip({{"d/text", Cut, 8, int64_t(Text.size()), int64_t(Crc)}});
  zip::Reader R2(toStorage(Z2), "d2.zip");
  expectError([&] { R2.read(R2.entries()[0]); }, {"d2.zip", "'d/text'"});
}
