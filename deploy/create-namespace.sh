#!/bin/sh
# One-shot: create the namespace the saga uses (the server image, unlike auto-setup, creates none).
# A namespace that already exists is left as it is.
set -eu
: "${TEMPORAL_ADDRESS:=temporal:7233}"
: "${TEMPORAL_NAMESPACE:=default}"
: "${TEMPORAL_NAMESPACE_RETENTION:=7d}"

# shellcheck source=deploy/wait-for-temporal.sh
. "$(dirname "$0")/wait-for-temporal.sh"

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
  >/dev/null 2>&1; then
  echo "Namespace $TEMPORAL_NAMESPACE exists."
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$TEMPORAL_NAMESPACE" \
    --retention "$TEMPORAL_NAMESPACE_RETENTION" --description "Saga on Temporal"
fi
