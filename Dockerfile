# Poise server image: a static Go binary on Debian slim, with Tesseract for
# screenshot OCR and wget for the healthcheck. Build context: the repository root.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/poise ./cmd/poise

FROM debian:bookworm-slim
# Debian's Tesseract with English and Simplified Chinese reads screenshot
# questions when the vision model is slow, failing or not configured
# (ocr: in the config; the tests use the same packages). The binary itself
# stays static: OCR runs as a subprocess.
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim wget ca-certificates \
	&& rm -rf /var/lib/apt/lists/* \
	&& useradd --system --no-create-home --uid 10001 poise
COPY --from=build /out/poise /usr/local/bin/poise
COPY deploy/poise.yaml /etc/poise/poise.yaml
USER poise
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s CMD wget -qO- http://127.0.0.1:8080/readyz || exit 1
ENTRYPOINT ["poise"]
CMD ["serve", "-config", "/etc/poise/poise.yaml"]
