# syntax=docker/dockerfile:1
# One image, two processes:
#   controller (default command):  node /app/dist/services/controller/main.js [flags]
#   webhook:                       /webhook [flags]   (runs node /app/dist/services/webhook/main.js)
# Build:  docker build -t forewarn:0.1.0 .
# Demo without a cluster:
#   docker run --rm -p 8080:8080 forewarn:0.1.0 \
#     node /app/dist/services/controller/main.js --manifests /app/examples/manifests

# Node 22 (maintained LTS) on Debian 12; Node 20 reached end of life in April 2026. package.json's
# engines is >=20.19 <23. Pinned to a full version so a rebuild gives the same image, and CI runs the
# jest suite on this exact release (.ci/image-node; docs/decisions.md, "The image's Node.js"). To
# update: pick the newest `22.x.y-bookworm-slim` tag (https://hub.docker.com/_/node), change it here, in
# docs/deploy.md and IMAGE_NODE_VERSION with its checksums in tools/fetch-image-node.sh
# (test/integration/image/node-version.test.ts fails while they differ), run .ci/image-node and the
# end-to-end tier; for a byte-identical base, append its digest
# (`docker buildx imagetools inspect node:22.x.y-bookworm-slim` prints it) as `@sha256:...`.
ARG NODE_IMAGE=node:22.23.3-bookworm-slim
# Go for Open Policy Agent, which compiles Gatekeeper templates' Rego (docs/decisions.md): the version
# tools/build-opa.sh builds for the tests, from the Go module proxy. opa v1.22.3's go.mod asks Go 1.26.
# Pinned to a full version like the Node image (the Go these machines build opa with, go1.26.8); to
# update, pick a newer `1.26.x-bookworm` tag (https://hub.docker.com/_/golang), rebuild and run the
# Gatekeeper tests; append its digest (`docker buildx imagetools inspect`) for a byte-identical base.
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG OPA_VERSION=v1.22.3

FROM ${GO_IMAGE} AS opa
ARG OPA_VERSION
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
RUN go install -trimpath \
    -ldflags "-s -w -X github.com/open-policy-agent/opa/v1/version.Version=${OPA_VERSION#v}" \
    "github.com/open-policy-agent/opa@${OPA_VERSION}"

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, so a source change does not reinstall them. --ignore-scripts: nothing here needs an
# install script, and @pulumi/kubernetes' script would try to download a provider plugin. The build
# stage installs the Pulumi packages (dev and peer dependencies: infra/ compiles against them).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY services ./services
COPY infra ./infra
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=peer: the Pulumi packages (about 39 MB) are for the component's users, never run here.
RUN npm ci --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY examples/manifests ./examples/manifests
# Where the controller looks for opa first (--opa-path overrides it).
COPY --from=opa /go/bin/opa /usr/local/bin/opa
# The webhook's entry point. `exec` makes node PID 1, so SIGTERM reaches it and it drains cleanly.
# Each process takes its Node flags of infra/node-flags.ts (infra/packaging.test.ts checks them).
RUN printf '#!/bin/sh\nexec node --min-semi-space-size=16 --no-memory-reducer /app/dist/services/webhook/main.js "$@"\n' > /webhook \
  && chmod 0755 /webhook
# The `node` user of the official image, by number so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080 8090 8443
CMD ["node", "--min-semi-space-size=16", "/app/dist/services/controller/main.js"]
