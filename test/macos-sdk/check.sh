#!/usr/bin/env bash
# check.sh: every C source of tbrdma with a macOS branch (#ifdef __APPLE__, found here, so a new
# one cannot be left out) compiled for macOS on Apple silicon (clang --target=arm64-apple-macos26.2,
# which defines __APPLE__ and not __linux__), syntax and types only (-fsyntax-only, -Wall -Wextra
# -Werror), against the stand-in headers of include/: each restates, from the macOS SDK's public
# header or XNU's source that it names, only the declarations tbrdma's macOS code uses.
#
# What this proves: the macOS branches parse, every name they use is declared, the types and
# format strings agree, with the same warnings as errors. What it does not prove: that they link
# (nothing is linked), that the stand-ins match the SDK beyond what the code touches (layouts are
# restated where the code depends on them, not checked), or how macOS's ioctls, getifaddrs and
# dyld behave at run time: that only a Mac shows (docs/field-validation.md).
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
CHECK_NAME=macos-syntax
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || fatal "no repository at $top"
command -v clang >/dev/null || fatal "clang is not installed (test/install-deps.sh installs it)"

mapfile -t files < <(grep -rl --include='*.c' '__APPLE__' plugin tools | sort)
check "sources with a macOS branch found (${#files[@]}: ${files[*]})" test "${#files[@]}" -ge 3
for f in "${files[@]}"; do
    out=$(clang --target=arm64-apple-macos26.2 -std=gnu11 -fsyntax-only -ffreestanding -nostdlibinc \
        -isystem test/macos-sdk/include -Iplugin -Iplugin/core -Itools -Itools/fieldtest \
        -Wall -Wextra -Werror "$f" 2>&1)
    if check "$f compiles for macOS (arm64, syntax and types)" test -z "$out"; then
        continue
    fi
    echo "$out" | head -20 | sed 's/^/    | /'
done
finish
