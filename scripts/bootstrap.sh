#!/usr/bin/env bash
# Sets up what is missing on this machine, then returns: the virtual environment and its
# packages, PostgreSQL and Redis (installed from Debian's packages when absent, started when
# stopped), and with --browser Debian's Chromium for the web client's browser tests. Safe to run
# again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# The interpreter of .venv: the functions' own (3.13, Lambda's runtime in template.yaml) where
# the machine has one, then 3.12, then python3 (3.11 or later). On 3.12 and later coverage
# measures through sys.monitoring (the Makefile's COVERAGE_CORE): at no cost to the suite, where
# 3.11's trace function cost about a quarter of the in-process tests' time (issue 43 item 5).
# PYTHON=... chooses another. pyenv's shims answer only for its selected versions, so its
# installed ones are looked for too.
pick_python() {
  local root candidate
  root=$(pyenv root 2>/dev/null || true)
  for candidate in python3.13 python3.12 ${root:+"$root"/versions/3.13*/bin/python3.13} \
      ${root:+"$root"/versions/3.12*/bin/python3.12} python3; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
  echo python3
}
PYTHON=${PYTHON:-$(pick_python)}
log() { printf '\033[1;34m[bootstrap]\033[0m %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
# Debian's packages; apt waits for another apt (a second checkout's bootstrap, the machine's own
# updates) instead of failing at once on dpkg's lock.
apt_install() {
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null
}

# `make run` and `make test` started together on a new machine both bootstrap: one at a time
# (the second finds everything done), or both would create .venv and install into it at once.
mkdir -p .stamps
exec 9>.stamps/bootstrap.lock
flock 9

# --- Python environment -------------------------------------------------------------------
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Python 3.11+ is required (found: $("$PYTHON" --version 2>&1))" >&2; exit 1
fi
version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
if [ -x .venv/bin/python ] && [ "$(version .venv/bin/python)" != "$(version "$PYTHON")" ]; then
  log "recreating .venv on Python $(version "$PYTHON") (it was $(version .venv/bin/python))"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  log "creating .venv (Python $(version "$PYTHON"))"
  "$PYTHON" -m venv .venv
fi
want=$( (version .venv/bin/python; cat requirements-dev.txt layers/dependencies/requirements.txt) |
  sha256sum | cut -c1-16)
if [ "$(cat .stamps/deps 2>/dev/null)" != "$want" ]; then
  log "installing Python packages"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
  echo "$want" > .stamps/deps
fi

# --- PostgreSQL ---------------------------------------------------------------------------
PGHOST=${PGHOST:-127.0.0.1}
if ! pg_isready -q -h "$PGHOST" -p 5432 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null; then
    log "installing PostgreSQL"
    apt_install postgresql postgresql-contrib
  fi
  log "starting PostgreSQL"
  version=$(ls /etc/postgresql | sort -V | tail -1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 30); do pg_isready -q -h "$PGHOST" -p 5432 && break; sleep 1; done
fi
if ! psql -h "$PGHOST" -U postgres -d postgres -tAc 'select 1' >/dev/null 2>&1; then
  # A fresh Debian cluster only lets the postgres OS user in: allow local TCP connections.
  log "allowing local connections as postgres"
  hba=$(ls /etc/postgresql/*/main/pg_hba.conf | head -1)
  as_root sed -i 's/^\(host\s\+all\s\+all\s\+127.0.0.1\/32\s\+\)\S\+/\1trust/; s/^\(host\s\+all\s\+all\s\+::1\/128\s\+\)\S\+/\1trust/' "$hba"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main reload
fi

# --- Redis --------------------------------------------------------------------------------
if ! (command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1); then
  if ! command -v redis-server >/dev/null; then
    log "installing Redis"
    apt_install redis-server
  fi
  log "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
# --- jq: the README's walk-through pipes through it (and tests/e2e/test_readme.py runs it) ----
if ! command -v jq >/dev/null; then
  log "installing jq"
  apt_install jq
fi

# --- Chromium (the browser tests only) -----------------------------------------------------
# Debian's build, driven by Playwright for Python: Playwright's own browser download needs a
# network this machine may not have.
if [ "${1:-}" = "--browser" ] && [ -z "${WARBLE_CHROMIUM:-}" ] && ! [ -x /usr/bin/chromium ]; then
  log "installing Chromium"
  apt_install chromium
fi
log "ready: .venv, PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379"
