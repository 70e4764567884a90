# Poise server image: a static Go binary on Alpine (for wget in the
# healthcheck). Build context: the repository root.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/poise ./cmd/poise

FROM alpine:3.21
RUN adduser -D -H -u 10001 poise
COPY --from=build /out/poise /usr/local/bin/poise
COPY deploy/poise.yaml /etc/poise/poise.yaml
USER poise
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD wget -qO- http://127.0.0.1:8080/readyz || exit 1
ENTRYPOINT ["poise"]
CMD ["serve", "-config", "/etc/poise/poise.yaml"]
