// npyguard: the version, in one place. CMake reads the three numbers below
// (project(VERSION)), so the library, the package files and the command
// agree.
#ifndef NPYGUARD_VERSION_HPP
#define NPYGUARD_VERSION_HPP

#include "npyguard/export.hpp"

#define NPYGUARD_VERSION_MAJOR 0
#define NPYGUARD_VERSION_MINOR 1
#define NPYGUARD_VERSION_PATCH 0

#define NPYGUARD_STRINGIFY_DETAIL(x) #x
#define NPYGUARD_STRINGIFY(x) NPYGUARD_STRINGIFY_DETAIL(x)
// "MAJOR.MINOR.PATCH" of the headers being compiled against.
#define NPYGUARD_VERSION_STRING              \
  NPYGUARD_STRINGIFY(NPYGUARD_VERSION_MAJOR) \
  "." NPYGUARD_STRINGIFY(NPYGUARD_VERSION_MINOR) "." NPYGUARD_STRINGIFY(NPYGUARD_VERSION_PATCH)

namespace npyguard {

// The version of the library linked at run time ("0.1.0"), which may differ
// from NPYGUARD_VERSION_STRING when a program was built against other headers.
[[nodiscard]] NPYGUARD_API const char* version() noexcept;

} // namespace npyguard

#endif
