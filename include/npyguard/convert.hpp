// npyguard: conversion between RawArray (.ra) and .npy files (SPEC-ra.md
// section 10a). Both directions validate the input first, copy the data in
// bounded memory, write a new file in the output's directory, validate it,
// flush it and rename it over the output, as canonicalize_file does: on any
// error no file is left behind and an existing output is untouched. The
// input must be a regular file (its data is read by offset) and must not be
// the output. None of them throws.
#ifndef NPYGUARD_CONVERT_HPP
#define NPYGUARD_CONVERT_HPP

#include "npyguard/export.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/model.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

struct ra_to_npy {
  ra::header input; // its metadata_length bytes are not carried over
  header output;
};

struct npy_to_ra {
  header input;
  ra::header output;
};

// .ra -> .npy: shape = dims in file order, the data bytes unchanged, the
// header np.save writes for that array: fortran_order True, or False when at
// most one dim is above 1 (both orders then hold the same bytes), descr
// '<' or '>' (flag bit 0; '|' for one byte) with i/u/f/c of elbyte bytes
// (float of 16 bytes is numpy's longdouble, complex of 32 its clongdouble),
// type 5 with elbyte 1 as '|b1'. Refused before the output exists, as
// not_convertible at the field that says why: user type 0 and bfloat16
// (type 5, elbyte 2; numpy 1.24 has no bfloat16) at 16, 16-byte integers and
// 4-byte complex at 24, more than 32 dims (numpy 1.24's limit) at 40.
// Errors of the input are the RawArray validator's (`opts` applies).
[[nodiscard]] NPYGUARD_API basic_result<ra_to_npy> convert_ra_to_npy(const char* input, const char* output,
                                                                     const options& opts = {}) noexcept;

// The numpy dtype convert_ra_to_npy gives a RawArray's elements (above), or
// its not_convertible refusal; no I/O. The array is then shape = dims in
// Fortran order over the data bytes as they are.
[[nodiscard]] NPYGUARD_API basic_result<dtype> numpy_dtype(const ra::header& model) noexcept;

// .npy -> .ra: exactly what the Python reference ra.write writes for that
// array: dims = shape, flag bit 0 for a '>' descr, eltype 1/2/3/4 by kind
// with elbyte the itemsize, and the data column-major. A Fortran-order input
// (and any with at most one dim above 1) is copied unchanged; a C-order one
// is transposed, reading the input's data through a read-only mapping (a
// file truncated by another process while it is converted raises SIGBUS, as
// for data_access::map). bool becomes type 5 with elbyte 1, as RawArray.jl
// writes Bool. Refused as not_convertible, at the header text's offset (10,
// or 12 for versions 2.0 and 3.0): structured, object, bytes, unicode, void,
// datetime and timedelta dtypes (RawArray has no such types). The output
// has no metadata.
[[nodiscard]] NPYGUARD_API basic_result<npy_to_ra> convert_npy_to_ra(const char* input, const char* output,
                                                                     const options& opts = {}) noexcept;

} // namespace npyguard

#endif
