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

#include <atomic>
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
#include <utility>
#include <vector>

#include "native.hpp"
#include "npyguard/convert.hpp"
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
                            std::uint64_t max_ratio, bool ra_allow_type5, bool ra_reject_metadata) {
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

// (name, key, method, compressed_size, uncompressed_size, data_start, npy model)
py::tuple member_model(const npyguard::npz::member& m) {
  return py::make_tuple(decode(m.name), decode(m.key), static_cast<int>(m.method), m.compressed_size,
                        m.uncompressed_size, m.data_start, npy_model(m.npy));
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

// A path through the input boundary (npyguard/input.hpp) as `format`. On
// Python's main thread the call runs on a thread of its own while this one,
// taking the GIL every 50 ms, runs Python's signal handlers: when one raises
// (Ctrl-C: KeyboardInterrupt), the call's cancel flag is set, the boundary
// stops at its next read or within 50 ms of a wait, and the exception
// propagates. Elsewhere (signals reach only the main thread) it runs here.
npyguard::input_result through_boundary(const char* path, const npyguard::options& opts, npyguard::file_format format) {
  std::atomic<bool> cancel{false};
  npyguard::input_request request;
  request.format = format;
  request.cancel = &cancel;
  if (PyThread_get_thread_ident() != main_thread_ident) {
    return without_gil([&] { return npyguard::validate_input(path, opts, request); });
  }
  npyguard::input_result out;
  std::mutex lock;
  std::condition_variable finished;
  bool done = false;
  bool interrupted = false;
  {
    const py::gil_scoped_release unlocked;
    std::thread worker([&] {
      npyguard::input_result checked = npyguard::validate_input(path, opts, request);
      const std::lock_guard<std::mutex> guard(lock);
      out = std::move(checked);
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
  return out;
}

npyguard::data_access access_of(bool map) { return map ? npyguard::data_access::map : npyguard::data_access::read; }

// (model, holder): the file opened once, mapped or read, for either format's array_data.
template <typename ArrayData, typename ModelOf>
py::tuple load_file(const std::string& path, const native_options& o, bool map, std::uint32_t timeout_ms,
                    ModelOf model_of) {
  const char* file = path_of(path);
  ArrayData view;
  const npyguard::options opts = with_timeout(o, timeout_ms);
  const auto checked = without_gil([&] { return ArrayData::open(file, view, opts, access_of(map)); });
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
  return npz_load(without_gil([&] { return npyguard::npz::read_archive_file(file, sink, opts); }), sink);
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
           py::arg("ra_allow_type5"), py::arg("ra_reject_metadata"));

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
  m.def("error_codes", &error_codes);
  npyguard_python::register_scan(m);
  m.def("version", [] { return std::string(npyguard::version()); });
}
