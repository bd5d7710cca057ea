"""npyguard's exceptions: one per rejection, with the library's code and offsets."""

# The keyword of this package for each option the library's errors name
# (error.option, spelled as in npyguard::options and npyguard::limits); the
# message names the keyword. An option with no keyword here gets no hint.
_KEYWORDS = {
    "max_header_bytes": "max_header_bytes",
    "max_depth": "max_depth",
    "max_ndim": "max_ndim",
    "max_data_bytes": "max_data_bytes",
    "max_members": "max_members",
    "max_total_bytes": "max_total_bytes",
    "max_ratio": "max_ratio",
    "allow_object": "allow_object",
    "allow_trailing_data": "allow_trailing_data",
    "canonical": "canonical",
    "verify": "verify",
    "ra_allow_type5": "allow_type5",
    "ra_reject_metadata": "reject_metadata",
    "timeout_ms": "timeout",
    "max_stream_bytes": "max_stream_bytes",
}


class NpyguardError(ValueError):
    """The input was rejected (or, as NpyguardIOError, could not be read).

    code           the error code's name, as in the command's --json ("bad_descr")
    code_value     its stable number (npyguard.ERROR_CODES[code])
    offset         0-based byte offset in the input where the problem was found, or None
                   for whole-input conditions; in an .npz archive, the archive offset
    message        what is wrong, and why
    member         the .npz member name the error is tied to, or None
    member_offset  for a .npy error inside an .npz member: the offset in the member's
                   uncompressed bytes, or None
    option         the option or limit that refused the input, as the library spells it
                   ("max_header_bytes", "allow_object", "ra_allow_type5", "timeout_ms"; the
                   --json "option" key), or None when no setting can lift the error; the
                   message then ends with this package's keyword: "(max_header_bytes=)",
                   "(allow_type5=)"
    limit          for a numeric limit: the limit in force, else None
    actual         with limit: what the input had (HEADER_LEN, the dimensions, nbytes, the
                   declared members...; limit + 1 for nesting, which is read no further)
    """

    def __init__(self, code, message, offset=None, member=None, member_offset=None, code_value=None, option=None,
                 limit=None, actual=None):
        self.code = code
        self.code_value = code_value
        self.offset = offset
        self.message = message
        self.member = member
        self.member_offset = member_offset
        self.option = option
        self.limit = limit
        self.actual = actual
        super().__init__(self._text())

    def _text(self):
        where = "" if self.offset is None else f" at byte {self.offset}"
        inside = ""
        if self.member is not None:
            inside = f" (member {self.member!r}"
            if self.member_offset is not None:
                inside += f", byte {self.member_offset} of the member"
            inside += ")"
        return f"{self.code}{where}{inside}: {self.message}"

    def __str__(self):
        return self._text()

    def __reduce__(self):
        return (
            _rebuild,
            (type(self), self.code, self.message, self.offset, self.member, self.member_offset, self.code_value,
             self.option, self.limit, self.actual),
        )


class NpyguardIOError(NpyguardError, OSError):
    """The input could not be opened or read (code "io_error"): also an OSError."""


def _rebuild(cls, code, message, offset, member, member_offset, code_value, option=None, limit=None, actual=None):
    return cls(code, message, offset, member, member_offset, code_value, option, limit, actual)


def from_native(code, code_value, offset, message, member, member_offset, option=None, limit=None, actual=None):
    """The exception for an error of the library (called by the native module): the
    library's message, which names no option, with this package's keyword for the
    option that refused the input."""
    cls = NpyguardIOError if code == "io_error" else NpyguardError
    keyword = _KEYWORDS.get(option)
    if keyword is not None:
        message = f"{message} ({keyword}=)"
    return cls(code, message, offset, member, member_offset, code_value, option, limit, actual)
