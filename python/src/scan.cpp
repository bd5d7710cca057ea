// The scan's native half (npyguard/_scan.py): one row per file, from a local
// path read with pread or from a Python object with size() and
// read_at(offset, length), counting the reads and the bytes they return.
//
// Every check reads by offset with options::minimal_reads, so a .npy costs
// its preamble and header, a .ra its 48 + 8 * ndims header bytes, an .npz
// its end window, directory and member headers (SPEC-npz.md section 14).
// The format is found as `npyguard check` finds it (detect_format, SPEC.md
// section 9): a name ending in ".npy", ".npz" or ".ra" claims that format,
// anything else goes by its first bytes, which are read once and served
// again.
//
// A row: (format, valid, code, offset, member, member_offset, message,
//         shape, descr, nbytes, members, bytes_read, reads)
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "native.hpp"
#include "npyguard/convert.hpp"
#include "npyguard/detect.hpp"
#include "npyguard/io.hpp"
#include "npyguard/npy/descr.hpp"
#include "npyguard/npy/validate.hpp"
#include "npyguard/npz/validate.hpp"
#include "npyguard/ra/validate.hpp"

namespace npyguard_python {
namespace {

namespace py = pybind11;

// The first bytes read to find the format: detect_format's 8, rounded up to
// the 12 of a .npy preamble, whose read they then serve in full.
constexpr std::size_t head_bytes = 12;

bool ends_with(const std::string& name, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
}

// "TypeName: message" for a Python exception (without pybind11's traceback).
std::string describe(const py::error_already_set& e) {
  try {
    std::string out = py::str(e.type().attr("__name__"));
    const std::string value = py::str(e.value());
    return value.empty() ? out : out + ": " + value;
  } catch (const std::exception&) {
    return e.what();
  }
}

// A random-access input that counts its requests and the bytes they return,
// and serves its first bytes, read once for the format, from memory.
class counted_source : public npyguard::random_access_source {
public:
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }

  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    auto* out = static_cast<unsigned char*>(buffer);
    std::size_t served = 0;
    if (offset < head_size_) {
      served = std::min<std::size_t>(size, head_size_ - static_cast<std::size_t>(offset));
      std::memcpy(out, head_ + offset, served);
      if (served == size) return static_cast<std::ptrdiff_t>(served);
    }
    const std::ptrdiff_t got = fetch(offset + served, out + served, size - served);
    return got < 0 ? got : static_cast<std::ptrdiff_t>(served) + got;
  }

  // Reads the first bytes; how many, or minus an errno value.
  std::ptrdiff_t read_head() noexcept {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(size_, head_bytes));
    if (wanted == 0) return 0;
    const std::ptrdiff_t got = fetch(0, head_, wanted);
    if (got > 0) head_size_ = static_cast<std::size_t>(got);
    return got;
  }
  [[nodiscard]] const unsigned char* head() const noexcept { return head_; }
  [[nodiscard]] std::size_t head_size() const noexcept { return head_size_; }
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }
  // Why the last failed read failed, when the errno value does not say it
  // (an exception raised by a Python reader).
  [[nodiscard]] const std::optional<std::string>& problem() const noexcept { return problem_; }

  counted_source(const counted_source&) = delete;
  counted_source& operator=(const counted_source&) = delete;

protected:
  explicit counted_source(std::uint64_t size) noexcept : size_(size) {}
  ~counted_source() override = default;
  // One request: up to `size` bytes at `offset`, how many, or minus errno.
  virtual std::ptrdiff_t fetch_once(std::uint64_t offset, unsigned char* out, std::size_t size) noexcept = 0;
  std::optional<std::string> problem_;

private:
  std::ptrdiff_t fetch(std::uint64_t offset, unsigned char* out, std::size_t size) noexcept {
    if (size == 0) return 0; // no request for nothing (an HTTP range of 0 bytes is malformed)
    ++reads_;
    const std::ptrdiff_t got = fetch_once(offset, out, size);
    if (got > 0) bytes_read_ += static_cast<std::uint64_t>(got);
    if (got > static_cast<std::ptrdiff_t>(size)) return -EIO; // never more than asked
    return got;
  }

  std::uint64_t size_;
  unsigned char head_[head_bytes] = {};
  std::size_t head_size_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t reads_ = 0;
};

// A regular file, read by the library's file_source (pread).
class file_input final : public counted_source {
public:
  explicit file_input(npyguard::file_source& file) noexcept : counted_source(file.size()), file_(file) {}

private:
  std::ptrdiff_t fetch_once(std::uint64_t offset, unsigned char* out, std::size_t size) noexcept override {
    return file_.read_at(offset, out, size);
  }

  npyguard::file_source& file_;
};

// A Python object's read_at(offset, length), called with the GIL taken for
// each request (validation itself runs without it). Its answer is any
// bytes-like object of at most `length` bytes; an Exception is a read error
// whose text becomes the row's message. Anything else raised (KeyboardInterrupt,
// SystemExit) ends the check: no more calls, and scan_source raises it again.
class python_input final : public counted_source {
public:
  // Made and destroyed with the GIL held.
  python_input(py::object read_at, std::uint64_t size) noexcept : counted_source(size), read_at_(std::move(read_at)) {}

  // With the GIL: the interruption, if one came, raised again.
  void raise_interruption() {
    if (interrupted_) throw std::move(*interrupted_);
  }

private:
  std::ptrdiff_t fetch_once(std::uint64_t offset, unsigned char* out, std::size_t size) noexcept override {
    if (interrupted_) return -EINTR;
    try {
      const py::gil_scoped_acquire locked;
      try {
        return call(offset, out, size);
      } catch (py::error_already_set& e) {
        if (!e.matches(PyExc_Exception)) {
          interrupted_.emplace(std::move(e));
          return -EINTR;
        }
        problem_ = describe(e);
      }
    } catch (const std::exception&) { // no memory for the message, or no GIL to be had
      problem_.reset();
    }
    return -EIO;
  }

  // With the GIL: one call of read_at, its answer copied out.
  std::ptrdiff_t call(std::uint64_t offset, unsigned char* out, std::size_t size) {
    const py::object answer = read_at_(offset, size);
    Py_buffer view{};
    if (PyObject_GetBuffer(answer.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
    const auto n = static_cast<std::size_t>(view.len);
    if (n <= size && n != 0) std::memcpy(out, view.buf, n);
    PyBuffer_Release(&view);
    if (n > size) {
      problem_ = "read_at(" + std::to_string(offset) + ", " + std::to_string(size) + ") returned " + std::to_string(n) +
                 " bytes, more than asked";
      return -EIO;
    }
    return static_cast<std::ptrdiff_t>(n);
  }

  py::object read_at_;
  std::optional<py::error_already_set> interrupted_;
};

// One file's answer, built without the GIL.
struct outcome {
  npyguard::file_format format = npyguard::file_format::npy;
  std::optional<npyguard::result> npy;
  std::optional<npyguard::npz::archive_result> npz;
  std::optional<npyguard::ra::result> ra;
  std::optional<npyguard::error> io_problem; // an input that could not be read at all
  std::uint64_t bytes_read = 0;
  std::uint64_t reads = 0;
};

npyguard::file_format format_by_name(const std::string& name) {
  if (ends_with(name, ".npz")) return npyguard::file_format::npz;
  if (ends_with(name, ".ra")) return npyguard::file_format::ra;
  return npyguard::file_format::npy;
}

npyguard::error io_error(std::string message) {
  return npyguard::error{npyguard::error_code::io_error, std::nullopt, std::move(message)};
}

npyguard::error read_problem(std::ptrdiff_t got, const counted_source& source) {
  return io_error("cannot read: " + source.problem().value_or(std::strerror(static_cast<int>(-got))));
}

void check_source(counted_source& source, const std::string& name, const npyguard::options& opts, outcome& out) {
  out.format = format_by_name(name);
  if (out.format != npyguard::file_format::ra) {
    const std::ptrdiff_t got = source.read_head();
    if (got < 0) {
      out.io_problem = read_problem(got, source);
    } else {
      out.format = npyguard::detect_format(source.head(), source.head_size(), name);
    }
  }
  if (!out.io_problem) {
    switch (out.format) {
      case npyguard::file_format::npz: out.npz = npyguard::npz::validate_source(source, opts); break;
      case npyguard::file_format::ra: out.ra = npyguard::ra::validate_source(source, opts); break;
      case npyguard::file_format::npy: out.npy = npyguard::validate_source(source, opts); break;
    }
    // A read error's own words (a Python reader's exception) over the errno's.
    const npyguard::error* failure = out.npz  ? out.npz->failure_if()
                                     : out.ra ? out.ra->failure_if()
                                              : out.npy->failure_if();
    if (failure != nullptr && failure->code == npyguard::error_code::io_error && source.problem()) {
      out.io_problem = io_error("cannot read: " + *source.problem());
    }
  }
  out.bytes_read = source.bytes_read();
  out.reads = source.reads();
}

// A local path as `npyguard check` reads one, except that only regular
// files are read: a FIFO or device is reported, never read.
outcome check_path(const std::string& path, const npyguard::options& opts) {
  outcome out;
  out.format = format_by_name(path);
  npyguard::file_source file(path.c_str());
  if (const auto& failure = file.failure()) {
    out.io_problem = *failure;
    return out;
  }
  file_input source(file);
  check_source(source, path, opts, out);
  return out;
}

// ---------------------------------------------------------------------------
// Rows

py::object text(const std::string& value) {
  PyObject* decoded = PyUnicode_DecodeUTF8(value.data(), static_cast<Py_ssize_t>(value.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(decoded);
}

template <typename T>
py::object maybe(const std::optional<T>& value) {
  if (!value) return py::none();
  if constexpr (std::is_same_v<T, std::string>) {
    return text(*value);
  } else {
    return py::int_(*value);
  }
}

py::tuple dims_tuple(const std::vector<std::uint64_t>& dims) {
  py::tuple shape(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) shape[i] = py::int_(dims[i]);
  return shape;
}

py::tuple row(const char* format, const npyguard::error& e, const outcome& o) {
  return py::make_tuple(format, false, std::string(npyguard::error_code_name(e.code)), maybe(e.offset), maybe(e.member),
                        maybe(e.member_offset), text(e.message), py::none(), py::none(), py::none(), py::none(),
                        o.bytes_read, o.reads);
}

py::tuple valid_row(const char* format, py::object shape, py::object descr, py::object nbytes, py::object members,
                    const outcome& o) {
  return py::make_tuple(format, true, py::none(), py::none(), py::none(), py::none(), py::none(), std::move(shape),
                        std::move(descr), std::move(nbytes), std::move(members), o.bytes_read, o.reads);
}

py::tuple row_of(const outcome& o) {
  const char* format = format_name(o.format);
  if (o.io_problem) {
    return row(format, *o.io_problem, o);
  }
  if (o.npz) {
    if (!o.npz->ok()) return row(format, o.npz->failure(), o);
    std::uint64_t nbytes = 0;
    for (const auto& m : o.npz->value().members) nbytes += m.npy.nbytes;
    return valid_row(format, py::none(), py::none(), py::int_(nbytes), py::int_(o.npz->value().members.size()), o);
  }
  if (o.ra) {
    if (!o.ra->ok()) return row(format, o.ra->failure(), o);
    const npyguard::ra::header& h = o.ra->value();
    const auto numpy_type = npyguard::numpy_dtype(h);
    const std::string descr =
        numpy_type.ok() ? npyguard::descr_repr(numpy_type.value()) : npyguard::ra::type_name(h.eltype, h.elbyte);
    return valid_row(format, dims_tuple(h.dims), text(descr), py::int_(h.data_length), py::none(), o);
  }
  if (!o.npy->ok()) return row(format, o.npy->failure(), o);
  const npyguard::header& h = o.npy->value();
  return valid_row(format, dims_tuple(h.shape), text(npyguard::descr_repr(h.descr)),
                   h.data_is_pickle ? py::object(py::none()) : py::object(py::int_(h.nbytes)), py::none(), o);
}

npyguard::options scan_options(const native_options& o) {
  npyguard::options opts = o.opts;
  opts.minimal_reads = true;
  return opts;
}

// Rows for local paths (os.fsencode'd), checked without the GIL.
py::list scan_paths(const py::list& names, const native_options& o) {
  const npyguard::options opts = scan_options(o);
  std::vector<std::string> paths;
  paths.reserve(names.size());
  for (const py::handle name : names) paths.push_back(name.cast<std::string>()); // bytes (or str)
  std::vector<outcome> outcomes(paths.size());
  {
    const py::gil_scoped_release unlocked;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (paths[i].find('\0') != std::string::npos) {
        outcomes[i].format = format_by_name(paths[i]);
        outcomes[i].io_problem = io_error("cannot open: the path holds a NUL byte");
        continue;
      }
      outcomes[i] = check_path(paths[i], opts);
    }
  }
  py::list rows;
  for (const outcome& out : outcomes) rows.append(row_of(out));
  return rows;
}

// The row for `reader`, an object with size() and read_at(offset, length);
// `name` finds the format as a path's name would.
py::tuple scan_source(const py::object& reader, const std::string& name, const native_options& o) {
  const npyguard::options opts = scan_options(o);
  outcome out;
  out.format = format_by_name(name);
  std::uint64_t size = 0;
  try {
    size = reader.attr("size")().cast<std::uint64_t>();
  } catch (py::error_already_set& e) {
    out.io_problem = io_error("cannot stat: " + describe(e));
  } catch (const py::cast_error&) {
    out.io_problem = io_error("cannot stat: size() did not return an int from 0 to 2**64 - 1");
  }
  if (!out.io_problem) {
    python_input source(reader.attr("read_at"), size);
    {
      const py::gil_scoped_release unlocked;
      check_source(source, name, opts, out);
    }
    source.raise_interruption();
  }
  return row_of(out);
}

} // namespace

void register_scan(py::module_& m) {
  m.def("scan_paths", &scan_paths, py::arg("paths"), py::arg("options"));
  m.def("scan_source", &scan_source, py::arg("reader"), py::arg("name"), py::arg("options"));
}

} // namespace npyguard_python
