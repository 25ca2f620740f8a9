#!/bin/sh
# Generates configure and the Makefile.in files from configure.ac and the Makefile.am files.
# Run once after a checkout (and after editing configure.ac, config/*.m4 or any Makefile.am).
set -e
cd "$(dirname "$0")"
autoreconf --install --force --verbose
