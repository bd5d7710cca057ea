// Kept so that existing includes of npyguard/descr.hpp keep compiling: the
// header is now npyguard/npy/descr.hpp (the .npy format's folder).
#ifndef NPYGUARD_DESCR_HPP
#define NPYGUARD_DESCR_HPP

#include "npyguard/npy/descr.hpp"

#endif
