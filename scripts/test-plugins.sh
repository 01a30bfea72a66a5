#!/usr/bin/env bash
# The feature matrix beyond core alone (which the README's pytest run covers, with no plugin
# installed): core with the reference plugin, then everything. Each plugin package is
# installed from this checkout with `prixfixe plugins install`, into the environment the
# active prixfixe runs from (offline: hatchling comes with the dev extra), and runs its own
# tests there, the contract kit (`prixfixe.testing`) among them; with
# both installed, prixfixe lists them as loaded and the example configuration, whose morning
# routine holds the forge plugin's review-queue steps, loads and dry-runs.
set -euo pipefail
cd "$(dirname "$0")/.."

install() {
  prixfixe plugins install --no-deps --no-build-isolation -e "plugins/$1" >/dev/null
}

loaded() {
  # `prixfixe plugins --json` must show the plugin NAME loaded, from its distribution.
  prixfixe plugins --json | python -c '
import json, sys
name = sys.argv[1]
found = [p for p in json.load(sys.stdin) if p["name"] == name]
if not found or found[0]["status"] != "loaded":
    sys.exit(f"test-plugins: plugin {name!r} is not loaded: {found}")
' "$1"
}

echo "test-plugins: core with the reference plugin (prixfixe-health)"
install prixfixe-health
(cd plugins/prixfixe-health && pytest -n auto -p no:cacheprovider tests)
loaded health

echo "test-plugins: everything (prixfixe-health and prixfixe-forge)"
install prixfixe-forge
(cd plugins/prixfixe-forge && pytest -n auto -p no:cacheprovider tests)
loaded health
loaded forge
pytest -p no:cacheprovider -o addopts="" \
  "tests/test_docs.py::test_routines_doc_config_examples_and_the_example_config_are_valid"
home=$(mktemp -d)
PRIXFIXE_HOME="$home" PRIXFIXE_CONFIG=examples/prixfixe.toml prixfixe run morning --dry-run >/dev/null
rm -rf "$home"
echo "test-plugins: ok"
