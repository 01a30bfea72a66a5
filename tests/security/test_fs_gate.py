"""The file gate on real files, asserted where it would take effect.

Two witnesses record every open and listing: the gate's own open observer (called with the
real path just before each open or listing) and an audit hook on CPython's `open`,
`os.scandir` and `os.listdir` events, below anything the gate believes. A refusal must come
with nothing opened outside the root, not just with the right message.

The gate opens component by component from its root with `dir_fd`, so the audit hook sees the
root's absolute path and then bare names; `Effects.assert_confined` accepts exactly that.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import pytest

from prixfixe.errors import FsRefusedError, StepFailure
from prixfixe.leash import fs as fs_module
from prixfixe.leash.fs import (
    MAX_WALK_DEPTH,
    MAX_WALK_ENTRIES,
    FsGate,
    FsGrant,
    observe_opens,
    unobserve_opens,
)

T = TypeVar("T")

# -- witnesses --------------------------------------------------------------------------------

_AUDITED = {"open", "os.scandir", "os.listdir"}
_sinks: list[list[tuple[str, object]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Audit hooks cannot be removed: this one records only while a test holds `effects()`.
    if _sinks and event in _AUDITED:
        target = args[0] if args else None
        if isinstance(target, bytes):
            target = os.fsdecode(target)
        elif isinstance(target, os.PathLike):
            target = os.fspath(target)
        for sink in _sinks:
            sink.append((event, target))


sys.addaudithook(_audit)


@dataclass
class Effects:
    """What was opened or listed while recording: audit events and observed real paths."""

    audit: list[tuple[str, object]] = field(default_factory=list)
    observed: list[Path] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return bool(self.audit or self.observed)

    def names(self) -> set[str]:
        """Every path component any open or listing named."""
        out: set[str] = set()
        for _, target in self.audit:
            if isinstance(target, str):
                out.update(p for p in target.split(os.sep) if p)
        for path in self.observed:
            out.update(path.parts)
        return out

    def assert_confined(self, root: Path, *, never: tuple[str, ...] = ()) -> None:
        """Everything opened lies inside `root`: observed real paths are under it, absolute
        audited paths are under it, relative ones are single names (opened against a folder
        the gate already holds), and none of the `never` names was touched."""
        real = Path(os.path.realpath(root))
        for path in self.observed:
            assert path == real or real in path.parents, f"opened {path} outside {real}"
        for event, target in self.audit:
            if isinstance(target, str):
                if os.path.isabs(target):
                    inside = Path(target) == real or real in Path(target).parents
                    assert inside, f"{event} {target} outside {real}"
                else:
                    assert os.sep not in target, f"{event} of a multi-part relative {target}"
                    assert target not in ("..", "."), f"{event} of {target}"
            else:
                assert isinstance(target, int), f"{event} of {target!r}"  # a held folder fd
        touched = self.names() & set(never)
        assert not touched, f"touched {touched}"


@contextlib.contextmanager
def effects() -> Iterator[Effects]:
    seen = Effects()
    _sinks.append(seen.audit)
    observe_opens(seen.observed.append)
    try:
        yield seen
    finally:
        unobserve_opens(seen.observed.append)
        _sinks.remove(seen.audit)


def within(seconds: float, fn: Callable[[], T]) -> T:
    """`fn()` in a worker thread, failing the test if it takes longer than `seconds` (the
    thread is abandoned, so a hang fails the test instead of freezing the run)."""

    async def go() -> T:
        with anyio.fail_after(seconds):
            return await anyio.to_thread.run_sync(fn, abandon_on_cancel=True)

    return anyio.run(go)


def gate(*read: Path, write: tuple[Path, ...] = (), **bounds: int) -> FsGate:
    return FsGate(FsGrant(tuple(read), write, "the paths configured steps name"), **bounds)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A granted folder with a file and a sub-folder; `outside/` next to it holds a secret."""
    granted = tmp_path.resolve() / "granted"
    (granted / "lane").mkdir(parents=True)
    (granted / "task.md").write_text("# inside\n")
    (granted / "lane" / "deep.md").write_text("# deep\n")
    outside = tmp_path.resolve() / "outside"
    (outside / "hidden").mkdir(parents=True)
    (outside / "outside-secret.md").write_text("private\n")
    (outside / "hidden" / "outside-deep.md").write_text("private\n")
    return granted


NEVER = ("outside", "outside-secret.md", "hidden", "outside-deep.md")


def refused(fn: Callable[[], object]) -> FsRefusedError:
    with pytest.raises(FsRefusedError) as info:
        fn()
    assert info.value.kind == "refused"
    return info.value


# -- inside the root ---------------------------------------------------------------------------


def test_a_file_inside_the_root_is_checked_to_its_real_path_and_read(root: Path) -> None:
    fs = gate(root)
    assert fs.check(root / "lane" / ".." / "task.md") == root / "task.md"
    with effects() as seen:
        assert fs.read_bytes(root / "task.md", 100) == b"# inside\n"
    seen.assert_confined(root, never=NEVER)
    assert seen.observed == [root / "task.md"]


def test_read_bytes_reads_at_most_the_limit(root: Path) -> None:
    (root / "big.md").write_bytes(b"x" * 200_000)
    fs = gate(root)
    assert fs.read_bytes(root / "big.md", 5) == b"xxxxx"
    assert len(fs.read_bytes(root / "big.md", 150_000)) == 150_000
    assert fs.read_bytes(root / "big.md", 0) == b""


def test_walk_yields_matching_files_depth_first_sorted_under_the_root_as_given(
    root: Path,
) -> None:
    (root / "b.md").write_text("b")
    (root / "a.txt").write_text("a")
    (root / "lane" / "sub").mkdir()
    (root / "lane" / "sub" / "z.md").write_text("z")
    fs = gate(root)
    given = root / "lane" / ".."  # yielded under the root as given, so relative_to works
    with effects() as seen:
        found = list(fs.walk(given, "*.md"))
    assert found == [
        given / "b.md",
        given / "lane/deep.md",
        given / "lane/sub/z.md",
        given / "task.md",
    ]
    seen.assert_confined(root, never=NEVER)


def test_list_dir_reports_files_and_folders_by_name(root: Path) -> None:
    entries = gate(root).list_dir(root)
    assert [(e.name, e.is_dir) for e in entries] == [("lane", True), ("task.md", False)]
    assert entries[0].path == root / "lane"


def test_a_missing_path_passes_check_but_cannot_be_read_walked_or_listed(root: Path) -> None:
    fs = gate(root)
    missing = root / "nowhere" / "board"
    assert fs.check(missing) == missing  # so a step can say "not found" itself
    with effects() as seen:
        for attempt in (
            lambda: fs.read_bytes(missing, 10),
            lambda: fs.walk(missing, "*"),
            lambda: fs.list_dir(missing),
        ):
            with pytest.raises(StepFailure) as info:
                attempt()
            assert info.value.kind == "not-found"
            assert str(missing) in str(info.value)
    assert not seen.anything


def test_a_symlink_inside_the_root_pointing_inside_is_followed(root: Path) -> None:
    (root / "alias.md").symlink_to(root / "lane" / "deep.md")
    (root / "lane-link").symlink_to(root / "lane", target_is_directory=True)
    fs = gate(root)
    assert fs.check(root / "alias.md") == root / "lane" / "deep.md"
    with effects() as seen:
        assert fs.read_bytes(root / "alias.md", 100) == b"# deep\n"
        found = list(fs.walk(root, "*.md"))
    # lane-link is the lane folder again: listed once, under whichever name came first.
    assert found == [root / "alias.md", root / "lane/deep.md", root / "task.md"]
    seen.assert_confined(root, never=NEVER)


def test_grant_roots_are_resolved_and_must_be_absolute(root: Path, tmp_path: Path) -> None:
    (tmp_path / "root-link").symlink_to(root, target_is_directory=True)
    grant = FsGrant((tmp_path / "root-link",), (tmp_path / "x" / "..",), "test")
    assert grant.read == (root,)
    assert grant.write == (tmp_path.resolve(),)
    with pytest.raises(ValueError, match="not an absolute path"):
        FsGrant((Path("relative/board"),), (), "test")


# -- out of the root ---------------------------------------------------------------------------


def test_dot_dot_traversal_out_of_the_root_is_refused_and_nothing_is_opened(root: Path) -> None:
    fs = gate(root)
    sneaky = root / ".." / ".." / ".." / ".." / ".." / "etc" / "passwd"
    with effects() as seen:
        refused(lambda: fs.check(sneaky))
        refused(lambda: fs.read_bytes(root / ".." / "outside" / "outside-secret.md", 100))
        refused(lambda: fs.walk(root / ".." / "outside", "*"))
        refused(lambda: fs.list_dir(root / ".."))
    assert not seen.anything


def test_an_absolute_path_outside_every_root_is_refused_naming_path_grant_and_step(
    root: Path,
) -> None:
    fs = gate(root)
    with effects() as seen:
        error = refused(lambda: fs.check("/etc", step="board"))
    assert not seen.anything
    assert str(error) == (
        f"step 'board': path '/etc' is outside the file grant read [{root}], write [nothing] "
        "(the paths configured steps name); grant it with [leash] fs_read"
    )
    assert error.path == "/etc"
    assert error.grant == fs.grant.describe()


def test_a_symlinked_file_escaping_the_root_is_refused_and_its_target_never_opened(
    root: Path,
) -> None:
    link = root / "lane" / "leak.md"
    link.symlink_to(root.parent / "outside" / "outside-secret.md")
    fs = gate(root)
    with effects() as seen:
        error = refused(lambda: fs.check(link, step="board"))
        refused(lambda: fs.read_bytes(link, 100))
        found = list(fs.walk(root, "*.md"))
    assert "really" in str(error)
    assert "outside-secret.md" in str(error)
    assert link not in found
    assert found == [root / "lane/deep.md", root / "task.md"]
    seen.assert_confined(root, never=NEVER)


def test_a_symlinked_folder_escaping_the_root_is_refused_and_never_listed(root: Path) -> None:
    (root / "lane" / "door").symlink_to(root.parent / "outside", target_is_directory=True)
    fs = gate(root)
    with effects() as seen:
        refused(lambda: fs.walk(root / "lane" / "door", "*"))
        refused(lambda: fs.read_bytes(root / "lane" / "door" / "outside-secret.md", 100))
        found = list(fs.walk(root, "*"))
        listed = fs.list_dir(root / "lane")
    assert found == [root / "lane/deep.md", root / "task.md"]
    assert [e.name for e in listed] == ["deep.md"]
    seen.assert_confined(root, never=NEVER)


def test_a_dangling_symlink_is_judged_by_where_it_points(root: Path) -> None:
    (root / "later.md").symlink_to(root / "not-yet.md")
    (root / "away.md").symlink_to(root.parent / "outside" / "not-there.md")
    fs = gate(root)
    assert fs.check(root / "later.md") == root / "not-yet.md"
    refused(lambda: fs.check(root / "away.md"))


def test_walk_survives_symlink_loops_quickly_and_lists_each_folder_once(root: Path) -> None:
    (root / "lane" / "back").symlink_to(root, target_is_directory=True)
    (root / "lane" / "self").symlink_to(root / "lane", target_is_directory=True)
    (root / "knot").symlink_to(root / "knot")
    fs = gate(root)
    with effects() as seen:
        found = within(10, lambda: list(fs.walk(root, "*.md")))
    assert found == [root / "lane/deep.md", root / "task.md"]
    listed = [p for p in seen.observed if p.is_dir()]
    assert sorted(listed) == sorted(set(listed))  # opened for listing at most once each
    seen.assert_confined(root, never=NEVER)


def test_a_symlink_loop_is_refused_as_a_loop(root: Path) -> None:
    (root / "knot").symlink_to(root / "knot")
    error = refused(lambda: gate(root).check(root / "knot"))
    assert "symlink loop" in str(error)


def test_writing_under_a_read_only_root_is_refused(root: Path, tmp_path: Path) -> None:
    out = tmp_path.resolve() / "out"
    out.mkdir()
    fs = gate(root, write=(out,))
    error = refused(lambda: fs.check(root / "task.md", write=True, step="save"))
    assert "outside the file write grant" in str(error)
    assert "[leash] fs_write" in str(error)
    assert fs.check(out / "new.md", write=True) == out / "new.md"
    assert fs.check(out / "new.md") == out / "new.md"  # write roots are readable too
    refused(lambda: gate(root).check(root / "new.md", write=True))


def test_a_relative_path_is_refused_with_a_clear_message(root: Path) -> None:
    with effects() as seen:
        error = refused(lambda: gate(root).check("granted/task.md", step="board"))
    assert not seen.anything
    assert "is relative; the file gate takes absolute paths only" in str(error)
    assert "'granted/task.md'" in str(error)


def test_a_path_with_a_nul_byte_is_refused(root: Path) -> None:
    fs = gate(root)
    with effects() as seen:
        error = refused(lambda: fs.check(f"{root}/task.md\0/../../etc/passwd"))
        refused(lambda: fs.read_bytes(Path(f"{root}/task.md\0"), 10))
    assert not seen.anything
    assert "NUL byte" in str(error)


# -- special files -----------------------------------------------------------------------------


def test_proc_self_is_refused_even_when_the_root_is_slash(root: Path) -> None:
    fs = gate(Path("/"))
    with effects() as seen:
        for path in ("/proc/self", "/proc/self/environ", "/sys/kernel", "/dev/null"):
            error = refused(partial(fs.check, path, step="board"))
            assert "which is never readable" in str(error)
        within(5, lambda: refused(lambda: fs.walk(Path("/proc/self"), "*")))
        refused(lambda: fs.read_bytes(Path("/proc/self/environ"), 100))
        # /proc/self/root is `/` again: refused as written, not only once resolved, however
        # the path spells /proc.
        for spelling in ("/proc", "//proc", "/tmp/../proc", "/./proc"):
            refused(partial(fs.check, f"{spelling}/self/root{root}/task.md"))
    assert not seen.anything


def test_a_symlink_into_proc_or_dev_is_refused(root: Path) -> None:
    (root / "env.md").symlink_to("/proc/self/environ")
    (root / "zero.md").symlink_to("/dev/zero")
    (root / "procdir").symlink_to("/proc/self", target_is_directory=True)
    fs = gate(Path("/"))
    with effects() as seen:
        for name in ("env.md", "zero.md", "procdir"):
            refused(partial(fs.check, root / name))
            refused(partial(fs.read_bytes, root / name, 10))
        found = within(10, lambda: list(fs.walk(root, "*")))
    assert found == [root / "lane/deep.md", root / "task.md"]
    # The root is `/`, so confinement is by name: nothing under /proc or /dev was reached.
    seen.assert_confined(Path("/"), never=("proc", "dev", "environ", "zero"))


def test_dev_zero_is_refused_even_when_the_root_is_slash() -> None:
    fs = gate(Path("/"))
    with effects() as seen:
        refused(lambda: fs.check("/dev/zero"))
        refused(lambda: within(5, lambda: fs.read_bytes(Path("/dev/zero"), 1 << 30)))
    assert not seen.anything


def test_a_file_on_a_special_file_system_mounted_elsewhere_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stands in for a bind mount of /proc inside a root (which a test cannot make): the
    # gate knows special file systems by device id, not only by where they usually live.
    monkeypatch.setattr(fs_module, "_special_devices", lambda: {root.stat().st_dev: "/proc"})
    fs = gate(root)
    with effects() as seen:
        error = refused(lambda: fs.check(root / "task.md"))
        refused(lambda: fs.read_bytes(root / "task.md", 10))
    assert "is on the /proc file system" in str(error)
    assert not seen.anything


def test_a_fifo_is_refused_and_never_blocks(root: Path) -> None:
    fifo = root / "lane" / "pipe.md"
    os.mkfifo(fifo)
    fs = gate(root)
    try:
        with effects() as seen:
            error = refused(lambda: fs.check(fifo, step="board"))
            refused(lambda: within(5, lambda: fs.read_bytes(fifo, 100)))
            found = within(5, lambda: list(fs.walk(root, "*.md")))
        assert "is a FIFO" in str(error)
        assert found == [root / "lane/deep.md", root / "task.md"]
        assert fifo not in seen.observed
        seen.assert_confined(root, never=("pipe.md",))
    finally:
        release(fifo)


def test_a_fifo_swapped_in_after_the_check_is_refused_without_blocking_or_reading(
    root: Path,
) -> None:
    target = root / "task.md"

    def swap(path: Path) -> None:  # at the point of effect: just before the open
        if path == target and target.is_file():
            target.unlink()
            os.mkfifo(target)

    fs = gate(root)
    observe_opens(swap)
    try:
        error = refused(lambda: within(5, lambda: fs.read_bytes(target, 100)))
    finally:
        unobserve_opens(swap)
        release(target)
    assert "is a FIFO, not a regular file" in str(error)


def test_a_symlink_swapped_into_the_path_after_the_check_is_not_followed(root: Path) -> None:
    (root.parent / "outside" / "deep.md").write_text("private\n")
    lane = root / "lane"

    def swap(path: Path) -> None:  # replace the folder with a symlink out, just before open
        if path == lane / "deep.md" and not lane.is_symlink():
            (lane / "deep.md").unlink()
            lane.rmdir()
            lane.symlink_to(root.parent / "outside", target_is_directory=True)

    fs = gate(root)
    observe_opens(swap)
    try:
        with effects() as seen:
            error = refused(lambda: fs.read_bytes(lane / "deep.md", 100))
    finally:
        unobserve_opens(swap)
    assert "changed into a symlink" in str(error)
    seen.assert_confined(root, never=("outside", "outside-secret.md"))


def test_a_final_symlink_swapped_in_after_the_check_is_not_followed(root: Path) -> None:
    target = root / "task.md"

    def swap(path: Path) -> None:
        if path == target and not target.is_symlink():
            target.unlink()
            target.symlink_to(root.parent / "outside" / "outside-secret.md")

    fs = gate(root)
    observe_opens(swap)
    try:
        with effects() as seen:
            refused(lambda: fs.read_bytes(target, 100))
    finally:
        unobserve_opens(swap)
    seen.assert_confined(root, never=NEVER)


def test_a_socket_is_refused(root: Path) -> None:
    os.chdir(root)  # a short relative name: socket paths are limited to ~100 bytes
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind("sock.md")
        fs = gate(root)
        with effects() as seen:
            error = refused(lambda: fs.check(root / "sock.md"))
            found = list(fs.walk(root, "*.md"))
    assert "is a socket" in str(error)
    assert root / "sock.md" not in found
    assert root / "sock.md" not in seen.observed


# -- bounds ------------------------------------------------------------------------------------


def test_the_default_bounds_are_32_deep_and_10000_entries(root: Path) -> None:
    fs = gate(root)
    assert (fs.max_depth, fs.max_entries) == (MAX_WALK_DEPTH, MAX_WALK_ENTRIES) == (32, 10_000)


def test_a_walk_past_the_entry_bound_stops_with_a_refusal(root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(60):
        (many / f"{i:03}.md").write_text("x")
    fs = gate(root, max_entries=50)
    with effects() as seen:
        error = refused(lambda: list(fs.walk(root, "*.md", step="board")))
    assert "more than 50 entries" in str(error)
    assert str(error).startswith(f"step 'board': path '{root}'")
    assert not [p for p in seen.observed if p.parent == many]  # no file in it was opened
    assert len(list(gate(root, max_entries=70).walk(root, "*.md"))) == 62


def test_a_walk_past_the_depth_bound_stops_with_a_refusal(root: Path) -> None:
    deep = root.joinpath(*["d"] * 5)
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("x")
    error = refused(lambda: list(gate(root, max_depth=3).walk(root, "*.md")))
    assert "more than 3 deep" in str(error)
    assert deep / "bottom.md" in list(gate(root, max_depth=5).walk(root, "*.md"))


def release(fifo: Path) -> None:
    """Unblock anything stuck reading `fifo` (if the gate ever did), so a failure cannot hang
    the run: opening the write end wakes a blocked reader; with no reader it fails at once."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
