#include "npyguard/version.hpp"

namespace npyguard {

const char* version() noexcept { return NPYGUARD_VERSION_STRING; }

} // namespace npyguard
