# syntax=docker/dockerfile:1
# The saga worker: `bin/saga worker` against the Temporal server named by TEMPORAL_ADDRESS.
# Build: docker build -t saga-worker .   (docker-compose.yml builds and runs it with the server)

# --- build: compile TypeScript, then drop dev dependencies --------------------------------------------
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
  && npm prune --omit=dev --no-audit --no-fund \
  && chmod 755 bin/saga

# --- runtime: node + git, no compilers, no dev dependencies, not root ---------------------------------
FROM node:20-slim
# git: worktrees, commits and merges; tini: reaps the agents' orphaned processes and forwards signals
# so a stopped container cancels activities cleanly; ca-certificates/openssh-client: git remotes;
# bubblewrap/socat: the sandbox every agent and check runs in, and its allow-listed network (it needs the
# container's --security-opt settings docker-compose.yml gives saga-worker; without them the worker refuses
# agents, saying so).
# Repos are mounted from the host and owned by another uid: safe.directory lets git work in them.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git tini ca-certificates openssh-client bubblewrap socat \
  && rm -rf /var/lib/apt/lists/* \
  && git config --system --add safe.directory '*'

# Optional agent CLIs baked into the image, e.g. --build-arg AGENT_CLIS="@anthropic-ai/claude-code".
ARG AGENT_CLIS=""
RUN if [ -n "$AGENT_CLIS" ]; then npm install -g --no-audit --no-fund $AGENT_CLIS && npm cache clean --force; fi

ENV NODE_ENV=production \
  TEMPORAL_ADDRESS=temporal:7233 \
  TEMPORAL_NAMESPACE=default \
  SAGA_HOME=/sagas \
  SAGA_HOST_ID=docker

WORKDIR /app
# Root-owned and read-only for the worker; sources come along (small) so paths match a checkout.
COPY --from=build --chown=root:root /app ./

# The node image's unprivileged user (uid 1000) owns only the data folders; the app stays read-only.
RUN mkdir -p /sagas /repos && chown node:node /sagas /repos
USER node
VOLUME ["/sagas", "/repos"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["/app/bin/saga", "worker"]
