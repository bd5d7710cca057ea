// npyguard: which symbols a shared libnpyguard exports. The library is built
// with hidden visibility; only declarations marked NPYGUARD_API (the public
// API, never a detail) are visible to programs that link it.
#ifndef NPYGUARD_EXPORT_HPP
#define NPYGUARD_EXPORT_HPP

#if defined(__GNUC__) || defined(__clang__)
#define NPYGUARD_API __attribute__((visibility("default")))
#else
#define NPYGUARD_API
#endif

#endif
