#!/bin/bash -eu
# ClusterFuzzLite runs $SRC/build.sh in the image of .clusterfuzzlite/Dockerfile.
# The build is the one OSS-Fuzz runs, kept in one place.
exec bash -eux "$SRC/npyguard/fuzz/oss-fuzz/build.sh"
