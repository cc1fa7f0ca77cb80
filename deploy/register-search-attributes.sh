#!/bin/sh
# One-shot: register the saga's custom search attributes (src/domain/search-attributes.ts) in the
# namespace, so sagas can be found by name, phase, repo and awaiting-input in the Web UI and
# `temporal workflow list`. Attributes already registered with the same type are skipped; one registered
# with another type makes the server refuse, and this script fails with its message.
set -eu
: "${TEMPORAL_ADDRESS:=temporal:7233}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${SAGA_SEARCH_ATTRIBUTES:=SagaName=Keyword SagaPhase=Keyword SagaRepo=Keyword SagaAwaitingInput=Bool}"
: "${SETUP_WAIT_SECONDS:=120}"

# shellcheck source=deploy/wait-for-temporal.sh
. "$(dirname "$0")/wait-for-temporal.sh"

list_attributes() {
  temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE"
}

# A namespace created a moment ago may not be in the frontend's cache yet.
waited=0
until listing=$(list_attributes 2>/dev/null); do
  if [ "$waited" -ge "$SETUP_WAIT_SECONDS" ]; then
    echo "Namespace $TEMPORAL_NAMESPACE is not available at $TEMPORAL_ADDRESS" >&2
    exit 1
  fi
  sleep 1
  waited=$((waited + 1))
done

for pair in $SAGA_SEARCH_ATTRIBUTES; do
  name=${pair%%=*}
  type=${pair#*=}
  if printf '%s\n' "$listing" | grep -Eq "^[[:space:]]*${name}[[:space:]]+${type}[[:space:]]*$"; then
    echo "Search attribute $name ($type) is registered."
  else
    temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" \
      --namespace "$TEMPORAL_NAMESPACE" --name "$name" --type "$type"
  fi
done
