#!/usr/bin/env bash
# ./build.sh [CONFIGURE-ARGS...]: generates configure when needed, configures a VPATH build in
# build/ (again when arguments are given or configure changed) and builds everything.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ -n "$(find config -name '*.m4' -newer configure 2>/dev/null)" ]; then
    ./autogen.sh
fi
mkdir -p build
cd build
if [ ! -f Makefile ] || [ $# -gt 0 ] || [ ../configure -nt config.status ]; then
    ../configure "$@"
fi
make -j2
