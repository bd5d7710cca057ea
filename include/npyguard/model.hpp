// Kept so that existing includes of npyguard/model.hpp keep compiling: the
// header is now npyguard/npy/model.hpp (the .npy format's folder).
#ifndef NPYGUARD_MODEL_HPP
#define NPYGUARD_MODEL_HPP

#include "npyguard/npy/model.hpp"

#endif
