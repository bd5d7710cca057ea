/* npyguard: the C API (C99). A stable ABI over the C++ library for every
 * language that can call C: Go (cgo), Rust (bindgen), Node (N-API), Python
 * (ctypes, cffi).
 *
 * The ABI is a contract: functions, enum values and struct fields are only
 * ever added (structs the caller allocates grow at their end and carry their
 * own size), never renamed, renumbered or removed. Nothing here throws or
 * aborts on bad input; every function is safe to call from any thread on
 * distinct objects, and on one result from many threads at once (all
 * accessors only read).
 *
 * Usage:
 *
 *   npyguard_options opts;
 *   npyguard_options_init(&opts, sizeof opts);
 *   opts.max_data_bytes = 1 << 30;
 *   npyguard_result* r = npyguard_check_file(NPYGUARD_FORMAT_NPY, "upload.npy", &opts);
 *   if (!npyguard_result_ok(r)) {
 *     const npyguard_error* e = npyguard_result_error(r);
 *     fprintf(stderr, "%s at %llu: %s\n", npyguard_error_code_name(e->code),
 *             (unsigned long long)e->offset, e->message);
 *   }
 *   npyguard_result_free(r);
 *
 * Offsets are 0-based byte offsets from the start of the input. Strings
 * returned by the library are UTF-8, NUL-terminated, and live as long as the
 * result they came from. A result is never NULL, except when memory for the
 * result itself cannot be allocated; every accessor accepts NULL and answers
 * as for a failed result (code NPYGUARD_E_OUT_OF_MEMORY).
 */
#ifndef NPYGUARD_H
#define NPYGUARD_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define NPYGUARD_C_API
#elif defined(__GNUC__) || defined(__clang__)
#define NPYGUARD_C_API __attribute__((visibility("default")))
#else
#define NPYGUARD_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (a static string). */
NPYGUARD_C_API const char* npyguard_version(void);

/* ------------------------------------------------------------------------
 * Error codes: the same values as npyguard::error_code (checked at compile
 * time), stable forever. 0 is success and never an error's code. */
typedef enum npyguard_error_code {
  NPYGUARD_OK = 0,
  NPYGUARD_E_IO_ERROR = 1,
  NPYGUARD_E_OUT_OF_MEMORY = 2,
  NPYGUARD_E_BAD_MAGIC = 3,
  NPYGUARD_E_UNSUPPORTED_VERSION = 4,
  NPYGUARD_E_TRUNCATED_PREAMBLE = 5,
  NPYGUARD_E_HEADER_TOO_LARGE = 6,
  NPYGUARD_E_TRUNCATED_HEADER = 7,
  NPYGUARD_E_INVALID_UTF8 = 8,
  NPYGUARD_E_CONTROL_CHARACTER = 9,
  NPYGUARD_E_HEADER_NOT_TERMINATED = 10,
  NPYGUARD_E_SYNTAX_ERROR = 11,
  NPYGUARD_E_INTEGER_TOO_LARGE = 12,
  NPYGUARD_E_NEGATIVE_DIMENSION = 13,
  NPYGUARD_E_DEPTH_EXCEEDED = 14,
  NPYGUARD_E_MISSING_KEY = 15,
  NPYGUARD_E_DUPLICATE_KEY = 16,
  NPYGUARD_E_UNKNOWN_KEY = 17,
  NPYGUARD_E_BAD_FORTRAN_ORDER = 18,
  NPYGUARD_E_BAD_SHAPE = 19,
  NPYGUARD_E_TOO_MANY_DIMENSIONS = 20,
  NPYGUARD_E_BAD_DESCR = 21,
  NPYGUARD_E_OBJECT_DTYPE = 22,
  NPYGUARD_E_DUPLICATE_FIELD_NAME = 23,
  NPYGUARD_E_EMPTY_FIELD_NAME = 24,
  NPYGUARD_E_ITEMSIZE_OVERFLOW = 25,
  NPYGUARD_E_SIZE_OVERFLOW = 26,
  NPYGUARD_E_DATA_TOO_LARGE = 27,
  NPYGUARD_E_TRUNCATED_DATA = 28,
  NPYGUARD_E_TRAILING_DATA = 29,
  NPYGUARD_E_NOT_CANONICAL = 30,
  NPYGUARD_E_BUFFER_TOO_SMALL = 31,
  NPYGUARD_E_UNSUPPORTED_FLAGS = 32,
  NPYGUARD_E_UNKNOWN_ELEMENT_TYPE = 33,
  NPYGUARD_E_BAD_ELEMENT_SIZE = 34,
  NPYGUARD_E_DATA_LENGTH_MISMATCH = 35,
  NPYGUARD_E_NOT_ZIP = 36,
  NPYGUARD_E_ARCHIVE_COMMENT = 37,
  NPYGUARD_E_AMBIGUOUS_EOCD = 38,
  NPYGUARD_E_BAD_EOCD = 39,
  NPYGUARD_E_BAD_ZIP64_EOCD = 40,
  NPYGUARD_E_TOO_MANY_MEMBERS = 41,
  NPYGUARD_E_ENTRY_COUNT_MISMATCH = 42,
  NPYGUARD_E_BAD_CENTRAL_HEADER = 43,
  NPYGUARD_E_BAD_EXTRA_FIELD = 44,
  NPYGUARD_E_ENCRYPTED_MEMBER = 45,
  NPYGUARD_E_UNSUPPORTED_METHOD = 46,
  NPYGUARD_E_UNSUPPORTED_FEATURE = 47,
  NPYGUARD_E_BAD_MEMBER_TYPE = 48,
  NPYGUARD_E_BAD_MEMBER_NAME = 49,
  NPYGUARD_E_NOT_NPY_MEMBER = 50,
  NPYGUARD_E_DUPLICATE_NAME = 51,
  NPYGUARD_E_NAME_MISMATCH = 52,
  NPYGUARD_E_ENTRY_OUT_OF_BOUNDS = 53,
  NPYGUARD_E_SIZE_MISMATCH = 54,
  NPYGUARD_E_RATIO_EXCEEDED = 55,
  NPYGUARD_E_TOTAL_SIZE_EXCEEDED = 56,
  NPYGUARD_E_PREPENDED_DATA = 57,
  NPYGUARD_E_GAP_BETWEEN_ENTRIES = 58,
  NPYGUARD_E_OVERLAPPING_ENTRIES = 59,
  NPYGUARD_E_BAD_LOCAL_HEADER = 60,
  NPYGUARD_E_HEADER_MISMATCH = 61,
  NPYGUARD_E_BAD_DATA_DESCRIPTOR = 62,
  NPYGUARD_E_ENTRY_ORDER = 63,
  NPYGUARD_E_BAD_DEFLATE = 64,
  NPYGUARD_E_CRC_MISMATCH = 65,
  NPYGUARD_E_NOT_CONVERTIBLE = 66,
  NPYGUARD_E_INVALID_ARGUMENT = 67,
  /* Not a code: keeps the enum int-sized with every int value valid. */
  NPYGUARD_E_INT_MAX_ = 0x7FFFFFFF
} npyguard_error_code;

/* The snake_case name of a code ("truncated_data"), as the command and
 * SPEC.md spell it; "ok" for 0, "unknown" for values outside the enum. */
NPYGUARD_C_API const char* npyguard_error_code_name(int code);

/* ------------------------------------------------------------------------
 * Options. Allocated by the caller and grown only at the end: always call
 * npyguard_options_init(&opts, sizeof opts) first, which records the size
 * the caller was compiled with and sets every default. The library reads
 * only the fields that fit in that size (older callers get the defaults of
 * newer fields) and refuses, with NPYGUARD_E_INVALID_ARGUMENT, a larger
 * struct whose unknown tail is not all zero (a newer caller asking for
 * something this library cannot do). A NULL options pointer means the
 * defaults. Booleans are 0 or 1. */
typedef struct npyguard_options {
  size_t struct_size;
  /* Limits (npyguard::limits). */
  uint32_t max_header_bytes; /* HEADER_LEN above it: header_too_large (default 1 MiB) */
  uint32_t max_depth;        /* nesting of lists and tuples in the header (32; at most 199) */
  uint32_t max_ndim;         /* dimensions of the shape (64) */
  uint32_t timeout_ms;       /* FIFOs, devices, streams: the longest wait (0: none) */
  uint64_t max_data_bytes;   /* nbytes above it: data_too_large (UINT64_MAX) */
  uint64_t max_members;      /* .npz: entries (65535) */
  uint64_t max_total_bytes;  /* .npz: sum of declared uncompressed sizes (4 GiB) */
  uint64_t max_ratio;        /* .npz: declared deflate ratio (1032) */
  uint64_t max_stream_bytes; /* .npz from a stream: bytes held in memory (4 GiB + 64 MiB) */
  /* Policies (npyguard::options). */
  uint8_t allow_object;        /* accept 'O' (never unpickled) (0) */
  uint8_t allow_trailing_data; /* accept bytes after the data (0) */
  uint8_t canonical;           /* the header must be np.save's bytes (0) */
  uint8_t verify;              /* .npz: read every member in full, CRC-32 (0) */
  uint8_t ra_allow_type5;      /* RawArray: element type 5 (bool, bfloat16) (1) */
  uint8_t ra_reject_metadata;  /* RawArray: refuse bytes after the data (0) */
  /* Readers (npyguard_check_reader): read only what the verdict needs, in
   * exact reads, not ahead (object storage billed per byte): a .npy's
   * preamble then its header; an .npz's end window, directory and member
   * headers. The same verdict either way. (0) */
  uint8_t minimal_reads;
} npyguard_options;

/* Sets `*opts` to the defaults and opts->struct_size to `struct_size`
 * (pass sizeof *opts). Zeroes the whole struct first. */
NPYGUARD_C_API void npyguard_options_init(npyguard_options* opts, size_t struct_size);

/* ------------------------------------------------------------------------
 * Inputs. */
typedef enum npyguard_format {
  /* By the first bytes: "\x93NUMPY" .npy, "PK\3\4" or "PK\5\6" .npz,
   * "rawarray" RawArray; anything else is validated as .npy (and is then
   * bad_magic). npyguard_check_file first takes the name's claim, as the
   * command does (SPEC.md section 9): a name ending in ".npy", ".npz" or
   * ".ra" is judged as that format alone, whatever its bytes (a zip named
   * ".npy" is bad_magic). Not for npyguard_check_fd. */
  NPYGUARD_FORMAT_DETECT = 0,
  NPYGUARD_FORMAT_NPY = 1,
  NPYGUARD_FORMAT_NPZ = 2,
  NPYGUARD_FORMAT_RA = 3,
  /* Not a format: makes every int value a valid npyguard_format in C++ too,
   * so an unknown value is refused (invalid_argument), never undefined. */
  NPYGUARD_FORMAT_INT_MAX_ = 0x7FFFFFFF
} npyguard_format;

/* An input of known size read by offset (a file, a memory range, an object
 * in storage read by range requests). `read_at` reads up to `size` bytes at
 * `offset` into `buffer` and returns how many (fewer only where the input
 * ends; never more than `size`), or on failure minus an errno value
 * (-EIO when nothing more specific applies). The library never reads errno
 * itself, never asks for 0 bytes, and never calls `read_at` after the check
 * returns. A callback must return normally (no longjmp, no exception). */
typedef struct npyguard_reader {
  size_t struct_size; /* sizeof(npyguard_reader) */
  void* context;      /* passed back to read_at */
  uint64_t size;      /* the input's size in bytes; must not change during the check */
  ptrdiff_t (*read_at)(void* context, uint64_t offset, void* buffer, size_t size);
} npyguard_reader;

/* A stream of unknown size (a pipe, a socket, an upload being received):
 * reads up to `size` bytes into `buffer`; returns how many, 0 at the end,
 * or minus an errno value (-ETIMEDOUT, -EIO, ...) on failure. Same rules as
 * read_at. */
typedef ptrdiff_t (*npyguard_read_fn)(void* context, void* buffer, size_t size);

/* ------------------------------------------------------------------------
 * Checking. Each returns a new result to pass to npyguard_result_free.
 * Only the header (and for .npz the structure and each member's header) is
 * read, never the data, except from a stream (counted, not stored), with
 * .npz verify, or to find a .npz's end in a stream (held up to
 * max_stream_bytes). */
typedef struct npyguard_result npyguard_result;

/* The whole input in memory: [data, data + size). */
NPYGUARD_C_API npyguard_result* npyguard_check_buffer(npyguard_format format, const void* data, size_t size,
                                                      const npyguard_options* opts);
/* A path: a regular file by offset, anything else (a FIFO) as a stream. */
NPYGUARD_C_API npyguard_result* npyguard_check_file(npyguard_format format, const char* path,
                                                    const npyguard_options* opts);
/* An open descriptor, never closed. The format must be given. .npz and
 * RawArray read a regular file by offset (the descriptor's offset stays);
 * .npy, and anything that is not a regular file, is read as a stream from
 * the descriptor's current offset, which moves (not rewound). */
NPYGUARD_C_API npyguard_result* npyguard_check_fd(npyguard_format format, int fd, const npyguard_options* opts);
/* Through the caller's read_at. */
NPYGUARD_C_API npyguard_result* npyguard_check_reader(npyguard_format format, const npyguard_reader* reader,
                                                      const npyguard_options* opts);
/* Through the caller's stream. */
NPYGUARD_C_API npyguard_result* npyguard_check_stream(npyguard_format format, npyguard_read_fn read, void* context,
                                                      const npyguard_options* opts);

NPYGUARD_C_API void npyguard_result_free(npyguard_result* result);

/* 1 when the input was accepted, else 0. */
NPYGUARD_C_API int npyguard_result_ok(const npyguard_result* result);
/* The format that was validated (DETECT resolved); for an argument error
 * before any format was chosen, the one asked for. */
NPYGUARD_C_API npyguard_format npyguard_result_format(const npyguard_result* result);

/* ------------------------------------------------------------------------
 * The error of a refused input: NULL when the input was accepted. Owned by
 * the result; fields may be added at the end. */
typedef struct npyguard_error {
  int code;               /* an npyguard_error_code */
  int has_offset;         /* 0: the error concerns the whole input (an unreadable file) */
  uint64_t offset;        /* 0-based from the start of the input; 0 when !has_offset */
  const char* message;    /* what and why, in words */
  const char* member;     /* .npz: the member's name (UTF-8), else NULL */
  int has_member_offset;  /* .npz: an error inside a member's .npy bytes */
  uint64_t member_offset; /* offset inside the member's uncompressed bytes */
  /* The member name's length in bytes: a refused name may hold a NUL
   * (bad_member_name), which ends the C string early. */
  size_t member_length;
  /* The npyguard_options field whose setting refused the input, spelled as
   * in npyguard_options ("max_header_bytes", "allow_object", "timeout_ms",
   * ...; static storage), or NULL when no setting can lift the error. The
   * message then ends with " (npyguard_options.FIELD)". */
  const char* option;
  /* 1 when a numeric limit refused the input: `limit` is the limit in force
   * and `actual` what the input had (for nesting and streams, which are
   * read no further than the limit, limit + 1); both 0 when has_limit is 0.
   * The table in include/npyguard/error.hpp says which for each option. */
  int has_limit;
  uint64_t limit;
  uint64_t actual;
} npyguard_error;

NPYGUARD_C_API const npyguard_error* npyguard_result_error(const npyguard_result* result);

/* ------------------------------------------------------------------------
 * .npy models: of an accepted .npy, and of each member of an accepted .npz.
 * Owned by the result. */
typedef struct npyguard_npy npyguard_npy;
typedef struct npyguard_dtype npyguard_dtype;
typedef struct npyguard_field npyguard_field;

/* The accepted .npy file's model; NULL for a refused input or another format. */
NPYGUARD_C_API const npyguard_npy* npyguard_result_npy(const npyguard_result* result);

NPYGUARD_C_API unsigned npyguard_npy_major_version(const npyguard_npy* npy);
NPYGUARD_C_API unsigned npyguard_npy_minor_version(const npyguard_npy* npy);
NPYGUARD_C_API uint32_t npyguard_npy_header_length(const npyguard_npy* npy); /* the HEADER_LEN field */
NPYGUARD_C_API uint64_t npyguard_npy_data_offset(const npyguard_npy* npy);
NPYGUARD_C_API int npyguard_npy_fortran_order(const npyguard_npy* npy);
NPYGUARD_C_API size_t npyguard_npy_ndim(const npyguard_npy* npy);
/* shape[index]; 0 when index >= ndim. */
NPYGUARD_C_API uint64_t npyguard_npy_dim(const npyguard_npy* npy, size_t index);
NPYGUARD_C_API uint64_t npyguard_npy_count(const npyguard_npy* npy);  /* product of the shape */
NPYGUARD_C_API uint64_t npyguard_npy_nbytes(const npyguard_npy* npy); /* count * itemsize */
/* 1 when the descr holds an 'O' (only with allow_object): the data is a
 * pickle of unknown length, which nbytes does not describe. */
NPYGUARD_C_API int npyguard_npy_data_is_pickle(const npyguard_npy* npy);
NPYGUARD_C_API const npyguard_dtype* npyguard_npy_dtype(const npyguard_npy* npy);

/* The descr as numpy's repr spells it ("'<f8'", "[('x', '<i4'), ...]"),
 * written as a NUL-terminated string into `buffer` of `size` bytes (cut to
 * fit when too small; nothing written when size is 0). Returns the length
 * of the whole string without its NUL, like snprintf: call with size 0 to
 * learn it. */
NPYGUARD_C_API size_t npyguard_dtype_descr(const npyguard_dtype* dtype, char* buffer, size_t size);

/* The dtype tree. The values are npyguard::dtype_kind's. */
typedef enum npyguard_dtype_kind {
  NPYGUARD_KIND_BOOL = 0,
  NPYGUARD_KIND_INT = 1,
  NPYGUARD_KIND_UINT = 2,
  NPYGUARD_KIND_FLOAT = 3,
  NPYGUARD_KIND_COMPLEX = 4,
  NPYGUARD_KIND_BYTES = 5,
  NPYGUARD_KIND_UNICODE = 6,
  NPYGUARD_KIND_VOID = 7,
  NPYGUARD_KIND_DATETIME = 8,
  NPYGUARD_KIND_TIMEDELTA = 9,
  NPYGUARD_KIND_OBJECT = 10,
  NPYGUARD_KIND_STRUCT = 11,
  /* Not a kind: keeps the enum int-sized with every int value valid. */
  NPYGUARD_KIND_INT_MAX_ = 0x7FFFFFFF
} npyguard_dtype_kind;

NPYGUARD_C_API npyguard_dtype_kind npyguard_dtype_get_kind(const npyguard_dtype* dtype);
/* '<', '>' or '|'. */
NPYGUARD_C_API char npyguard_dtype_byte_order(const npyguard_dtype* dtype);
NPYGUARD_C_API uint64_t npyguard_dtype_itemsize(const npyguard_dtype* dtype);
/* Datetime and timedelta: the unit as numpy spells it ("ns"; "generic"
 * when none) and its multiplier; "" and 1 for other kinds. */
NPYGUARD_C_API const char* npyguard_dtype_time_unit(const npyguard_dtype* dtype);
NPYGUARD_C_API uint32_t npyguard_dtype_time_multiplier(const npyguard_dtype* dtype);
/* Structured dtypes: the named fields in order (padding is not a field). */
NPYGUARD_C_API size_t npyguard_dtype_field_count(const npyguard_dtype* dtype);
/* NULL when index >= field_count. */
NPYGUARD_C_API const npyguard_field* npyguard_dtype_field(const npyguard_dtype* dtype, size_t index);

/* The field's name; its length in bytes goes to `*length` when `length` is
 * not NULL. A name may hold a NUL (numpy accepts '\x00' in a field name),
 * which ends the C string early: use the length. */
NPYGUARD_C_API const char* npyguard_field_name(const npyguard_field* field, size_t* length);
/* The title, as the name; NULL (and length 0) when the field has none. */
NPYGUARD_C_API const char* npyguard_field_title(const npyguard_field* field, size_t* length);
NPYGUARD_C_API uint64_t npyguard_field_offset(const npyguard_field* field);   /* in the enclosing struct */
NPYGUARD_C_API uint64_t npyguard_field_itemsize(const npyguard_field* field); /* element itemsize x subarray count */
/* The subarray shape (0 dims: not a subarray). */
NPYGUARD_C_API size_t npyguard_field_subarray_ndim(const npyguard_field* field);
NPYGUARD_C_API uint64_t npyguard_field_subarray_dim(const npyguard_field* field, size_t index);
NPYGUARD_C_API const npyguard_dtype* npyguard_field_dtype(const npyguard_field* field);

/* ------------------------------------------------------------------------
 * .npz archives: the members of an accepted archive in central-directory
 * order. 0 members for a refused input or another format. */
NPYGUARD_C_API size_t npyguard_result_member_count(const npyguard_result* result);
/* The member's decoded name ("x.npy") and numpy's key for it ("x"); NULL
 * when index >= member_count. */
NPYGUARD_C_API const char* npyguard_member_name(const npyguard_result* result, size_t index);
NPYGUARD_C_API const char* npyguard_member_key(const npyguard_result* result, size_t index);
/* 0 stored, 8 deflate. */
NPYGUARD_C_API unsigned npyguard_member_method(const npyguard_result* result, size_t index);
NPYGUARD_C_API uint64_t npyguard_member_compressed_size(const npyguard_result* result, size_t index);
NPYGUARD_C_API uint64_t npyguard_member_uncompressed_size(const npyguard_result* result, size_t index);
NPYGUARD_C_API uint32_t npyguard_member_crc32(const npyguard_result* result, size_t index);
/* Archive offsets of the member's local header and first stored byte. */
NPYGUARD_C_API uint64_t npyguard_member_local_header_offset(const npyguard_result* result, size_t index);
NPYGUARD_C_API uint64_t npyguard_member_data_start(const npyguard_result* result, size_t index);
/* The member's .npy model (offsets inside its uncompressed bytes). */
NPYGUARD_C_API const npyguard_npy* npyguard_member_npy(const npyguard_result* result, size_t index);
/* 1 when the archive used Zip64 records; 1 when every member was read in
 * full (verify). */
NPYGUARD_C_API int npyguard_npz_zip64(const npyguard_result* result);
NPYGUARD_C_API int npyguard_npz_verified(const npyguard_result* result);
/* Bytes of the input read to reach an accepted .npz verdict. */
NPYGUARD_C_API uint64_t npyguard_npz_bytes_read(const npyguard_result* result);

/* ------------------------------------------------------------------------
 * RawArray: the model of an accepted .ra file; NULL otherwise. Dims are in
 * file order (dims[0] varies fastest: numpy's shape = dims with order 'F'). */
typedef struct npyguard_ra npyguard_ra;

NPYGUARD_C_API const npyguard_ra* npyguard_result_ra(const npyguard_result* result);
NPYGUARD_C_API uint64_t npyguard_ra_flags(const npyguard_ra* ra);
NPYGUARD_C_API int npyguard_ra_big_endian(const npyguard_ra* ra);
/* The eltype code of the file: 0 user, 1 int, 2 uint, 3 float, 4 complex,
 * 5 bool (elbyte 1) or bfloat16 (elbyte 2). */
NPYGUARD_C_API unsigned npyguard_ra_eltype(const npyguard_ra* ra);
NPYGUARD_C_API uint64_t npyguard_ra_elbyte(const npyguard_ra* ra);
/* The type's name ("float32", "complex64", "user12", "bool", "bfloat16"),
 * written into `buffer` as npyguard_dtype_descr writes; returns its length. */
NPYGUARD_C_API size_t npyguard_ra_type_name(const npyguard_ra* ra, char* buffer, size_t size);
NPYGUARD_C_API size_t npyguard_ra_ndim(const npyguard_ra* ra);
NPYGUARD_C_API uint64_t npyguard_ra_dim(const npyguard_ra* ra, size_t index);
NPYGUARD_C_API uint64_t npyguard_ra_count(const npyguard_ra* ra);
NPYGUARD_C_API uint64_t npyguard_ra_data_offset(const npyguard_ra* ra);
NPYGUARD_C_API uint64_t npyguard_ra_data_length(const npyguard_ra* ra);
/* The metadata after the data: 1 and its offset and length, or 0 when the
 * input was a stream (reading stopped at the end of the data). */
NPYGUARD_C_API int npyguard_ra_metadata(const npyguard_ra* ra, uint64_t* offset, uint64_t* length);

#ifdef __cplusplus
}
#endif

#endif
