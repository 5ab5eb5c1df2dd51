//===- FusePadIntoConv.cpp - fuse-pad-into-conv: zero Pad into Conv pads -===//
//
// Conv(Pad(x, pads, 0), W, b) with a constant-mode Pad by a constant zero
// that pads the spatial axes only (by non-negative amounts) is
// Conv(x, W, b) with the Pad's amounts added to the Conv's own pads. The
// pass declines, counting why, for other pad modes, a non-zero or unknown
// pad value, unknown pads, pads on the batch or channel axis, negative pads
// (cropping) and a Conv whose auto_pad is not NOTSET. The Pad stays when
// something else uses its result.
//
//===----------------------------------------------------------------------===//

#include "FusionUtils.h"
#include "nngraph/ir/ShapeInference.h"
#include "nngraph/passes/Passes.h"
#include "nngraph/rewrite/RulePass.h"

namespace nng::passes {
namespace {

using namespace fusion;
using ir::OpKind;

/// The rule at a Conv whose input a Pad produces.
bool fusePadIntoConv(ir::Node &Conv, PatternRewriter &R) {
  ir::Node *Pad = Conv.input(0)->producer();
  if (!Pad || Pad->op() != OpKind::Pad)
    return R.decline(Conv, "input is not produced by a Pad");
  if (Pad->attrString("mode") != "constant")
    return R.decline(Conv, "Pad mode is not 'constant'");
  if (Pad->hasInput(2)) {
    std::optional<double> V = constantScalar(Pad->input(2));
    if (!V)
      return R.decline(Conv, "Pad value is not a constant scalar");
    if (*V != 0.0)
      return R.decline(Conv, "Pad value is not zero");
  }
  const Tensor *PadsT = ir::constantValue(Pad->input(1));
  if (!PadsT || !PadsT->defined())
    return R.decline(Conv, "Pad amounts are not constant");
  std::vector<int64_t> Pads = PadsT->toIntVector();
  if (Conv.attrString("auto_pad") != "NOTSET")
    return R.decline(Conv, "Conv auto_pad is not NOTSET");
  int64_t Rank = static_cast<int64_t>(Pads.size()) / 2;
  int64_t NSpatial = Rank - 2;
  if (NSpatial < 1 || static_cast<int64_t>(Pads.size()) != 2 * Rank)
    return R.decline(Conv, "Pad amounts do not fit a convolution input");
  if (Pads[0] != 0 || Pads[1] != 0 || Pads[Rank] != 0 || Pads[Rank + 1] != 0)
    return R.decline(Conv, "Pad pads the batch or channel axis");
  for (int64_t P : Pads)
    if (P < 0)
      return R.decline(Conv, "Pad crops (negative pads)");
  std::vector<int64_t> ConvPads = Conv.attrInts("pads");
  if (ConvPads.empty())
    ConvPads.assign(2 * NSpatial, 0);
  if (static_cast<int64_t>(ConvPads.size()) != 2 * NSpatial)
    return R.decline(Conv, "Conv pads do not match the input rank");
  for (int64_t I = 0; I < NSpatial; ++I) {
    ConvPads[I] += Pads[2 + I];
    ConvPads[NSpatial + I] += Pads[Rank + 2 + I];
  }
  Conv.setAttr("pads", ir::Attribute(ConvPads));
  Conv.setInput(0, Pad->input(0));
  return true;
}

} // namespace

std::unique_ptr<Pass> createFusePadIntoConvPass() {
  return std::make_unique<RulePass>(
      "fuse-pad-into-conv",
      "fold a zero constant Pad of the spatial axes into the Conv's pads",
      RewritePatternList{
          // Conv(Pad(x, p, 0), W){pads = q} -> Conv(x, W){pads = p + q}
          {OpKind::Conv, "fuse-pad-into-conv", fusePadIntoConv},
      });
}

} // namespace nng::passes
