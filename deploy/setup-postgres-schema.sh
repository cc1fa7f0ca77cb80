#!/bin/sh
# One-shot: create Temporal's two PostgreSQL databases and bring their schemas up to the version this
# admin-tools image ships. Safe to re-run on every `docker compose up`: existing databases are kept and
# update-schema only applies versions not yet applied (the same steps the old auto-setup image ran).
set -eu

: "${POSTGRES_SEEDS:=postgresql}"
: "${DB_PORT:=5432}"
: "${POSTGRES_USER:=temporal}"
: "${POSTGRES_PWD:?POSTGRES_PWD must be set}"
: "${DBNAME:=temporal}"
: "${VISIBILITY_DBNAME:=temporal_visibility}"
: "${SETUP_WAIT_SECONDS:=120}"
# Where the admin-tools image keeps the schemas; scripts/server-stack.sh passes its build's copy.
: "${SCHEMA_ROOT:=/etc/temporal/schema/postgresql/v12}"

waited=0
# nc where the image has it (admin-tools), pg_isready elsewhere.
port_open() {
  if command -v nc >/dev/null 2>&1; then
    nc -z "$POSTGRES_SEEDS" "$DB_PORT"
  else
    pg_isready -q -h "$POSTGRES_SEEDS" -p "$DB_PORT"
  fi
}
until port_open; do
  if [ "$waited" -ge "$SETUP_WAIT_SECONDS" ]; then
    echo "PostgreSQL at $POSTGRES_SEEDS:$DB_PORT did not answer within ${SETUP_WAIT_SECONDS}s" >&2
    exit 1
  fi
  sleep 2
  waited=$((waited + 2))
done

sql_tool() {
  SQL_PASSWORD="$POSTGRES_PWD" temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" \
    -u "$POSTGRES_USER" "$@"
}

setup_database() {
  db=$1
  schema_dir=$2
  # `create` fails when the database exists; the schema steps below still fail loudly on real errors.
  sql_tool --db "$db" create || echo "Database $db exists."
  sql_tool --db "$db" setup-schema -v 0.0
  sql_tool --db "$db" update-schema -d "$schema_dir"
}

setup_database "$DBNAME" "$SCHEMA_ROOT/temporal/versioned"
setup_database "$VISIBILITY_DBNAME" "$SCHEMA_ROOT/visibility/versioned"
echo "Temporal schemas are up to date."
