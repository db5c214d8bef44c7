# The kubex-automation-engine image: `kubex engine` on Debian 12, as a non-root user.
#
#   docker build -t <registry>/kubex-automation-engine:0.1.0 --build-arg KUBEX_GIT_COMMIT=$(git rev-parse HEAD) .
#
# The build stage uses the same scripts/install-deps.sh and `make build` as a developer machine (tests and
# benchmarks off). The runtime stage holds only the kubex binary and the Debian packages of the shared libraries it
# links; scripts/check-image-libs.sh (run by tests/e2e/test_packaging.py) fails when a library's package is missing
# from the apt-get install list below.

FROM debian:bookworm AS build
# The git checkout is not in the build context (.dockerignore), so `kubex version` gets the commit from here.
ARG KUBEX_GIT_COMMIT=""
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
# No kubectl in the image: it is only needed by the end-to-end tests.
ENV KUBEX_DEPS_NO_KUBECTL=1
RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN make build JOBS="$(nproc)" \
      CMAKE_FLAGS="-DKUBEX_BUILD_TESTS=OFF -DKUBEX_BUILD_BENCH=OFF -DKUBEX_GIT_COMMIT=${KUBEX_GIT_COMMIT}" \
 && strip --strip-debug build/bin/kubex \
 && build/bin/kubex version

FROM debian:bookworm-slim AS runtime
# One package per shared library of build/bin/kubex (`ldd`), except libc6, libgcc-s1 and libstdc++6, which the
# base image has; ca-certificates lets the engine verify an https Prometheus with the system roots.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates \
      libcpp-httplib0.11 \
      libssl3 \
      libyaml-cpp0.7 \
      libprometheus-cpp-core1.0 \
      libjemalloc2 \
      libbrotli1 \
      zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/bin/kubex /usr/local/bin/kubex
# A numeric user (runAsNonRoot can verify it without /etc/passwd); the chart runs it read-only with no capabilities.
USER 65532:65532
# 8080 /metrics, 8081 /healthz and /readyz, 9443 the admission webhooks.
EXPOSE 8080 8081 9443
ENTRYPOINT ["/usr/local/bin/kubex", "engine"]
