"""What npyguard.check* return: Header (a .npy file or .npz member), Member,
Archive and RaHeader, built from the native module's tuples."""

import numpy as np


def dtype_from_spec(spec):
    """The numpy dtype of a native dtype spec: a type string, or a struct.

    A struct is built the way numpy.lib.format.descr_to_dtype builds it:
    names, formats, offsets, titles and itemsize, so padding stays padding.
    """
    if type(spec) is str:
        return np.dtype(spec)
    _, names, formats, offsets, titles, itemsize = spec
    built = []
    for format_spec in formats:
        if type(format_spec) is tuple and len(format_spec) == 2 and type(format_spec[1]) is tuple:
            built.append(np.dtype((dtype_from_spec(format_spec[0]), format_spec[1])))
        else:
            built.append(dtype_from_spec(format_spec))
    return np.dtype({"names": names, "formats": built, "offsets": offsets, "titles": titles, "itemsize": itemsize})


class _Model:
    """Equality, hashing and repr by the fields a model shows."""

    __slots__ = ()
    _shown = ()

    def _fields(self):
        return tuple(getattr(self, name) for name in self._shown)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{type(self).__name__}({shown})"


class Header(_Model):
    """The validated model of a .npy file (or of an .npz member's .npy bytes).

    version        (major, minor): (1, 0), (2, 0) or (3, 0)
    shape          tuple of ints
    fortran_order  bool
    descr          numpy's repr of the header's descr: "'<f4'", "[('a', '<i4'), ...]"
    dtype          the numpy dtype (built on first use)
    itemsize       bytes per element
    data_offset    where the data starts (preamble + header)
    nbytes         bytes of array data (count * itemsize)
    count          elements (product of shape; 1 for a scalar)
    header_length  the HEADER_LEN field
    data_is_pickle the dtype holds objects (only with allow_object=True): the data is a
                   pickle npyguard never reads, and nbytes does not describe it
    """

    __slots__ = ("version", "shape", "fortran_order", "descr", "itemsize", "data_offset", "nbytes", "count",
                 "header_length", "data_is_pickle", "_spec", "_dtype")

    def __init__(self, model):
        (major, minor, self.header_length, self.data_offset, self.fortran_order, self.shape, self.count,
         self.nbytes, self.itemsize, self.descr, self._spec, self.data_is_pickle) = model
        self.version = (major, minor)
        self._dtype = None

    @property
    def dtype(self):
        if self._dtype is None:
            self._dtype = dtype_from_spec(self._spec)
        return self._dtype

    _shown = ("version", "shape", "fortran_order", "descr", "itemsize", "data_offset", "nbytes", "count",
              "header_length")

    def _fields(self):
        return super()._fields() + (self.data_is_pickle,)


class Member(Header):
    """An .npz member: its .npy model (Header) and where it sits in the archive.

    name               the member's name in the archive ("a.npy")
    key                the name np.load serves it under ("a")
    compression        "stored" or "deflate"
    compressed_size    bytes in the archive
    uncompressed_size  bytes of the member's .npy file
    data_start         archive offset of the member's first (compressed) byte
    crc32              the CRC-32 of the member's .npy bytes the central directory declares
    """

    __slots__ = ("name", "key", "compression", "compressed_size", "uncompressed_size", "data_start", "crc32")

    def __init__(self, model):
        name, key, method, compressed, uncompressed, data_start, npy, self.crc32 = model
        super().__init__(npy)
        self.name = name
        self.key = key
        self.compression = "deflate" if method == 8 else "stored"
        self.compressed_size = compressed
        self.uncompressed_size = uncompressed
        self.data_start = data_start

    _shown = ("name", "key", "compression", "compressed_size", "uncompressed_size", "data_start") + Header._shown


class Archive(dict):
    """An accepted .npz archive: a dict of Member models keyed like np.load(...).files,
    in the archive's order, with the archive's own facts as attributes.

    size        bytes of the archive
    zip64       Zip64 end records present
    verified    every member was read in full (verify=True)
    bytes_read  bytes read from the input to reach the verdict
    members     the Member models in central-directory order
    """

    def __init__(self, model):
        self.size, self.zip64, self.verified, self.bytes_read, members = model
        self.members = [Member(m) for m in members]
        super().__init__((m.key, m) for m in self.members)

    def __repr__(self):
        return (f"Archive(size={self.size}, zip64={self.zip64}, verified={self.verified}, "
                f"bytes_read={self.bytes_read}, members={list(self)!r})")


class RaHeader(_Model):
    """The validated model of a RawArray (.ra) file.

    flags            the flags field (0 or 1)
    big_endian       flags bit 0: the data elements are big-endian
    eltype           the element type code (0 user, 1 int, 2 uint, 3 float, 4 complex, 5 bool/bfloat16)
    type_name        "float32", "int16", "user12", "bool", "bfloat16", ...
    elbyte           bytes per element
    dims             dims in file order (dims[0] varies fastest)
    shape            numpy's shape of the array: dims, in Fortran order
    count            elements
    data_offset      48 + 8 * ndims
    nbytes           the data length field (count * elbyte)
    metadata_offset  where the bytes after the data start (None for a stream)
    metadata_length  how many there are (never read)
    dtype            the numpy dtype load_ra uses, or None when numpy has none (user types,
                     bfloat16, 16-byte integers, 4-byte complex, more than 32 dims)
    """

    __slots__ = ("flags", "big_endian", "eltype", "type_name", "elbyte", "dims", "count", "data_offset", "nbytes",
                 "metadata_offset", "metadata_length", "_spec", "_refusal", "_dtype")

    def __init__(self, model):
        (self.flags, self.big_endian, self.eltype, self.type_name, self.elbyte, self.dims, self.count,
         self.data_offset, self.nbytes, self.metadata_offset, self.metadata_length, self._spec,
         self._refusal) = model
        self._dtype = None

    @property
    def shape(self):
        return self.dims

    @property
    def dtype(self):
        if self._dtype is None and self._spec is not None:
            self._dtype = dtype_from_spec(self._spec)
        return self._dtype

    _shown = ("flags", "big_endian", "eltype", "type_name", "elbyte", "dims", "count", "data_offset", "nbytes",
              "metadata_offset", "metadata_length")
