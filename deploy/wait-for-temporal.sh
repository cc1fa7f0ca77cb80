#!/bin/sh
# Sourced by the setup scripts: wait until the Temporal frontend at $TEMPORAL_ADDRESS reports SERVING.
: "${TEMPORAL_ADDRESS:=temporal:7233}"
: "${SETUP_WAIT_SECONDS:=120}"

waited=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  if [ "$waited" -ge "$SETUP_WAIT_SECONDS" ]; then
    echo "Temporal at $TEMPORAL_ADDRESS did not become healthy within ${SETUP_WAIT_SECONDS}s" >&2
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done
