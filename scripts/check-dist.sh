#!/usr/bin/env bash
# The package as a user gets it: build the sdist and, from it, the wheel (`python -m build`,
# offline: hatchling comes with the dev extra), check both with `twine check --strict`, check
# that the wheel holds every file of `src/prixfixe` (templates, py.typed and any other data
# file, not only modules), then install the wheel - not editable - into a fresh virtualenv and
# run `prixfixe --version` and `prixfixe doctor` from it in a scratch home, config folder and
# working directory. Everything it makes lives in one temporary folder, removed at the end.
#
# Uses the active environment's `python` (or $PYTHON) for building; installing the wheel's
# dependencies into the fresh virtualenv goes through pip and its cache.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "check-dist: building the sdist and the wheel"
"$python" -m build --no-isolation --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2
  exit 1
}
sdist=$(ls "$tmp"/dist/prixfixe-*.tar.gz)
wheel=$(ls "$tmp"/dist/prixfixe-*.whl)
"$python" -m twine check --strict "$sdist" "$wheel"

echo "check-dist: the wheel holds every file of src/prixfixe"
"$python" - "$wheel" <<'EOF'
import subprocess
import sys
import zipfile
from pathlib import Path

# The package's files as the build sees them: on disk under src/prixfixe, minus what git
# ignores (bytecode caches), which is what hatchling leaves out too.
files = [p for p in Path("src/prixfixe").rglob("*") if p.is_file()]
ignored = subprocess.run(
    ["git", "check-ignore", "--stdin"],
    input="\n".join(map(str, files)),
    capture_output=True,
    text=True,
).stdout.split()
expected = {p.relative_to("src").as_posix() for p in files} - {
    Path(i).relative_to("src").as_posix() for i in ignored
}
with zipfile.ZipFile(sys.argv[1]) as wheel:
    shipped = {n for n in wheel.namelist() if n.startswith("prixfixe/")}
missing = sorted(expected - shipped)
if missing:
    sys.exit(f"check-dist: the wheel lacks {len(missing)} file(s): {', '.join(missing)}")
print(f"check-dist: {len(expected)} files, every one in {Path(sys.argv[1]).name}")
EOF

echo "check-dist: installing the wheel into a fresh virtualenv"
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --disable-pip-version-check "$wheel" >"$tmp/pip.log" 2>&1 || {
  cat "$tmp/pip.log" >&2
  exit 1
}

# A scratch user: no configuration, store or plugin allowlist of the person running this, and
# a working directory outside the checkout (so nothing is imported from ./src).
mkdir -p "$tmp/home" "$tmp/work"
run() {
  (
    cd "$tmp/work"
    for name in $(env | sed -n 's/^\(PRIXFIXE_[A-Z_]*\)=.*/\1/p'); do unset "$name"; done
    HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
      PRIXFIXE_HOME="$tmp/home/prixfixe" "$@"
  )
}

where=$(run "$tmp/venv/bin/python" -c 'import prixfixe; print(prixfixe.__file__)')
case "$where" in
  "$tmp/venv/"*) ;;
  *) echo "check-dist: prixfixe was imported from $where, not the installed wheel" >&2; exit 1 ;;
esac

expected=$("$python" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
shown=$(run "$tmp/venv/bin/prixfixe" --version)
if [ "$shown" != "prixfixe, version $expected" ]; then
  echo "check-dist: prixfixe --version said '$shown', expected version $expected" >&2
  exit 1
fi
echo "check-dist: $shown"

run "$tmp/venv/bin/prixfixe" doctor >"$tmp/doctor.txt" 2>&1 || {
  cat "$tmp/doctor.txt" >&2
  echo "check-dist: prixfixe doctor failed from the installed wheel" >&2
  exit 1
}
echo "check-dist: prixfixe doctor passes from the installed wheel ($(basename "$wheel"))"
