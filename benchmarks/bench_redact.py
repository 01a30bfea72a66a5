"""What masking credential values costs: the redactor before and after it learnt split and
binary forms, on a realistic 1 MB tool result with 10 registered secrets.

The text is a deterministic mix of what tools return: prose lines, JSON log records (ids,
paths, SHA-1s), base64 lines (an attachment), a few occurrences of the secrets (raw, in a URL,
base64-wrapped). The secrets are realistic, in two sets: ten single-line values of the usual
shapes (GitHub, AWS, Slack, Stripe, a JWT, passwords with quotes, spaces and non-ASCII
letters, a database URL), and the same with a PEM private key (multi-line, 1.7 kB) in place
of one of them.

Measured, each as CPU time (`time.process_time`) in interleaved rounds (before, after, before,
...), medians with min-max:

- **text**: `redact` of the 1 MB text. *Before* is the previous implementation, rebuilt here
  from the same `forms()`: one alternation of every form, longest first, matched literally
  (no split forms). *After* is `Redactor.redact`: the forms compiled as a trie, those of 8 or
  more characters also matched split over lines.
- **structure**: the same content as a tool result's JSON structure (one string per line in
  a list of records), walked whole: *before* `redact_data` (its walk is unchanged) with the
  previous pattern, *after*
  `prixfixe.servers.masking.mask_json` (the walk every mounted server's message passes).
- **blob**: deciding whether 1 MB of base64 binary data holds a value, which the previous
  redactor could not (*before* is its text-only match of the base64; *after*
  `holds_base64`, which also decodes it and searches the bytes).
- **compile**: registering the 10 secrets (building the pattern), once per round.

Run from the repository root: `python benchmarks/bench_redact.py` (~30 s; `--quick` ~5 s).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a file: make `benchmarks` and `prixfixe` importable from the checkout.
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

from benchmarks._common import DOC, markdown_table, write_json, write_section
from prixfixe.leash.redact import REDACTOR, Redactor, forms
from prixfixe.secrets import Secret
from prixfixe.servers.masking import mask_json

NAME = "redact"
SIZE = 1 << 20
#: Words of the prose lines.
PROSE = (
    "the of and to in is that for it as with was on be by this are from or have an not at "
    "which but all were when we there can more if out so what up use about into than them "
    "only other new some could time these two may then do first any my now such like our "
    "over made after also did many before must through back years where much your way well"
)


def secrets(rnd: random.Random, *, pem: bool) -> list[str]:
    """Ten credential values of the shapes real ones have; the ninth a PEM key when `pem`."""
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def pick(n: int, alphabet: str = alnum) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(n))

    key_body = base64.b64encode(rnd.randbytes(1190)).decode()
    pem_key = "\n".join(
        ["-----BEGIN PRIVATE KEY-----"]
        + [key_body[i : i + 64] for i in range(0, len(key_body), 64)]
        + ["-----END PRIVATE KEY-----"]
    )
    jwt = ".".join(
        base64.urlsafe_b64encode(rnd.randbytes(n)).decode().rstrip("=") for n in (36, 90, 32)
    )
    return [
        "ghp_" + pick(36),
        "AKIA" + pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        pick(40, alnum + "/+"),
        "xoxb-" + pick(12, "0123456789") + "-" + pick(24),
        jwt,
        'p@ss "w0rd" ' + pick(10),
        "Ünïcode-" + pick(20),
        pick(32, "0123456789abcdef"),
        pem_key if pem else "sk_live_" + pick(24),
        f"postgresql://app:{pick(24)}@db.internal:5432/app",
    ]


def result_text(rnd: random.Random, values: list[str]) -> tuple[str, list[str]]:
    """About 1 MB of a tool's output, as text and as its lines."""
    words = PROSE.split()
    lines: list[str] = []
    size = 0
    while size < SIZE:
        kind = rnd.random()
        if kind < 0.4:
            line = " ".join(rnd.choice(words) for _ in range(rnd.randint(5, 15)))
        elif kind < 0.8:
            record = {
                "id": rnd.randint(1, 10**9),
                "path": "/srv/app/" + "/".join(rnd.choice(words) for _ in range(3)) + ".py",
                "sha": hashlib.sha1(rnd.randbytes(8)).hexdigest(),
                "msg": " ".join(rnd.choice(words) for _ in range(6)),
            }
            line = json.dumps(record)
        else:
            line = base64.b64encode(rnd.randbytes(57)).decode()
        if rnd.random() < 0.0005:  # now and then, a secret where it should not be
            value = rnd.choice(values[:8])
            line += rnd.choice(
                [
                    f" token={value}",
                    " https://x.example/?t=" + value.replace("/", "%2F"),
                    " " + base64.b64encode(b"user:" + value.encode()).decode(),
                ]
            )
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines), lines


def previous_pattern(values: list[str]) -> re.Pattern[str]:
    """The redactor's pattern before split forms: every form, longest first, literally."""
    needles: set[str] = set()
    for value in values:
        needles |= forms(value)
    ordered = sorted(needles, key=lambda n: (-len(n), n))
    return re.compile("|".join(re.escape(n) for n in ordered))


class Previous:
    """The previous redactor's `redact` and `redact_data`, as they were, with its pattern."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern

    def redact(self, text: str) -> str:
        pattern = self._pattern
        if pattern is None:
            return text
        from prixfixe.secrets import MASK

        return pattern.sub(MASK, text)

    def redact_data(self, data: Any) -> Any:
        if self._pattern is None:
            return data
        return self._walk(data)

    def _walk(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, dict):
            return {self._walk(k): self._walk(v) for k, v in data.items()}
        if isinstance(data, list):
            return [self._walk(item) for item in data]
        if isinstance(data, tuple):
            return tuple(self._walk(item) for item in data)
        return data


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def measure(rounds: int, *, pem: bool) -> dict[str, Any]:
    rnd = random.Random(28)
    values = secrets(rnd, pem=pem)
    text, lines = result_text(rnd, values)
    structure = {
        "content": [{"type": "text", "text": line} for line in lines[::2]],
        "structuredContent": {
            "rows": [{"line": line, "n": i} for i, line in enumerate(lines[1::2])]
        },
    }
    blob = base64.b64encode(rnd.randbytes(SIZE * 3 // 4)).decode()
    old = previous_pattern(values)

    previous = Previous(old)

    def register(redactor: Redactor) -> None:
        for i, value in enumerate(values):
            redactor.add(Secret(value, f"env S{i}"))

    REDACTOR.clear()
    register(REDACTOR)
    # Both mask every raw occurrence; the new one finds the split forms too.
    before_text, after_text = previous.redact(text), REDACTOR.redact(text)
    for value in values[:8]:
        assert value not in before_text
        assert value not in after_text
    assert REDACTOR.redact(text) == after_text
    fields: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "text": (lambda: previous.redact(text), lambda: REDACTOR.redact(text)),
        "structure": (lambda: previous.redact_data(structure), lambda: mask_json(structure)),
        "blob": (lambda: old.search(blob), lambda: REDACTOR.holds_base64(blob)),
        "compile": (lambda: previous_pattern(values), lambda: register(Redactor())),
    }
    figures: dict[str, dict[str, list[float]]] = {k: {"before": [], "after": []} for k in fields}
    for i in range(rounds):
        for name, (before, after) in fields.items():
            order = [("before", before), ("after", after)]
            for side, fn in order if i % 2 == 0 else reversed(order):
                figures[name][side].append(cpu(fn) * 1000)
    REDACTOR.clear()
    return {
        "secret_set": "9 tokens and a PEM key" if pem else "10 single-line tokens",
        "rounds": rounds,
        "text_bytes": len(text.encode()),
        "secrets": len(values),
        "forms": len(previous_pattern(values).pattern.split("|")),
        "ms": figures,
    }


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def render(scenarios: list[dict[str, Any]]) -> str:
    labels = {
        "text": "`redact` of 1 MB of text",
        "structure": "masking the same as a result's JSON structure",
        "blob": "does 1 MB of base64 binary data hold a value",
        "compile": "registering the 10 secrets",
    }
    rows = []
    for results in scenarios:
        for name, label in labels.items():
            ms = results["ms"][name]
            ratio = statistics.median(ms["after"]) / max(statistics.median(ms["before"]), 1e-9)
            rows.append(
                [
                    results["secret_set"],
                    label,
                    _spread(ms["before"]),
                    _spread(ms["after"]),
                    f"{ratio:.2f}x",
                ]
            )
    return markdown_table(
        ["secrets", "CPU ms, median (min-max)", "before", "after", "after / before"], rows
    )


def render_doc(scenarios: list[dict[str, Any]], table: str) -> str:
    results = scenarios[0]
    return (
        "## Masking credential values (`bench_redact.py`)\n\n"
        f"{results['text_bytes']:,} bytes of a realistic tool result (prose, JSON records, "
        f"base64 lines, a few secrets) with {results['secrets']} registered secrets "
        f"({' and '.join(str(r['forms']) for r in scenarios)} masked forms), "
        f"{results['rounds']} interleaved rounds of CPU time. "
        "*Before*: the previous redactor (every form matched literally, in one alternation), "
        "rebuilt from the same forms. *After*: the forms as one trie-shaped pattern that also "
        "matches forms split over lines, the structural walk of a mounted server's messages, "
        "and the check of binary data (base64 text, then its decoded bytes). The previous "
        "redactor could not tell whether binary data held a value; its row is its text match "
        "alone. Registering builds the pattern once per added secret: paid when a credential "
        "is resolved, not per text.\n\n" + table
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (15)")
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    parser.add_argument(
        "--doc",
        type=Path,
        default=DOC,
        help="the markdown file whose section this rewrites (default docs/benchmarks.md)",
    )
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else args.rounds
    scenarios = [measure(rounds, pem=False), measure(rounds, pem=True)]
    table = render(scenarios)
    print(table)
    results = {"scenarios": scenarios}
    if not args.no_write:
        write_json(NAME, results)
        write_section(NAME, render_doc(scenarios, table), doc=args.doc)
    return results


if __name__ == "__main__":
    main()
