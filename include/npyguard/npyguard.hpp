// npyguard: strict validation of NumPy .npy headers. The whole public API.
#ifndef NPYGUARD_NPYGUARD_HPP
#define NPYGUARD_NPYGUARD_HPP

#include "npyguard/data.hpp"
#include "npyguard/descr.hpp"
#include "npyguard/error.hpp"
#include "npyguard/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"
#include "npyguard/validate.hpp"
#include "npyguard/write.hpp"

#define NPYGUARD_VERSION_STRING "0.1.0"

#endif
