// The upload gate's native half (npyguard.asgi): one upload, arriving on a
// pipe that the event loop fills as the body comes in, judged through the
// input boundary (npyguard/input.hpp: the name's claim, the deadline, an
// .npz spooled to an unlinked file) and answered with the row that
// `npyguard check --json` prints for the same bytes (cli/report.hpp: the
// command's own writer, so the two cannot drift apart).
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "cli/report.hpp"
#include "native.hpp"
#include "npyguard/input.hpp"

namespace py = pybind11;

namespace npyguard_python {
namespace {

// Set from the event loop's thread (a client that went away) to stop a
// check in progress at its next read, or within about 50 ms of a wait.
class gate_cancel {
public:
  void set() noexcept { flag_.store(true); }
  [[nodiscard]] bool is_set() const noexcept { return flag_.load(); }
  [[nodiscard]] const std::atomic<bool>* flag() const noexcept { return &flag_; }

private:
  std::atomic<bool> flag_{false};
};

std::optional<npyguard::file_format> gate_format(const std::string& name) {
  if (name == "npy") return npyguard::file_format::npy;
  if (name == "npz") return npyguard::file_format::npz;
  if (name == "ra") return npyguard::file_format::ra;
  return std::nullopt; // "": SPEC.md section 9
}

// (format, row): `fd` (a pipe's reading end, or any descriptor) validated
// as `format` ("" to choose by the claim of `name`, then the first bytes),
// every read waiting no later than `timeout_ms` after the call began (0:
// no deadline), an .npz spooled to an unlinked file in `spool_directory`
// ("" for $TMPDIR); `row` is check --json's line for a file called
// `display`. The descriptor is not closed. Never raises for what the input
// holds: that is the row.
py::tuple gate_fd(int fd, const std::string& name, const std::string& display, const native_options& o,
                  std::uint32_t timeout_ms, const std::string& format, const std::string& spool_directory,
                  const gate_cancel* cancel) {
  npyguard::options opts = o.opts;
  opts.timeout_ms = timeout_ms;
  npyguard::input_request request;
  request.format = gate_format(format);
  request.name = name;
  request.spool_directory = spool_directory.c_str();
  request.cancel = cancel != nullptr ? cancel->flag() : nullptr;
  std::string row;
  const char* chosen = "npy";
  {
    const py::gil_scoped_release unlocked;
    const npyguard::input_result checked = npyguard::validate_input_fd(fd, opts, request);
    chosen = format_name(checked.format);
    switch (checked.format) {
      case npyguard::file_format::npz: row = npyguard_cli::verdict_json(display, checked.npz); break;
      case npyguard::file_format::ra: row = npyguard_cli::verdict_json(display, checked.ra); break;
      case npyguard::file_format::npy: row = npyguard_cli::verdict_json(display, checked.npy); break;
    }
  }
  return py::make_tuple(chosen, py::bytes(row));
}

} // namespace

void register_gate(py::module_& m) {
  py::class_<gate_cancel>(m, "GateCancel")
      .def(py::init<>())
      .def("set", &gate_cancel::set)
      .def("is_set", &gate_cancel::is_set);
  m.def("gate_fd", &gate_fd, py::arg("fd"), py::arg("name"), py::arg("display"), py::arg("options"),
        py::arg("timeout_ms"), py::arg("format"), py::arg("spool_directory"), py::arg("cancel") = nullptr);
}

} // namespace npyguard_python
