# The image `patchbench k8s job --image` names: both binaries, static, on a
# slim Debian with git (every benchmark reads repositories through it) and
# bubblewrap (the test sandbox). Benchmarks that run tests need their
# toolchains too (python3 and pytest for SWE-bench Lite, Go for cobra...):
# build FROM this image and add them.
#
#   docker build -t registry.example/patchbench:1 .
#   docker push registry.example/patchbench:1

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# patchbench links the engine only and needs no cgo. patchbench-full links
# tree-sitter (C), so it is linked statically against glibc; netgo and
# osusergo keep the resolver and user lookups in Go (no NSS at run time).
RUN CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/patchbench ./cmd/patchbench \
 && CGO_ENABLED=1 go build -trimpath -tags netgo,osusergo \
      -ldflags '-s -w -linkmode external -extldflags -static' \
      -o /out/patchbench-full ./cmd/patchbench-full \
 && /out/patchbench help >/dev/null && /out/patchbench-full help >/dev/null

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bubblewrap ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 bench
COPY --from=build /out/patchbench /out/patchbench-full /usr/local/bin/
USER bench
WORKDIR /home/bench
ENTRYPOINT ["patchbench"]
