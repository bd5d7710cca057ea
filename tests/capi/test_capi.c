/* The C API, tested from C (compiled as C99): every entry point on the
 * committed examples, the dtype tree walked by index, .npz members and
 * RawArray fields, errors with code, offset and member, the options'
 * size rules, the callbacks' error convention, and invalid arguments.
 *
 *   test_capi   (run by ctest with the source tree's examples) */
#define _POSIX_C_SOURCE 200809L

#include "npyguard.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef NPYGUARD_SOURCE_DIR
#error "NPYGUARD_SOURCE_DIR must name the source tree"
#endif
#ifndef NPYGUARD_EXPECTED_VERSION
#error "NPYGUARD_EXPECTED_VERSION must be the project's version"
#endif

static int failures = 0;
static int checks = 0;

#define CHECK(condition)                                                            \
  do {                                                                              \
    ++checks;                                                                       \
    if (!(condition)) {                                                             \
      ++failures;                                                                   \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #condition); \
    }                                                                               \
  } while (0)

#define CHECK_U64(actual, expected)                                                                              \
  do {                                                                                                           \
    ++checks;                                                                                                    \
    const uint64_t a_ = (uint64_t)(actual);                                                                      \
    const uint64_t e_ = (uint64_t)(expected);                                                                    \
    if (a_ != e_) {                                                                                              \
      ++failures;                                                                                                \
      fprintf(stderr, "%s:%d: %s is %llu, expected %llu\n", __FILE__, __LINE__, #actual, (unsigned long long)a_, \
              (unsigned long long)e_);                                                                           \
    }                                                                                                            \
  } while (0)

#define CHECK_STR(actual, expected)                                                          \
  do {                                                                                       \
    ++checks;                                                                                \
    const char* a_ = (actual);                                                               \
    if (a_ == NULL || strcmp(a_, (expected)) != 0) {                                         \
      ++failures;                                                                            \
      fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #actual, \
              a_ == NULL ? "(null)" : a_, (expected));                                       \
    }                                                                                        \
  } while (0)

/* The error of `r`: its code, and its offset (or none: -1). */
static void check_error(const npyguard_result* r, int code, long long offset, int line) {
  const npyguard_error* e = npyguard_result_error(r);
  ++checks;
  if (e == NULL || npyguard_result_ok(r)) {
    ++failures;
    fprintf(stderr, "line %d: expected %s, the input was accepted\n", line, npyguard_error_code_name(code));
    return;
  }
  if (e->code != code || (offset < 0 ? e->has_offset != 0 : (e->has_offset != 1 || e->offset != (uint64_t)offset)) ||
      e->message == NULL || e->message[0] == '\0') {
    ++failures;
    fprintf(stderr, "line %d: expected %s at %lld, got %s at %s%llu: %s\n", line, npyguard_error_code_name(code),
            offset, npyguard_error_code_name(e->code), e->has_offset ? "" : "(none) ", (unsigned long long)e->offset,
            e->message == NULL ? "(null)" : e->message);
  }
}
#define CHECK_ERROR(r, code, offset) check_error((r), (code), (offset), __LINE__)

static void check_ok(const npyguard_result* r, int line) {
  ++checks;
  if (!npyguard_result_ok(r) || npyguard_result_error(r) != NULL) {
    const npyguard_error* e = npyguard_result_error(r);
    ++failures;
    fprintf(stderr, "line %d: expected acceptance, got %s: %s\n", line,
            e == NULL ? "(no error)" : npyguard_error_code_name(e->code), e == NULL ? "" : e->message);
  }
}
#define CHECK_OK(r) check_ok((r), __LINE__)

/* ------------------------------------------------------------------------ */

typedef struct bytes {
  unsigned char* data;
  size_t size;
} bytes;

static char* example(const char* name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/examples/%s", NPYGUARD_SOURCE_DIR, name);
  return path;
}

static bytes read_whole(const char* path) {
  bytes out = {NULL, 0};
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  out.size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  out.data = (unsigned char*)malloc(out.size == 0 ? 1 : out.size);
  if (out.data == NULL || fread(out.data, 1, out.size, f) != out.size) exit(2);
  fclose(f);
  return out;
}

/* A reader over memory; `fail_at` >= 0 makes reads at or past it fail with
 * `error`; `overanswer` makes every read claim one byte more than asked. */
typedef struct memory_reader {
  bytes input;
  long long fail_at;
  ptrdiff_t error;
  int overanswer;
  int empty_requests;
  int reads;      /* calls */
  uint64_t bytes; /* bytes answered */
} memory_reader;

static ptrdiff_t memory_read_at(void* context, uint64_t offset, void* buffer, size_t size) {
  memory_reader* m = (memory_reader*)context;
  size_t n;
  if (size == 0 || buffer == NULL) ++m->empty_requests;
  if (m->fail_at >= 0 && offset + size > (uint64_t)m->fail_at) return m->error;
  if (offset >= m->input.size) return 0;
  n = m->input.size - (size_t)offset < size ? m->input.size - (size_t)offset : size;
  memcpy(buffer, m->input.data + offset, n);
  ++m->reads;
  m->bytes += n;
  return m->overanswer ? (ptrdiff_t)n + 1 : (ptrdiff_t)n;
}

static npyguard_reader reader_of(memory_reader* m) {
  npyguard_reader r;
  r.struct_size = sizeof r;
  r.context = m;
  r.size = m->input.size;
  r.read_at = memory_read_at;
  return r;
}

/* A stream over memory in chunks of `chunk` bytes, then `end` (0 or an error). */
typedef struct memory_stream {
  bytes input;
  size_t at;
  size_t chunk;
  ptrdiff_t end;
} memory_stream;

static ptrdiff_t memory_read(void* context, void* buffer, size_t size) {
  memory_stream* s = (memory_stream*)context;
  size_t n = s->input.size - s->at;
  if (n == 0) return s->end;
  if (n > size) n = size;
  if (n > s->chunk) n = s->chunk;
  memcpy(buffer, s->input.data + s->at, n);
  s->at += n;
  return (ptrdiff_t)n;
}

/* ------------------------------------------------------------------------ */

static void test_version_and_names(void) {
  CHECK_STR(npyguard_version(), NPYGUARD_EXPECTED_VERSION);
  CHECK_STR(npyguard_error_code_name(0), "ok");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_IO_ERROR), "io_error");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_BAD_MAGIC), "bad_magic");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_DATA_LENGTH_MISMATCH), "data_length_mismatch");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_CRC_MISMATCH), "crc_mismatch");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_NOT_CONVERTIBLE), "not_convertible");
  CHECK_STR(npyguard_error_code_name(NPYGUARD_E_INVALID_ARGUMENT), "invalid_argument");
  CHECK_STR(npyguard_error_code_name(68), "unknown");
  CHECK_STR(npyguard_error_code_name(-1), "unknown");
  CHECK_STR(npyguard_error_code_name(1 << 20), "unknown");
  {
    int code;
    for (code = 1; code <= NPYGUARD_E_INVALID_ARGUMENT; ++code)
      CHECK(strcmp(npyguard_error_code_name(code), "unknown") != 0);
  }
}

static void test_options_defaults(void) {
  npyguard_options opts;
  memset(&opts, 0x5A, sizeof opts);
  npyguard_options_init(&opts, sizeof opts);
  CHECK_U64(opts.struct_size, sizeof opts);
  CHECK_U64(opts.max_header_bytes, 1024 * 1024);
  CHECK_U64(opts.max_depth, 32);
  CHECK_U64(opts.max_ndim, 64);
  CHECK_U64(opts.timeout_ms, 0);
  CHECK_U64(opts.max_data_bytes, UINT64_MAX);
  CHECK_U64(opts.max_members, 65535);
  CHECK_U64(opts.max_total_bytes, (uint64_t)1 << 32);
  CHECK_U64(opts.max_ratio, 1032);
  CHECK_U64(opts.max_stream_bytes, ((uint64_t)1 << 32) + ((uint64_t)64 << 20));
  CHECK_U64(opts.allow_object, 0);
  CHECK_U64(opts.allow_trailing_data, 0);
  CHECK_U64(opts.canonical, 0);
  CHECK_U64(opts.verify, 0);
  CHECK_U64(opts.ra_allow_type5, 1);
  CHECK_U64(opts.ra_reject_metadata, 0);
  CHECK_U64(opts.minimal_reads, 0);
  npyguard_options_init(NULL, sizeof opts); /* nothing to do, no crash */
}

/* examples/valid.npy: float32 (3, 4), data at 128. */
static void check_valid_npy(const npyguard_result* r) {
  const npyguard_npy* npy = npyguard_result_npy(r);
  const npyguard_dtype* dtype;
  char descr[64];
  CHECK_OK(r);
  CHECK(npyguard_result_format(r) == NPYGUARD_FORMAT_NPY);
  CHECK(npy != NULL);
  CHECK(npyguard_result_ra(r) == NULL);
  CHECK_U64(npyguard_result_member_count(r), 0);
  CHECK_U64(npyguard_npy_major_version(npy), 1);
  CHECK_U64(npyguard_npy_minor_version(npy), 0);
  CHECK_U64(npyguard_npy_header_length(npy), 118);
  CHECK_U64(npyguard_npy_data_offset(npy), 128);
  CHECK_U64(npyguard_npy_fortran_order(npy), 0);
  CHECK_U64(npyguard_npy_ndim(npy), 2);
  CHECK_U64(npyguard_npy_dim(npy, 0), 3);
  CHECK_U64(npyguard_npy_dim(npy, 1), 4);
  CHECK_U64(npyguard_npy_dim(npy, 2), 0); /* past the end */
  CHECK_U64(npyguard_npy_count(npy), 12);
  CHECK_U64(npyguard_npy_nbytes(npy), 48);
  CHECK_U64(npyguard_npy_data_is_pickle(npy), 0);
  dtype = npyguard_npy_dtype(npy);
  CHECK(npyguard_dtype_get_kind(dtype) == NPYGUARD_KIND_FLOAT);
  CHECK(npyguard_dtype_byte_order(dtype) == '<');
  CHECK_U64(npyguard_dtype_itemsize(dtype), 4);
  CHECK_U64(npyguard_dtype_field_count(dtype), 0);
  CHECK(npyguard_dtype_field(dtype, 0) == NULL);
  CHECK_STR(npyguard_dtype_time_unit(dtype), "");
  CHECK_U64(npyguard_dtype_descr(dtype, descr, sizeof descr), 5);
  CHECK_STR(descr, "'<f4'");
}

static void test_npy_every_entry_point(void) {
  const char* path = example("valid.npy");
  bytes file = read_whole(path);
  npyguard_result* r;
  int fd;
  memory_reader m;
  memory_stream s;
  npyguard_reader reader;
  npyguard_options minimal;
  const npyguard_format formats[2] = {NPYGUARD_FORMAT_NPY, NPYGUARD_FORMAT_DETECT};
  size_t i;
  for (i = 0; i < 2; ++i) {
    r = npyguard_check_buffer(formats[i], file.data, file.size, NULL);
    check_valid_npy(r);
    npyguard_result_free(r);
    r = npyguard_check_file(formats[i], path, NULL);
    check_valid_npy(r);
    npyguard_result_free(r);
    memset(&m, 0, sizeof m);
    m.input = file;
    m.fail_at = -1;
    reader = reader_of(&m);
    r = npyguard_check_reader(formats[i], &reader, NULL);
    check_valid_npy(r);
    CHECK_U64(m.empty_requests, 0);
    npyguard_result_free(r);
    /* Minimal reads: the 12-byte preamble, then the rest of the header. */
    memset(&m, 0, sizeof m);
    m.input = file;
    m.fail_at = -1;
    reader = reader_of(&m);
    npyguard_options_init(&minimal, sizeof minimal);
    minimal.minimal_reads = 1;
    r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, &reader, &minimal);
    check_valid_npy(r);
    CHECK_U64(m.reads, 2);
    CHECK_U64(m.bytes, 128);
    npyguard_result_free(r);
    minimal.minimal_reads = 2;
    r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, &reader, &minimal);
    CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
    npyguard_result_free(r);
    memset(&s, 0, sizeof s);
    s.input = file;
    s.chunk = 3;
    r = npyguard_check_stream(formats[i], memory_read, &s, NULL);
    check_valid_npy(r);
    npyguard_result_free(r);
  }
  fd = open(path, O_RDONLY);
  CHECK(fd >= 0);
  r = npyguard_check_fd(NPYGUARD_FORMAT_NPY, fd, NULL);
  check_valid_npy(r);
  /* A regular file is read by offset (pread): the descriptor's offset stays. */
  CHECK_U64(lseek(fd, 0, SEEK_CUR), 0);
  npyguard_result_free(r);
  r = npyguard_check_fd(NPYGUARD_FORMAT_DETECT, fd, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  close(fd);
  free(file.data);
}

static void test_npy_errors(void) {
  bytes file = read_whole(example("valid.npy"));
  npyguard_result* r;
  npyguard_options opts;
  const npyguard_error* e;

  file.data[5] = 'X';
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, NULL);
  CHECK_ERROR(r, NPYGUARD_E_BAD_MAGIC, 5);
  e = npyguard_result_error(r);
  CHECK(e != NULL && e->member == NULL && e->has_member_offset == 0);
  CHECK(npyguard_result_npy(r) == NULL);
  CHECK(npyguard_npy_dtype(npyguard_result_npy(r)) == NULL);
  npyguard_result_free(r);
  file.data[5] = 'Y';

  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size - 1, NULL);
  CHECK_ERROR(r, NPYGUARD_E_TRUNCATED_DATA, (long long)file.size - 1);
  npyguard_result_free(r);

  r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, example("negative.npy"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_NEGATIVE_DIMENSION, 61);
  npyguard_result_free(r);
  r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, example("polyglot.npy"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_TRAILING_DATA, 176);
  npyguard_result_free(r);

  /* A name is a claim (SPEC.md section 9): .npz or .ra bytes named .npy are
     bad_magic at 0, .npy bytes named .npz are not_zip, named .ra bad_magic. */
  {
    static const struct {
      const char* example;
      const char* renamed;
      int code;
      long long offset;
    } claims[] = {{"weights.npz", "claim_zip.npy", NPYGUARD_E_BAD_MAGIC, 0},
                  {"image.ra", "claim_ra.npy", NPYGUARD_E_BAD_MAGIC, 0},
                  {"valid.npy", "claim_npy.npz", NPYGUARD_E_NOT_ZIP, -1},
                  {"valid.npy", "claim_npy.ra", NPYGUARD_E_BAD_MAGIC, 0}};
    size_t i;
    for (i = 0; i < sizeof claims / sizeof claims[0]; ++i) {
      char renamed[4096];
      bytes content = read_whole(example(claims[i].example));
      FILE* f;
      snprintf(renamed, sizeof renamed, "/tmp/npyguard_capi_%s", claims[i].renamed);
      f = fopen(renamed, "wb");
      CHECK(f != NULL);
      if (f == NULL) continue;
      CHECK(fwrite(content.data, 1, content.size, f) == content.size);
      fclose(f);
      free(content.data);
      r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, renamed, NULL);
      CHECK_ERROR(r, claims[i].code, claims[i].offset);
      npyguard_result_free(r);
      remove(renamed);
    }
  }

  /* The options reach the validator. */
  npyguard_options_init(&opts, sizeof opts);
  opts.allow_trailing_data = 1;
  r = npyguard_check_file(NPYGUARD_FORMAT_NPY, example("polyglot.npy"), &opts);
  CHECK_OK(r);
  npyguard_result_free(r);
  npyguard_options_init(&opts, sizeof opts);
  opts.max_data_bytes = 47;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_DATA_TOO_LARGE, 60); /* the shape */
  npyguard_result_free(r);
  npyguard_options_init(&opts, sizeof opts);
  opts.max_ndim = 1;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK(!npyguard_result_ok(r) && npyguard_result_error(r)->code == NPYGUARD_E_TOO_MANY_DIMENSIONS);
  npyguard_result_free(r);

  r = npyguard_check_file(NPYGUARD_FORMAT_NPY, "/nonexistent/npyguard/x.npy", NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  npyguard_result_free(r);
  free(file.data);
}

/* examples/structured.npy: [('id', '<u4'), ('pos', '<f8', (3,)), ('label', '|S8')], shape (2,). */
static void test_dtype_tree(void) {
  npyguard_result* r = npyguard_check_file(NPYGUARD_FORMAT_NPY, example("structured.npy"), NULL);
  const npyguard_npy* npy = npyguard_result_npy(r);
  const npyguard_dtype* dtype = npyguard_npy_dtype(npy);
  const npyguard_field* id;
  const npyguard_field* pos;
  const npyguard_field* label;
  char small[8];
  char descr[128];
  const char* expected = "[('id', '<u4'), ('pos', '<f8', (3,)), ('label', '|S8')]";
  CHECK_OK(r);
  CHECK(npyguard_dtype_get_kind(dtype) == NPYGUARD_KIND_STRUCT);
  CHECK_U64(npyguard_dtype_itemsize(dtype), 36);
  CHECK_U64(npyguard_dtype_field_count(dtype), 3);
  id = npyguard_dtype_field(dtype, 0);
  pos = npyguard_dtype_field(dtype, 1);
  label = npyguard_dtype_field(dtype, 2);
  CHECK(npyguard_dtype_field(dtype, 3) == NULL);
  CHECK_STR(npyguard_field_name(id, NULL), "id");
  CHECK(npyguard_field_title(id, NULL) == NULL);
  CHECK_U64(npyguard_field_offset(id), 0);
  CHECK_U64(npyguard_field_itemsize(id), 4);
  CHECK(npyguard_dtype_get_kind(npyguard_field_dtype(id)) == NPYGUARD_KIND_UINT);
  CHECK_STR(npyguard_field_name(pos, NULL), "pos");
  CHECK_U64(npyguard_field_offset(pos), 4);
  CHECK_U64(npyguard_field_itemsize(pos), 24);
  CHECK_U64(npyguard_field_subarray_ndim(pos), 1);
  CHECK_U64(npyguard_field_subarray_dim(pos, 0), 3);
  CHECK_U64(npyguard_field_subarray_dim(pos, 1), 0);
  CHECK_U64(npyguard_dtype_itemsize(npyguard_field_dtype(pos)), 8);
  CHECK(npyguard_dtype_byte_order(npyguard_field_dtype(pos)) == '<');
  CHECK_STR(npyguard_field_name(label, NULL), "label");
  CHECK_U64(npyguard_field_offset(label), 28);
  CHECK(npyguard_dtype_get_kind(npyguard_field_dtype(label)) == NPYGUARD_KIND_BYTES);
  CHECK(npyguard_dtype_byte_order(npyguard_field_dtype(label)) == '|');
  /* The descr like snprintf: its length, cut to fit, NUL-terminated. */
  CHECK_U64(npyguard_dtype_descr(dtype, NULL, 0), strlen(expected));
  CHECK_U64(npyguard_dtype_descr(dtype, small, sizeof small), strlen(expected));
  CHECK_STR(small, "[('id',");
  CHECK_U64(npyguard_dtype_descr(dtype, descr, sizeof descr), strlen(expected));
  CHECK_STR(descr, expected);
  npyguard_result_free(r);
}

static void test_datetime_and_titles(void) {
  /* A header built here: datetime64[10ms] and a titled field. */
  const char* dict =
      "{'descr': [(('a title', 'when'), '<M8[10ms]'), ('n\\x00m', '>i2')], 'fortran_order': False, "
      "'shape': (1,), }";
  unsigned char file[256];
  size_t header_len = 10 + strlen(dict) + 1;
  size_t padded = (header_len + 63) / 64 * 64;
  npyguard_result* r;
  const npyguard_dtype* dtype;
  const npyguard_field* when;
  memcpy(file, "\x93NUMPY\x01\x00", 8);
  file[8] = (unsigned char)((padded - 10) & 0xFF);
  file[9] = (unsigned char)((padded - 10) >> 8);
  memcpy(file + 10, dict, strlen(dict));
  memset(file + 10 + strlen(dict), ' ', padded - 10 - strlen(dict) - 1);
  file[padded - 1] = '\n';
  memset(file + padded, 0, 10);
  r = npyguard_check_buffer(NPYGUARD_FORMAT_DETECT, file, padded + 10, NULL);
  CHECK_OK(r);
  dtype = npyguard_npy_dtype(npyguard_result_npy(r));
  when = npyguard_dtype_field(dtype, 0);
  CHECK_STR(npyguard_field_name(when, NULL), "when");
  CHECK_STR(npyguard_field_title(when, NULL), "a title");
  {
    size_t length = 0;
    CHECK_STR(npyguard_field_title(when, &length), "a title");
    CHECK_U64(length, 7);
  }
  CHECK(npyguard_dtype_get_kind(npyguard_field_dtype(when)) == NPYGUARD_KIND_DATETIME);
  CHECK_STR(npyguard_dtype_time_unit(npyguard_field_dtype(when)), "ms");
  CHECK_U64(npyguard_dtype_time_multiplier(npyguard_field_dtype(when)), 10);
  CHECK(npyguard_dtype_byte_order(npyguard_field_dtype(npyguard_dtype_field(dtype, 1))) == '>');
  {
    /* A name holding a NUL, as numpy accepts it: whole through its length. */
    size_t length = 0;
    const char* name = npyguard_field_name(npyguard_dtype_field(dtype, 1), &length);
    CHECK_U64(length, 3);
    CHECK(name != NULL && memcmp(name, "n\0m", 3) == 0);
    CHECK(npyguard_field_title(npyguard_dtype_field(dtype, 1), &length) == NULL);
    CHECK_U64(length, 0);
  }
  npyguard_result_free(r);
}

static void test_npz(void) {
  const char* path = example("weights.npz");
  bytes file = read_whole(path);
  npyguard_result* r;
  memory_stream s;
  const npyguard_npy* kernel;
  const npyguard_error* e;
  npyguard_options opts;
  int pass;
  for (pass = 0; pass < 3; ++pass) {
    if (pass == 0) {
      r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, path, NULL);
    } else if (pass == 1) {
      r = npyguard_check_buffer(NPYGUARD_FORMAT_DETECT, file.data, file.size, NULL);
    } else {
      memset(&s, 0, sizeof s);
      s.input = file;
      s.chunk = 1000;
      r = npyguard_check_stream(NPYGUARD_FORMAT_NPZ, memory_read, &s, NULL);
    }
    CHECK_OK(r);
    CHECK(npyguard_result_format(r) == NPYGUARD_FORMAT_NPZ);
    CHECK(npyguard_result_npy(r) == NULL);
    CHECK_U64(npyguard_result_member_count(r), 2);
    CHECK_STR(npyguard_member_name(r, 0), "dense/kernel.npy");
    CHECK_STR(npyguard_member_key(r, 0), "dense/kernel");
    CHECK_STR(npyguard_member_key(r, 1), "dense/bias");
    CHECK(npyguard_member_name(r, 2) == NULL);
    CHECK(npyguard_member_npy(r, 2) == NULL);
    kernel = npyguard_member_npy(r, 0);
    CHECK_U64(npyguard_npy_ndim(kernel), 2);
    CHECK_U64(npyguard_npy_nbytes(kernel), 48);
    CHECK_U64(npyguard_npy_nbytes(npyguard_member_npy(r, 1)), 16);
    CHECK_U64(npyguard_member_uncompressed_size(r, 0), 176); /* 128-byte header + 48 */
    CHECK(npyguard_member_method(r, 0) == 0 || npyguard_member_method(r, 0) == 8);
    CHECK(npyguard_member_data_start(r, 0) > npyguard_member_local_header_offset(r, 0));
    CHECK(npyguard_npz_bytes_read(r) > 0);
    CHECK_U64(npyguard_npz_verified(r), 0);
    CHECK_U64(npyguard_npz_zip64(r), 0);
    npyguard_result_free(r);
  }
  npyguard_options_init(&opts, sizeof opts);
  opts.verify = 1;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPZ, file.data, file.size, &opts);
  CHECK_OK(r);
  CHECK_U64(npyguard_npz_verified(r), 1);
  npyguard_result_free(r);
  free(file.data);

  r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, example("traversal.npz"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_BAD_MEMBER_NAME, 250);
  e = npyguard_result_error(r);
  CHECK(e != NULL);
  if (e != NULL) {
    CHECK_STR(e->member, "../../etc/cron.d/x.npy");
    CHECK_U64(e->member_length, strlen("../../etc/cron.d/x.npy"));
  }
  CHECK_U64(npyguard_result_member_count(r), 0);
  npyguard_result_free(r);
}

static void test_ra(void) {
  const char* path = example("image.ra");
  bytes file = read_whole(path);
  npyguard_result* r;
  const npyguard_ra* ra;
  char name[32];
  uint64_t offset = 1;
  uint64_t length = 1;
  memory_stream s;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_DETECT, file.data, file.size, NULL);
  CHECK_OK(r);
  CHECK(npyguard_result_format(r) == NPYGUARD_FORMAT_RA);
  ra = npyguard_result_ra(r);
  CHECK(ra != NULL);
  CHECK(npyguard_result_npy(r) == NULL);
  CHECK_U64(npyguard_ra_flags(ra), 0);
  CHECK_U64(npyguard_ra_big_endian(ra), 0);
  CHECK_U64(npyguard_ra_eltype(ra), 3);
  CHECK_U64(npyguard_ra_elbyte(ra), 4);
  CHECK_U64(npyguard_ra_type_name(ra, name, sizeof name), 7);
  CHECK_STR(name, "float32");
  CHECK_U64(npyguard_ra_ndim(ra), 2);
  CHECK_U64(npyguard_ra_dim(ra, 0), 3);
  CHECK_U64(npyguard_ra_dim(ra, 1), 4);
  CHECK_U64(npyguard_ra_dim(ra, 2), 0);
  CHECK_U64(npyguard_ra_count(ra), 12);
  CHECK_U64(npyguard_ra_data_offset(ra), 64);
  CHECK_U64(npyguard_ra_data_length(ra), 48);
  CHECK_U64(npyguard_ra_metadata(ra, &offset, &length), 1);
  CHECK_U64(offset, 112);
  CHECK_U64(length, 38);
  npyguard_result_free(r);
  /* A stream: no metadata fields. */
  memset(&s, 0, sizeof s);
  s.input = file;
  s.chunk = 7;
  r = npyguard_check_stream(NPYGUARD_FORMAT_DETECT, memory_read, &s, NULL);
  CHECK_OK(r);
  CHECK_U64(npyguard_ra_metadata(npyguard_result_ra(r), &offset, &length), 0);
  CHECK_U64(offset, 0);
  CHECK_U64(length, 0);
  npyguard_result_free(r);
  free(file.data);
  {
    const int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    r = npyguard_check_fd(NPYGUARD_FORMAT_RA, fd, NULL);
    CHECK_OK(r);
    CHECK_U64(npyguard_ra_metadata(npyguard_result_ra(r), NULL, NULL), 1);
    CHECK_U64(lseek(fd, 0, SEEK_CUR), 0); /* RawArray: a regular file by offset, its offset untouched */
    npyguard_result_free(r);
    close(fd);
  }

  r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, example("compressed.ra"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_UNSUPPORTED_FLAGS, 8);
  npyguard_result_free(r);
  /* A .npy given as RawArray is not one. */
  r = npyguard_check_file(NPYGUARD_FORMAT_RA, example("valid.npy"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_BAD_MAGIC, 0);
  npyguard_result_free(r);
}

static void test_callback_errors(void) {
  bytes file = read_whole(example("valid.npy"));
  memory_reader m;
  memory_stream s;
  npyguard_reader reader;
  npyguard_result* r;
  const npyguard_error* e;

  /* read_at fails with -EACCES where the header is: io_error saying why. */
  memset(&m, 0, sizeof m);
  m.input = file;
  m.fail_at = 20;
  m.error = -EACCES;
  reader = reader_of(&m);
  r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, &reader, NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  e = npyguard_result_error(r);
  CHECK(e != NULL && strstr(e->message, strerror(EACCES)) != NULL);
  npyguard_result_free(r);
  /* The same through DETECT: the failed first read is reported, not guessed around. */
  m.fail_at = 0;
  r = npyguard_check_reader(NPYGUARD_FORMAT_DETECT, &reader, NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  npyguard_result_free(r);
  /* A reader that answers more than it was asked is not trusted. */
  m.fail_at = -1;
  m.overanswer = 1;
  r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, &reader, NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  npyguard_result_free(r);
  /* A stream that fails after 50 bytes, with and without DETECT's peek. */
  memset(&s, 0, sizeof s);
  s.input = file;
  s.input.size = 50;
  s.chunk = 4;
  s.end = -ETIMEDOUT;
  r = npyguard_check_stream(NPYGUARD_FORMAT_NPY, memory_read, &s, NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  npyguard_result_free(r);
  s.at = 0;
  s.input.size = 5; /* fails inside the peeked bytes */
  r = npyguard_check_stream(NPYGUARD_FORMAT_DETECT, memory_read, &s, NULL);
  CHECK_ERROR(r, NPYGUARD_E_IO_ERROR, -1);
  npyguard_result_free(r);
  /* A stream that simply ends inside the header. */
  s.at = 0;
  s.input.size = 50;
  s.end = 0;
  r = npyguard_check_stream(NPYGUARD_FORMAT_DETECT, memory_read, &s, NULL);
  CHECK_ERROR(r, NPYGUARD_E_TRUNCATED_HEADER, 50);
  npyguard_result_free(r);
  free(file.data);
}

static void test_invalid_arguments(void) {
  bytes file = read_whole(example("valid.npy"));
  npyguard_options opts;
  npyguard_reader reader;
  npyguard_result* r;
  struct newer_options { /* a newer caller's struct: this library's fields, then more */
    npyguard_options known;
    unsigned char tail[16];
  } bigger;

  r = npyguard_check_file(NPYGUARD_FORMAT_NPY, NULL, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, NULL, 10, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, NULL, 0, NULL); /* an empty input, not an argument error */
  CHECK_ERROR(r, NPYGUARD_E_TRUNCATED_PREAMBLE, 0);
  npyguard_result_free(r);
  r = npyguard_check_buffer((npyguard_format)9, file.data, file.size, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  r = npyguard_check_stream(NPYGUARD_FORMAT_NPY, NULL, NULL, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, NULL, NULL);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  memset(&reader, 0, sizeof reader);
  reader.read_at = memory_read_at;
  r = npyguard_check_reader(NPYGUARD_FORMAT_NPY, &reader, NULL); /* struct_size 0 */
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);

  /* Options never initialised. */
  memset(&opts, 0, sizeof opts);
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  /* A flag other than 0 or 1. */
  npyguard_options_init(&opts, sizeof opts);
  opts.allow_trailing_data = 2;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);
  /* An older caller's smaller struct: the fields past its size keep their
   * defaults whatever the memory after it holds. */
  npyguard_options_init(&opts, offsetof(npyguard_options, allow_object));
  CHECK_U64(opts.struct_size, offsetof(npyguard_options, allow_object));
  opts.max_data_bytes = 48;
  opts.allow_trailing_data = 7; /* beyond the declared size: never read */
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_OK(r);
  npyguard_result_free(r);
  opts.max_data_bytes = 47; /* inside the declared size: read */
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_DATA_TOO_LARGE, 60); /* the shape */
  npyguard_result_free(r);
  /* A newer caller's bigger struct: accepted while its tail is zero,
   * refused once a field this library does not know is set. */
  memset(&bigger, 0xEE, sizeof bigger);
  npyguard_options_init(&bigger.known, sizeof bigger);
  CHECK_U64(bigger.known.struct_size, sizeof bigger);
  CHECK_U64(bigger.tail[15], 0); /* init zeroes the whole struct the caller declares */
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &bigger.known);
  CHECK_OK(r);
  npyguard_result_free(r);
  bigger.tail[3] = 1;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &bigger.known);
  CHECK_ERROR(r, NPYGUARD_E_INVALID_ARGUMENT, -1);
  npyguard_result_free(r);

  /* NULL everywhere answers as a failed result. */
  CHECK_U64(npyguard_result_ok(NULL), 0);
  CHECK(npyguard_result_error(NULL) != NULL && npyguard_result_error(NULL)->code == NPYGUARD_E_OUT_OF_MEMORY);
  CHECK(npyguard_result_npy(NULL) == NULL);
  CHECK(npyguard_result_ra(NULL) == NULL);
  CHECK_U64(npyguard_result_member_count(NULL), 0);
  CHECK_U64(npyguard_npy_ndim(NULL), 0);
  CHECK(npyguard_npy_dtype(NULL) == NULL);
  CHECK_U64(npyguard_dtype_field_count(NULL), 0);
  CHECK(npyguard_field_name(NULL, NULL) == NULL);
  CHECK(npyguard_field_title(NULL, NULL) == NULL);
  CHECK_U64(npyguard_ra_metadata(NULL, NULL, NULL), 0);
  npyguard_result_free(NULL);
  free(file.data);
}

/* Structured errors: the npyguard_options field that refused the input, the
 * limit and the value found; NULL and has_limit 0 for errors no setting can
 * lift. The fields sit after member_length, in this order. */
static int ends_with(const char* text, const char* tail) {
  const size_t n = strlen(text);
  const size_t m = strlen(tail);
  return n >= m && strcmp(text + n - m, tail) == 0;
}

static void test_structured_errors(void) {
  bytes file = read_whole(example("valid.npy"));
  bytes zip = read_whole(example("weights.npz"));
  bytes image = read_whole(example("image.ra"));
  npyguard_result* r;
  npyguard_options opts;
  const npyguard_error* e;

  CHECK(offsetof(npyguard_error, option) > offsetof(npyguard_error, member_length));
  CHECK(offsetof(npyguard_error, has_limit) > offsetof(npyguard_error, option));
  CHECK(offsetof(npyguard_error, limit) > offsetof(npyguard_error, has_limit));
  CHECK(offsetof(npyguard_error, actual) > offsetof(npyguard_error, limit));
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
  CHECK_U64(offsetof(npyguard_error, member_length), 48);
  CHECK_U64(offsetof(npyguard_error, option), 56);
  CHECK_U64(offsetof(npyguard_error, has_limit), 64);
  CHECK_U64(offsetof(npyguard_error, limit), 72);
  CHECK_U64(offsetof(npyguard_error, actual), 80);
  CHECK_U64(sizeof(npyguard_error), 88);
#endif

  npyguard_options_init(&opts, sizeof opts);
  opts.max_header_bytes = 64;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_HEADER_TOO_LARGE, 8);
  e = npyguard_result_error(r);
  CHECK(e != NULL);
  if (e != NULL) {
    CHECK_STR(e->option, "max_header_bytes");
    CHECK_U64(e->has_limit, 1);
    CHECK_U64(e->limit, 64);
    CHECK_U64(e->actual, (uint64_t)file.data[8] | ((uint64_t)file.data[9] << 8));
    CHECK(ends_with(e->message, " (npyguard_options.max_header_bytes)"));
    CHECK(strstr(e->message, "limits.") == NULL && strstr(e->message, "--") == NULL);
  }
  npyguard_result_free(r);

  r = npyguard_check_file(NPYGUARD_FORMAT_NPY, example("polyglot.npy"), NULL);
  CHECK_ERROR(r, NPYGUARD_E_TRAILING_DATA, 176);
  e = npyguard_result_error(r);
  if (e != NULL) {
    CHECK_STR(e->option, "allow_trailing_data");
    CHECK_U64(e->has_limit, 0);
    CHECK_U64(e->limit, 0);
    CHECK_U64(e->actual, 0);
    CHECK(ends_with(e->message, " (npyguard_options.allow_trailing_data)"));
  }
  npyguard_result_free(r);

  npyguard_options_init(&opts, sizeof opts);
  opts.max_members = 1;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPZ, zip.data, zip.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_TOO_MANY_MEMBERS, (long long)zip.size - 22 + 10);
  e = npyguard_result_error(r);
  if (e != NULL) {
    CHECK_STR(e->option, "max_members");
    CHECK_U64(e->has_limit, 1);
    CHECK_U64(e->limit, 1);
    CHECK_U64(e->actual, 2);
    CHECK(e->member == NULL);
  }
  npyguard_result_free(r);

  npyguard_options_init(&opts, sizeof opts);
  opts.ra_reject_metadata = 1;
  r = npyguard_check_buffer(NPYGUARD_FORMAT_RA, image.data, image.size, &opts);
  CHECK_ERROR(r, NPYGUARD_E_TRAILING_DATA, 112);
  e = npyguard_result_error(r);
  if (e != NULL) {
    CHECK_STR(e->option, "ra_reject_metadata");
    CHECK_U64(e->has_limit, 0);
    CHECK(ends_with(e->message, " (npyguard_options.ra_reject_metadata)"));
  }
  npyguard_result_free(r);

  /* No setting lifts bad_magic; nor an argument error. */
  file.data[0] = 'X';
  r = npyguard_check_buffer(NPYGUARD_FORMAT_NPY, file.data, file.size, NULL);
  CHECK_ERROR(r, NPYGUARD_E_BAD_MAGIC, 0);
  e = npyguard_result_error(r);
  if (e != NULL) {
    CHECK(e->option == NULL);
    CHECK_U64(e->has_limit, 0);
    CHECK(!ends_with(e->message, ")"));
  }
  npyguard_result_free(r);
  r = npyguard_check_file(NPYGUARD_FORMAT_NPY, NULL, NULL);
  e = npyguard_result_error(r);
  CHECK(e != NULL && e->option == NULL && e->has_limit == 0);
  npyguard_result_free(r);

  free(file.data);
  free(zip.data);
  free(image.data);
}

/* DETECT opens a path once, without blocking, and asks fstat about that
 * descriptor: a regular file swapped for a FIFO (no writer, ever) between
 * any two steps cannot hang the call past timeout_ms. A child process swaps
 * the two at one name as fast as it can while this process checks it; a
 * hang would end the run by SIGALRM. */
static void test_detect_swap_race(void) {
  char path[256];
  char source[256];
  char as_file[256];
  char as_fifo[256];
  const long pid = (long)getpid();
  bytes content = read_whole(example("valid.npy"));
  npyguard_options opts;
  FILE* f;
  pid_t swapper;
  int i;
  int regular = 0;
  int fifo = 0;
  snprintf(path, sizeof path, "/tmp/npyguard_capi_race_%ld", pid);
  snprintf(source, sizeof source, "/tmp/npyguard_capi_race_%ld.src", pid);
  snprintf(as_file, sizeof as_file, "/tmp/npyguard_capi_race_%ld.a", pid);
  snprintf(as_fifo, sizeof as_fifo, "/tmp/npyguard_capi_race_%ld.b", pid);
  f = fopen(source, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fwrite(content.data, 1, content.size, f) == content.size);
  fclose(f);
  free(content.data);
  CHECK(link(source, path) == 0);
  swapper = fork();
  CHECK(swapper >= 0);
  if (swapper == 0) {
    for (;;) {
      if (link(source, as_file) == 0) (void)rename(as_file, path);
      if (mkfifo(as_fifo, 0600) == 0) (void)rename(as_fifo, path);
    }
  }
  npyguard_options_init(&opts, sizeof opts);
  opts.timeout_ms = 1;
  alarm(120);
  for (i = 0; i < 2000; ++i) {
    npyguard_result* r = npyguard_check_file(NPYGUARD_FORMAT_DETECT, path, &opts);
    const npyguard_error* e = npyguard_result_error(r);
    if (e == NULL) {
      ++regular;
    } else {
      CHECK(e->code == NPYGUARD_E_IO_ERROR);
      ++fifo;
    }
    npyguard_result_free(r);
  }
  alarm(0);
  kill(swapper, SIGKILL);
  waitpid(swapper, NULL, 0);
  printf("capi: DETECT against a file swapped for a FIFO: %d regular, %d not (io_error), no hang\n", regular, fifo);
  unlink(path);
  unlink(source);
  unlink(as_file);
  unlink(as_fifo);
}

int main(void) {
  test_version_and_names();
  test_options_defaults();
  test_npy_every_entry_point();
  test_npy_errors();
  test_dtype_tree();
  test_datetime_and_titles();
  test_npz();
  test_ra();
  test_callback_errors();
  test_invalid_arguments();
  test_structured_errors();
  test_detect_swap_race();
  printf("capi: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
