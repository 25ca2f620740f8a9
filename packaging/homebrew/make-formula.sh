#!/bin/sh
# make-formula.sh [--url URL] [--tap DIR] TARBALL: packaging/homebrew/tbrdma.rb for a tbrdma
# tarball (made by `make dist`), its url and sha256 filled in.
#   --url URL  where the tarball is published (https://.../tbrdma-VERSION.tar.gz, its name the
#              tarball's); without it, the tarball's own file:// URL (a formula for your own Macs)
#   --tap DIR  writes DIR/Formula/tbrdma.rb (a tap's layout, ready to push) instead of printing it
# Then `brew install --formula ./tbrdma.rb` (or `brew tap` and `brew install`) builds tbrdma
# against Homebrew's Open MPI (docs/quickstart-macos.md; README, "Cutting a release").
set -eu
me=$(basename "$0")
usage() { echo "usage: $me [--url URL] [--tap DIR] TARBALL" >&2; exit 2; }
url= tap=
while [ $# -gt 1 ]; do
    case $1 in
    --url) [ $# -gt 2 ] || usage; url=$2; shift 2 ;;
    --tap) [ $# -gt 2 ] || usage; tap=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
[ -r "$1" ] || { echo "$me: cannot read $1" >&2; exit 1; }
tarball=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if [ -n "$url" ]; then
    case $url in
    https://*/"$(basename "$tarball")") ;;
    *)
        echo "$me: --url $url must be an https:// address ending in $(basename "$tarball")" >&2
        exit 1
        ;;
    esac
else
    url=file://$tarball
fi
if command -v shasum >/dev/null 2>&1; then
    sum=$(shasum -a 256 "$tarball" | cut -d' ' -f1)
else
    sum=$(sha256sum "$tarball" | cut -d' ' -f1)
fi
out=/dev/stdout
if [ -n "$tap" ]; then
    mkdir -p "$tap/Formula"
    out=$tap/Formula/tbrdma.rb
fi
sed -e "s|@TBRDMA_TARBALL_URL@|$url|" -e "s|@TBRDMA_TARBALL_SHA256@|$sum|" \
    "$(dirname "$0")/tbrdma.rb" >"$out"
[ -z "$tap" ] || echo "$me: wrote $out ($url, sha256 $sum)"
