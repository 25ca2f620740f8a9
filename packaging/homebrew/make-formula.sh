#!/bin/sh
# local-formula.sh TARBALL: prints packaging/homebrew/tbrdma.rb for a tbrdma tarball of your own
# (made by `make dist`): its file:// URL and sha256 filled in. Then `brew install --formula
# ./tbrdma.rb` builds tbrdma against Homebrew's Open MPI (docs/quickstart-macos.md).
set -eu
[ $# -eq 1 ] || { echo "usage: $(basename "$0") TARBALL" >&2; exit 2; }
[ -r "$1" ] || { echo "$(basename "$0"): cannot read $1" >&2; exit 1; }
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if command -v shasum >/dev/null 2>&1; then
    sum=$(shasum -a 256 "$tarball" | cut -d' ' -f1)
else
    sum=$(sha256sum "$tarball" | cut -d' ' -f1)
fi
sed -e "s|@TBRDMA_TARBALL_URL@|file://$tarball|" -e "s|@TBRDMA_TARBALL_SHA256@|$sum|" \
    "$(dirname "$0")/tbrdma.rb"
