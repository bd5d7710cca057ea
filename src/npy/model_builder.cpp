#include "npy/model_builder.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/checked_math.hpp"
#include "core/keyed_hash.hpp"
#include "core/python_repr.hpp"
#include "core/refused.hpp"
#include "npy/data_size.hpp"
#include "npy/type_string.hpp"
#include "npy/workspace.hpp"

namespace npyguard::detail {
namespace {

// numpy's NPY_MAXDIMS: a field's subarray shape has at most 32 dimensions
// (numpy 1.24 refuses 33 with "invalid shape in fixed-type tuple").
constexpr std::size_t max_subarray_ndim = 32;

// Names and titles of one struct share a namespace. They are added in
// document order as the fields are read, each with its keyed hash, and
// looked up once the struct has been read (or has failed): the first entry
// whose name an earlier entry has is the first repeat in document order.
// An error the reading stopped at lies after every entry added, so a repeat
// found goes first. Hashing as the fields are read and probing afterwards
// keeps the hash off the path each field waits on.
//
// Worst case O(n log n) whatever the names (SPEC.md section 2): the table
// gives up after 4n + 64 probes in all (n names and titles); the entries,
// kept in document order, are then sorted by hash and order (comparing
// integers only), names compared once each within runs of equal hashes, and
// only a run of different names under one hash (a real collision) is sorted
// by comparing strings. That bound holds whatever the hash, so the hash is
// keyed_short_hash (two multiplications a name) rather than SipHash (a
// fifth of a long struct's validation), under the per-process random key:
// nobody can choose names offline that send a struct to the sort.
class name_index {
public:
  using entry = name_entry;

  // `expected`: the names and titles the struct's fields bring. The
  // entries and the table of this struct go after those of the structs it
  // is nested in, and are dropped again when it has been read.
  name_index(const ast& tree, workspace& space, std::size_t expected)
      : tree_(tree),
        entries_(space.names),
        slots_(space.name_slots),
        base_(entries_.size()),
        slot_base_(slots_.size()),
        key_(process_hash_key()),
        degraded_(space.sort_names) {
    if (entries_.capacity() - base_ < expected) entries_.reserve(base_ + expected);
  }
  ~name_index() {
    entries_.resize(base_);
    slots_.resize(slot_base_);
  }
  name_index(const name_index&) = delete;
  name_index& operator=(const name_index&) = delete;
  name_index(name_index&&) = delete;
  name_index& operator=(name_index&&) = delete;

  // Adds a name or title, the string node tree.nodes[index] whose text is
  // `text` (looked up by first_repeat).
  void add(std::uint32_t index, bool is_title, std::string_view text) {
    // Written field by field: a braced temporary copied in costs a failed
    // store-to-load forwarding on the hot path of long structs.
    entry& added = entries_.emplace_back();
    added.hash = keyed_short_hash(text, key_);
    added.node = index;
    added.order_and_title = added_ << 1 | (is_title ? 1u : 0u);
    ++added_;
  }

  // After the last add: the first entry, in document order, whose name an
  // earlier entry already has; nullptr when the names are distinct.
  const entry* first_repeat() {
    const std::size_t count = entries_.size() - base_;
    if (!degraded_) {
      if (const entry* repeat = probe(count)) return repeat;
    }
    return degraded_ ? sorted_first_repeat() : nullptr;
  }

  [[nodiscard]] std::string_view name(const entry& e) const noexcept { return tree_.text(tree_.nodes[e.node]); }
  [[nodiscard]] const node& where(const entry& e) const noexcept { return tree_.nodes[e.node]; }

private:
  using iterator = std::vector<entry>::iterator;

  // The entries, in order, into an open-addressing table at most a quarter
  // full: the first that finds its name there, or nullptr when none does
  // or when the probes run out (degraded_ is then set).
  const entry* probe(std::size_t count) {
    std::size_t size = 8;
    while (size < 4 * count) size <<= 1;
    const std::size_t mask = size - 1;
    slots_.resize(slot_base_ + size, 0);
    std::uint32_t* const slots = slots_.data() + slot_base_;
    const entry* const entries = entries_.data() + base_;
    std::size_t budget = 4 * count + 64;
    for (std::uint32_t order = 0; order < count; ++order) {
      const entry& added = entries[order];
      for (std::size_t i = added.hash & mask;; i = (i + 1) & mask) {
        if (slots[i] == 0) {
          slots[i] = order + 1;
          break;
        }
        const entry& other = entries[slots[i] - 1];
        if (other.hash == added.hash && name(other) == name(added)) return &added;
        if (--budget == 0) {
          degraded_ = true;
          return nullptr;
        }
      }
    }
    return nullptr;
  }

  // first_repeat without the table: the entries sorted by hash and order.
  const entry* sorted_first_repeat() {
    const auto begin = entries_.begin() + static_cast<std::ptrdiff_t>(base_);
    std::sort(begin, entries_.end(), [](const entry& a, const entry& b) {
      return a.hash != b.hash ? a.hash < b.hash : a.order_and_title < b.order_and_title;
    });
    const entry* first = nullptr;
    for (auto run = begin; run != entries_.end();) {
      auto run_end = run + 1;
      while (run_end != entries_.end() && run_end->hash == run->hash) ++run_end;
      if (run_end - run > 1) {
        const entry* repeat = first_repeat_in(run, run_end);
        if (repeat != nullptr && (first == nullptr || repeat->order() < first->order())) first = repeat;
      }
      run = run_end;
    }
    return first;
  }

  // [begin, end) share a hash and are in document order.
  const entry* first_repeat_in(iterator begin, iterator end) const {
    const std::string_view first_name = name(*begin);
    if (std::all_of(begin + 1, end, [&](const entry& e) { return name(e) == first_name; })) return &*(begin + 1);
    // A real collision of different names: sort them by name, then order.
    std::sort(begin, end, [this](const entry& a, const entry& b) {
      const std::string_view x = name(a);
      const std::string_view y = name(b);
      return x != y ? x < y : a.order_and_title < b.order_and_title;
    });
    const entry* first = nullptr;
    for (auto e = begin + 1; e != end; ++e) {
      const bool starts_group = e - 1 == begin || name(*(e - 2)) != name(*e);
      if (starts_group && name(*(e - 1)) == name(*e) && (first == nullptr || e->order() < first->order())) {
        first = &*e;
      }
    }
    return first;
  }

  const ast& tree_;
  std::vector<entry>& entries_;
  std::vector<std::uint32_t>& slots_; // 1 + the entry's order; 0: empty
  std::size_t base_;
  std::size_t slot_base_;
  hash_key key_;            // a copy: no guarded static read per name
  std::uint32_t added_ = 0; // names and titles so far
  bool degraded_;           // the table gave up (or was never used): sort
};

class model_builder {
public:
  model_builder(const ast& tree, std::uint64_t base_offset, const options& opts, workspace& space)
      : tree_(tree), base_(base_offset), opts_(opts), space_(space) {}

  std::optional<error> build(header& out) {
    const node& dict = tree_.nodes[0];
    const node* seen[3] = {nullptr, nullptr, nullptr}; // descr, fortran_order, shape
    static constexpr const char* key_names[3] = {"descr", "fortran_order", "shape"};
    for (std::uint32_t k = dict.children.first; k != no_node;) {
      const node& key = tree_.nodes[k];
      const node& value = tree_.nodes[key.next];
      k = value.next;
      const std::string_view name = tree_.text(key);
      int which = -1;
      for (int i = 0; i < 3; ++i) {
        if (name == key_names[i]) which = i;
      }
      if (which < 0) {
        return fail(error_code::unknown_key, key,
                    "unknown key " + python_repr_for_message(name) +
                        "; the header holds exactly 'descr', 'fortran_order' and 'shape'");
      }
      if (seen[which] != nullptr) {
        return fail(error_code::duplicate_key, key, std::string("key '") + key_names[which] + "' given twice");
      }
      seen[which] = &value;
      bool ok = which == 0   ? read_descr(value, out)
                : which == 1 ? read_fortran_order(value, out)
                             : read_shape(value, out);
      if (!ok) return failure_;
    }
    for (int i = 0; i < 3; ++i) {
      if (seen[i] == nullptr) {
        return fail(error_code::missing_key, dict, std::string("the header lacks the key '") + key_names[i] + "'");
      }
    }
    if (!compute_sizes(*seen[2], out)) return failure_;
    return std::nullopt;
  }

private:
  std::optional<error> fail(error_code code, const node& where, std::string message) {
    failure_ = error{code, base_ + where.offset, std::move(message)};
    return failure_;
  }

  bool reject(error_code code, const node& where, std::string message) {
    fail(code, where, std::move(message));
    return false;
  }

  // A rejection an option or limit decided (error.hpp's option, limit, actual).
  bool reject(error failure) {
    failure_ = std::move(failure);
    return false;
  }

  const node& child(const node& container, std::uint32_t index) const {
    std::uint32_t at = container.children.first;
    while (index-- > 0) at = tree_.nodes[at].next;
    return tree_.nodes[at];
  }

  bool read_fortran_order(const node& value, header& out) {
    if (value.kind != node_kind::boolean) {
      return reject(error_code::bad_fortran_order, value, "fortran_order must be True or False");
    }
    out.fortran_order = value.number != 0;
    return true;
  }

  // A tuple of non-negative integers: the array shape or a subarray shape.
  bool read_dimensions(const node& tuple, std::size_t max_ndim, error_code not_a_tuple, const char* what,
                       std::vector<std::uint64_t>& dims) {
    if (tuple.kind != node_kind::tuple) {
      return reject(not_a_tuple, tuple,
                    std::string(what) + " must be a tuple of integers" +
                        (tuple.kind == node_kind::list ? " (a list is not a tuple)" : ""));
    }
    dims.clear();
    dims.reserve(tuple.children.count < max_ndim ? tuple.children.count : max_ndim);
    for (std::uint32_t d = tuple.children.first; d != no_node;) {
      const node& dim = tree_.nodes[d];
      d = dim.next;
      if (dims.size() == max_ndim) {
        error failure{error_code::too_many_dimensions, base_ + dim.offset,
                      std::string(what) + " has " + std::to_string(tuple.children.count) + " dimensions, more than " +
                          std::to_string(max_ndim) + (not_a_tuple == error_code::bad_shape ? "" : " (numpy's limit)")};
        if (not_a_tuple != error_code::bad_shape) return reject(std::move(failure));
        return reject(refused(std::move(failure), "max_ndim", max_ndim, tuple.children.count));
      }
      if (dim.kind != node_kind::integer) {
        return reject(not_a_tuple, dim, std::string(what) + " must be a tuple of integers");
      }
      if (dim.negative)
        return reject(error_code::negative_dimension, dim, std::string(what) + " has a negative dimension");
      dims.push_back(dim.number);
    }
    return true;
  }

  bool read_shape(const node& value, header& out) {
    return read_dimensions(value, opts_.limits.max_ndim, error_code::bad_shape, "shape", out.shape);
  }

  bool read_descr(const node& value, header& out) {
    switch (value.kind) {
      case node_kind::string: return read_type_string(value, out.descr);
      case node_kind::list: return read_struct(value, out.descr);
      case node_kind::tuple:
        return reject(error_code::bad_descr, value,
                      "a (descr, shape) tuple is not a top-level descr; writers fold subarrays into the shape");
      default: return reject(error_code::bad_descr, value, "descr must be a type string or a list of fields");
    }
  }

  bool read_type_string(const node& value, dtype& out) {
    shelve(out.fields, 0);
    if (read_common_type_string(tree_.text(value), out)) return true;
    return read_other_type_string(value, out);
  }

  // Every type string read_common_type_string leaves: objects, datetimes,
  // unicode, long sizes, and every error.
  [[gnu::noinline]] bool read_other_type_string(const node& value, dtype& out) {
    type_string_failure why;
    if (!parse_type_string(tree_.text(value), out, why)) return reject(why.code, value, std::move(why.message));
    if (out.kind == dtype_kind::object) {
      if (!opts_.allow_object) {
        return reject(refused(error{error_code::object_dtype, base_ + value.offset,
                                    "object dtype: the data is a Python pickle (never read), and objects are not "
                                    "allowed"},
                              "allow_object"));
      }
      has_object_ = true;
    }
    return true;
  }

  bool read_field_type(const node& value, dtype& out) {
    if (value.kind == node_kind::string) return read_type_string(value, out);
    if (value.kind == node_kind::list) return read_struct(value, out);
    return reject(error_code::bad_descr, value,
                  value.kind == node_kind::tuple
                      ? "a field's type is a type string or a list of fields; give a subarray as (name, type, shape)"
                      : "a field's type is a type string or a list of fields");
  }

  bool read_struct(const node& list, dtype& out) {
    reset_scalars(out);
    out.kind = dtype_kind::structured;
    out.order = byte_order::not_applicable;
    // Reserve for the items shaped like fields (2- or 3-tuples) and the
    // names and titles they bring; a hostile list of other things reserves
    // nothing. A reused model and workspace (a validator's) usually have
    // room for a field and a name per item already: then there is nothing
    // to count (titles, where there are some, grow the names).
    const std::size_t items = list.children.count;
    std::size_t field_like = 0;
    std::size_t names_and_titles = 0;
    if (out.fields.capacity() < items || space_.names.capacity() - space_.names.size() < items) {
      count_field_like(list, field_like, names_and_titles);
    }
    out.fields.reserve(field_like);
    name_index names(tree_, space_, names_and_titles);
    std::size_t used = 0;
    const bool read = read_fields(list, out, names, used);
    shelve(out.fields, used);
    if (const name_index::entry* repeat = names.first_repeat()) return repeated(names, *repeat);
    return read;
  }

  void count_field_like(const node& list, std::size_t& field_like, std::size_t& names_and_titles) const {
    for (std::uint32_t f = list.children.first; f != no_node; f = tree_.nodes[f].next) {
      const node& item = tree_.nodes[f];
      if (item.kind == node_kind::tuple && item.children.count >= 2 && item.children.count <= 3) {
        ++field_like;
        names_and_titles += child(item, 0).kind == node_kind::tuple ? 2u : 1u;
      }
    }
  }

  bool repeated(const name_index& names, const name_index::entry& repeat) {
    return reject(error_code::duplicate_field_name, names.where(repeat),
                  std::string(repeat.is_title() ? "title " : "name ") + python_repr_for_message(names.name(repeat)) +
                      " already used as a name or title");
  }

  // The fields of a struct, in order, into out.fields[0, used): the fields
  // already there (a reused model's) are overwritten in place. Names and
  // titles go to `names` as they are read.
  bool read_fields(const node& list, dtype& out, name_index& names, std::size_t& used) {
    std::uint64_t offset = 0;
    for (std::uint32_t f = list.children.first; f != no_node;) {
      const node& item = tree_.nodes[f];
      f = item.next;
      if (read_common_field(item, out, names, used, offset)) {
        if (offset > max_itemsize) return reject(error_code::itemsize_overflow, item, "struct itemsize above 2^31-1");
        continue;
      }
      if (item.kind != node_kind::tuple || item.children.count < 2 || item.children.count > 3) {
        return reject(error_code::bad_descr, item, "a field is a tuple (name, type) or (name, type, shape)");
      }
      const node& name_node = tree_.nodes[item.children.first];
      const node& type_node = tree_.nodes[name_node.next];
      std::uint32_t title_index = no_node;
      std::uint32_t plain_name_index = item.children.first;
      if (name_node.kind == node_kind::tuple && name_node.children.count == 2 &&
          child(name_node, 0).kind == node_kind::string && child(name_node, 1).kind == node_kind::string) {
        title_index = name_node.children.first;
        plain_name_index = tree_.nodes[title_index].next;
      } else if (name_node.kind != node_kind::string) {
        return reject(error_code::bad_descr, name_node, "a field name is a string or a (title, name) tuple of strings");
      }

      field& member = field_at(out.fields, used); // filled in place; left for the next field if padding
      if (!read_field_type(type_node, member.type)) return false;
      if (item.children.count == 3) {
        const node& shape_node = tree_.nodes[type_node.next];
        if (!read_dimensions(shape_node, max_subarray_ndim, error_code::bad_descr, "a field shape",
                             member.subarray_shape)) {
          return false;
        }
        if (!subarray_itemsize(shape_node, member)) return false;
      } else {
        member.itemsize = member.type.itemsize;
      }

      const node* const title_node = title_index != no_node ? &tree_.nodes[title_index] : nullptr;
      const node* const plain_name_node = &tree_.nodes[plain_name_index];
      const std::string_view name = tree_.text(*plain_name_node);
      const bool plain_void = member.type.kind == dtype_kind::raw_void && member.subarray_shape.empty();
      if (name.empty() && title_node == nullptr && plain_void) { // padding
        offset += member.itemsize;                               // both <= 2^31-1: cannot wrap
        if (offset > max_itemsize) return reject(error_code::itemsize_overflow, item, "struct itemsize above 2^31-1");
        continue;
      }
      if (name.empty()) {
        return reject(error_code::empty_field_name, *plain_name_node,
                      "a field named '' must be padding: a plain void type such as '|V4', no title, no shape");
      }
      if (title_node != nullptr && tree_.text(*title_node).empty()) {
        return reject(error_code::empty_field_name, *title_node, "a field title must not be empty");
      }
      if (title_node != nullptr) names.add(title_index, true, tree_.text(*title_node));
      names.add(plain_name_index, false, name);
      ++used;
      assign_name(member.name, name);
      if (title_node != nullptr) member.title = std::string(tree_.text(*title_node));
      member.offset = offset;
      offset += member.itemsize;
      if (offset > max_itemsize) return reject(error_code::itemsize_overflow, item, "struct itemsize above 2^31-1");
    }
    out.itemsize = offset;
    return true;
  }

  // The form of nearly every field, ('name', '<f8'): a tuple of a non-empty
  // name and a type string read_common_type_string reads, read as the loop
  // of read_fields would read it (into out.fields[used], its name added to
  // `names`, `offset` advanced): true. False for every other item, which
  // read_fields then reads (out.fields[used] may have been emptied for it,
  // as read_fields empties it first).
  bool read_common_field(const node& item, dtype& out, name_index& names, std::size_t& used, std::uint64_t& offset) {
    if (item.kind != node_kind::tuple || item.children.count != 2) return false;
    const node* const nodes = tree_.nodes.data();
    const std::uint32_t name_at = item.children.first;
    const node& name_node = nodes[name_at];
    const node& type_node = nodes[name_node.next];
    if (name_node.kind != node_kind::string || type_node.kind != node_kind::string) return false;
    const std::string_view name = tree_.text(name_node);
    if (name.empty()) return false;
    field& member = field_at(out.fields, used);
    shelve(member.type.fields, 0);
    if (!read_common_type_string(tree_.text(type_node), member.type)) return false;
    member.itemsize = member.type.itemsize;
    names.add(name_at, false, name);
    ++used;
    assign_name(member.name, name);
    member.offset = offset;
    offset += member.itemsize; // both <= 2^31-1: cannot wrap
    return true;
  }

  // numpy's rules for (type, shape): every dimension fits a C int; the
  // element count is multiplied in 64 bits (npy_intp), overflow refused,
  // and is 0 from the first zero dimension on (PyArray_OverflowMultiplyList);
  // that count, and the total itemsize, fit a C int.
  bool subarray_itemsize(const node& shape_node, field& member) {
    const dtype& element = member.type;
    const bool unsized_flexible =
        element.itemsize == 0 && (element.kind == dtype_kind::bytes || element.kind == dtype_kind::unicode ||
                                  element.kind == dtype_kind::raw_void);
    // numpy reads the item after an unsized type as its size, so any shape,
    // even (), is refused ("invalid itemsize in generic type tuple").
    if (unsized_flexible) {
      return reject(error_code::bad_descr, shape_node,
                    "numpy cannot give a shape, even (), to a zero-sized S, U or V type");
    }
    std::uint64_t count = 1;
    const node* too_many = nullptr; // the dimension where the count first passed 2^31-1
    std::uint32_t d = shape_node.children.first;
    for (std::uint64_t dim : member.subarray_shape) {
      const node& dim_node = tree_.nodes[d];
      d = dim_node.next;
      if (dim > max_itemsize)
        return reject(error_code::itemsize_overflow, dim_node, "a subarray dimension above 2^31-1");
      if (count == 0) continue; // numpy stops multiplying at the first zero
      if (too_many == nullptr && count * dim > max_itemsize) too_many = &dim_node; // both factors < 2^31
      const auto product = checked_mul(count, dim);
      if (!product) {
        return reject(error_code::itemsize_overflow, too_many != nullptr ? *too_many : dim_node,
                      "subarray element count above 2^31-1");
      }
      count = *product;
    }
    if (count > max_itemsize) {
      return reject(error_code::itemsize_overflow, too_many != nullptr ? *too_many : shape_node,
                    "subarray element count above 2^31-1");
    }
    const auto total = checked_mul(count, element.itemsize, max_itemsize);
    if (!total) return reject(error_code::itemsize_overflow, shape_node, "subarray itemsize above 2^31-1");
    member.itemsize = *total;
    return true;
  }

  bool compute_sizes(const node& shape_node, header& out) {
    if (auto failure = size_array(out, opts_)) {
      const node& where =
          failure->dimension ? child(shape_node, static_cast<std::uint32_t>(*failure->dimension)) : shape_node;
      error refusal{failure->code, base_ + where.offset, std::move(failure->message)};
      refusal.option = failure->option;
      refusal.limit = failure->limit;
      refusal.actual = failure->actual;
      return reject(std::move(refusal));
    }
    out.data_is_pickle = has_object_;
    return true;
  }

  // `to` = `text`. A field reused in place (field_at leaves its name) had
  // a name at least as long more often than not: cut and overwritten
  // without std::string's general replace, an out-of-line call that was a
  // tenth of the model's time.
  static void assign_name(std::string& to, std::string_view text) {
    if (to.size() < text.size()) {
      to.assign(text.data(), text.size());
      return;
    }
    to.erase(text.size());
    copy_bytes(&to[0], text.data(), text.size());
  }

  // memcpy, with the few bytes of a name copied inline as two overlapping
  // words (no call).
  static void copy_bytes(char* to, const char* from, std::size_t count) noexcept {
    if (count > 16) {
      std::memcpy(to, from, count);
    } else if (count >= 8) {
      copy_word<std::uint64_t>(to, from, count);
    } else if (count >= 4) {
      copy_word<std::uint32_t>(to, from, count);
    } else if (count != 0) {
      to[0] = from[0];
      to[count / 2] = from[count / 2];
      to[count - 1] = from[count - 1];
    }
  }

  // The first and the last sizeof(Word) of `count` bytes, count in
  // [sizeof(Word), 2 * sizeof(Word)].
  template <typename Word>
  static void copy_word(char* to, const char* from, std::size_t count) noexcept {
    Word first = 0;
    Word last = 0;
    std::memcpy(&first, from, sizeof first);
    std::memcpy(&last, from + count - sizeof last, sizeof last);
    std::memcpy(to, &first, sizeof first);
    std::memcpy(to + count - sizeof last, &last, sizeof last);
  }

  // fields[index], emptied for a new field but for its name (assign_name
  // overwrites it once the field is known not to be padding) and scalars:
  // the one a reused model left there, else a spare one (its buffers'
  // capacity kept), else a new one.
  field& field_at(std::vector<field>& fields, std::size_t index) {
    if (index == fields.size()) {
      std::vector<field>& spare = space_.spare_fields;
      if (spare.empty()) {
        if (space_.track_fields) {
          // Room for every field this workspace's models own to be shelved
          // at once: shelving then never allocates.
          ++space_.fields_made;
          if (spare.capacity() < space_.fields_made) spare.reserve(2 * space_.fields_made);
        }
        return fields.emplace_back();
      }
      fields.push_back(std::move(spare.back()));
      spare.pop_back();
    }
    field& member = fields[index];
    if (member.name.capacity() > spare_name_capacity) std::string().swap(member.name);
    member.title.reset();
    member.subarray_shape.clear();
    // The type, itemsize and offset are written before they are read:
    // read_field_type sets every scalar of the type.
    return member;
  }

  // fields[keep, end) go to the spares, with the fields nested in them, last
  // first: taken back from the end, each returns to the place it left.
  void shelve(std::vector<field>& fields, std::size_t keep) {
    if (fields.size() <= keep) return;
    std::vector<field>& spare = space_.spare_fields;
    for (std::size_t i = fields.size(); i-- > keep;) spare.push_back(std::move(fields[i]));
    fields.resize(keep);
  }

  const ast& tree_;
  std::uint64_t base_;
  const options& opts_;
  workspace& space_;
  bool has_object_ = false;
  std::optional<error> failure_;
};

} // namespace

std::optional<error> build_model(const ast& tree, const preamble& framing, const options& opts, workspace& space,
                                 header& model) {
  model.major_version = framing.major_version;
  model.minor_version = framing.minor_version;
  model.header_length = framing.header_length;
  model.data_offset = framing.data_offset();
  model.data_alignment = model.data_offset & (~model.data_offset + 1);
  model.fortran_order = false;
  model.shape.clear();
  model.count = 0;
  model.nbytes = 0;
  model.data_is_pickle = false;
  return model_builder(tree, framing.header_offset, opts, space).build(model);
}

} // namespace npyguard::detail
