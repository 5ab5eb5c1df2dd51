//===- OpSchemaTest.cpp - Tests for the op table -------------------------===//
//
// Every row of Ops.def parses into a well-formed schema (operands,
// attribute defaults of the declared type, an inference function), lookups
// by name and domain work, and operand bounds and attribute specs of a few
// representative ops are as the table says.
//
//===----------------------------------------------------------------------===//

#include "nngraph/ir/OpSchema.h"
#include "nngraph/ir/ShapeInference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

using namespace nng;
using namespace nng::ir;

namespace {

TEST(OpSchema, EveryRowParses) {
  const auto &All = allOpSchemas();
  ASSERT_EQ(All.size(), static_cast<size_t>(NumOpKinds));
  std::set<std::string> Names;
  for (size_t I = 0; I < All.size(); ++I) {
    const OpSchema &S = All[I];
    SCOPED_TRACE(S.qualifiedName());
    EXPECT_EQ(static_cast<size_t>(S.Kind), I);
    EXPECT_EQ(&getOpSchema(S.Kind), &S);
    EXPECT_FALSE(S.Name.empty());
    EXPECT_TRUE(S.Domain.empty() || S.Domain == "nng" ||
                S.Domain == "com.microsoft");
    EXPECT_GE(S.SinceVersion, 1);
    EXPECT_LE(S.SinceVersion, 17);
    EXPECT_NE(S.Infer, nullptr);
    EXPECT_FALSE(S.Doc.empty());
    EXPECT_TRUE(Names.insert(S.qualifiedName()).second) << "duplicate name";
    EXPECT_EQ(lookupOp(S.qualifiedName()), &S);
    EXPECT_EQ(lookupOp(S.Domain, S.Name), &S);
    EXPECT_GE(S.Outputs.size(), 1u);
    for (const auto *Ops : {&S.Inputs, &S.Outputs})
      for (size_t J = 0; J < Ops->size(); ++J) {
        const OperandSchema &O = (*Ops)[J];
        EXPECT_FALSE(O.Name.empty());
        // "v?...": a variadic operand that may be empty (Loop's v_initial).
        if (O.Variadic && O.Optional)
          EXPECT_EQ(S.Kind, ir::OpKind::Loop) << S.Name;
        if (O.Variadic)
          EXPECT_EQ(J + 1, Ops->size()) << "only the last may be variadic";
      }
    EXPECT_LE(S.minInputs(), S.maxInputs());
    EXPECT_LE(S.minOutputs(), S.maxOutputs());
    std::set<std::string> AttrNames;
    for (const AttrSchema &A : S.Attrs) {
      SCOPED_TRACE(A.Name);
      EXPECT_TRUE(AttrNames.insert(A.Name).second);
      EXPECT_EQ(S.findAttr(A.Name), &A);
      if (A.Default) {
        EXPECT_EQ(A.Default->type(), A.Type);
        EXPECT_FALSE(A.Required);
      }
    }
  }
}

TEST(OpSchema, Lookup) {
  ASSERT_NE(lookupOp("Conv"), nullptr);
  EXPECT_EQ(lookupOp("Conv")->Kind, OpKind::Conv);
  EXPECT_EQ(lookupOp("ai.onnx", "Relu")->Kind, OpKind::Relu);
  EXPECT_EQ(lookupOp("", "Relu")->Kind, OpKind::Relu);
  ASSERT_NE(lookupOp("nng.Gelu"), nullptr);
  EXPECT_EQ(lookupOp("nng", "Gelu")->Kind, OpKind::Gelu);
  EXPECT_EQ(lookupOp("Gelu"), nullptr);
  EXPECT_EQ(lookupOp("NoSuchOp"), nullptr);
  EXPECT_EQ(lookupOp("conv"), nullptr);
  EXPECT_EQ(getOpSchema(OpKind::Gelu).qualifiedName(), "nng.Gelu");
  // ONNX Runtime's contrib domain, as ONNX import names it.
  ASSERT_NE(lookupOp("com.microsoft", "DynamicQuantizeLSTM"), nullptr);
  EXPECT_EQ(lookupOp("com.microsoft.DynamicQuantizeLSTM")->Kind,
            OpKind::DynamicQuantizeLSTM);
  EXPECT_EQ(lookupOp("com.microsoft", "LSTM"), nullptr);
  EXPECT_EQ(getOpSchema(OpKind::Conv).qualifiedName(), "Conv");
}

TEST(OpSchema, OperandBounds) {
  const OpSchema &Conv = getOpSchema(OpKind::Conv);
  EXPECT_EQ(Conv.minInputs(), 2u);
  EXPECT_EQ(Conv.maxInputs(), 3u);
  EXPECT_TRUE(Conv.Inputs[2].Optional);
  const OpSchema &Concat = getOpSchema(OpKind::Concat);
  EXPECT_EQ(Concat.minInputs(), 1u);
  EXPECT_EQ(Concat.maxInputs(), SIZE_MAX);
  EXPECT_TRUE(Concat.Inputs[0].Variadic);
  const OpSchema &Split = getOpSchema(OpKind::Split);
  EXPECT_EQ(Split.minOutputs(), 1u);
  EXPECT_EQ(Split.maxOutputs(), SIZE_MAX);
  const OpSchema &BN = getOpSchema(OpKind::BatchNormalization);
  EXPECT_EQ(BN.minInputs(), 5u);
  EXPECT_EQ(BN.minOutputs(), 1u);
  EXPECT_EQ(BN.maxOutputs(), 3u);
  const OpSchema &Constant = getOpSchema(OpKind::Constant);
  EXPECT_EQ(Constant.minInputs(), 0u);
  EXPECT_EQ(Constant.maxInputs(), 0u);
  const OpSchema &Slice = getOpSchema(OpKind::Slice);
  EXPECT_EQ(Slice.minInputs(), 3u);
  EXPECT_EQ(Slice.maxInputs(), 5u);
}

TEST(OpSchema, AttributeSpecs) {
  const OpSchema &Conv = getOpSchema(OpKind::Conv);
  const AttrSchema *Group = Conv.findAttr("group");
  ASSERT_NE(Group, nullptr);
  EXPECT_EQ(Group->Type, AttrType::Int);
  EXPECT_EQ(Group->Default->i(), 1);
  const AttrSchema *Kernel = Conv.findAttr("kernel_shape");
  ASSERT_NE(Kernel, nullptr);
  EXPECT_EQ(Kernel->Type, AttrType::Ints);
  EXPECT_FALSE(Kernel->Required);
  EXPECT_FALSE(Kernel->Default.has_value());
  EXPECT_EQ(Conv.findAttr("auto_pad")->Default->s(), "NOTSET");
  EXPECT_EQ(Conv.findAttr("nope"), nullptr);
  EXPECT_TRUE(getOpSchema(OpKind::Concat).findAttr("axis")->Required);
  EXPECT_TRUE(getOpSchema(OpKind::Cast).findAttr("to")->Required);
  EXPECT_TRUE(getOpSchema(OpKind::MaxPool).findAttr("kernel_shape")->Required);
  EXPECT_FLOAT_EQ(
      getOpSchema(OpKind::LeakyRelu).findAttr("alpha")->Default->f(), 0.01f);
  EXPECT_FLOAT_EQ(getOpSchema(OpKind::Selu).findAttr("gamma")->Default->f(),
                  1.05070102214813232421875f);
  EXPECT_FLOAT_EQ(
      getOpSchema(OpKind::BatchNormalization).findAttr("epsilon")->Default->f(),
      1e-5f);
  EXPECT_EQ(getOpSchema(OpKind::Constant).findAttr("value")->Type,
            AttrType::Tensor);
  EXPECT_EQ(getOpSchema(OpKind::Constant).findAttr("value_strings")->Type,
            AttrType::Strings);
  EXPECT_EQ(getOpSchema(OpKind::Flatten).findAttr("axis")->Default->i(), 1);
  EXPECT_EQ(getOpSchema(OpKind::Softmax).findAttr("axis")->Default->i(), -1);
}

TEST(OpSchema, TraitsComeFromTheTable) {
  EXPECT_TRUE(hasTrait(OpKind::Relu, OpTrait::Elementwise));
  EXPECT_TRUE(hasTrait(OpKind::Add, OpTrait::Commutative));
  EXPECT_FALSE(hasTrait(OpKind::Sub, OpTrait::Commutative));
  EXPECT_TRUE(hasTrait(OpKind::Conv, OpTrait::Compute));
  EXPECT_TRUE(hasTrait(OpKind::ReluGrad, OpTrait::Training));
  EXPECT_TRUE(hasTrait(OpKind::ModuleCall, OpTrait::Impure));
  EXPECT_TRUE(hasTrait(OpKind::Dropout, OpTrait::RandomInTraining));
  EXPECT_FALSE(hasTrait(OpKind::Reshape, OpTrait::Elementwise));
  EXPECT_EQ(getOpSchema(OpKind::Mul).traitNames(), "elementwise commutative");
  EXPECT_EQ(getOpSchema(OpKind::Reshape).traitNames(), "value_preserving");
  EXPECT_EQ(getOpSchema(OpKind::Softmax).traitNames(), "");
  EXPECT_TRUE(hasTrait(OpKind::Conv, OpTrait::Quantizable));
  EXPECT_FALSE(hasTrait(OpKind::Softmax, OpTrait::Quantizable));
  // A quantized tensor passes value-preserving ops unchanged; none of them
  // computes new values, so none is also quantizable.
  for (const OpSchema &S : allOpSchemas())
    if (S.has(OpTrait::ValuePreserving))
      EXPECT_FALSE(S.has(OpTrait::Quantizable)) << S.Name;
  // Every commutative op is elementwise and takes at least two inputs.
  for (const OpSchema &S : allOpSchemas())
    if (S.has(OpTrait::Commutative)) {
      EXPECT_TRUE(S.has(OpTrait::Elementwise)) << S.Name;
      EXPECT_GE(S.maxInputs(), 2u) << S.Name;
    }
}

TEST(OpSchema, AttrTypeNames) {
  for (AttrType T :
       {AttrType::Int, AttrType::Float, AttrType::String, AttrType::Ints,
        AttrType::Floats, AttrType::Strings, AttrType::Tensor})
    EXPECT_EQ(parseAttrType(attrTypeName(T)), T);
  EXPECT_EQ(attrTypeName(AttrType::Floats), "floats");
  EXPECT_FALSE(parseAttrType("double").has_value());
}

} // namespace
