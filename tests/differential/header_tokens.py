"""Python tokens of a header text, the same on Python 3.11 and 3.12.

Standard library only (no numpy), so that the tokenizing can be checked
under an interpreter that has no numpy.

``tokenize.generate_tokens`` is not the same function in every Python:
3.11's is written in Python over regular expressions, 3.12's wraps the C
tokenizer, which takes a carriage return for a line end (as Python's parser
does) where 3.11's module makes it an ``ERRORTOKEN``, and which then raises
``TokenError`` ("invalid non-printable character U+000C", also U+000D and
U+0009) or glues the carriage return to the next token (``NUMBER '\\r2'``,
``OP '\\r['``) in headers numpy reads. ``tokens`` therefore tokenizes a copy
of the text that neither tokenizer reads differently and reports every token
at its place, and with its characters, in the text itself:

- every ``\\r\\n`` and every lone ``\\r`` becomes ``\\n``, which is what
  Python's parser makes of them before it reads a header (literal_eval:
  ``compile`` translates newlines), so that a comment ends and a line
  continues there as numpy sees it;
- a form feed outside string literals becomes a space (both tokenizers take
  it for white space between tokens).

Positions are (row, column) of the text split at ``\\n`` only, as
``io.StringIO(text).readline`` splits it; a token's string is the text
between its start and its end (``NL '\\r\\n'``, a string literal with a raw
carriage return inside). A lone carriage return is then an ``NL`` or
``NEWLINE`` token, where 3.11's module gave an ``ERRORTOKEN '\\r'``: both are
white space to every predicate, and both end a run of ``L`` suffixes.
"""

import bisect
import io
import tokenize


def string_spans(text):
    """(start, end) of every string literal of the text as Python's lexer
    sees it: a quote outside strings and comments opens one (a prefix letter
    before it stays outside), a backslash takes the next character with it,
    a single-quoted literal ends at its quote or at a line end (unterminated;
    numpy refuses such a text), a triple-quoted one at its triple quote.
    Comments run from '#' to the line end ('\\n' or '\\r')."""
    spans, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            while i < n and text[i] not in "\n\r":
                i += 1
            continue
        if ch not in "'\"":
            i += 1
            continue
        start = i
        quote = text[i:i + 3] if text[i:i + 3] in ("'''", '"""') else ch
        i += len(quote)
        while i < n:
            if text[i] == "\\":
                i += 2
            elif text.startswith(quote, i):
                i += len(quote)
                break
            elif len(quote) == 1 and text[i] in "\n\r":
                break
            else:
                i += 1
        spans.append((start, min(i, n)))
    return spans


def _row_starts(text):
    """Offset of the first character of each row (rows end at '\\n')."""
    starts, at = [0], 0
    for line in io.StringIO(text).readlines():
        at += len(line)
        starts.append(at)
    return starts


def tokenizer_copy(text):
    """(copy, origin): the text as ``tokens`` hands it to ``tokenize``, and
    for each index of the copy (and its end) the index of the text it came
    from."""
    inside = bytearray(len(text))
    for start, end in string_spans(text):
        inside[start:end] = b"\x01" * (end - start)
    out, origin, i, n = [], [], 0, len(text)
    while i < n:
        ch = text[i]
        origin.append(i)
        if ch == "\r":
            out.append("\n")
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        out.append(" " if ch == "\x0c" and not inside[i] else ch)
        i += 1
    origin.append(n)
    return "".join(out), origin


def _copy_tokens(copy):
    """The tokens ``tokenize`` makes of the copy, at their place in the copy,
    less the empty ``NL`` that Python 3.12 adds after a last row of white
    space without a newline (3.11 has none; it carries no text)."""
    return [tok for tok in tokenize.generate_tokens(io.StringIO(copy).readline)
            if not (tok.type == tokenize.NL and tok.string == "")]


def tokens(text):
    """Python tokens of ``text`` other than ENCODING and ENDMARKER, each at
    its (row, col) in ``text`` and with the characters of ``text`` between
    its start and end. Raises what ``tokenize`` raises (TokenError,
    SyntaxError) when it gives up."""
    copy, origin = tokenizer_copy(text)
    copy_rows, text_rows = _row_starts(copy), _row_starts(text)

    def to_text(position, is_end):
        row, col = position
        at = copy_rows[min(row, len(copy_rows)) - 1] + col
        beyond = max(at - len(copy), 0)  # tokenize ends a final NEWLINE one past the text
        index = origin[at - beyond]
        text_row = bisect.bisect_right(text_rows, index) - 1
        if text_row > 0 and (index == len(text) and not text.endswith("\n")
                             or is_end and index == text_rows[text_row]):
            text_row -= 1  # an end just after a '\n' is at the end of that row, as tokenize says
        return index, (text_row + 1, index - text_rows[text_row] + beyond)

    out = []
    for tok in _copy_tokens(copy):
        if tok.type in (tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        start, start_pos = to_text(tok.start, False)
        end, end_pos = to_text(tok.end, tok.end != tok.start)
        out.append(tokenize.TokenInfo(tok.type, text[start:end], start_pos, end_pos, tok.line))
    return out


def without_long_suffixes(text):
    """numpy's Python 2 filter (``numpy.lib.format._filter_header``) on the
    tokens of ``tokenizer_copy``: drop every ``L`` name that follows a
    number or a dropped ``L``, then ``tokenize.untokenize`` (which, as in
    numpy, respaces the white space between tokens and drops what follows
    the last one). The copy reads as the text does to Python's parser, so
    literal_eval reads from the result what numpy reads."""
    kept, last_was_number = [], False
    for tok in _copy_tokens(tokenizer_copy(text)[0]):
        if last_was_number and tok.type == tokenize.NAME and tok.string == "L":
            continue
        kept.append(tok)
        last_was_number = tok.type == tokenize.NUMBER
    return tokenize.untokenize(kept)
