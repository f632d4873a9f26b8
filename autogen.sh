#!/bin/sh
# Bootstraps the build system: generate the source lists, then the autotools files.
set -e
cd "$(dirname "$0")"
scripts/gen-sources .
autoreconf -fi
