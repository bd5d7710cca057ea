// Kept so that existing includes of npyguard/write.hpp keep compiling: the
// header is now npyguard/npy/write.hpp (the .npy format's folder).
#ifndef NPYGUARD_WRITE_HPP
#define NPYGUARD_WRITE_HPP

#include "npyguard/npy/write.hpp"

#endif
