//===- NN.h - Everything of nngraph's nn module system -------- -*- C++ -*-===//
//
// The umbrella header of nng::nn, like `import torch.nn as nn`: Module and
// the containers, nn::init, and every layer (Linear, convolutions,
// normalization, activations, pooling, dropout, embedding, attention, the
// transformer encoder layer and the losses). Include the family headers instead to
// keep compile times down.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/frontend/nn/Activation.h"
#include "nngraph/frontend/nn/Containers.h"
#include "nngraph/frontend/nn/Conv.h"
#include "nngraph/frontend/nn/Dropout.h"
#include "nngraph/frontend/nn/Embedding.h"
#include "nngraph/frontend/nn/Init.h"
#include "nngraph/frontend/nn/LayerArgs.h"
#include "nngraph/frontend/nn/Linear.h"
#include "nngraph/frontend/nn/Loss.h"
#include "nngraph/frontend/nn/Module.h"
#include "nngraph/frontend/nn/Norm.h"
#include "nngraph/frontend/nn/Pooling.h"
#include "nngraph/frontend/nn/RNN.h"
#include "nngraph/frontend/nn/Transformer.h"
