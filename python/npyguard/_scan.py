"""One verdict per file for whole trees, globs and fsspec URLs, in threads or on
a Dask cluster, reading only the bytes each verdict needs.

The report is `npyguard check -r --json`'s, file for file: the same walk
(entries sorted by name; names ending in .npy, .npz or .ra; symbolic links
inside a directory skipped; FIFOs, sockets and devices reported, never
opened), the same format detection and the same defaults as the command
(a header of up to 1 MiB, not load()'s numpy-like 10,000). What the scan adds
is how much it read: every check reads by offset with minimal reads, and
counts the reads and the bytes they returned.

Where it differs from the command: a FIFO or device named as an argument is
reported, never read (check reads it as a stream); "-" is a file named "-",
not standard input; a glob that matches nothing is a row (io_error). With a
Dask client, local paths are opened by the workers, on their file systems.
"""

import base64
import collections
import concurrent.futures
import fnmatch
import json
import os
import re
import stat
import time

import numpy as np

from . import _npyguard

#: The report's columns, in order.
COLUMNS = ("file", "format", "valid", "code", "offset", "member", "member_offset", "message", "shape", "descr",
           "nbytes", "members", "bytes_read", "reads")

#: One file's answer: the columns of the scan's report. `code`, `offset`,
#: `member`, `member_offset` and `message` are None for a valid file; `shape`,
#: `descr` and `nbytes` for a .npy or .ra (nbytes, and members, for an .npz)
#: are None for an invalid one. `bytes_read` counts the bytes its reads
#: returned and `reads` the requests made.
FileReport = collections.namedtuple("FileReport", COLUMNS)

_SUFFIXES = (".npy", ".npz", ".ra")

#: Why the listing passed over an entry (ScanListing.skipped's keys).
SKIPPED_LINK = "symbolic link"  # inside a directory, or matched by a glob: not followed
SKIPPED_NAME = "other name"  # a regular file whose name does not end in .npy, .npz or .ra (UPPER.NPY, notes.txt)
SKIPPED_SPECIAL = "special file"  # a FIFO, socket or device whose name does not end in one either
SKIPPED_REPEATED = "repeated directory"  # reached a second time (a repeated argument, a bind mount)
_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
            stat.S_IFBLK: "a block device"}
_NOT_READ = "; not opened (under -r, FIFOs, sockets and devices are reported, never read)"


def _has_suffix(name):
    return any(len(name) > len(s) and name.endswith(s) for s in _SUFFIXES)


def _format_by_name(name):
    """The format an input that cannot be read is reported as: check's guess by name."""
    for suffix, fmt in ((".npz", "npz"), (".ra", "ra")):
        if len(name) > len(suffix) and name.endswith(suffix):
            return fmt
    return "npy"


def _problem(display, message):
    """An input that could not be read at all: io_error, without an offset."""
    return ("x", display, _format_by_name(display), message)


def _has_magic(text):
    return any(c in text for c in "*?[")


def _join(directory, name):
    return directory + name if not directory or directory.endswith("/") else directory + "/" + name


# ---------------------------------------------------------------------------
# Sources


class FsspecSource:
    """A file of an fsspec file system as a source for check_source: size() and
    read_at(offset, length), each read one ranged request (fs.cat_file with
    start and end), never a cached or read-ahead block."""

    def __init__(self, fs, path, size=None):
        self.fs = fs
        self.path = path
        self._size = size

    def size(self):
        if self._size is None:
            self._size = int(self.fs.size(self.path))
        return self._size

    def read_at(self, offset, length):
        return self.fs.cat_file(self.path, start=offset, end=offset + length)

    def __repr__(self):
        return f"FsspecSource({self.fs.unstrip_protocol(self.path)!r})"


def _row(display, native):
    return FileReport(display, *native)


def check_source(source, *, name="", verify=False, **limits):
    """The FileReport of one input: a local path (str or os.PathLike; regular files
    only), or any object with size() and read_at(offset, length) returning at most
    `length` bytes (FsspecSource for fsspec file systems). Never raises for what
    the input holds or for a failed read (an Exception from read_at or size()):
    those are the report's code and message. A path that names a FIFO or a
    device is reported, never read (where `npyguard check FILE` reads it as a
    stream). KeyboardInterrupt and SystemExit from the source are raised again.

    name     how the input is called in the report, and what a name ending in .ra
             or .npz tells the format detection (for a path: the path)
    verify   .npz: read every member in full (lengths, CRC-32), in bounded memory
    limits   as for `npyguard check`: max_header_bytes (1 MiB), max_depth,
             max_ndim, max_data_bytes, allow_trailing_data, allow_object,
             canonical, max_members, max_total_bytes, max_ratio, allow_type5,
             reject_metadata
    """
    opts = _scan_options(verify=verify, **limits)
    if isinstance(source, (str, os.PathLike)):
        path = os.fsencode(os.fspath(source))
        return _row(name or os.fsdecode(path), _npyguard.scan_paths([path], opts)[0])
    if not (callable(getattr(source, "size", None)) and callable(getattr(source, "read_at", None))):
        raise TypeError(f"a source is a path (str, os.PathLike) or has size() and read_at(offset, length); "
                        f"{type(source).__name__} is neither")
    label = os.fsdecode(name) if name else ""
    return _row(label or repr(source), _npyguard.scan_source(source, os.fsencode(label), opts))


def _scan_options(verify=False, max_header_bytes=1 << 20, max_depth=32, max_ndim=64, max_data_bytes=None,
                  allow_trailing_data=False, allow_object=False, canonical=False, max_members=65535,
                  max_total_bytes=1 << 32, max_ratio=1032, allow_type5=True, reject_metadata=False):
    from . import _options  # the package's checked, cached options
    return _options(max_header_bytes, max_depth, max_ndim, max_data_bytes, allow_trailing_data, allow_object,
                    canonical, verify, max_members, max_total_bytes, max_ratio, allow_type5, reject_metadata)


# ---------------------------------------------------------------------------
# Listing: lazy, one directory held at a time (sorted, as check -r walks).


class ScanListing:
    """What a scan's listing found besides the files it checks, filled in as it
    goes (scan_rows(listing=...)).

    skipped   a Counter of the entries passed over, by reason: SKIPPED_LINK,
              SKIPPED_NAME, SKIPPED_SPECIAL, SKIPPED_REPEATED
    listed    the files listed so far (each becomes one report row)
    complete  the listing has ended: `listed` is the number of rows to come
    """

    def __init__(self):
        self.skipped = collections.Counter()
        self.listed = 0
        self.complete = False
        self.visited = set()  # identities of the directories walked: each once

    def _count(self, items):
        for item in items:
            self.listed += 1
            yield item
        self.complete = True
#
# Work items, small and picklable:
#   ("p", display, path_bytes)          a local path, checked natively
#   ("r", display, fs, path, size)      a file of an fsspec file system
#   ("x", display, format, message)     an input that cannot be read (io_error)


class _Local:
    """The local file system, by bytes paths (any name, UTF-8 or not)."""

    @staticmethod
    def display(path):
        return os.fsdecode(path)

    @staticmethod
    def item(path, size=None):
        return ("p", os.fsdecode(path), path)

    @staticmethod
    def join(directory, name):
        return directory + name if not directory or directory.endswith(b"/") else directory + b"/" + name

    @staticmethod
    def kind(path):
        """'dir', 'file' (anything else that is named is checked, as check does),
        following symbolic links as an argument does; None if it does not exist."""
        try:
            return "dir" if stat.S_ISDIR(os.stat(path or b".").st_mode) else "file"
        except OSError:
            return "file" if os.path.lexists(path) else None

    @staticmethod
    def identity(path):
        info = os.stat(path or b".")
        return (info.st_dev, info.st_ino)

    @staticmethod
    def entries(path):
        """(name, kind, size, identity) of every entry, sorted by name; kind is
        'file', 'dir', 'link' or a special file's description."""
        with os.scandir(path or b".") as listing:
            found = sorted(listing, key=lambda e: e.name)
        for entry in found:
            try:
                if entry.is_symlink():
                    yield entry.name, "link", None, None
                    continue
                if entry.is_file(follow_symlinks=False):
                    yield entry.name, "file", None, None
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError as e:
                yield entry.name, "error:cannot stat: " + os.strerror(e.errno or 0), None, None
                continue
            if stat.S_ISDIR(info.st_mode):
                yield entry.name, "dir", None, (info.st_dev, info.st_ino)
            elif stat.S_ISREG(info.st_mode):
                yield entry.name, "file", None, None
            else:
                yield entry.name, "special:" + _SPECIAL.get(stat.S_IFMT(info.st_mode), "not a regular file"), None, None

    @staticmethod
    def text(name):
        return os.fsdecode(name)


class _Fsspec:
    """An fsspec file system, listed with ls(detail=True) one directory at a time."""

    def __init__(self, fs):
        self.fs = fs

    def display(self, path):
        return self.fs.unstrip_protocol(path)

    def item(self, path, size=None):
        return ("r", self.fs.unstrip_protocol(path), self.fs, path, size)

    @staticmethod
    def join(directory, name):
        return _join(directory, name)

    def kind(self, path):
        try:
            info = self.fs.info(path)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001  the check reports why it cannot be read
            return "file"
        return "dir" if info.get("type") == "directory" else "file"

    def identity(self, path):
        return (id(self.fs), path.rstrip("/") or path)  # two file systems may share a path

    def entries(self, path):
        listed = self.fs.ls(path, detail=True)
        found = []
        for info in listed:
            full = self.fs._strip_protocol(info["name"]).rstrip("/")
            name = full.rsplit("/", 1)[-1]
            if full == path.rstrip("/") or not name:
                continue
            kind = "dir" if info.get("type") == "directory" else "file"
            found.append((name, kind, info.get("size") if kind == "file" else None, full))
        found.sort(key=lambda entry: entry[0])
        for name, kind, size, full in found:
            yield name, kind, size, (id(self.fs), full) if kind == "dir" else None

    @staticmethod
    def text(name):
        return name


def _walk(backend, top, listing):
    """check -r's walk of directory `top`, lazily: depth first, each directory's
    entries sorted by name; only names ending in .npy, .npz or .ra; symbolic
    links skipped; special files reported, never opened. What it skips is
    counted in listing.skipped, by reason."""
    stack = []

    def enter(path, identity):
        if identity in listing.visited:
            listing.skipped[SKIPPED_REPEATED] += 1  # reached twice: a bind mount or a repeated argument
            return None
        listing.visited.add(identity)
        try:
            return iter(list(backend.entries(path)))
        except Exception as e:  # noqa: BLE001  OSError, or an object store client's own error
            return iter([(None, "error:cannot read the directory: " + _reason(e), None, None)])

    try:
        first = enter(top, backend.identity(top))
    except OSError as e:
        yield _problem(backend.display(top), "cannot stat: " + os.strerror(e.errno or 0))
        return
    if first is not None:
        stack.append((top, first))
    while stack:
        directory, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        name, kind, size, identity = entry
        if name is None:  # the directory itself could not be read
            yield _problem(backend.display(directory), kind[len("error:"):])
            continue
        child = backend.join(directory, name)
        wanted = _has_suffix(backend.text(name))
        if kind == "dir":
            children = enter(child, identity)
            if children is not None:
                stack.append((child, children))
        elif kind == "file":
            if wanted:
                yield backend.item(child, size)
            else:
                listing.skipped[SKIPPED_NAME] += 1
        elif kind.startswith("special:"):
            if wanted:
                yield _problem(backend.display(child), "is " + kind[len("special:"):] + _NOT_READ)
            else:
                listing.skipped[SKIPPED_SPECIAL] += 1
        elif kind.startswith("error:"):
            yield _problem(backend.display(child), kind[len("error:"):])
        else:  # a symbolic link: skipped, as check -r skips them
            listing.skipped[SKIPPED_LINK] += 1


def _glob(backend, base, parts, listing, kind=None, entries=None):
    """Paths matching the pattern components `parts` under `base`, lazily and
    sorted per directory. '*', '?' and '[...]' match within one name (not a
    leading '.'), '**' any number of directories (symbolic links not followed).
    A match that is a directory is walked as check -r walks it; a special file
    or an unreadable entry is reported as the walk reports it, a directory
    that cannot be listed as a row of its own. `kind` is the match's entry
    kind when its directory's listing gave it."""
    if not parts:
        kind = kind or backend.kind(base) or "missing"
        if kind == "dir":
            yield from _walk(backend, base, listing)
        elif kind.startswith("special:"):
            yield _problem(backend.display(base), "is " + kind[len("special:"):] + _NOT_READ)
        elif kind.startswith("error:"):
            yield _problem(backend.display(base), kind[len("error:"):])
        elif kind == "file":
            yield backend.item(base)
        elif kind == "link":  # not followed, as in the walk
            listing.skipped[SKIPPED_LINK] += 1
        # (or a literal component that is missing)
        return
    head, rest = parts[0], parts[1:]
    text = backend.text(head)
    if not _has_magic(text):
        yield from _glob(backend, backend.join(base, head) if base or head else head, rest, listing)
        return
    if entries is None:
        try:
            entries = list(backend.entries(base))
        except Exception as e:  # noqa: BLE001  OSError, or an object store client's own error
            yield _listing_problem(backend, base, e)
            return
    if text == "**":  # iteratively: a tree deeper than Python's recursion limit is no problem
        if not rest:  # a final '**': the directory and everything under it, walked once
            yield from _glob(backend, base, rest, listing, "dir")
            return
        for directory, listed in _directories(backend, base, entries):
            if listed is None:
                yield directory  # the problem row of a directory that cannot be listed
                continue
            # The next component lists the directory again only when it is literal.
            yield from _glob(backend, directory, rest, listing, entries=listed if _has_magic(
                backend.text(rest[0])) else None)
        return
    for name, entry_kind, _, _ in entries:
        shown = backend.text(name)
        if shown.startswith(".") and not text.startswith("."):
            continue
        if not fnmatch.fnmatchcase(shown, text):
            continue
        if rest and entry_kind != "dir":
            continue
        yield from _glob(backend, backend.join(base, name), rest, listing, entry_kind)


def _glob_once(backend, base, parts, listing, pattern):
    """_glob, with a row when nothing matches (the shell would pass the pattern
    on, and check would not find it), and each match once when the pattern has
    more than one '**' (which can reach a file two ways)."""
    seen = set() if sum(backend.text(p) == "**" for p in parts) > 1 else None
    matched = False
    for item in _glob(backend, base, parts, listing):
        if seen is not None:
            if item[1] in seen:
                continue
            seen.add(item[1])
        matched = True
        yield item
    if not matched:
        yield _problem(pattern, "no file matches the pattern")


def _directories(backend, base, entries):
    """(directory, its entries) for `base` and every directory under it, depth
    first and sorted by name, without hidden names or symbolic links, lazily
    and without recursion; a directory that cannot be listed comes as a
    problem row instead (a work item), never silently skipped."""
    yield base, entries
    stack = [(base, iter(entries))]
    while stack:
        directory, listing = stack[-1]
        entry = next(listing, None)
        if entry is None:
            stack.pop()
            continue
        name, kind = entry[0], entry[1]
        if kind != "dir" or backend.text(name).startswith("."):
            continue
        child = backend.join(directory, name)
        try:
            found = list(backend.entries(child))
        except Exception as e:  # noqa: BLE001  OSError, or an object store client's own error
            yield _listing_problem(backend, child, e), None
            continue
        yield child, found
        stack.append((child, iter(found)))


def _reason(error):
    """Why a listing failed: the errno's words, or the client's exception."""
    return os.strerror(error.errno) if isinstance(error, OSError) and error.errno else \
        f"{type(error).__name__}: {error}"


def _listing_problem(backend, directory, error):
    return _problem(backend.display(directory) or ".", "cannot read the directory: " + _reason(error))


def _pattern_parts(pattern, sep):
    """The pattern's components, without empty ones, '**/**' as '**'."""
    double = b"**" if isinstance(sep, bytes) else "**"
    collapsed = []
    for part in pattern.split(sep):
        if not part or (part == double and collapsed and collapsed[-1] == double):
            continue
        collapsed.append(part)
    return collapsed


def _expand(arguments, listing):
    """Work items for paths, globs and URLs, lazily, in argument order."""
    for argument in arguments:
        text = os.fspath(argument)
        if isinstance(text, str) and "://" in text and not text.startswith("file://"):
            yield from _expand_url(text, listing)
            continue
        if isinstance(text, str) and text.startswith("file://"):
            text = text[len("file://"):]
        path = os.fsencode(text)
        kind = _Local.kind(path)
        if kind == "dir":
            yield from _walk(_Local, path, listing)
        elif kind is not None or not _has_magic(os.fsdecode(path)):
            yield _Local.item(path)  # a missing file is reported by its check
        else:
            root = b"/" if path.startswith(b"/") else b""
            yield from _glob_once(_Local, root, _pattern_parts(path[len(root):], b"/"), listing, os.fsdecode(path))


def _expand_url(url, listing):
    import fsspec  # only for URLs

    fs, path = fsspec.core.url_to_fs(url)
    backend = _Fsspec(fs)
    if not _has_magic(path):
        kind = backend.kind(path)
        if kind == "dir":
            yield from _walk(backend, path, listing)
        else:
            yield backend.item(path)
        return
    root = "/" if path.startswith("/") else ""
    yield from _glob_once(backend, root, _pattern_parts(path[len(root):], "/"), listing, url)


# ---------------------------------------------------------------------------
# Checking batches (in a thread, or as a Dask task)


def _check_batch(batch, limits):
    """(rows, seconds) for a batch of work items, in order. Runs anywhere
    npyguard is installed: on a Dask worker, the task."""
    start = time.perf_counter()
    opts = _scan_options(**limits)
    rows = []
    i = 0
    while i < len(batch):
        kind = batch[i][0]
        if kind == "p":  # a run of local paths: one native call, without the GIL
            j = i
            while j < len(batch) and batch[j][0] == "p":
                j += 1
            natives = _npyguard.scan_paths([item[2] for item in batch[i:j]], opts)
            rows.extend(FileReport(item[1], *native) for item, native in zip(batch[i:j], natives))
            i = j
            continue
        item = batch[i]
        if kind == "r":
            _, display, fs, path, size = item
            rows.append(FileReport(display, *_npyguard.scan_source(FsspecSource(fs, path, size),
                                                                   path.encode("utf-8", "surrogateescape"), opts)))
        else:
            _, display, fmt, message = item
            rows.append(FileReport(display, fmt, False, "io_error", None, None, None, message, None, None, None,
                                   None, 0, 0))
        i += 1
    return rows, time.perf_counter() - start


class _Batcher:
    """Work items in batches sized so that one takes about `seconds` to check,
    from the rate of the batches checked so far (or a fixed size)."""

    def __init__(self, items, seconds=1.0, fixed=None, largest=100_000):
        self._items = iter(items)
        self._seconds = seconds
        self._largest = largest
        self._fixed = fixed
        self._size = fixed or 16
        self._per_file = None

    def learn(self, files, seconds):
        if self._fixed or files == 0:
            return
        per_file = max(seconds, 1e-6) / files
        self._per_file = per_file if self._per_file is None else 0.5 * self._per_file + 0.5 * per_file
        self._size = int(min(self._largest, max(1, self._seconds / self._per_file)))

    def __iter__(self):
        while True:
            batch = []
            for item in self._items:
                batch.append(item)
                if len(batch) >= self._size:
                    break
            if not batch:
                return
            yield batch


def _in_threads(batcher, limits, workers):
    """Rows of each batch, in order, checked on `workers` threads; at most
    2 * workers batches in flight."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        pending = collections.deque()
        for batch in batcher:
            pending.append(pool.submit(_check_batch, batch, limits))
            while len(pending) >= 2 * workers or (pending and pending[0].done()):
                rows, seconds = pending.popleft().result()
                batcher.learn(len(rows), seconds)
                yield rows
        while pending:
            rows, seconds = pending.popleft().result()
            yield rows


def _died(item):
    display = item[1]
    return FileReport(display, item[2] if item[0] == "x" else _format_by_name(display), False, "io_error", None,
                      None, None, "not checked: every Dask worker that read it died (KilledWorker)", None, None, None,
                      None, 0, 0)


class _Parts:
    """A batch's rows by part: a list of rows once checked, or, for a part whose
    task kept killing workers, the _Parts of its single files."""

    def __init__(self, count):
        self.slots = [None] * count

    def complete(self):
        return all(s is not None and (not isinstance(s, _Parts) or s.complete()) for s in self.slots)

    def rows(self):
        for s in self.slots:
            if isinstance(s, _Parts):
                yield from s.rows()
            else:
                yield from s


def _on_cluster(client, batcher, limits):
    """Rows of each batch, in order, checked as Dask tasks. A batch whose task
    a worker's death interrupts is run again by Dask (distributed's
    allowed-failures); one that keeps killing workers (KilledWorker) is split
    into single files, and a file that still does is reported as io_error.
    Each task's result is taken once, so every file is reported once."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    window = 2 * (sum(client.nthreads().values()) or 1) + 2
    queue = as_completed()
    jobs = {}  # future -> (parts, slot, items)
    batches = collections.OrderedDict()  # batch index -> _Parts, in order
    next_index = 0
    source = iter(batcher)

    def submit(parts, slot, items):
        future = client.submit(_check_batch, items, limits, pure=False)
        jobs[future] = (parts, slot, items)
        queue.add(future)

    while True:
        while len(jobs) < window:
            batch = next(source, None)
            if batch is None:
                break
            batches[next_index] = _Parts(1)
            submit(batches[next_index], 0, batch)
            next_index += 1
        if not jobs:
            break
        future = next(queue)
        parts, slot, items = jobs.pop(future)
        try:
            rows, seconds = future.result()
            batcher.learn(len(rows), seconds)
            parts.slots[slot] = rows
        except KilledWorker:
            if len(items) == 1:
                parts.slots[slot] = [_died(items[0])]
            else:
                singles = parts.slots[slot] = _Parts(len(items))
                for k, item in enumerate(items):
                    submit(singles, k, [item])
        finally:
            future.release()
        while batches and next(iter(batches.values())).complete():
            yield list(batches.popitem(last=False)[1].rows())


def scan_rows(urls_or_globs, *, client=None, workers=None, verify=False, batch_size=None, batch_seconds=None,
              listing=None, **limits):
    """The scan's FileReports, in order, as a lazy iterator of lists (one per
    batch): what scan() and `python -m npyguard scan` are built on. A
    ScanListing passed as `listing` is filled in as the listing goes: what it
    skipped, by reason, and the number of files once it is complete."""
    if isinstance(urls_or_globs, (str, bytes, os.PathLike)):
        urls_or_globs = [urls_or_globs]
    limits = dict(limits, verify=verify)
    _scan_options(**limits)  # refuse bad limits before listing anything
    listing = ScanListing() if listing is None else listing
    items = listing._count(_expand(urls_or_globs, listing))
    if client is not None:
        # About a second per task; its files travel pickled: at most 4,000
        # (about half a megabyte) per task.
        batcher = _Batcher(items, batch_seconds or 1.0, batch_size, 4000)
    else:
        # Threads share this process: batches of about 20 ms keep them all busy
        # (a whole tree of local files would otherwise be one batch).
        batcher = _Batcher(items, batch_seconds or 0.02, batch_size, 100_000)
    if client is not None:
        return _on_cluster(client, batcher, limits)
    return _in_threads(batcher, limits, workers or os.cpu_count() or 1)


def scan(urls_or_globs, *, client=None, workers=None, verify=False, progress=False, batch_size=None,
         batch_seconds=None, **limits):
    """A pandas DataFrame with one row per file (COLUMNS) for paths, directories
    (walked as `npyguard check -r` walks them), globs ('**' for any depth) and
    fsspec URLs ("s3://bucket/uploads/", "memory://tree/**/*.npz").

    client         a distributed.Client: batches of files become tasks on its
                   cluster (workers need npyguard installed); None: this
                   process's threads (validation releases the GIL)
    workers        threads without a client (default: the CPU count)
    verify         .npz: read every member in full (CRC-32) in bounded memory;
                   otherwise no array data is read
    progress       a tqdm progress bar on standard error (with a total once
                   the listing is complete)
    batch_size     files per batch (default: sized from the rate so far so that a
                   batch takes about batch_seconds: 1 s as a Dask task, 20 ms
                   in a thread)
    limits         as for check_source (the command's defaults)

    Files are listed lazily, one directory at a time. An unreadable file is a
    row (io_error with why), never an exception. The frame's
    attrs["skipped"] counts the entries the listing passed over, by reason
    (ScanListing.skipped), and attrs["seconds"] is the time the scan took.
    """
    import pandas as pd

    start = time.monotonic()
    rows = []
    listing = ScanListing()
    bar = _progress_bar(progress)
    for batch in scan_rows(urls_or_globs, client=client, workers=workers, verify=verify, batch_size=batch_size,
                           batch_seconds=batch_seconds, listing=listing, **limits):
        rows.extend(batch)
        _advance(bar, len(batch), listing)
    if bar is not None:
        bar.close()
    frame = _frame(pd, rows)
    frame.attrs["skipped"] = dict(listing.skipped)
    frame.attrs["seconds"] = time.monotonic() - start
    return frame


def _progress_bar(enabled):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    # No total while the listing goes on (it is lazy); _advance sets it once known.
    return tqdm(unit=" files", desc="npyguard scan")


def _advance(bar, rows, listing):
    """Moves the bar on by `rows`, giving it its total once the listing is complete."""
    if bar is None:
        return
    if bar.total is None and listing.complete:
        bar.total = listing.listed
    bar.update(rows)


def skipped_summary(skipped):
    """'skipped 2 symbolic links, 1 other name' for a Counter by reason; '' for none."""
    plural = {SKIPPED_LINK: "symbolic links", SKIPPED_NAME: "other names", SKIPPED_SPECIAL: "special files",
              SKIPPED_REPEATED: "repeated directories"}
    order = (SKIPPED_LINK, SKIPPED_NAME, SKIPPED_SPECIAL, SKIPPED_REPEATED)
    why = {SKIPPED_NAME: " (not .npy/.npz/.ra)"}
    parts = [f"{skipped[r]} {r if skipped[r] == 1 else plural[r]}{why.get(r, '')}" for r in order if skipped.get(r)]
    return "skipped " + ", ".join(parts) if parts else ""


def _frame(pd, rows):
    columns = list(zip(*rows)) if rows else [()] * len(COLUMNS)
    data = {}
    for name, values in zip(COLUMNS, columns):
        if name in ("offset", "member_offset", "nbytes", "members", "bytes_read", "reads"):
            data[name] = pd.array(list(values), dtype="UInt64")
        elif name == "valid":
            data[name] = pd.array(list(values), dtype="bool")
        else:  # element by element: a column of equal-length shape tuples is not a 2-D array
            column = np.empty(len(values), dtype=object)
            for i, value in enumerate(values):
                column[i] = value
            data[name] = column
    return pd.DataFrame(data, columns=list(COLUMNS))


def report_record(row):
    """A FileReport as a JSON-ready dict: the file's name as text, with
    file_bytes (base64) when the name is not UTF-8, as `npyguard check --json`."""
    record = row._asdict()
    name = row.file
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape")
        record["file"] = raw.decode("utf-8", "backslashreplace")
        record["file_bytes"] = base64.b64encode(raw).decode("ascii")
    if row.shape is not None:
        record["shape"] = list(row.shape)
    return record


# ---------------------------------------------------------------------------
# The report's files: CSV, JSON lines, one JSON array, Parquet

#: The report's formats by the output file's suffix.
OUTPUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".json": "json", ".parquet": "parquet"}

#: CSV's columns: the report's, then file_bytes (base64), the name's exact
#: bytes whenever the file cell is not exactly the name.
CSV_COLUMNS = COLUMNS + ("file_bytes",)

# What the command escapes in a name (src/cli/text.cpp, shown_as::name): a
# backslash, C0 controls and DEL, a byte that is not UTF-8 (os.fsdecode's
# surrogate escapes U+DC80-U+DCFF), the C1 controls, the bidi controls
# (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069); and, as its JSON
# does, the line separators U+2028 and U+2029, so that each row is one line.
_ESCAPED = re.compile(r"[\\\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
_SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t"}


def _escape_one(match, backslash):
    char = match.group()
    code = ord(char)
    if char == "\\":
        return backslash
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode hands it over
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def escape_name(name):
    """A file or member name as the command prints it: a backslash is \\\\, a
    newline \\n, a tab \\t, other control bytes and each byte that is not UTF-8
    \\xNN, C1, bidi and line-separator characters \\uNNNN; nothing a terminal or
    an editor acts on is left, and the escaping can be undone."""
    return _ESCAPED.sub(lambda m: _escape_one(m, "\\\\"), name)


def escape_text(text):
    """A message or descr as the command prints it: as escape_name, except that
    a backslash stays one (descr and messages carry Python's repr escapes)."""
    return _ESCAPED.sub(lambda m: _escape_one(m, "\\"), text)


def _spreadsheet_safe(value):
    """A CSV cell that a spreadsheet will not run: text starting with =, +, -, @,
    a tab or a carriage return (a hostile file or member name) gets a leading '."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _name_bytes(name):
    return os.fsencode(name) if isinstance(name, str) else bytes(name)


def csv_record(row):
    """A FileReport as CSV cells (CSV_COLUMNS): names, messages and descr escaped
    as the command prints them, formula-like text defused, file_bytes the
    name's bytes in base64 whenever the file cell is not exactly the name."""
    cells = []
    for column, value in zip(COLUMNS, row):
        if value is None:
            cells.append("")
        elif column == "shape":
            cells.append(json.dumps(list(value)))
        elif column in ("file", "member"):
            cells.append(_spreadsheet_safe(escape_name(value)))
        elif column in ("message", "descr"):
            cells.append(_spreadsheet_safe(escape_text(value)))
        else:
            cells.append(value)
    cells.append("" if cells[0] == row.file else base64.b64encode(_name_bytes(row.file)).decode("ascii"))
    return cells


def json_line(row):
    """A FileReport as one line of JSON (report_record), ASCII only: every
    character outside printable ASCII, control and bidi characters among
    them, and DEL are \\uNNNN escapes, so the line can be printed safely and
    json.loads gives back the exact text."""
    return json.dumps(report_record(row)).replace("\x7f", "\\u007f")


class OutputError(ValueError):
    """An --output the scan cannot write: an unknown suffix, Parquet without
    pyarrow, a file that cannot be created. Raised before anything is scanned."""


def output_format(path):
    """The report's format for an output file, by its suffix (OUTPUT_FORMATS,
    in any case); OutputError for any other suffix, and for .parquet when
    pyarrow cannot be imported. Decided before anything is scanned."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    fmt = OUTPUT_FORMATS.get(suffix)
    if fmt is None:
        raise OutputError(f"{os.fsdecode(path)!r}: the suffix says the report's format: .csv, .jsonl (JSON lines), "
                          f".json (one JSON array) or .parquet; {suffix or 'no suffix'} is none of them")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError as e:
            raise OutputError(f"{os.fsdecode(path)!r}: Parquet needs pyarrow, which cannot be imported ({e}); "
                              "install it (pip install pyarrow) or write .csv, .jsonl or .json") from None
    return fmt


class ReportWriter:
    """Writes FileReports to a stream in one of OUTPUT_FORMATS' formats, as
    they come: write(rows) per batch, close() at the end (which closes the
    stream only when the writer opened it)."""

    def __init__(self, fmt, stream=None, path=None):
        self.fmt = fmt
        self._owned = stream is None
        self._rows = 0
        if fmt == "parquet":
            self._parquet = _ParquetWriter(path)
            self._stream = None
            return
        self._stream = open(path, "w", encoding="utf-8", newline="") if stream is None else stream
        if fmt == "csv":
            import csv

            self._csv = csv.writer(self._stream)
            self._csv.writerow(CSV_COLUMNS)
        elif fmt == "json":
            self._stream.write("[")

    @classmethod
    def to_file(cls, path):
        """A writer for `path`, its format from the suffix; OutputError when the
        suffix is unknown, pyarrow is missing or the file cannot be created."""
        fmt = output_format(path)
        try:
            return cls(fmt, path=path)
        except OSError as e:
            raise OutputError(f"{os.fsdecode(path)!r}: cannot write: {e.strerror or e}") from None

    def write(self, rows):
        if self.fmt == "parquet":
            self._parquet.write(rows)
        elif self.fmt == "csv":
            self._csv.writerows(csv_record(row) for row in rows)
        else:
            for row in rows:
                if self.fmt == "json":
                    self._stream.write(("\n" if self._rows == 0 else ",\n") + json_line(row))
                else:
                    self._stream.write(json_line(row) + "\n")
                self._rows += 1
        if self._stream is not None:
            self._stream.flush()

    def close(self, complete=True):
        """Ends the report; a .json array is closed only when `complete` (so
        that an interrupted scan's report does not load as a whole one)."""
        if self.fmt == "parquet":
            self._parquet.close()
            return
        if self.fmt == "json" and complete:
            self._stream.write("\n]\n" if self._rows else "]\n")
        if self._owned:
            self._stream.close()
        else:
            self._stream.flush()


class _ParquetWriter:
    """Parquet through pyarrow, one row group per batch: the report's columns
    with their types (unsigned integers, a list for shape), file as JSON's
    (text, \\xNN for bytes that are not UTF-8) and file_bytes, binary, the
    name's exact bytes when it is not UTF-8."""

    def __init__(self, path):
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._pa = pa
        text, count = pa.string(), pa.uint64()
        types = {"file": text, "format": text, "valid": pa.bool_(), "code": text, "offset": count, "member": text,
                 "member_offset": count, "message": text, "shape": pa.list_(count), "descr": text, "nbytes": count,
                 "members": count, "bytes_read": count, "reads": count, "file_bytes": pa.binary()}
        self._schema = pa.schema([(name, types[name]) for name in CSV_COLUMNS])
        self._writer = pq.ParquetWriter(os.fspath(path), self._schema)

    def write(self, rows):
        if not rows:
            return
        columns = {name: [] for name in CSV_COLUMNS}
        for row in rows:
            record = report_record(row)
            for name in COLUMNS:
                columns[name].append(record[name])
            columns["file_bytes"].append(base64.b64decode(record["file_bytes"]) if "file_bytes" in record else None)
        self._writer.write_table(self._pa.Table.from_pydict(columns, schema=self._schema))

    def close(self):
        self._writer.close()
