"""npyguard's exceptions: one per rejection, with the library's code and offsets."""


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
    """

    def __init__(self, code, message, offset=None, member=None, member_offset=None, code_value=None):
        self.code = code
        self.code_value = code_value
        self.offset = offset
        self.message = message
        self.member = member
        self.member_offset = member_offset
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
            (type(self), self.code, self.message, self.offset, self.member, self.member_offset, self.code_value),
        )


class NpyguardIOError(NpyguardError, OSError):
    """The input could not be opened or read (code "io_error"): also an OSError."""


def _rebuild(cls, code, message, offset, member, member_offset, code_value):
    return cls(code, message, offset, member, member_offset, code_value)


def from_native(code, code_value, offset, message, member, member_offset):
    """The exception for an error of the library (called by the native module)."""
    cls = NpyguardIOError if code == "io_error" else NpyguardError
    return cls(code, message, offset, member, member_offset, code_value)
