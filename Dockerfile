# The release image (goreleaser's dockers_v2 builds it with the binaries it built):
# drift alone on a distroless static base, as a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
COPY $TARGETPLATFORM/drift /usr/local/bin/drift
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/drift"]
