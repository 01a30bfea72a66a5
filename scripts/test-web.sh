#!/usr/bin/env bash
# Make sure Debian's Chromium is on this machine for the browser tests (tests/web/): they drive
# it headless through Playwright's Python API (a dev extra, from PyPI) with the system browser
# as its executable, and fail, never skip, without it. Playwright's own browser download
# (`playwright install`) is never used. Where `chromium` is missing, Debian's `chromium`
# package is installed (as root, or through sudo).
set -euo pipefail

found() {
  command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]
}

if found; then
  echo "test-web: Chromium is here"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  echo "test-web: Chromium is not installed and this user cannot install it;" \
    "install Debian's chromium package (apt-get install chromium)" >&2
  exit 1
fi

echo "test-web: installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core \
  >/dev/null || {
  echo "test-web: could not install Debian's chromium package (apt-get install chromium)" >&2
  exit 1
}
found || {
  echo "test-web: chromium installed, but the chromium command is still not found" >&2
  exit 1
}
echo "test-web: installed $(chromium --version 2>/dev/null || echo chromium)"
