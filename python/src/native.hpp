// What the native module's files share: the options the Python half
// validated, and the registration of the scan's functions (scan.cpp).
#ifndef NPYGUARD_PYTHON_NATIVE_HPP
#define NPYGUARD_PYTHON_NATIVE_HPP

#include <pybind11/pybind11.h>

#include "npyguard/detect.hpp"
#include "npyguard/options.hpp"

namespace npyguard_python {

// The options the Python half validated (npyguard/__init__.py, _cached_options).
struct native_options {
  npyguard::options opts;
};

// "npy", "npz" or "ra": the format's name as the Python half and the
// command's --json spell it.
inline const char* format_name(npyguard::file_format format) {
  switch (format) {
    case npyguard::file_format::npz: return "npz";
    case npyguard::file_format::ra: return "ra";
    case npyguard::file_format::npy: break;
  }
  return "npy";
}

// scan_paths and scan_source (scan.cpp).
void register_scan(pybind11::module_& m);

// gate_fd and GateCancel, the upload gate's native half (gate.cpp).
void register_gate(pybind11::module_& m);

} // namespace npyguard_python

#endif
