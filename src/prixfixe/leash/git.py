"""git, defanged: repository content is untrusted, so git runs with system and global config
ignored and nothing a repository's own config names able to start a program.

Only what writes needs git (fetch, fast-forward); what only reads goes through libgit2
(`prixfixe.leash.libgit`), which has nothing to defang. This module is the fallback for git
itself, and its lists are what git 2.39 reads.

CONTRACT (the exec gate calls `prepare` for every git command line it runs):
`await prepare(argv, env, run)` returns `(argv, env)` to actually start: the same command
line, and the child environment with git's variables added. `run(argv, env)` runs a git
command line (for the gate's own, fixed, read-only scan of a repository's config keys) and
returns `Completed`, whose `stdout_bytes` the scan reads. Names are compared and handed back
byte for byte: the scan's output is never decoded (a driver or remote may be named `\xff` or
`caf\xe9`), overrides reach git through environment variables holding exactly those bytes
(`os.fsdecode`, `surrogateescape`), the pinning file is written as bytes; a name git cannot
be handed back (a newline, which no config key or quoted subsection holds) refuses the command.

How (every item verified against git 2.39 by `tests/security/test_git_hostile.py`):

- Environment. System config is off (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_SYSTEM=/dev/null`)
  and global config is replaced (`GIT_CONFIG_GLOBAL`: `/dev/null`, or a private file of
  prixfixe's own, below). Variables git consults before config win over it:
  `GIT_SSH_COMMAND=ssh` (beats `core.sshCommand` and `GIT_SSH`), `GIT_ASKPASS=` (beats
  `core.askPass` and `SSH_ASKPASS`), `GIT_PROXY_COMMAND=` (beats `core.gitProxy`, whose
  first match would otherwise win), `GIT_ALLOW_PROTOCOL=file:git:ssh:http:https` (beats
  `protocol.*.allow`, so no `ext::` or `fd::` URL, no `<helper>::` URL, no
  `remote.<name>.vcs` and no `url.<base>.insteadOf` rewriting to one), `GIT_PAGER=cat` and
  `GIT_EDITOR=:` (beat `core.pager`, `pager.<cmd>` and `core.editor`), no terminal prompt.
  Every other `GIT_*` variable, and `PAGER`, `EDITOR`, `VISUAL`, `SSH_ASKPASS`, `DISPLAY`,
  is dropped from what the step passed, so nothing inherited re-enables any of it.
- Static overrides (`STATIC`), given as command-line config through `GIT_CONFIG_COUNT` /
  `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`. Command-line config is read after the
  repository's, and these keys are last-one-wins: hooks (`core.hooksPath=/dev/null`, every
  hook), `core.fsmonitor`, credential helpers (an empty `credential.helper` empties the list,
  URL-scoped `credential.<url>.helper` too), signature programs and their triggers, external
  diff, submodule recursion, automatic gc and maintenance (a detached gc would outlive the
  process group the gate kills), `core.alternateRefsCommand`, cookie files. The environment
  form, not `-c`, because `-c` splits at the first `=` and so cannot name a driver whose
  name holds one (`[filter "x=y"]`, which a `filter=x=y` attribute selects).
- Dynamic overrides. Drivers have names the repository chooses, so before each command a
  scan (`git config --list -z --name-only`, under the static defences, through `run`) lists
  the config's key names as raw bytes, included files and `includeIf` ones too, and every
  driver found is overridden the same way, under its exact name:
  `filter.<d>.clean/smudge/process` emptied and `required` false (so an emptied filter is
  skipped, not fatal), `diff.<d>.textconv/command` emptied, `merge.<d>.driver` emptied,
  `http.<url>.saveCookies/cookieFile` off. An emptied command is either skipped by git or
  fails closed (`cannot run`); it never runs anything.
- First-wins keys. `remote.<name>.uploadpack` and `receivepack` keep their *first* value,
  so command-line config cannot override them, and a partial clone's lazy fetch (the `git
  fetch` a fast-forward `merge`, or any command, starts for a missing object; git 2.39 has
  no switch to turn it off) runs the repository's upload-pack command through the shell
  for a local remote. The git steps' own fetch says `--upload-pack=git-upload-pack`; for
  everything else, for every remote the scan finds, prixfixe writes a config file that
  names the stock programs and points `GIT_CONFIG_GLOBAL` at it: global config is read
  before the repository's, so its value is the first. The files live in a private (0700)
  directory, are named by their content's digest and are rewritten on every use, so no call
  depends on an earlier one.
- A scan that fails (a missing directory, not a repository) leaves the static defences;
  the command then fails the same way. A scan whose output is cut short (a config padded
  past `MAX_OUTPUT_BYTES`) refuses the command, since a driver could hide past the cut.
- Aliases need nothing: git never lets an alias replace a builtin, and only builtins run.
- Submodules: `fetch.recurseSubmodules` and `submodule.recurse` are off, and the git steps
  add `--no-recurse-submodules` to fetch and `--ignore-submodules=dirty` to status (looking
  into a submodule's work tree runs git there, under config this scan never saw). A
  fast-forward `merge` does not recurse in git 2.39 even when asked to.
- Cost: the scan is one more short git process per command, about 2 ms (measured: 200
  `git status` through the gate, 0.46 s with the static defences alone, 0.80-0.87 s with
  the scan).

What this costs a trusted configuration: every git the gate starts, a configured script's
too, runs without the user's global config (identity, credential helpers, `insteadOf`
rewrites, `safe.directory`) and without hooks. A script that commits passes its identity
as `GIT_AUTHOR_*` / `GIT_COMMITTER_*`, which are kept; a fetch over HTTPS that needs a
password fails (over ssh the agent, `SSH_AUTH_SOCK`, still works).

Residual risks (not closed here):
- A local remote (`remote.<name>.url` a path or `file://`) is read by `git upload-pack`
  running in *that* repository with that repository's config (the transport drops
  command-line config; system and global stay off). upload-pack starts nothing from
  repository config (`uploadpack.packObjectsHook` is honoured only from protected config,
  which is prixfixe's), but it reads objects from wherever the URL points, inside the file
  grant or not. Over ssh the (stock, pinned above) upload-pack runs on whatever host the
  repository's URL names, with the user's ssh keys: the repository chooses where prixfixe
  connects.
- What git itself does with hostile repository *content* (checkout of crafted trees, pack
  parsing) is git's own attack surface: keep git patched.
- `core.worktree`, a `.git` file, `objects/info/alternates` and `include.path` can point git
  at files outside the repository directory the step was given. Reads there (status of a
  work tree elsewhere, objects, included config) are not checked by the file gate; the git
  steps check where fetch and merge write before they run (`rev-parse --git-dir
  --git-common-dir --show-toplevel` against the write grant).
- The repository's config can change between the scan and the command (another process
  writing `.git/config`); a driver added in that window is not overridden.
- A `-c` on the command line itself (which only the trusted configuration can write, never a
  client) is read after these overrides and wins.
- Version drift: this list is what git 2.39 reads. A newer git that adds a key naming a
  program (config-defined hooks, say) needs it added here; the hostile tests pin the known
  ones, not future ones.
- Reading config can block: an `include.path` naming a FIFO stalls the scan (and git) until
  the step's timeout kills it.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path

from prixfixe.errors import StepFailure
from prixfixe.leash.exec import Completed

Runner = Callable[[Sequence[str], dict[str, str]], Awaitable[Completed]]

#: Protocols a remote may use: no `ext::`, no `fd::`, no `<helper>::`, no `remote.<n>.vcs`.
ALLOWED_PROTOCOLS = "file:git:ssh:http:https"

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "SSH_ASKPASS_REQUIRE": "never",
    "GIT_SSH_COMMAND": "ssh",
    "GIT_SSH_VARIANT": "ssh",
    "GIT_PROXY_COMMAND": "",
    "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_MERGE_AUTOEDIT": "no",
}

#: `GIT_*` variables a step may still pass (the rest are dropped, then `GIT_ENV` is added).
PASSED_GIT_VARS = frozenset(
    {
        "GIT_OPTIONAL_LOCKS",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    }
)
#: Non-`GIT_` variables git or ssh would run a program from.
DROPPED = frozenset({"PAGER", "EDITOR", "VISUAL", "SSH_ASKPASS", "DISPLAY", "LESSOPEN"})

#: Last-one-wins keys, read after the repository's config.
STATIC: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("interactive.diffFilter", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("gc.auto", "0"),
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("http.saveCookies", "false"),
    ("http.cookieFile", ""),
)

#: Per driver (`<section>.<driver>.<key>`): what each key of a repository-named driver becomes.
DRIVERS: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", ""), ("cachetextconv", "false")),
    "merge": (("driver", ""),),
    "http": (("saveCookies", "false"), ("cookieFile", "")),
    "credential": (("helper", ""),),
    "gpg": (("program", ""),),
}
#: First-one-wins keys of every remote, given in the global config (read before the repo's).
REMOTE_FIRST = (("uploadpack", "git-upload-pack"), ("receivepack", "git-receive-pack"))

#: Global options before the subcommand that the scan repeats so it finds the same repository.
_LOCATING = frozenset({"-C", "-c", "--git-dir", "--work-tree"})
_LOCATING_PREFIXES = ("--git-dir=", "--work-tree=")

_private_dir: Path | None = None


async def prepare(
    argv: Sequence[str], env: dict[str, str], run: Runner
) -> tuple[list[str], dict[str, str]]:
    base = environment(env)
    scan_env = {**base, **config_env(STATIC)}
    done = await run([argv[0], *locating_options(argv), *SCAN], scan_env)
    keys: list[bytes] = []
    if done.returncode == 0:
        if done.truncated:
            raise StepFailure(
                f"git: the repository's config lists more than the scan can read; refusing "
                f"to run {' '.join(argv[1:])!r} without knowing every driver it names",
                kind="refused",
            )
        keys = [k for k in done.stdout_bytes.split(b"\0") if k]
    last, remotes = dynamic_overrides(keys)
    for name in (*(key for key, _ in last), *remotes):
        if not representable(name):
            raise StepFailure(
                f"git: the repository's config names a driver or remote git cannot be told "
                f"to override ({name!r}); refusing to run {' '.join(argv[1:])!r}",
                kind="refused",
            )
    child = {**base, **config_env((*STATIC, *last))}
    if remotes:
        try:
            child["GIT_CONFIG_GLOBAL"] = str(_global_file(remotes))
        except OSError as exc:
            raise StepFailure(
                f"git: could not write the config that pins the repository's remotes' "
                f"upload-pack ({exc.strerror}); refusing to run {' '.join(argv[1:])!r}",
                kind="error",
            ) from None
    return list(argv), child


#: The scan: key names only, NUL-separated (a subsection may hold anything but a newline).
SCAN = ("config", "--list", "-z", "--name-only")


def environment(env: dict[str, str]) -> dict[str, str]:
    """The step's environment without anything that would choose a program for git, plus
    `GIT_ENV`."""
    kept = {
        k: v
        for k, v in env.items()
        if k not in DROPPED and (not k.startswith("GIT_") or k in PASSED_GIT_VARS)
    }
    return {**kept, **GIT_ENV}


def representable(name: bytes) -> bool:
    """Whether `name` (a config key, or a remote's name) reaches git byte for byte: through
    an environment variable (`as_env`) and, for a remote, a config file's quoted subsection.
    A newline is neither (git refuses it in a key), NUL ends a C string."""
    return b"\n" not in name and b"\0" not in name and os.fsencode(as_env(name)) == name


def as_env(raw: bytes) -> str:
    """Bytes as the `str` Python passes to a child's environment as those same bytes (the
    file system encoding with `surrogateescape`, which is how `os.environ` decodes them)."""
    return os.fsdecode(raw)


def config_env(pairs: Iterable[tuple[str | bytes, str | bytes]]) -> dict[str, str]:
    """Command-line config as environment variables (key and value kept apart, so a key may
    hold `=`). A `bytes` key or value reaches git as exactly those bytes."""
    pairs = list(pairs)
    out = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for i, (key, val) in enumerate(pairs):
        out[f"GIT_CONFIG_KEY_{i}"] = as_env(key) if isinstance(key, bytes) else key
        out[f"GIT_CONFIG_VALUE_{i}"] = as_env(val) if isinstance(val, bytes) else val
    return out


def locating_options(argv: Sequence[str]) -> list[str]:
    """The global options before the subcommand that decide which repository git opens."""
    out: list[str] = []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in _LOCATING and i + 1 < len(argv):
            out += [arg, argv[i + 1]]
            i += 2
            continue
        if arg.startswith(_LOCATING_PREFIXES):
            out.append(arg)
        i += 1
    return out


def dynamic_overrides(keys: Iterable[bytes]) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """(last-one-wins overrides for every driver the keys name, remote names), all as the
    raw bytes git printed: a driver's name is matched and overridden byte for byte."""
    last: dict[bytes, bytes] = {}
    remotes: dict[bytes, None] = {}
    for key in keys:
        section, _, rest = key.partition(b".")
        subsection, dot, _name = rest.rpartition(b".")
        if not dot:
            continue  # `section.name`: no driver named
        section = section.lower()
        if section == b"remote":
            remotes[subsection] = None
        for name, val in DRIVERS.get(section.decode("ascii", errors="replace"), ()):
            last[b"%s.%s.%s" % (section, subsection, name.encode())] = val.encode()
    return list(last.items()), list(remotes)


def global_config_text(remotes: Iterable[bytes]) -> bytes:
    """The first-wins remote keys as a config file, each remote's name quoted byte for byte
    (inside quotes git takes a backslash's next byte as is; a name with a newline, which no
    quoting carries, is refused before this)."""
    lines: list[bytes] = []
    for remote in remotes:
        quoted = remote.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
        lines.append(b'[remote "%s"]' % quoted)
        lines += [b"\t%s = %s" % (key.encode(), val.encode()) for key, val in REMOTE_FIRST]
    return b"\n".join(lines) + b"\n"


def _global_file(remotes: Iterable[bytes]) -> Path:
    """A private file holding the first-wins remote keys (rewritten on every call)."""
    text = global_config_text(remotes)
    folder = _folder()
    path = folder / f"{hashlib.sha256(text).hexdigest()[:32]}.gitconfig"
    fd, scratch = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(text)
    # Atomic: a concurrent git reading the same name sees the old or the new, never half.
    os.replace(scratch, path)
    return path


def _folder() -> Path:
    global _private_dir
    if _private_dir is None or not _private_dir.is_dir():
        _private_dir = Path(tempfile.mkdtemp(prefix="prixfixe-git-"))
        atexit.register(shutil.rmtree, _private_dir, ignore_errors=True)
    return _private_dir
