"""The README's Python examples run: each ```python block is executed, and the
upload guard it defines accepts a good upload and turns a bad one into the
caller's own error."""

import io
import re

import numpy as np
import pytest

from conftest import SOURCE_DIR


class BadRequest(Exception):
    pass


def python_blocks():
    text = (SOURCE_DIR / "README.md").read_text()
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_the_upload_guard_runs():
    blocks = python_blocks()
    assert blocks
    names = {"BadRequest": BadRequest}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), names)
    receive = names["receive"]
    out = io.BytesIO()
    np.save(out, np.arange(4.0))
    assert receive(out.getvalue()).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(BadRequest, match="rejected: trailing_data"):
        receive(out.getvalue() + b"PK\x03\x04")
