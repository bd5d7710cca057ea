// npyguard: strict validation of NumPy .npy files, .npz archives and RawArray
// (.ra) files. The whole public API.
//
// Thread safety: every function of the API may be called from any number of
// threads at once, on distinct or shared inputs (a shared options object is
// only read). Objects the caller owns (a result, an array_data, a
// byte_source) are not synchronised: one thread at a time may use a
// non-const member, any number may use const ones.
#ifndef NPYGUARD_NPYGUARD_HPP
#define NPYGUARD_NPYGUARD_HPP

#include "npyguard/convert.hpp"
#include "npyguard/detect.hpp"
#include "npyguard/error.hpp"
#include "npyguard/export.hpp"
#include "npyguard/input.hpp"
#include "npyguard/io.hpp"
#include "npyguard/npy/data.hpp"
#include "npyguard/npy/descr.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/npy/validate.hpp"
#include "npyguard/npy/validator.hpp"
#include "npyguard/npy/write.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/npz/validate.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/data.hpp"
#include "npyguard/ra/model.hpp"
#include "npyguard/ra/validate.hpp"
#include "npyguard/result.hpp"
#include "npyguard/version.hpp"

#endif
