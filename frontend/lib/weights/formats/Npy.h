//===- Npy.h - The .npy array format (one array per file) -------*- C++ -*-===//
//
// A .npy file is the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a
// little-endian header length (2 bytes in 1.0, 4 after) and a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the raw data. This private
// reader/writer is what the .npz format (a zip of .npy entries) is built
// on. Supported descrs: <f8 <f4 <f2 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1;
// big-endian data is byte-swapped into a copy, fortran_order arrays become
// a view with column-major strides, and object arrays ('|O', pickled Python
// objects) are refused: nothing is ever unpickled.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "nngraph/runtime/Storage.h"
#include "nngraph/runtime/Tensor.h"

#include <memory>
#include <string>

namespace nng::weights::npy {

/// The array in bytes [Offset, Offset + Size) of Buf, which hold exactly
/// one .npy file. The tensor is a view of Buf (sharing its writability)
/// when its data is little-endian and aligned to the element size, and a
/// copy otherwise. What names the file (and entry) in messages.
rt::Tensor read(const std::shared_ptr<Storage> &Buf, size_t Offset, size_t Size,
                const std::string &What);

/// T (CPU, any strides) as the bytes of a version 1.0 .npy file (2.0 when the
/// header needs more than 65535 bytes), C order, padded to 64 bytes as
/// numpy writes it. What names the file and key in messages.
std::string write(const rt::Tensor &T, const std::string &What);

} // namespace nng::weights::npy
