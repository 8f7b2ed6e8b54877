# The blog server as a small image: a static binary (no cgo) that runs as a
# non-root user, with the playground's GraphiQL files so that it serves them
# itself.
#
#   docker build -t blog .
#   docker run --rm -p 8080:8080 -v blog-data:/data blog   # embedded engine, demo blog, data kept in a volume, read only
#
# It listens on 0.0.0.0, so without JWT_SECRET or JWT_JWKS_URL it accepts no
# token and nobody can write (development tokens stay on loopback unless
# INSECURE_DEV_TOKENS=true).
#
# On AWS, configure it through the environment (docs/operations.md: Configuration):
# DYNAMODB_AWS=true, AWS_REGION, DYNAMODB_TABLE, JWT_SECRET or JWT_JWKS_URL;
# credentials come from the task or instance role.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/blog . && mkdir -p /out/data

FROM node:20-bookworm-slim AS playground
COPY scripts/playground-assets.sh /src/scripts/
RUN /src/scripts/playground-assets.sh /out/playground

# Distroless static: CA certificates for AWS, no shell, user nonroot (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/blog /blog
COPY --from=playground /out/playground /playground
# The embedded engine's data file, writable by the server's user.
COPY --from=build --chown=nonroot:nonroot /out/data /data
ENV HOST=0.0.0.0 PORT=8080 PLAYGROUND_ASSETS=/playground DATA_DIR=/data
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/blog"]
