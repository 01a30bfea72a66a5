"""The file gate: every path a step, plugin or tool opens resolves inside a granted root.

CONTRACT (the signatures below are what the rest of prixfixe uses):

- `FsGrant(read, write, source)`: roots as absolute paths, normalised with `realpath` when
  the grant is made (a relative root or one with a NUL byte is a `ValueError`: the grant is
  built from trusted configuration, so a bad root is a bug to report, not a path to refuse).
  `write` roots may also be read. `source` says where they came from (doctor, refusals).
- `FsGate(grant).check(path, *, write=False, step="") -> Path`: the real path (symlinks
  resolved) when it lies inside a granted root (for `write=True`, a write root) and is a
  regular file or directory, or does not exist yet (so a step can report "not found");
  else `FsRefusedError` naming the path, what is wrong and the grant. Refused: relative
  paths (callers resolve params first, e.g. `StepContext.path`), NUL bytes, symlink loops,
  anything under `/proc`, `/sys` or `/dev` (as written or once resolved, even when a root is
  `/`) or on their file systems mounted elsewhere (same device id), and special files
  (anything `lstat` does not call a regular file or a directory: devices, FIFOs, sockets).
  Hard links are not detected: a hard link inside a root is its content's path there.
- `FsGate.walk(root, pattern, *, step="") -> Iterator[Path]`: regular files under a checked,
  existing directory whose *name* matches the glob `pattern` (`fnmatchcase`), depth first,
  sorted by name within each directory. Paths are yielded under `root` as given (so
  `relative_to(root)` works), and every one passes `check`. A symlink is followed only when
  its target passes `check` (inside the granted read roots, not special); no directory is
  listed twice (its `(st_dev, st_ino)` is remembered, so symlink and bind-mount loops end);
  special files are skipped silently. Bounds: `max_depth` folders deep (32) and
  `max_entries` directory entries per walk (10,000). Going past either raises
  `FsRefusedError` rather than returning a silently partial answer.
- `FsGate.glob_dirs(pattern, *, write=False, step="") -> list[Path]`: the folders an absolute
  glob pattern names (`*`, `?`, `[...]` per component, as `glob.glob` without `recursive`: a
  name starting with `.` only where the component does), sorted, under the pattern as written.
  The fixed leading folder is checked first (for writing when `write`); a matching entry that
  is a symlink is checked as a path of its own and one outside the grant raises the refusal
  (never followed, never skipped silently); a folder reached twice is listed once and a match
  reached twice named once (`(st_dev, st_ino)`), so symlink loops end. Bounds: `max_entries`
  entries looked at in all, `max_depth` components after the first wildcard; past either,
  `FsRefusedError`.
- `FsGate.list_dir(path, *, step="", left_out=None) -> list[FsEntry]`: one directory's
  entries (by name), under the same rules as `walk` (bounded by `max_entries`); an entry
  reached through a symlink carries its checked real `target`. Given a `left_out` list, each
  entry dropped is appended to it as an `FsLeftOut` with the reason (a FIFO, socket or device,
  found by `lstat` and never opened; a symlink loop, a broken symlink, one leading outside the
  grant or to a special file, never followed), so a caller can say what it did not read.
- `FsGate.read_bytes(path, limit, *, step="") -> bytes`: a checked, existing path read for at
  most `limit` bytes (a missing one is a `StepFailure` of kind `not-found`, as for `walk`
  and `list_dir`). It is opened component by component from its granted root with
  `O_NOFOLLOW` on every component, so a symlink swapped in after the check (anywhere in the
  path) fails the open instead of being followed; and `O_NONBLOCK`, then `fstat` on the open
  descriptor: anything but a regular file (a FIFO swapped in) is refused before a byte is
  read, and never blocks.

Folders are opened the same way (a sub-folder relative to its parent's descriptor, with
`O_NOFOLLOW`). Every open is announced first, with the real path, to the observers
registered with `observe_opens` (audits and the security tests assert at the point of
effect); a folder's listing reads the descriptor whose open was announced.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from prixfixe.errors import FsRefusedError, StepFailure

#: How many folders deep `walk` goes below its root.
MAX_WALK_DEPTH = 32
#: How many directory entries one `walk` or `list_dir` looks at before it gives up.
MAX_WALK_ENTRIES = 10_000
#: Kernel interfaces, never files a step reads: refused even when a root is `/`.
SPECIAL_TREES = ("/proc", "/sys", "/dev")

# O_PATH (Linux) opens an intermediate folder for lookups only, so a folder one may traverse
# but not list still works; elsewhere O_RDONLY does the same job.
_O_LOOKUP: int = getattr(os, "O_PATH", os.O_RDONLY)
_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)

OpenObserver = Callable[[Path], None]
_open_observers: list[OpenObserver] = []


def observe_opens(observer: OpenObserver) -> None:
    """Call `observer(real_path)` just before the gate opens or lists anything, from now on."""
    _open_observers.append(observer)


def unobserve_opens(observer: OpenObserver) -> None:
    with contextlib.suppress(ValueError):
        _open_observers.remove(observer)


def _announce(real: Path) -> None:
    for observer in list(_open_observers):
        observer(real)


def _normal_root(root: str | os.PathLike[str]) -> Path:
    text = os.fspath(root)
    if "\0" in text:
        raise ValueError(f"file grant root {text!r} contains a NUL byte")
    if not os.path.isabs(text):
        raise ValueError(f"file grant root {text!r} is not an absolute path")
    return Path(os.path.realpath(text))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _special_tree(path: str) -> str | None:
    """The special tree `path` is in, as written: `..` folded, and a leading `//` (which
    normpath keeps, per POSIX) made `/`, so `//proc/self/root/...` is caught too."""
    normal = os.sep + os.path.normpath(path).lstrip(os.sep)
    return next((tree for tree in SPECIAL_TREES if _inside(normal, tree)), None)


@functools.cache
def _special_devices() -> dict[int, str]:
    """The device ids of the special trees' own file systems (procfs, sysfs, devtmpfs), so a
    copy mounted elsewhere (a bind mount inside a root) is refused too. A tree that is not
    a mount point of its own (same device as `/`) is left out, or it would refuse all of `/`."""
    try:
        top = os.stat(os.sep).st_dev
    except OSError:
        return {}
    found: dict[int, str] = {}
    for tree in SPECIAL_TREES:
        try:
            dev = os.stat(tree).st_dev
        except OSError:
            continue
        if dev != top:
            found[dev] = tree
    return found


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


@dataclass(frozen=True)
class FsGrant:
    """Roots files may be read from (`read`) and written under (`write`, readable too)."""

    read: tuple[Path, ...]
    write: tuple[Path, ...]
    source: str

    def __post_init__(self) -> None:
        # Normalised once here, so every check compares real paths with real paths.
        read = tuple(dict.fromkeys(_normal_root(p) for p in self.read))
        write = tuple(dict.fromkeys(_normal_root(p) for p in self.write))
        object.__setattr__(self, "read", read)
        object.__setattr__(self, "write", write)

    def describe(self) -> str:
        r = ", ".join(str(p) for p in self.read) or "nothing"
        w = ", ".join(str(p) for p in self.write) or "nothing"
        return f"read [{r}], write [{w}] ({self.source})"

    def roots(self, *, write: bool = False) -> tuple[Path, ...]:
        """The roots a path must lie in: write roots to write, any root to read."""
        return self.write if write else (*self.read, *self.write)


@dataclass(frozen=True)
class FsEntry:
    """One entry of a listed directory: its path (under the directory as given), and whether
    it is a directory (else a regular file); symlinks are reported as what they point to."""

    name: str
    path: Path
    is_dir: bool
    #: For an entry that is a symlink, the real path it leads to (checked); else None.
    target: Path | None = None


@dataclass(frozen=True)
class FsLeftOut:
    """An entry `list_dir` dropped (never opened, nor followed), and why."""

    name: str
    path: Path
    reason: str


class FsGate:
    """Checks every path against the grant, and opens and lists only what passes."""

    def __init__(
        self,
        grant: FsGrant,
        *,
        max_depth: int = MAX_WALK_DEPTH,
        max_entries: int = MAX_WALK_ENTRIES,
    ) -> None:
        self.grant = grant
        self.max_depth = max_depth
        self.max_entries = max_entries

    # -- refusals --------------------------------------------------------------------------

    def _refuse(
        self, path: str, problem: str, *, step: str, real: str = "", hint: str = ""
    ) -> FsRefusedError:
        """A refusal naming the step, the path (and what it resolved to), what is wrong and
        the grant. A problem ending in "the file grant" is followed by the grant directly."""
        who = f"step {step!r}: " if step else ""
        shown = f"{path!r}" + (f" (really {real!r})" if real and real != path else "")
        grant = self.grant.describe()
        if problem.endswith("file grant") or problem.endswith("file write grant"):
            text = f"{who}path {shown} {problem} {grant}"
        else:
            text = f"{who}path {shown} {problem} (file grant {grant})"
        return FsRefusedError(text + (f"; {hint}" if hint else ""), path=path, grant=grant)

    # -- check ------------------------------------------------------------------------------

    def check(self, path: str | Path, *, write: bool = False, step: str = "") -> Path:
        text = os.fspath(path)
        if "\0" in text:
            raise self._refuse(text.replace("\0", "\\0"), "contains a NUL byte", step=step)
        if not os.path.isabs(text):
            raise self._refuse(
                text,
                "is relative; the file gate takes absolute paths only",
                step=step,
                hint="resolve it against the step's folder first (StepContext.path)",
            )
        tree = _special_tree(text)
        if tree is not None:
            raise self._refuse(text, f"is under {tree}, which is never readable", step=step)
        try:
            real = os.path.realpath(text, strict=True)
        except (FileNotFoundError, NotADirectoryError):
            # Not there (yet): resolve what does exist, so a dangling symlink is judged by
            # where it points.
            real = os.path.realpath(text)
        except OSError as exc:
            problem = (
                "is a symlink loop"
                if exc.errno == errno.ELOOP
                else f"cannot be resolved ({exc.strerror or exc})"
            )
            raise self._refuse(text, problem, step=step) from None
        tree = _special_tree(real)
        if tree is not None:
            raise self._refuse(
                text, f"is under {tree}, which is never readable", step=step, real=real
            )
        if not any(_inside(real, str(root)) for root in self.grant.roots(write=write)):
            what = "write grant" if write else "grant"
            option = "fs_write" if write else "fs_read"
            raise self._refuse(
                text,
                f"is outside the file {what}",
                step=step,
                real=real,
                hint=f"grant it with [leash] {option}",
            )
        try:
            st = os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            return Path(real)
        except OSError as exc:
            raise self._refuse(
                text, f"cannot be examined ({exc.strerror or exc})", step=step, real=real
            ) from None
        mode = st.st_mode
        tree = _special_devices().get(st.st_dev)
        if tree is not None:
            raise self._refuse(
                text, f"is on the {tree} file system, which is never readable", step=step, real=real
            )
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            # A symlink here means the path changed between resolving and examining it.
            raise self._refuse(
                text, f"is {_kind(mode)}, not a file or folder", step=step, real=real
            )
        return Path(real)

    def _existing(self, path: str | Path, *, step: str) -> tuple[Path, os.stat_result]:
        real = self.check(path, step=step)
        try:
            return real, os.lstat(real)
        except OSError as exc:
            raise StepFailure(
                f"{f'step {step!r}: ' if step else ''}path {os.fspath(path)!r} does not exist",
                kind="not-found",
                path=os.fspath(path),
            ) from exc

    # -- opening ----------------------------------------------------------------------------

    def _open(self, real: Path, flags: int, *, shown: str, step: str) -> int:
        """Open a checked real path from its granted root down, one component at a time with
        `O_NOFOLLOW`: a symlink swapped into the path since the check fails the open."""
        text = str(real)
        root = max(
            (str(r) for r in self.grant.roots() if _inside(text, str(r))), key=len, default=None
        )
        if root is None:  # check() guarantees a root; a caller skipping it gets a refusal
            raise self._refuse(shown, "is outside the file grant", step=step)
        parts = [p for p in text[len(root) :].split(os.sep) if p]
        _announce(real)
        try:
            if not parts:
                return os.open(root, flags | _O_NOFOLLOW | _O_CLOEXEC)
            # Roots are real paths (resolved when granted), so no component is a symlink.
            fd = os.open(root, _O_LOOKUP | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
            try:
                for part in parts[:-1]:
                    child = os.open(
                        part, _O_LOOKUP | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd
                    )
                    os.close(fd)
                    fd = child
                    if not stat.S_ISDIR(os.fstat(fd).st_mode):
                        raise OSError(errno.ENOTDIR, "not a folder")
                return os.open(parts[-1], flags | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
            finally:
                os.close(fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                problem = "changed into a symlink or special file while being opened"
            else:
                problem = f"cannot be opened ({exc.strerror or exc})"
            raise self._refuse(shown, problem, step=step) from None

    def read_bytes(self, path: str | Path, limit: int, *, step: str = "") -> bytes:
        if limit < 0:
            raise ValueError(f"read_bytes limit must be >= 0, not {limit}")
        real, _ = self._existing(path, step=step)
        shown = os.fspath(path)
        # O_NONBLOCK: a FIFO swapped in after the check opens at once instead of hanging.
        fd = self._open(real, os.O_RDONLY | _O_NONBLOCK, shown=shown, step=step)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                what = "a folder" if stat.S_ISDIR(mode) else _kind(mode)
                raise self._refuse(shown, f"is {what}, not a regular file", step=step)
            chunks: list[bytes] = []
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 16))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    # -- listing ----------------------------------------------------------------------------

    def _entries(
        self,
        fd: int,
        real: Path,
        counter: list[int],
        *,
        shown: str,
        step: str,
        dropped: Callable[[str, str], None] | None = None,
    ) -> list[tuple[str, os.stat_result, Path | None]]:
        """The entries of the open directory `fd` (really `real`), sorted by name, that are
        regular files, directories, or symlinks whose target passes `check` (with that
        target's real path); special files and refused or dangling symlinks are dropped, each
        told to `dropped(name, reason)` when given. `counter[0]` counts entries across a whole
        walk. (Its open was announced.)"""
        drop = dropped or (lambda name, reason: None)
        raw: list[os.DirEntry[str]] = []
        with os.scandir(fd) as it:
            for entry in it:
                # Counted while listing, so a huge folder is never read in full.
                counter[0] += 1
                if counter[0] > self.max_entries:
                    raise self._refuse(
                        shown,
                        f"holds more than {self.max_entries} entries, the most the file gate "
                        "looks at in one walk",
                        step=step,
                        hint="point the step at a smaller folder",
                    )
                raw.append(entry)
        kept: list[tuple[str, os.stat_result, Path | None]] = []
        for entry in sorted(raw, key=lambda e: e.name):
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone since listed
            tree = _special_devices().get(st.st_dev)
            if tree is not None:  # a /proc, /sys or /dev mounted inside the root
                drop(entry.name, f"on the {tree} file system, which is never read")
            elif stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                kept.append((entry.name, st, None))
            elif not stat.S_ISLNK(st.st_mode):  # known by lstat alone: a FIFO is never opened
                drop(entry.name, f"{_kind(st.st_mode)}, not a file or folder (never opened)")
            else:
                try:
                    target = self.check(real / entry.name, step=step)
                    target_st = os.stat(target)
                except (FsRefusedError, OSError):
                    # escapes the grant, is special, loops or dangles
                    drop(entry.name, self._link_problem(real / entry.name))
                    continue
                if stat.S_ISREG(target_st.st_mode) or stat.S_ISDIR(target_st.st_mode):
                    kept.append((entry.name, target_st, target))
                else:  # swapped for a special file since checked
                    drop(entry.name, "a symlink to a special file (not followed)")
        return kept

    def _link_problem(self, link: Path) -> str:
        """Why the symlink `link` (refused by `check`) is not followed, in a few words."""
        try:
            real = os.path.realpath(link, strict=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a symlink loop"
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return "a broken symlink (what it points to does not exist)"
            return f"a symlink that cannot be resolved ({exc.strerror or exc})"
        if _special_tree(real) is None and not any(
            _inside(real, str(root)) for root in self.grant.roots()
        ):
            return "a symlink that leads outside the file grant (not followed)"
        return "a symlink to a special file (not followed)"

    def _folder(self, path: str | Path, *, step: str) -> Path:
        real, st = self._existing(path, step=step)
        if not stat.S_ISDIR(st.st_mode):
            raise self._refuse(os.fspath(path), "is not a folder", step=step, real=str(real))
        return real

    def list_dir(
        self, path: str | Path, *, step: str = "", left_out: list[FsLeftOut] | None = None
    ) -> list[FsEntry]:
        real = self._folder(path, step=step)
        shown = os.fspath(path)
        base = Path(path)

        def dropped(name: str, reason: str) -> None:
            if left_out is not None:
                left_out.append(FsLeftOut(name, base / name, reason))

        fd = self._open(real, os.O_RDONLY | _O_DIRECTORY, shown=shown, step=step)
        try:
            entries = self._entries(fd, real, [0], shown=shown, step=step, dropped=dropped)
        finally:
            os.close(fd)
        return [
            FsEntry(name, base / name, stat.S_ISDIR(s.st_mode), target)
            for name, s, target in entries
        ]

    def walk(self, root: str | Path, pattern: str, *, step: str = "") -> Iterator[Path]:
        # Checked now, so a refusal is raised by the call, not by the first next().
        real = self._folder(root, step=step)
        return self._walk_from(real, _Walk(Path(root), pattern, os.fspath(root), step))

    def _walk_from(self, real: Path, walk: _Walk) -> Iterator[Path]:
        fd = self._open(real, os.O_RDONLY | _O_DIRECTORY, shown=walk.shown, step=walk.step)
        yield from self._walk(fd, real, walk.logical, 0, walk)

    def _walk(self, fd: int, real: Path, logical: Path, depth: int, walk: _Walk) -> Iterator[Path]:
        """Walk the open directory `fd` (closed here), found at `logical`, really `real`."""
        try:
            dir_st = os.fstat(fd)
            key = (dir_st.st_dev, dir_st.st_ino)
            if key in walk.seen:
                return  # reached again through a symlink or bind mount
            walk.seen.add(key)
            if depth > self.max_depth:
                raise self._refuse(
                    walk.shown,
                    f"has folders more than {self.max_depth} deep, the deepest the file gate walks",
                    step=walk.step,
                    hint="point the step at a smaller folder",
                )
            entries = self._entries(fd, real, walk.counter, shown=walk.shown, step=walk.step)
            for name, st, target in entries:
                if stat.S_ISREG(st.st_mode):
                    if fnmatchcase(name, walk.pattern):
                        yield logical / name
                elif (st.st_dev, st.st_ino) not in walk.seen:
                    child = self._open_child(fd, real, name, target, walk)
                    if child is not None:
                        yield from self._walk(*child, logical / name, depth + 1, walk)
        finally:
            os.close(fd)

    def _open_child(
        self, fd: int, real: Path, name: str, target: Path | None, walk: _Walk
    ) -> tuple[int, Path] | None:
        """Open sub-folder `name` of the open folder `fd` for listing: a plain one relative to
        `fd` without following a symlink, a symlinked one (already checked) at its target."""
        if target is not None:
            flags = os.O_RDONLY | _O_DIRECTORY
            try:
                return self._open(target, flags, shown=walk.shown, step=walk.step), target
            except FsRefusedError:
                return None
        _announce(real / name)
        try:
            flags = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
            return os.open(name, flags, dir_fd=fd), real / name
        except OSError:
            return None  # unreadable, or swapped for something else since listed

    # -- globbing ---------------------------------------------------------------------------

    def glob_dirs(self, pattern: str | Path, *, write: bool = False, step: str = "") -> list[Path]:
        """The folders an absolute glob pattern names, under `walk`'s bounds."""
        text = os.fspath(pattern)
        parts = Path(text).parts
        fixed = next((i for i, p in enumerate(parts) if _has_magic(p)), len(parts))
        prefix = Path(*parts[:fixed]) if fixed else Path(text)
        rest = parts[fixed:]
        real = self.check(prefix, write=write, step=step)
        if not rest:
            return [prefix] if real.is_dir() else []
        if len(rest) > self.max_depth:
            raise self._refuse(
                text,
                f"has more than {self.max_depth} parts after its first wildcard, the deepest "
                "the file gate walks",
                step=step,
            )
        if not real.is_dir():
            return []
        glob = _Walk(prefix, text, text, step)
        level: list[tuple[Path, Path]] = [(prefix, real)]
        for part in rest:
            found: list[tuple[Path, Path]] = []
            for logical, folder in level:
                found += self._glob_folder(folder, logical, part, glob, write)
            level = found
        matched: dict[tuple[int, int], Path] = {}
        for logical, folder in level:
            st = os.stat(folder)
            matched.setdefault((st.st_dev, st.st_ino), logical)
        return sorted(matched.values())

    def _glob_folder(
        self, real: Path, logical: Path, part: str, glob: _Walk, write: bool
    ) -> list[tuple[Path, Path]]:
        """The sub-folders of folder `real` (found at `logical`) whose names match `part`, as
        (logical path, real path); none when `real` was listed before in this glob."""
        try:
            fd = self._open(real, os.O_RDONLY | _O_DIRECTORY, shown=glob.shown, step=glob.step)
        except FsRefusedError:
            return []  # gone or swapped since it was found
        try:
            dir_st = os.fstat(fd)
            key = (dir_st.st_dev, dir_st.st_ino)
            if key in glob.seen:
                return []  # reached again through a symlink or bind mount
            glob.seen.add(key)
            names: list[str] = []
            with os.scandir(fd) as it:
                for entry in it:
                    glob.counter[0] += 1
                    if glob.counter[0] > self.max_entries:
                        raise self._refuse(
                            glob.shown,
                            f"looks at more than {self.max_entries} entries, the most the file "
                            "gate looks at in one walk",
                            step=glob.step,
                            hint="use a narrower pattern",
                        )
                    if fnmatchcase(entry.name, part) and (
                        part.startswith(".") or not entry.name.startswith(".")
                    ):
                        names.append(entry.name)
            out: list[tuple[Path, Path]] = []
            for name in sorted(names):
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue  # gone since listed
                if st.st_dev in _special_devices():
                    continue
                if stat.S_ISDIR(st.st_mode):
                    out.append((logical / name, real / name))
                elif stat.S_ISLNK(st.st_mode):
                    # A match that leads elsewhere is checked as a path of its own: one
                    # outside the grant is refused, not followed and not skipped silently.
                    target = self.check(logical / name, write=write, step=glob.step)
                    if target.is_dir():
                        out.append((logical / name, target))
            return out
        finally:
            os.close(fd)


def _has_magic(part: str) -> bool:
    return any(c in part for c in "*?[")


@dataclass
class _Walk:
    """One walk's settings and running state."""

    logical: Path
    pattern: str
    shown: str
    step: str
    seen: set[tuple[int, int]] = field(default_factory=set)
    #: Entries looked at so far (a list, so `_entries` can count in place).
    counter: list[int] = field(default_factory=lambda: [0])
