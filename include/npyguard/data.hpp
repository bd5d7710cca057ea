// Placeholder: filled in by the next commit.
#ifndef NPYGUARD_DATA_HPP
#define NPYGUARD_DATA_HPP
#endif
