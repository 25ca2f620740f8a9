#!/usr/bin/env bash
# The release tarball and its Homebrew formula, without a Mac:
#   - make distcheck passes (in build/dist, a build directory of its own: the tarball is built,
#     unpacked, configured, built, its unit tests run, installed and uninstalled); the tarball
#     stays in build/dist for homebrew_steps.sh;
#   - the formula template is valid Ruby, names configure.ac's home page, and is refused as it
#     is (its url and sha256 are slots); configure.ac names the license and a bug address;
#   - make-formula.sh fills in the url (file://, or a release's https://, in a tap's Formula/)
#     and sha256 of the tarball, and the result passes Homebrew's audit rules that can be checked
#     without a Mac (audit-formula.rb); it refuses a url that is not https or names another file.
# Every CI run: run-tests.sh runs it in the background lane (or in the tools stage without one).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=../../lib/check.sh
. "$top/test/lib/check.sh"
brew_dir="$top/packaging/homebrew"
dist="$top/build/dist"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. The formula: the tarball of `make distcheck` (which also builds it from the tarball, runs
# its unit tests there and installs and uninstalls it), the formula made for it with
# make-formula.sh, and Homebrew's audit rules that hold without a Mac (audit-formula.rb).
command -v ruby >/dev/null || fatal "ruby is needed to check the formula's syntax (test/install-deps.sh)"
check "tbrdma.rb is valid Ruby (ruby -c)" ruby -c "$brew_dir/tbrdma.rb"
home=$(sed -n 's/^ *\[\(https:[^]]*\)\])$/\1/p' "$top/configure.ac")
check "the formula's homepage is configure.ac's (AC_INIT: $home)" \
    grep -qxF "  homepage \"$home\"" "$brew_dir/tbrdma.rb"
check "configure.ac names the license and a bug-report address" \
    bash -c "grep -q 'License: BSD-3-Clause' '$top/configure.ac' && grep -q 'AC_INIT(\[tbrdma\], \[[0-9.]*\], \[https://' '$top/configure.ac'"
check "the template is not publishable as it is (its url and sha256 are slots)" \
    bash -c "! ruby '$brew_dir/audit-formula.rb' '$brew_dir/tbrdma.rb' >/dev/null"
# its own build directory, so that the tests using build/ beside it are not disturbed
rm -rf "$dist" && mkdir -p "$dist" || fatal "cannot make $dist"
(cd "$dist" && "$top/configure" >"$tmp/configure.log" 2>&1) \
    || { tail -n 20 "$tmp/configure.log" | sed 's/^/    | /'; fatal "configure in $dist failed"; }
make -C "$dist" distcheck >"$tmp/dist.log" 2>&1 \
    || { tail -n 30 "$tmp/dist.log" | sed 's/^/    | /'; fatal "make distcheck failed (log above)"; }
check "make distcheck passed" grep -q "archives ready for distribution" "$tmp/dist.log"
tarball=$(ls "$dist"/tbrdma-*.tar.gz | head -n 1)
name=$(basename "$tarball")
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
"$brew_dir/make-formula.sh" "$tarball" >"$tmp/tbrdma.rb"
check "make-formula.sh: the tarball's file:// URL" grep -q "^  url \"file://$tarball\"$" "$tmp/tbrdma.rb"
check "make-formula.sh: its sha256" grep -q "^  sha256 \"$sum\"$" "$tmp/tbrdma.rb"
check "make-formula.sh: nothing left to fill in, and Homebrew's rules hold (file:// allowed)" \
    ruby "$brew_dir/audit-formula.rb" --local "$tmp/tbrdma.rb"
url=https://downloads.example.org/tbrdma/$name
out=$("$brew_dir/make-formula.sh" --url "$url" --tap "$tmp/tap" "$tarball")
echo "    $out"
check "make-formula.sh --tap: the tap's Formula/tbrdma.rb with the release's url and sha256" \
    bash -c "grep -qxF '  url \"$url\"' '$tmp/tap/Formula/tbrdma.rb' \
        && grep -qxF '  sha256 \"$sum\"' '$tmp/tap/Formula/tbrdma.rb'"
check "the release formula passes Homebrew's rules as it is (https, license, order, test)" \
    ruby "$brew_dir/audit-formula.rb" "$tmp/tap/Formula/tbrdma.rb"
check "make-formula.sh refuses a url that is not https or names another file" \
    bash -c "! '$brew_dir/make-formula.sh' --url http://x.org/$name '$tarball' >/dev/null 2>&1 \
        && ! '$brew_dir/make-formula.sh' --url https://x.org/other.tar.gz '$tarball' >/dev/null 2>&1"
finish
