# Shared set-up steps for scripts/demo and scripts/test. Every step is idempotent.
# shellcheck shell=bash

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
VAR="${PACELAB_VAR_DIR:-$ROOT/var}"
mkdir -p "$VAR"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

find_python() {
  for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$cand"; return 0
    fi
  done
  die "Python 3.11 or newer is needed"
}

# The virtualenv and the project's Python dependencies; reinstalled only when pyproject.toml changes.
ensure_venv() {
  local extras="${1:-}"
  if [ ! -x "$PY" ]; then
    log "creating .venv"
    "$(find_python)" -m venv "$VENV" || {
      apt_install python3-venv; "$(find_python)" -m venv "$VENV"; }
  fi
  local stamp="$VENV/.pacelab-installed$extras"
  local want
  want="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
  # a full [dev] install also satisfies a plain one
  if [ -z "$extras" ] && [ -f "$VENV/.pacelab-installed[dev]" ] && [ "$(cat "$VENV/.pacelab-installed[dev]")" = "$want" ]; then
    return 0
  fi
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    log "installing Python dependencies${extras:+ ($extras)}"
    "$PY" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
    "$PY" -m pip install -q --disable-pip-version-check -e "$ROOT$extras"
    echo "$want" > "$stamp"
  fi
}

APT_UPDATED=""
apt_install() {
  # apt_install PKG... : install the Debian packages that are missing.
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  # several checkouts share one machine: wait for another apt-get's lock instead of failing on it
  local lock=(-o DPkg::Lock::Timeout=900)
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get "${lock[@]}" update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${lock[@]}" install -y -qq "${missing[@]}" >/dev/null
}

# o200k_base ranks come from the npm package js-tiktoken, converted once at set-up time.
ensure_o200k() {
  if command -v npm >/dev/null 2>&1; then
    "$PY" -m playback.vendor_o200k --quiet || log "o200k_base could not be vendored (tokenizer unavailable)"
  else
    log "npm not found: the o200k_base tokenizer stays unavailable"
  fi
}

pg_version() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1; }

# PostgreSQL: start the installed cluster, then a role (with CREATEDB, for test databases) and a database.
ensure_postgres() {
  if [ -z "$(pg_version)" ]; then apt_install postgresql; fi
  local v; v="$(pg_version)"
  if ! pg_lsclusters -h 2>/dev/null | awk -v v="$v" '$1==v && $2=="main" {print $4}' | grep -q online; then
    log "starting PostgreSQL $v"
    pg_ctlcluster --skip-systemctl-redirect "$v" main start
  fi
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 0.5; done
  pg_isready -q -h 127.0.0.1 || die "PostgreSQL did not come up"
  # The suite runs several Daphne and Celery processes per test worker: allow more than the default 100.
  local maxconn; maxconn="$(su postgres -c "psql -tAc 'SHOW max_connections' -d postgres")"
  if [ "${maxconn:-0}" -lt 400 ]; then
    log "raising PostgreSQL max_connections to 400"
    su postgres -c "psql -q -c 'ALTER SYSTEM SET max_connections = 400' -d postgres"
    pg_ctlcluster --skip-systemctl-redirect "$v" main restart
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 && break; sleep 0.5; done
  fi
  local pwfile="$VAR/pg_password"
  [ -f "$pwfile" ] || { "$PY" -c 'import secrets; print(secrets.token_hex(16))' > "$pwfile"; chmod 600 "$pwfile"; }
  local pw; pw="$(cat "$pwfile")"
  su postgres -c "psql -q -v ON_ERROR_STOP=1 -d postgres" <<SQL >/dev/null
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'pacelab') THEN
    CREATE ROLE pacelab LOGIN CREATEDB PASSWORD '$pw';
  ELSE
    ALTER ROLE pacelab LOGIN CREATEDB PASSWORD '$pw';
  END IF;
END \$\$;
SQL
  # PACELAB_PG_DB names the database (default pacelab): two checkouts testing side by side on one machine each
  # get their own, and so their own test databases.
  local db="${PACELAB_PG_DB:-pacelab}"
  if ! su postgres -c "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='$db'\" -d postgres" | grep -q 1; then
    su postgres -c "createdb -O pacelab $db"
  fi
  export PACELAB_PG_URL="postgres://pacelab:$pw@127.0.0.1:5432/$db"
}

ensure_redis() {
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
  fi
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || die "Redis did not come up"
  export PACELAB_REDIS_URL="redis://127.0.0.1:6379/0"
}

ensure_chromium() {
  apt_install chromium chromium-driver fonts-noto-cjk
  [ -x /usr/bin/chromium ] || die "/usr/bin/chromium missing after install"
}

# Firefox: Debian's ESR, driven headless over its built-in WebDriver BiDi (tests/browser/engines.py); no geckodriver.
ensure_firefox() {
  apt_install firefox-esr fonts-noto-cjk
  [ -x /usr/bin/firefox-esr ] || die "/usr/bin/firefox-esr missing after install"
}

# WebKit: WebKitGTK's MiniBrowser (from libwebkit2gtk) under Debian's WebKitWebDriver, on a private Xvfb display.
ensure_webkit() {
  apt_install webkit2gtk-driver xvfb fonts-noto-cjk
  [ -x /usr/bin/WebKitWebDriver ] || die "/usr/bin/WebKitWebDriver missing after install"
  command -v Xvfb >/dev/null 2>&1 || die "Xvfb missing after install"
  compgen -G "/usr/lib/*/webkit2gtk-4.1/MiniBrowser" >/dev/null || compgen -G "/usr/lib/*/webkitgtk-6.0/MiniBrowser" >/dev/null \
    || die "WebKitGTK's MiniBrowser missing after installing webkit2gtk-driver"
}

# The engines the browser tests run in: PACELAB_ENGINES (comma-separated) narrows them for a quick local loop;
# in CI every engine must run, so a narrowed set or a missing engine fails the run instead of skipping it.
ensure_engines() {
  local engines="${PACELAB_ENGINES:-chromium,firefox,webkit}"
  if [ "${CI:-}" = "true" ]; then
    for e in chromium firefox webkit; do
      case ",$engines," in *,"$e",*) ;; *) die "CI=true runs every browser engine; PACELAB_ENGINES='$engines' leaves out $e" ;; esac
    done
  fi
  case ",$engines," in *,chromium,*) ensure_chromium ;; esac
  case ",$engines," in *,firefox,*) ensure_firefox ;; esac
  case ",$engines," in *,webkit,*) ensure_webkit ;; esac
  export PACELAB_ENGINES="$engines"
}
