#!/usr/bin/env bash
# Regenerate the screenshots in docs/web.md from the real page: run the browser tests that take
# them (tests/web/, headless Debian Chromium against a real `prixfixe serve --http`) with their
# artifacts in a scratch folder, then copy the four the docs show into docs/images/.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-web.sh
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
PRIXFIXE_ARTIFACTS="$scratch" python -m pytest -q tests/web/test_browser.py \
  -k "colour_schemes or budget_page or on_a_phone"
for name in dashboard-light dashboard-dark budget phone; do
  cp "$scratch/web/$name.png" "docs/images/web-$name.png"
done
ls -l docs/images/web-*.png
