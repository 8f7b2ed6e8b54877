#!/usr/bin/env bash
# Installs and runs s3rver, an S3-compatible server independent of the
# project's embedded store, for the media library's tests.
#
# s3rver comes from npm; it is installed once into a git-ignored cache
# inside the repository and run with Node on 127.0.0.1, keeping its
# objects in a scratch directory removed when it stops.
#
# Usage:
#   scripts/s3rver.sh install              install only (no-op when present)
#   scripts/s3rver.sh start [PORT]         start in the background, wait until it
#                                          answers, print S3_ENDPOINT=...
#   scripts/s3rver.sh stop [PORT]          stop the instance started on PORT
#   scripts/s3rver.sh run [PORT] -- CMD... start, run CMD with S3_ENDPOINT
#                                          exported, stop on exit; exits with CMD's code
#
# Its credentials are s3rver's own (S3RVER / S3RVER), which the tests use
# unless S3_ACCESS_KEY and S3_SECRET_KEY say otherwise.
#
# Environment:
#   S3RVER_PORT      default port (8766)
#   S3RVER_TIMEOUT   seconds to wait for it to answer (30)
#   S3RVER_CACHE     install/run directory (<repo>/.cache/s3rver)
set -euo pipefail

readonly NPM_PACKAGE="s3rver"
readonly NPM_VERSION="3.7.1"
readonly DEFAULT_PORT="${S3RVER_PORT:-8766}"
readonly TIMEOUT="${S3RVER_TIMEOUT:-30}"
readonly BIND_HOST="127.0.0.1"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE="${S3RVER_CACHE:-$REPO_ROOT/.cache/s3rver}"
NPM_DIR="$CACHE/npm"
RUN_ROOT="$CACHE/run"

log() { printf 's3rver: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

check_port() {
  [[ "$1" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= 65535 )) || die "invalid port: $1"
}

bin() { printf '%s\n' "$NPM_DIR/node_modules/$NPM_PACKAGE/bin/s3rver.js"; }

installed() {
  [[ -f "$NPM_DIR/.installed-$NPM_PACKAGE-$NPM_VERSION" && -f "$(bin)" ]]
}

do_install() {
  mkdir -p "$CACHE"
  command -v node >/dev/null 2>&1 || die "node not found"
  (
    # Serialize concurrent installs (e.g. parallel test jobs).
    if command -v flock >/dev/null 2>&1; then
      exec 9>"$CACHE/.install.lock"
      flock 9
    fi
    if ! installed; then
      command -v npm >/dev/null 2>&1 || die "npm not found (needed to install $NPM_PACKAGE)"
      log "installing $NPM_PACKAGE@$NPM_VERSION into $NPM_DIR"
      rm -rf "$NPM_DIR"
      mkdir -p "$NPM_DIR"
      npm install --prefix "$NPM_DIR" --no-save --no-package-lock --ignore-scripts \
        --no-audit --no-fund --loglevel=error "$NPM_PACKAGE@$NPM_VERSION" >&2 \
        || die "npm install $NPM_PACKAGE@$NPM_VERSION failed"
      [[ -f "$(bin)" ]] || die "s3rver not found in $NPM_DIR after install"
      touch "$NPM_DIR/.installed-$NPM_PACKAGE-$NPM_VERSION"
    fi
  )
}

run_dir() { printf '%s/%s\n' "$RUN_ROOT" "$1"; }

# Prints the pid of the instance on port $1 if it is alive.
live_pid() {
  local pidfile pid
  pidfile="$(run_dir "$1")/pid"
  [[ -f "$pidfile" ]] || return 1
  pid="$(<"$pidfile")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 's3rver' || return 1
  printf '%s\n' "$pid"
}

answers() {
  curl -sS --noproxy '*' --max-time 3 "http://$BIND_HOST:$1/" 2>/dev/null | grep -q 'ListAllMyBucketsResult'
}

do_start() {
  local port="$1"
  check_port "$port"
  command -v curl >/dev/null 2>&1 || die "curl not found"
  do_install
  local pid rdir
  if pid="$(live_pid "$port")"; then
    die "s3rver is already running on port $port (pid $pid); run: $0 stop $port"
  fi
  if (exec 3<>"/dev/tcp/$BIND_HOST/$port") 2>/dev/null; then
    die "port $port is already in use by another process; pick another: $0 start PORT"
  fi
  rdir="$(run_dir "$port")"
  rm -rf "$rdir"
  mkdir -p "$rdir/data"
  node "$(bin)" -d "$rdir/data" -a "$BIND_HOST" -p "$port" --no-vhost-buckets </dev/null >"$rdir/log" 2>&1 &
  pid=$!
  echo "$pid" >"$rdir/pid"
  local deadline=$((SECONDS + TIMEOUT))
  until answers "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "s3rver exited during startup; its log ($rdir/log):"
      sed 's/^/  /' "$rdir/log" >&2 || true
      rm -f "$rdir/pid"
      exit 1
    fi
    if (( SECONDS >= deadline )); then
      log "s3rver did not answer on port $port within ${TIMEOUT}s; its log:"
      sed 's/^/  /' "$rdir/log" >&2 || true
      do_stop "$port" || true
      exit 1
    fi
    sleep 0.3
  done
  log "s3rver running on $BIND_HOST:$port (pid $pid, log $rdir/log)"
  echo "S3_ENDPOINT=http://$BIND_HOST:$port"
}

do_stop() {
  local port="$1" pid rdir
  check_port "$port"
  rdir="$(run_dir "$port")"
  if pid="$(live_pid "$port")"; then
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    log "stopped s3rver on port $port (pid $pid)"
  else
    log "s3rver is not running on port $port"
  fi
  rm -rf "$rdir"
}

do_run() {
  local port="$DEFAULT_PORT"
  if [[ $# -gt 0 && "$1" != "--" ]]; then
    port="$1"
    shift
  fi
  [[ $# -gt 0 && "$1" == "--" ]] || die "usage: $0 run [PORT] -- CMD [ARGS...]"
  shift
  [[ $# -gt 0 ]] || die "run: no command given"
  local out
  out="$(do_start "$port")" || exit 1
  export S3_ENDPOINT="${out#S3_ENDPOINT=}"
  trap 'do_stop "'"$port"'"' EXIT
  local child rc=0
  "$@" <&0 &
  child=$!
  trap 'kill -INT '"$child"' 2>/dev/null; wait '"$child"' 2>/dev/null; exit 130' INT
  trap 'kill -TERM '"$child"' 2>/dev/null; wait '"$child"' 2>/dev/null; exit 143' TERM
  wait "$child" || rc=$?
  exit "$rc"
}

main() {
  [[ $# -gt 0 ]] || usage
  local sub="$1"
  shift
  case "$sub" in
    install) do_install ;;
    start) do_start "${1:-$DEFAULT_PORT}" ;;
    stop) do_stop "${1:-$DEFAULT_PORT}" ;;
    run) do_run "$@" ;;
    -h | --help | help) usage ;;
    *) log "unknown subcommand: $sub"; usage ;;
  esac
}

main "$@"
