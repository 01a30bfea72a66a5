#!/usr/bin/env bash
# Make sure PostgreSQL's server programs (initdb, pg_ctl, postgres) are on this machine for the
# store tests: tests/postgres_server.py starts a throwaway server from them (a temporary
# directory, a free loopback port), one per test session, and fails, never skips, without them.
# They are found on PATH, through pg_config, or in Debian's /usr/lib/postgresql/N/bin; where
# they are missing, Debian's `postgresql` package is installed (as root, or through sudo).
# The package's own cluster is not created (nothing listens on 5432 afterwards), as the
# official PostgreSQL container image does; the package's `postgres` user runs the tests'
# server when the tests run as root, which PostgreSQL refuses.
set -euo pipefail

found() {
  command -v initdb >/dev/null 2>&1 && return 0
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    return 0
  fi
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}

if found; then
  echo "test-postgres: PostgreSQL's server programs are here"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo -n)
else
  echo "test-postgres: PostgreSQL is not installed and this user cannot install it;" \
    "install Debian's postgresql package (apt-get install postgresql)" >&2
  exit 1
fi

echo "test-postgres: installing Debian's postgresql package"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql-common >/dev/null
"${sudo[@]}" sed -ri 's/#?\s*(create_main_cluster)\s*=.*$/\1 = false/' \
  /etc/postgresql-common/createcluster.conf
"${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql >/dev/null
found || {
  echo "test-postgres: postgresql installed, but initdb is still not found" >&2
  exit 1
}
echo "test-postgres: installed"
