// npyguard._npyguard: the Python package's native half, over the public C++
// API only (pybind11). It validates with the GIL released and hands models
// to the Python half (npyguard/__init__.py) as plain tuples; the Python half
// builds Header objects, numpy dtypes and arrays from them.
//
// Errors: a rejection or an I/O failure is thrown here as `rejection` and
// turned into npyguard.NpyguardError (or NpyguardIOError) by the translator
// registered below, which calls npyguard._errors.from_native. No exception
// crosses into the library: its API never throws.
#include <Python.h>

#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "native.hpp"
#include "npyguard/convert.hpp"
#include "npyguard/detect.hpp"
#include "npyguard/input.hpp"
#include "npyguard/npy/data.hpp"
#include "npyguard/npy/descr.hpp"
#include "npyguard/npy/validate.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/npz/validate.hpp"
#include "npyguard/ra/data.hpp"
#include "npyguard/ra/validate.hpp"
#include "npyguard/version.hpp"

namespace py = pybind11;
using npyguard_python::format_name;
using npyguard_python::native_options;

namespace {

// Python's main thread, the one its signal handlers run on (set at import).
unsigned long main_thread_ident = 0;

// ---------------------------------------------------------------------------
// Errors

struct rejection {
  npyguard::error failure;
};

[[noreturn]] void reject(npyguard::error failure) { throw rejection{std::move(failure)}; }

template <typename T>
const T& value_or_reject(const npyguard::basic_result<T>& checked) {
  if (!checked.ok()) reject(checked.failure());
  return checked.value();
}

py::object optional_int(const std::optional<std::uint64_t>& value) {
  return value ? py::object(py::int_(*value)) : py::object(py::none());
}

py::object optional_str(const std::optional<std::string>& value) {
  if (!value) return py::none();
  // Member names are UTF-8 from the library; a name that is not (never
  // expected) is shown with replacement characters rather than lost.
  PyObject* text = PyUnicode_DecodeUTF8(value->data(), static_cast<Py_ssize_t>(value->size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(text);
}

py::str decode(const std::string& text) { return py::reinterpret_borrow<py::str>(optional_str(text)); }

void translate(const rejection& r) {
  const npyguard::error& e = r.failure;
  const py::object factory = py::module_::import("npyguard._errors").attr("from_native");
  const py::object option = e.option.empty() ? py::object(py::none()) : py::object(py::str(std::string(e.option)));
  const py::object exception =
      factory(std::string(npyguard::error_code_name(e.code)), static_cast<int>(e.code), optional_int(e.offset),
              decode(e.message), optional_str(e.member), optional_int(e.member_offset), option, optional_int(e.limit),
              optional_int(e.actual));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exception.ptr())), exception.ptr());
}

// ---------------------------------------------------------------------------
// Inputs

// A path from the Python half (os.fsencode'd bytes): a NUL inside would cut
// it short in C, so it is refused as Python's own open() refuses it.
const char* path_of(const std::string& path) {
  if (path.find('\0') != std::string::npos) throw py::value_error("embedded null byte in the path");
  return path.c_str();
}

native_options make_options(std::uint32_t max_header_bytes, std::uint32_t max_depth, std::uint32_t max_ndim,
                            std::uint64_t max_data_bytes, bool allow_trailing_data, bool allow_object, bool canonical,
                            bool verify, std::uint64_t max_members, std::uint64_t max_total_bytes,
                            std::uint64_t max_ratio, bool ra_allow_type5, bool ra_reject_metadata,
                            const py::object& max_stream_bytes) {
  native_options out;
  npyguard::options& o = out.opts;
  o.limits.max_header_bytes = max_header_bytes;
  o.limits.max_depth = max_depth;
  o.limits.max_ndim = max_ndim;
  o.limits.max_data_bytes = max_data_bytes;
  o.allow_trailing_data = allow_trailing_data;
  o.allow_object = allow_object;
  o.canonical = canonical;
  o.verify = verify;
  o.limits.max_members = max_members;
  o.limits.max_total_bytes = max_total_bytes;
  o.limits.max_ratio = max_ratio;
  o.ra_allow_type5 = ra_allow_type5;
  o.ra_reject_metadata = ra_reject_metadata;
  if (!max_stream_bytes.is_none()) o.limits.max_stream_bytes = max_stream_bytes.cast<std::uint64_t>();
  return out;
}

// A contiguous buffer of the caller's (bytes, bytearray, memoryview, mmap,
// a contiguous numpy array), held for as long as this object lives: the
// exporter cannot resize or free it meanwhile (a bytearray refuses to).
class held_buffer {
public:
  explicit held_buffer(const py::handle& object) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~held_buffer() { PyBuffer_Release(&view_); }
  held_buffer(const held_buffer&) = delete;
  held_buffer& operator=(const held_buffer&) = delete;

  [[nodiscard]] const void* data() const noexcept { return view_.buf; }
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(view_.len); }

private:
  Py_buffer view_{};
};

// ---------------------------------------------------------------------------
// Data that Python arrays view: a validated range kept open, or memory of
// our own. Both export a read-only buffer of exactly the data bytes.

class data_holder {
public:
  virtual ~data_holder() = default;
  [[nodiscard]] virtual const unsigned char* bytes() const noexcept = 0;
  [[nodiscard]] virtual std::uint64_t size() const noexcept = 0;
};

template <typename ArrayData>
class view_holder final : public data_holder {
public:
  explicit view_holder(ArrayData data) noexcept : data_(std::move(data)) {}
  [[nodiscard]] const unsigned char* bytes() const noexcept override { return data_.bytes(); }
  [[nodiscard]] std::uint64_t size() const noexcept override { return data_.size(); }

private:
  ArrayData data_;
};

class owned_holder final : public data_holder {
public:
  explicit owned_holder(std::uint64_t size) noexcept
      : bytes_(new (std::nothrow) unsigned char[static_cast<std::size_t>(size == 0 ? 1 : size)]), size_(size) {}
  [[nodiscard]] bool allocated() const noexcept { return bytes_ != nullptr; }
  [[nodiscard]] unsigned char* writable() noexcept { return bytes_.get(); }
  [[nodiscard]] const unsigned char* bytes() const noexcept override { return bytes_.get(); }
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }

private:
  std::unique_ptr<unsigned char[]> bytes_;
  std::uint64_t size_;
};

py::buffer_info export_buffer(data_holder& holder) {
  // Read-only: a view of a mapping or of validated bytes is not for writing.
  return py::buffer_info(const_cast<unsigned char*>(holder.bytes()), 1, "B", 1,
                         {static_cast<py::ssize_t>(holder.size())}, {1}, /*readonly=*/true);
}

// ---------------------------------------------------------------------------
// Models as tuples

// A dtype for numpy: a type string ("<f4"), or for a structured dtype
// ("struct", names, formats, offsets, titles, itemsize), each format a spec
// or (spec, subarray shape).
py::object dtype_spec(const npyguard::dtype& type) {
  if (type.kind != npyguard::dtype_kind::structured) return py::str(npyguard::type_string(type));
  py::list names;
  py::list formats;
  py::list offsets;
  py::list titles;
  for (const npyguard::field& f : type.fields) {
    names.append(decode(f.name));
    py::object format = dtype_spec(f.type);
    if (!f.subarray_shape.empty()) {
      py::tuple shape(f.subarray_shape.size());
      for (std::size_t i = 0; i < f.subarray_shape.size(); ++i) shape[i] = py::int_(f.subarray_shape[i]);
      format = py::make_tuple(format, shape);
    }
    formats.append(format);
    offsets.append(py::int_(f.offset));
    titles.append(optional_str(f.title));
  }
  return py::make_tuple("struct", names, formats, offsets, titles, py::int_(type.itemsize));
}

py::tuple shape_of(const std::vector<std::uint64_t>& dims) {
  py::tuple shape(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) shape[i] = py::int_(dims[i]);
  return shape;
}

// (major, minor, header_length, data_offset, fortran_order, shape, count,
//  nbytes, itemsize, descr repr, dtype spec, data_is_pickle)
py::tuple npy_model(const npyguard::header& h) {
  return py::make_tuple(h.major_version, h.minor_version, h.header_length, h.data_offset, h.fortran_order,
                        shape_of(h.shape), h.count, h.nbytes, h.descr.itemsize, npyguard::descr_repr(h.descr),
                        dtype_spec(h.descr), h.data_is_pickle);
}

// (flags, big_endian, eltype, type name, elbyte, dims, count, data_offset,
//  data_length, metadata_offset, metadata_length, dtype spec or None,
//  the not_convertible refusal as (offset, message) or None)
py::tuple ra_model(const npyguard::ra::header& h) {
  const npyguard::basic_result<npyguard::dtype> numpy_type = npyguard::numpy_dtype(h);
  py::object spec = py::none();
  py::object refusal = py::none();
  if (numpy_type.ok()) {
    spec = dtype_spec(numpy_type.value());
  } else {
    refusal = py::make_tuple(optional_int(numpy_type.failure().offset), decode(numpy_type.failure().message));
  }
  return py::make_tuple(h.flags, h.big_endian, static_cast<int>(h.eltype), npyguard::ra::type_name(h.eltype, h.elbyte),
                        h.elbyte, shape_of(h.dims), h.count, h.data_offset, h.data_length,
                        optional_int(h.metadata_offset), optional_int(h.metadata_length), spec, refusal);
}

// (name, key, method, compressed_size, uncompressed_size, data_start, npy model, crc32)
py::tuple member_model(const npyguard::npz::member& m) {
  return py::make_tuple(decode(m.name), decode(m.key), static_cast<int>(m.method), m.compressed_size,
                        m.uncompressed_size, m.data_start, npy_model(m.npy), m.crc32);
}

// (size, zip64, verified, bytes_read, [member, ...])
py::tuple archive_model(const npyguard::npz::archive& a, py::list members) {
  return py::make_tuple(a.size, a.zip64, a.verified, a.bytes_read, std::move(members));
}

py::list member_list(const npyguard::npz::archive& a) {
  py::list members;
  for (const npyguard::npz::member& m : a.members) members.append(member_model(m));
  return members;
}

// ---------------------------------------------------------------------------
// Entry points: the library runs without the GIL; models are built with it.

template <typename Call>
auto without_gil(Call&& call) {
  const py::gil_scoped_release unlocked;
  return call();
}

// The options with the call's timeout (timeout=, in milliseconds; 0: none).
npyguard::options with_timeout(const native_options& o, std::uint32_t timeout_ms) {
  npyguard::options opts = o.opts;
  opts.timeout_ms = timeout_ms;
  return opts;
}

// Runs `call(cancel)`, which validates without the GIL. On Python's main
// thread the call runs on a thread of its own while this one, taking the GIL
// every 50 ms, runs Python's signal handlers: when one raises (Ctrl-C:
// KeyboardInterrupt), the call's cancel flag is set, the input boundary
// stops at its next read or within 50 ms of a wait, and the exception
// propagates. Elsewhere (signals reach only the main thread) it runs here.
template <typename Result, typename Call>
Result interruptible(Call call) {
  std::atomic<bool> cancel{false};
  if (PyThread_get_thread_ident() != main_thread_ident) {
    return without_gil([&] { return call(&cancel); });
  }
  std::optional<Result> out;
  std::mutex lock;
  std::condition_variable finished;
  bool done = false;
  bool interrupted = false;
  {
    const py::gil_scoped_release unlocked;
    std::thread worker([&] {
      Result checked = call(&cancel);
      const std::lock_guard<std::mutex> guard(lock);
      out.emplace(std::move(checked));
      done = true;
      finished.notify_one();
    });
    std::unique_lock<std::mutex> guard(lock);
    while (!finished.wait_for(guard, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupted) continue;
      guard.unlock();
      {
        const py::gil_scoped_acquire held;
        interrupted = PyErr_CheckSignals() != 0; // the handler's exception stays set
      }
      if (interrupted) cancel = true;
      guard.lock();
    }
    guard.unlock();
    worker.join();
  }
  if (interrupted) throw py::error_already_set();
  return std::move(*out);
}

// A path through the input boundary (npyguard/input.hpp) as `format` (empty:
// SPEC.md section 9, the name's claim, else the first bytes).
npyguard::input_result through_boundary(const char* path, const npyguard::options& opts,
                                        std::optional<npyguard::file_format> format) {
  return interruptible<npyguard::input_result>([&](const std::atomic<bool>* cancel) {
    npyguard::input_request request;
    request.format = format;
    request.cancel = cancel;
    return npyguard::validate_input(path, opts, request);
  });
}

npyguard::data_access access_of(bool map) { return map ? npyguard::data_access::map : npyguard::data_access::read; }

// (model, holder): the file opened once, mapped or read, for either format's array_data.
template <typename ArrayData, typename ModelOf>
py::tuple load_file(const std::string& path, const native_options& o, bool map, std::uint32_t timeout_ms,
                    ModelOf model_of) {
  const char* file = path_of(path);
  ArrayData view;
  const npyguard::options opts = with_timeout(o, timeout_ms);
  // Ctrl-C stops the header's reads (the data is then read or mapped in one go).
  using verdict = decltype(ArrayData::open(file, view, opts, access_of(map)));
  const auto checked = interruptible<verdict>([&](const std::atomic<bool>* cancel) {
    npyguard::options cancellable = opts;
    cancellable.cancel = cancel;
    return ArrayData::open(file, view, cancellable, access_of(map));
  });
  py::tuple model = model_of(value_or_reject(checked));
  std::shared_ptr<data_holder> holder = std::make_shared<view_holder<ArrayData>>(std::move(view));
  return py::make_tuple(model, py::cast(holder));
}

py::tuple npy_check_buffer(const py::handle& data, const native_options& o) {
  const held_buffer input(data);
  return npy_model(
      value_or_reject(without_gil([&] { return npyguard::validate_buffer(input.data(), input.size(), o.opts); })));
}

py::tuple npy_check_file(const std::string& path, const native_options& o, std::uint32_t timeout_ms) {
  const char* file = path_of(path);
  return npy_model(
      value_or_reject(through_boundary(file, with_timeout(o, timeout_ms), npyguard::file_format::npy).npy));
}

// The checks of the data view over the caller's memory (object dtypes
// refused); the Python half then views the caller's object itself.
py::tuple npy_load_buffer(const py::handle& data, const native_options& o) {
  const held_buffer input(data);
  return npy_model(value_or_reject(without_gil([&] {
    npyguard::array_data view;
    return npyguard::array_data::over(input.data(), input.size(), view, o.opts);
  })));
}

py::tuple npy_load_file(const std::string& path, const native_options& o, bool map, std::uint32_t timeout_ms) {
  return load_file<npyguard::array_data>(path, o, map, timeout_ms, npy_model);
}

py::tuple ra_check_buffer(const py::handle& data, const native_options& o) {
  const held_buffer input(data);
  return ra_model(
      value_or_reject(without_gil([&] { return npyguard::ra::validate_buffer(input.data(), input.size(), o.opts); })));
}

py::tuple ra_check_file(const std::string& path, const native_options& o, std::uint32_t timeout_ms) {
  const char* file = path_of(path);
  return ra_model(value_or_reject(through_boundary(file, with_timeout(o, timeout_ms), npyguard::file_format::ra).ra));
}

py::tuple ra_load_file(const std::string& path, const native_options& o, bool map, std::uint32_t timeout_ms) {
  return load_file<npyguard::ra::array_data>(path, o, map, timeout_ms, ra_model);
}

py::tuple npz_checked(const npyguard::npz::archive_result& checked) {
  const npyguard::npz::archive& a = value_or_reject(checked);
  return archive_model(a, member_list(a));
}

py::tuple npz_check_buffer(const py::handle& data, const native_options& o) {
  const held_buffer input(data);
  return npz_checked(without_gil([&] { return npyguard::npz::validate_buffer(input.data(), input.size(), o.opts); }));
}

py::tuple npz_check_file(const std::string& path, const native_options& o, std::uint32_t timeout_ms) {
  const char* file = path_of(path);
  return npz_checked(through_boundary(file, with_timeout(o, timeout_ms), npyguard::file_format::npz).npz);
}

// Memory of our own for every member, or none for the stored members of a
// buffer the Python half views in place. Runs without the GIL: no Python
// object is touched here.
class holder_sink final : public npyguard::npz::member_sink {
public:
  explicit holder_sink(bool view_stored) noexcept : view_stored_(view_stored) {}
  bool destination(std::size_t, const npyguard::npz::member& m, void*& out) noexcept override {
    try {
      if (view_stored_ && m.method == npyguard::npz::compression::stored) {
        holders_.emplace_back();
        out = nullptr;
        return true;
      }
      auto holder = std::make_shared<owned_holder>(m.npy.nbytes);
      if (!holder->allocated()) return false;
      out = holder->writable();
      holders_.push_back(std::move(holder));
      return true;
    } catch (const std::bad_alloc&) {
      return false;
    }
  }
  std::vector<std::shared_ptr<owned_holder>>& holders() noexcept { return holders_; }

private:
  bool view_stored_;
  std::vector<std::shared_ptr<owned_holder>> holders_;
};

// (archive model, [holder or None per member]): None for a stored member of
// the caller's buffer, which the Python half views at data_start + data_offset.
py::tuple npz_load(const npyguard::npz::archive_result& checked, holder_sink& sink) {
  const npyguard::npz::archive& a = value_or_reject(checked);
  py::list holders;
  for (std::shared_ptr<owned_holder>& holder : sink.holders()) {
    holders.append(holder ? py::cast(std::shared_ptr<data_holder>(holder)) : py::object(py::none()));
  }
  return py::make_tuple(archive_model(a, member_list(a)), holders);
}

py::tuple npz_load_buffer(const py::handle& data, const native_options& o) {
  const held_buffer input(data);
  holder_sink sink(/*view_stored=*/true);
  return npz_load(without_gil([&] { return npyguard::npz::read_archive(input.data(), input.size(), sink, o.opts); }),
                  sink);
}

py::tuple npz_load_file(const std::string& path, const native_options& o, std::uint32_t timeout_ms) {
  const char* file = path_of(path);
  holder_sink sink(/*view_stored=*/false);
  const npyguard::options opts = with_timeout(o, timeout_ms);
  // Ctrl-C stops it at its next read: the members are read in chunks.
  return npz_load(interruptible<npyguard::npz::archive_result>([&](const std::atomic<bool>* cancel) {
                    npyguard::options cancellable = opts;
                    cancellable.cancel = cancel;
                    return npyguard::npz::read_archive_file(file, sink, cancellable);
                  }),
                  sink);
}

// ---------------------------------------------------------------------------
// Formats by name, and SPEC.md section 9 for the Python half

npyguard::file_format format_named(const std::string& name) {
  if (name == "npy") return npyguard::file_format::npy;
  if (name == "npz") return npyguard::file_format::npz;
  if (name == "ra") return npyguard::file_format::ra;
  throw py::value_error("format must be 'npy', 'npz', 'ra' or None, not " +
                        py::repr(py::str(name)).cast<std::string>());
}

std::optional<npyguard::file_format> optional_format(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return format_named(name);
}

// The format of an input whose first bytes are `head` and whose name (or
// b"") is `name`: the name's claim, else the first bytes.
std::string detect(const py::bytes& head, const std::string& name) {
  const std::string_view bytes = head;
  return format_name(npyguard::detect_format(bytes.data(), bytes.size(), name));
}

// The same for a path: its name's claim, else its first bytes (read from a
// regular file only; anything else, or a path that cannot be opened, is
// judged by its name, else as .npy, whose loader then says why).
std::string detect_path(const std::string& path) {
  const char* file = path_of(path);
  const npyguard::basic_result<npyguard::input_head> head =
      without_gil([&] { return npyguard::read_input_head(file); });
  if (!head.ok() || head.value().kind != npyguard::input_kind::regular) {
    return format_name(npyguard::detect_format(nullptr, 0, path));
  }
  return format_name(npyguard::detect_format(head.value().bytes, head.value().length, path));
}

py::object model_of(const npyguard::input_result& checked) {
  switch (checked.format) {
    case npyguard::file_format::npz: return npz_checked(checked.npz);
    case npyguard::file_format::ra: return ra_model(value_or_reject(checked.ra));
    case npyguard::file_format::npy: break;
  }
  return npy_model(value_or_reject(checked.npy));
}

// (format, model) of a path through the input boundary; format "" follows
// SPEC.md section 9.
py::tuple check_path(const std::string& path, const native_options& o, std::uint32_t timeout_ms,
                     const std::string& format) {
  const char* file = path_of(path);
  const npyguard::input_result checked = through_boundary(file, with_timeout(o, timeout_ms), optional_format(format));
  return py::make_tuple(format_name(checked.format), model_of(checked));
}

// (format, model) of a descriptor the Python half opened (open_npz: one
// open, then the members read from the same descriptor), `name` its claim.
py::tuple check_fd(int fd, const std::string& name, const native_options& o, std::uint32_t timeout_ms,
                   const std::string& format) {
  const npyguard::options opts = with_timeout(o, timeout_ms);
  const std::optional<npyguard::file_format> chosen = optional_format(format);
  const npyguard::input_result checked = interruptible<npyguard::input_result>([&](const std::atomic<bool>* cancel) {
    npyguard::input_request request;
    request.format = chosen;
    request.name = name;
    request.cancel = cancel;
    return npyguard::validate_input_fd(fd, opts, request);
  });
  return py::make_tuple(format_name(checked.format), model_of(checked));
}

// ---------------------------------------------------------------------------
// Python file objects as sources. The library calls them without the GIL;
// each read takes it. A Python exception never crosses into the library: it
// becomes the answer -EIO, every later read answers -EIO at once, and the
// entry point raises the exception again once the library has returned
// (ahead of the library's io_error, which only echoes it).

class python_failure {
public:
  std::ptrdiff_t keep(py::error_already_set& raised) {
    if (!raised_) raised_.emplace(std::move(raised));
    return -EIO;
  }
  [[nodiscard]] bool failed() const noexcept { return raised_.has_value(); }
  // With the GIL.
  void raise() {
    if (!raised_) return;
    py::error_already_set raised = std::move(*raised_);
    raised_.reset();
    throw raised;
  }

private:
  std::optional<py::error_already_set> raised_;
};

[[noreturn]] void raise_python(PyObject* type, const char* message) {
  PyErr_SetString(type, message);
  throw py::error_already_set();
}

// One read(into) of a binary file object at its position, with the GIL: how
// many bytes (0 at its end). readinto() where it has one (no copy), else
// read(); text files, None (a non-blocking file with nothing yet) and more
// bytes than asked are errors.
std::size_t read_once(const py::object& file, bool has_readinto, unsigned char* buffer, std::size_t size) {
  if (has_readinto) {
    const py::memoryview target =
        py::memoryview::from_memory(buffer, static_cast<py::ssize_t>(size), /*readonly=*/false);
    const py::object got = file.attr("readinto")(target);
    target.attr("release")();
    if (got.is_none())
      raise_python(PyExc_BlockingIOError, "readinto() returned None: a non-blocking file with no data");
    const auto n = got.cast<std::size_t>();
    if (n > size) raise_python(PyExc_ValueError, "readinto() reported more bytes than it was given room for");
    return n;
  }
  const py::object got = file.attr("read")(size);
  if (got.is_none()) raise_python(PyExc_BlockingIOError, "read() returned None: a non-blocking file with no data");
  if (PyUnicode_Check(got.ptr())) raise_python(PyExc_TypeError, "a binary file is required; read() returned str");
  Py_buffer view{};
  if (PyObject_GetBuffer(got.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  const auto n = static_cast<std::size_t>(view.len);
  if (n <= size && n != 0) std::memcpy(buffer, view.buf, n);
  PyBuffer_Release(&view);
  if (n > size) raise_python(PyExc_ValueError, "read(n) returned more than n bytes");
  return n;
}

// A seekable file object read by offset: seek(start + offset), then reads
// until the request is filled or the file ends. `start` is where the file
// stood when the call began (np.load reads from there too); `size` the bytes
// from there to its end. Made and destroyed with the GIL.
class python_file_source final : public npyguard::random_access_source {
public:
  python_file_source(py::object file, std::uint64_t start, std::uint64_t size)
      : file_(std::move(file)), has_readinto_(py::hasattr(file_, "readinto")), start_(start), size_(size) {}

  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }

  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (failure_.failed()) return -EIO;
    try {
      const py::gil_scoped_acquire held;
      try {
        file_.attr("seek")(start_ + offset);
        auto* out = static_cast<unsigned char*>(buffer);
        std::size_t filled = 0;
        while (filled < size) {
          const std::size_t n = read_once(file_, has_readinto_, out + filled, size - filled);
          if (n == 0) break;
          filled += n;
        }
        return static_cast<std::ptrdiff_t>(filled);
      } catch (py::error_already_set& raised) {
        return failure_.keep(raised);
      }
    } catch (...) { // no memory, or a cast that failed: no Python exception to keep
      return -EIO;
    }
  }

  void raise_failure() { failure_.raise(); }

private:
  py::object file_;
  bool has_readinto_;
  std::uint64_t start_;
  std::uint64_t size_;
  python_failure failure_;
};

// The bytes a stream source recorded, for arrays to view.
class recorded_holder final : public data_holder {
public:
  explicit recorded_holder(std::vector<unsigned char> bytes) noexcept : bytes_(std::move(bytes)) {}
  [[nodiscard]] const unsigned char* bytes() const noexcept override {
    static const unsigned char none = 0;
    return bytes_.empty() ? &none : bytes_.data();
  }
  [[nodiscard]] std::uint64_t size() const noexcept override { return bytes_.size(); }

private:
  std::vector<unsigned char> bytes_;
};

// A non-seekable file object (an upload stream) read front to back: first
// `prefix` (the bytes the Python half read to choose the format), then the
// object. With `record`, every byte served is kept as well (load: the
// array is built from what the validator read, never from a second read).
class python_stream_source final : public npyguard::byte_source {
public:
  python_stream_source(py::object file, std::string prefix, bool record)
      : file_(std::move(file)),
        has_readinto_(py::hasattr(file_, "readinto")),
        prefix_(std::move(prefix)),
        record_(record) {}

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    auto* out = static_cast<unsigned char*>(buffer);
    std::size_t n = 0;
    if (served_ < prefix_.size()) {
      n = std::min(size, prefix_.size() - served_);
      std::memcpy(out, prefix_.data() + served_, n);
      served_ += n;
    } else {
      if (failure_.failed()) return -EIO;
      try {
        const py::gil_scoped_acquire held;
        try {
          n = read_once(file_, has_readinto_, out, size);
        } catch (py::error_already_set& raised) {
          return failure_.keep(raised);
        }
      } catch (...) {
        return -EIO;
      }
    }
    if (record_) {
      try {
        recorded_.insert(recorded_.end(), out, out + n);
      } catch (const std::bad_alloc&) {
        return -ENOMEM;
      }
    }
    return static_cast<std::ptrdiff_t>(n);
  }

  void raise_failure() { failure_.raise(); }
  std::vector<unsigned char>& recorded() noexcept { return recorded_; }

private:
  py::object file_;
  bool has_readinto_;
  std::string prefix_;
  std::size_t served_ = 0;
  bool record_;
  std::vector<unsigned char> recorded_;
  python_failure failure_;
};

// The model of `source` as `chosen`, validated without the GIL: by offset
// when it is a random_access_source, else as a stream; an exception the
// Python file object raised while it was read is raised again here.
template <typename Source>
py::object model_as(Source& source, npyguard::file_format chosen, const npyguard::options& opts) {
  constexpr bool by_offset = std::is_base_of_v<npyguard::random_access_source, Source>;
  const auto validated = [&](auto validate) {
    auto checked = without_gil(validate);
    source.raise_failure();
    return checked;
  };
  switch (chosen) {
    case npyguard::file_format::npz:
      return npz_checked(validated([&] {
        if constexpr (by_offset)
          return npyguard::npz::validate_source(source, opts);
        else
          return npyguard::npz::validate_stream(source, opts);
      }));
    case npyguard::file_format::ra:
      return ra_model(value_or_reject(validated([&] {
        if constexpr (by_offset)
          return npyguard::ra::validate_source(source, opts);
        else
          return npyguard::ra::validate_stream(source, opts);
      })));
    case npyguard::file_format::npy: break;
  }
  return npy_model(value_or_reject(validated([&] {
    if constexpr (by_offset)
      return npyguard::validate_source(source, opts);
    else
      return npyguard::validate_stream(source, opts);
  })));
}

// The model of a seekable file object as `format`, read by offset (the
// header only for .npy and .ra; with verify, every .npz member in full).
py::object check_object(const py::object& file, std::uint64_t start, std::uint64_t size, const std::string& format,
                        const native_options& o) {
  python_file_source source(file, start, size);
  return model_as(source, format_named(format), o.opts);
}

// The model of a stream as `format`, read once in bounded memory: .npy and
// .ra count their data without keeping it; .npz holds the archive (at most
// max_stream_bytes), as npz::validate_stream does.
py::object check_stream(const py::object& file, const py::bytes& prefix, const std::string& format,
                        const native_options& o) {
  python_stream_source source(file, prefix, /*record=*/false);
  return model_as(source, format_named(format), o.opts);
}

// `size` bytes at `offset` of a validated source into memory of our own
// (aligned for any scalar type), without the GIL; a source that now ends
// sooner, or fails, is io_error.
npyguard::basic_result<std::shared_ptr<owned_holder>> read_range(python_file_source& source, std::uint64_t offset,
                                                                 std::uint64_t size) {
  auto holder = std::make_shared<owned_holder>(size);
  if (!holder->allocated()) {
    return npyguard::error{npyguard::error_code::out_of_memory, std::nullopt,
                           "no memory for " + std::to_string(size) + " bytes of array data"};
  }
  std::uint64_t filled = 0;
  while (filled < size) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size - filled, std::uint64_t{1} << 30));
    const std::ptrdiff_t got = source.read_at(offset + filled, holder->writable() + filled, chunk);
    if (got <= 0) {
      return npyguard::error{npyguard::error_code::io_error, offset + filled,
                             got == 0 ? std::string("the file ended before the data validated there")
                                      : "cannot read the data: " + std::string(std::strerror(static_cast<int>(-got)))};
    }
    filled += static_cast<std::uint64_t>(got);
  }
  return holder;
}

// (model, holder) of a seekable file object as .npy or .ra: the header read
// and validated, then exactly the data range; (archive model, [holder per
// member]) for .npz, every member read in full and checked (read_archive).
// Object dtypes are refused.
py::tuple load_object(const py::object& file, std::uint64_t start, std::uint64_t size, const std::string& format,
                      const native_options& o) {
  python_file_source source(file, start, size);
  const npyguard::file_format chosen = format_named(format);
  if (chosen == npyguard::file_format::npz) {
    holder_sink sink(/*view_stored=*/false);
    const auto checked = without_gil([&] { return npyguard::npz::read_archive(source, sink, o.opts); });
    source.raise_failure();
    return npz_load(checked, sink);
  }
  npyguard::options opts = o.opts;
  py::object model;
  std::uint64_t data_offset = 0;
  std::uint64_t nbytes = 0;
  if (chosen == npyguard::file_format::ra) {
    const auto checked = without_gil([&] { return npyguard::ra::validate_source(source, opts); });
    source.raise_failure();
    const npyguard::ra::header& h = value_or_reject(checked);
    model = ra_model(h);
    data_offset = h.data_offset;
    nbytes = h.data_length;
  } else {
    opts.allow_object = false; // a pickle is never loaded: object_dtype
    const auto checked = without_gil([&] { return npyguard::validate_source(source, opts); });
    source.raise_failure();
    const npyguard::header& h = value_or_reject(checked);
    model = npy_model(h);
    data_offset = h.data_offset;
    nbytes = h.nbytes;
  }
  const auto data = without_gil([&] { return read_range(source, data_offset, nbytes); });
  source.raise_failure();
  return py::make_tuple(model, py::cast(std::shared_ptr<data_holder>(value_or_reject(data))));
}

// (model, holder of every byte read) of a stream as `format`, read once by
// the stream validator: the array's bytes are the validated ones. .npy and
// .ra keep what was read (up to the data's end, and a byte past it); .npz
// the archive, at most max_stream_bytes (the Python half then reads it as
// bytes).
py::tuple load_stream(const py::object& file, const py::bytes& prefix, const std::string& format,
                      const native_options& o) {
  python_stream_source source(file, prefix, /*record=*/true);
  const npyguard::file_format chosen = format_named(format);
  py::object model;
  if (chosen == npyguard::file_format::npz) {
    const auto checked = without_gil([&] { return npyguard::npz::validate_stream(source, o.opts); });
    source.raise_failure();
    model = npz_checked(checked);
  } else if (chosen == npyguard::file_format::ra) {
    const auto checked = without_gil([&] { return npyguard::ra::validate_stream(source, o.opts); });
    source.raise_failure();
    model = ra_model(value_or_reject(checked));
  } else {
    npyguard::options opts = o.opts;
    opts.allow_object = false; // a pickle is never loaded: object_dtype
    const auto checked = without_gil([&] { return npyguard::validate_stream(source, opts); });
    source.raise_failure();
    model = npy_model(value_or_reject(checked));
  }
  std::shared_ptr<data_holder> holder = std::make_shared<recorded_holder>(std::move(source.recorded()));
  return py::make_tuple(model, py::cast(holder));
}

// (archive model, holder of the archive) of a descriptor that is not a
// regular file (a FIFO named to open_npz): read as a stream within
// max_stream_bytes, each read waiting no later than timeout_ms.
py::tuple npz_spool_fd(int fd, const native_options& o, std::uint32_t timeout_ms) {
  struct spooled {
    npyguard::npz::archive_result checked = npyguard::error{};
    std::vector<unsigned char> bytes;
  };
  const npyguard::options opts = with_timeout(o, timeout_ms);
  spooled out = interruptible<spooled>([&](const std::atomic<bool>* cancel) {
    npyguard::fd_byte_source descriptor(fd, timeout_ms, cancel);
    struct recording final : npyguard::byte_source {
      explicit recording(npyguard::byte_source& from) noexcept : from_(from) {}
      std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
        const std::ptrdiff_t got = from_.read(buffer, size);
        if (got <= 0) return got;
        try {
          const auto* in = static_cast<const unsigned char*>(buffer);
          bytes.insert(bytes.end(), in, in + got);
        } catch (const std::bad_alloc&) {
          return -ENOMEM;
        }
        return got;
      }
      npyguard::byte_source& from_;
      std::vector<unsigned char> bytes;
    } source(descriptor);
    spooled result;
    result.checked = npyguard::npz::validate_stream(source, opts);
    result.bytes = std::move(source.bytes);
    return result;
  });
  py::tuple model = npz_checked(out.checked);
  std::shared_ptr<data_holder> holder = std::make_shared<recorded_holder>(std::move(out.bytes));
  return py::make_tuple(model, py::cast(holder));
}

py::dict error_codes() {
  py::dict codes;
  for (int value = 1; value < 256; ++value) {
    const std::string_view name = npyguard::error_code_name(static_cast<npyguard::error_code>(value));
    if (name != "unknown") codes[py::str(std::string(name))] = value;
  }
  return codes;
}

} // namespace

PYBIND11_MODULE(_npyguard, m) {
  m.doc() = "npyguard's native half; use the npyguard package";
  main_thread_ident = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const rejection& r) {
      translate(r);
    }
  });

  py::class_<native_options>(m, "Options")
      .def(py::init(&make_options), py::arg("max_header_bytes"), py::arg("max_depth"), py::arg("max_ndim"),
           py::arg("max_data_bytes"), py::arg("allow_trailing_data"), py::arg("allow_object"), py::arg("canonical"),
           py::arg("verify"), py::arg("max_members"), py::arg("max_total_bytes"), py::arg("max_ratio"),
           py::arg("ra_allow_type5"), py::arg("ra_reject_metadata"), py::arg("max_stream_bytes") = py::none());

  py::class_<data_holder, std::shared_ptr<data_holder>>(m, "DataBuffer", py::buffer_protocol())
      .def_buffer(&export_buffer)
      .def("__len__", [](const data_holder& h) { return h.size(); });

  m.def("npy_check_buffer", &npy_check_buffer);
  m.def("npy_check_file", &npy_check_file);
  m.def("npy_load_buffer", &npy_load_buffer);
  m.def("npy_load_file", &npy_load_file);
  m.def("ra_check_buffer", &ra_check_buffer);
  m.def("ra_check_file", &ra_check_file);
  m.def("ra_load_file", &ra_load_file);
  m.def("npz_check_buffer", &npz_check_buffer);
  m.def("npz_check_file", &npz_check_file);
  m.def("npz_load_buffer", &npz_load_buffer);
  m.def("npz_load_file", &npz_load_file);
  m.def("detect_format", &detect);
  m.def("detect_path", &detect_path);
  m.def("check_path", &check_path);
  m.def("check_fd", &check_fd);
  m.def("check_object", &check_object);
  m.def("check_stream", &check_stream);
  m.def("load_object", &load_object);
  m.def("load_stream", &load_stream);
  m.def("npz_spool_fd", &npz_spool_fd);
  m.def("error_codes", &error_codes);
  npyguard_python::register_scan(m);
  npyguard_python::register_gate(m);
  m.def("version", [] { return std::string(npyguard::version()); });
}
