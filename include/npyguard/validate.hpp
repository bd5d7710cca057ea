// Kept so that existing includes of npyguard/validate.hpp keep compiling: the
// header is now npyguard/npy/validate.hpp (the .npy format's folder).
#ifndef NPYGUARD_VALIDATE_HPP
#define NPYGUARD_VALIDATE_HPP

#include "npyguard/npy/validate.hpp"

#endif
