#!/usr/bin/env bash
# A real Gitea for the forge tests (test/harness/gitea.ts): built from the Go module proxy into
# tools/gitea-<version>/ (the binary plus the options/ and templates/ it reads at run time, as it is built
# without the `bindata` tag). `go install` cannot build it (the module has replace directives), so the
# module is downloaded, copied somewhere writable and built there. About 5 minutes on 2 cores the first
# time; Go's module and build caches make a rebuild quick. Cached by version: a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

GITEA_VERSION="${GITEA_VERSION:-1.27.3}"
DEST="tools/gitea-${GITEA_VERSION}"

if [ -x "${DEST}/gitea" ] && [ -d "${DEST}/options" ] && [ -d "${DEST}/templates" ]; then
  echo "Gitea ${GITEA_VERSION} is cached in ${DEST} (delete it to rebuild)."
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-gitea.sh: Go is not installed (no 'go' on PATH), so Gitea ${GITEA_VERSION} cannot be built." >&2
  echo "Install Go (https://go.dev/dl/; Gitea ${GITEA_VERSION} needs the version its go.mod names, 1.26.4 for 1.27.3)" >&2
  echo "and run scripts/install-gitea.sh again," >&2
  echo "or set SAGA_SKIP_GITEA=1 for scripts/setup.sh to skip it (the forge tests then fail)." >&2
  exit 1
fi
if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
  echo "install-gitea.sh: no C compiler (cc/gcc) on PATH: Gitea's sqlite driver needs cgo." >&2
  exit 1
fi

MODULE="code.gitea.io/gitea@v${GITEA_VERSION}"
echo "Building Gitea ${GITEA_VERSION} from the Go module proxy into ${DEST} (a few minutes)..."
go mod download "${MODULE}"
SRC="$(go env GOMODCACHE)/${MODULE}"
[ -d "${SRC}" ] || { echo "install-gitea.sh: ${MODULE} was downloaded but ${SRC} is missing." >&2; exit 1; }

BUILD="$(mktemp -d -t gitea-build.XXXXXX)"
STAGE="${DEST}.partial.$$"
trap 'chmod -R u+w "${BUILD}" 2>/dev/null; rm -rf "${BUILD}" "${STAGE}"' EXIT
cp -R "${SRC}/." "${BUILD}/"
chmod -R u+w "${BUILD}"

mkdir -p "${STAGE}"
STAGE_ABS="$(cd "${STAGE}" && pwd)"
# As Gitea's Makefile does: the version (else it calls itself "development") and the tags in the binary.
TAGS='sqlite sqlite_unlock_notify'
(cd "${BUILD}" && CGO_ENABLED=1 go build -tags "${TAGS}" \
  -ldflags "-s -w -X main.Version=${GITEA_VERSION} -X 'main.Tags=${TAGS}'" -o "${STAGE_ABS}/gitea" .)
cp -R "${BUILD}/options" "${BUILD}/templates" "${STAGE}/"
chmod -R u+w "${STAGE}"
rm -rf "${DEST}"
mv "${STAGE}" "${DEST}"
"${DEST}/gitea" --version
echo "Gitea ${GITEA_VERSION} built into ${DEST}."
