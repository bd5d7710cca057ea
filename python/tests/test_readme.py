"""The README's examples run: each ```python block is executed, and the upload
guard it defines accepts a good upload and turns a bad one into the caller's
own error; each command it shows prints what it shows."""

import io
import os
import re
import shutil
import subprocess

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


# ---------------------------------------------------------------------------
# The command's examples: every `$ npyguard ...` line the README shows is run
# (in a scratch directory holding examples/ and the golden file canon's
# example uses) and must print exactly the lines shown under it; the Quick
# start's first command must print the block that follows it.

TOOL = os.environ.get("NPYGUARD_TOOL")


def fenced_blocks(text):
    """[(language, body)] of the ``` blocks, in order."""
    blocks, language, body = [], None, None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if body is None:
                language, body = line[3:].strip(), []
            else:
                blocks.append((language, "".join(body)))
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def command_examples():
    """[(command, expected output)] in README order."""
    blocks = fenced_blocks((SOURCE_DIR / "README.md").read_text())
    found = []
    for (language, body), (_, after) in zip(blocks, blocks[1:] + [("", "")]):
        quick = re.search(r"&& build/quick/(npyguard check [^\n]*)$", body, re.M)
        if language == "sh" and quick:  # the Quick start's build-and-run command: its output follows
            found.append((quick.group(1), after))
        elif language == "" and body.startswith("$ npyguard "):
            found.extend(re.findall(r"^\$ (.*?)\n(.*?)(?=^\$ |\Z)", body, re.S | re.M))
    return found


def test_the_readme_commands_print_what_it_shows(tmp_path):
    if not TOOL:
        pytest.skip("NPYGUARD_TOOL (the command) is not set")
    shutil.copytree(SOURCE_DIR / "examples", tmp_path / "examples")
    golden = tmp_path / "tests" / "golden" / "files"
    golden.mkdir(parents=True)
    shutil.copy(SOURCE_DIR / "tests" / "golden" / "files" / "legacy_v2_small_header.npy", golden)
    examples = command_examples()
    assert len(examples) >= 10 and all(command.startswith("npyguard ") for command, _ in examples)
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(TOOL)) + os.pathsep + os.environ["PATH"])
    differ = []
    for command, expected in examples:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=60)
        if done.stdout.decode() != expected:
            differ.append(f"$ {command}\n--- the README shows\n{expected}--- it prints\n{done.stdout.decode()}")
    assert not differ, "\n".join(differ)
