"""What a model reads to learn a tool: `tool_describe`'s curated text against the raw schemas.

For every tool prixfixe registers with no configuration, and for every tool of the six real
MCP servers the tests mount (`scripts/test-servers.sh` installs them), this counts the cl100k
tokens of:

- **raw input schema**: the tool's `inputSchema` as compact JSON — what a client puts in
  context for its arguments when the tool is listed;
- **raw definition**: the whole wire tool (name, title, description, inputSchema,
  outputSchema, annotations) as compact JSON — what learning the tool from a listing costs;
- **curated arguments**: the `Arguments:` lines of `tool_describe`'s text (dot paths, types,
  limits, enums, examples; read-only and internal properties left out);
- **tool_describe**: the whole text the model reads, read through `mcp.Client` as a client
  passes it on (description, arguments, return shape, usage, an example call).

Both sides are measured in the same run from the same registry; ratios are curated / raw.
Run from the repository root: `python benchmarks/bench_describe.py` (`--no-servers` skips the
mounted servers).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    _root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(_root), str(_root / "src")]

import anyio

from benchmarks._common import markdown_table, write_json, write_section

NAME = "describe"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def measure(app: Any) -> dict[str, dict[str, int]]:
    """Per group (prixfixe's own tools, each mounted server): token sums of each form."""
    from mcp import Client

    from prixfixe.mcp.server import build_server
    from prixfixe.tokens import count_tokens

    groups: dict[str, dict[str, int]] = {}
    async with Client(build_server(app), mode="legacy") as client:
        await client.call_tool("tool_search", {"query": "anything"})  # mounted tools read
        for entry in list(app.registry):
            facet = entry.tool.facet
            group = facet if facet in app.config.model.servers else "prixfixe"
            result = await client.call_tool("tool_describe", {"name": entry.name})
            text = result.content[0].text  # type: ignore[union-attr]
            lines = text.splitlines()
            start = lines.index("Arguments:") + 1 if "Arguments:" in lines else len(lines)
            arguments = [line for line in lines[start:] if line.startswith("- ")]
            wire = entry.wire.model_dump(mode="json", by_alias=True, exclude_none=True)
            row = groups.setdefault(
                group,
                {"tools": 0, "raw_input": 0, "raw_definition": 0, "curated_args": 0, "describe": 0},
            )
            row["tools"] += 1
            row["raw_input"] += count_tokens(_compact(entry.input_schema))
            row["raw_definition"] += count_tokens(_compact(wire))
            row["curated_args"] += count_tokens("\n".join(arguments))
            row["describe"] += count_tokens(text)
    return groups


def build(root: Path, *, servers: bool) -> Any:
    from prixfixe.app import App

    env = {"PRIXFIXE_HOME": str(root / "home"), "PRIXFIXE_LOAD_PLUGINS": ""}
    config = ""
    if servers:
        from tests.servers.real_servers import six

        specs = six(root / "servers")
        config = "".join(spec.table() for spec in specs)
        for spec in specs:
            env.update(spec.app_env())
    (root / "prixfixe.toml").write_text(config, encoding="utf-8")
    env["PRIXFIXE_CONFIG"] = str(root / "prixfixe.toml")  # a folder's file loads once trusted
    return App.build(env=env, cwd=root)


def report(groups: dict[str, dict[str, int]]) -> tuple[str, dict[str, Any]]:
    rows = []
    for name, g in groups.items():
        rows.append(
            [
                name,
                str(g["tools"]),
                f"{g['raw_input']:,}",
                f"{g['curated_args']:,}",
                f"{g['curated_args'] / g['raw_input']:.2f}x" if g["raw_input"] else "-",
                f"{g['raw_definition']:,}",
                f"{g['describe']:,}",
                f"{g['describe'] / g['raw_definition']:.2f}x" if g["raw_definition"] else "-",
            ]
        )
    total = {k: sum(g[k] for g in groups.values()) for k in next(iter(groups.values()))}
    rows.append(
        [
            "**all**",
            str(total["tools"]),
            f"{total['raw_input']:,}",
            f"{total['curated_args']:,}",
            f"{total['curated_args'] / total['raw_input']:.2f}x",
            f"{total['raw_definition']:,}",
            f"{total['describe']:,}",
            f"{total['describe'] / total['raw_definition']:.2f}x",
        ]
    )
    table = markdown_table(
        [
            "tools of",
            "tools",
            "raw inputSchema",
            "curated arguments",
            "ratio",
            "raw definition",
            "tool_describe text",
            "ratio",
        ],
        rows,
    )
    text = (
        "### tool_describe: curated against raw schemas (bench:describe)\n\n"
        "cl100k tokens summed over every tool of each group. *Raw inputSchema* is the tool's "
        "argument schema as compact JSON (what a listing costs for its arguments); *curated "
        "arguments* are the `Arguments:` lines `tool_describe` shows instead (dot paths, "
        "types, limits, enums, examples; read-only and internal properties left out). *Raw "
        "definition* is the whole wire tool as a listing carries it; *tool_describe text* is "
        "everything the model reads of a describe call, through `mcp.Client`, including the "
        "return shape, usage and an example call that the raw definition does not have.\n\n" + table
    )
    return text, {"groups": groups, "total": total}


async def main_async(servers: bool, write: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        app = build(Path(tmp), servers=servers)
        async with app.serving(folders=False):
            groups = await measure(app)
    text, data = report(groups)
    print(text)
    if write:
        write_json(NAME, data)
        write_section(NAME, text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--no-servers", action="store_true", help="Only prixfixe's own tools.")
    parser.add_argument("--no-write", action="store_true", help="Print only; write no file.")
    args = parser.parse_args(argv)
    anyio.run(main_async, not args.no_servers, not args.no_write)


if __name__ == "__main__":
    main()
