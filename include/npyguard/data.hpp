// Kept so that existing includes of npyguard/data.hpp keep compiling: the
// header is now npyguard/npy/data.hpp (the .npy format's folder).
#ifndef NPYGUARD_DATA_HPP
#define NPYGUARD_DATA_HPP

#include "npyguard/npy/data.hpp"

#endif
