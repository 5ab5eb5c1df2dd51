//===- RandomStateTest.cpp - get_rng_state / set_rng_state ----------------===//
//
// The global generator's state as a u8 tensor: restoring it repeats the
// same random stream (also after a trip through a .pt checkpoint), and a
// tensor that is not such a state is an error that leaves the generator as
// it was.
//
//===----------------------------------------------------------------------===//

#include "nngraph/frontend/Random.h"
#include "nngraph/frontend/TensorOps.h"
#include "nngraph/frontend/weights/Formats.h"
#include "nngraph/runtime/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace nng;

TEST(RandomState, RestoringRepeatsTheStream) {
  manual_seed(7);
  randn({5});
  Tensor State = get_rng_state();
  EXPECT_EQ(State.dtype(), DType::U8);
  Tensor A = randn({16}), B = rand({3, 3});
  set_rng_state(State);
  EXPECT_TRUE(randn({16}).data().equals(A.data()));
  EXPECT_TRUE(rand({3, 3}).data().equals(B.data()));
  EXPECT_EQ(defaultGenerator().initial_seed(), 7u);
}

TEST(RandomState, SurvivesAPtCheckpoint) {
  manual_seed(3);
  Tensor State = get_rng_state();
  Tensor Want = randn({8});
  std::string Path = (std::filesystem::temp_directory_path() /
                      ("nng-rng-" + std::to_string(::getpid()) + ".pt"))
                         .string();
  weights::writePt(Path, weights::Object::dict(
                             {{weights::Object::string("rng_state"),
                               weights::Object::tensor(State.data())}}));
  manual_seed(99);
  weights::Object O = weights::readPt(Path);
  std::filesystem::remove(Path);
  set_rng_state(Tensor(O.find("rng_state")->toTensor()));
  EXPECT_TRUE(randn({8}).data().equals(Want.data()));
}

TEST(RandomState, ForeignBytesAreAnErrorAndChangeNothing) {
  manual_seed(11);
  Tensor Before = get_rng_state();
  Tensor Bad = zeros({5056}, TensorOptions(DType::U8)); // torch's size.
  EXPECT_THROW(set_rng_state(Bad), Error);
  EXPECT_THROW(set_rng_state(zeros({4})), Error); // f32.
  EXPECT_TRUE(get_rng_state().data().equals(Before.data()));
}
