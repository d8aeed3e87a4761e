#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Regenerate the committed aarch64 audit fixtures (tests/fixtures/audit/aarch64/) from
# tests/fixtures/audit/aarch64.S with the aarch64 GNU binutils: one clean binary and one
# per defect. The x86_64 fixtures are built at test time by tests/integration/audit.sh.
set -eu
cd "$(dirname "$0")/../tests/fixtures/audit"
AS=${AS:-aarch64-linux-gnu-as}
LD=${LD:-aarch64-linux-gnu-ld}
command -v "$AS" >/dev/null && command -v "$LD" >/dev/null ||
	{ echo "gen-audit-fixtures: needs $AS and $LD (binutils-aarch64-linux-gnu)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p aarch64
for v in clean call svc sp sig nocommit undeclared; do
	def=
	[ "$v" = clean ] || def="-DBAD_$(tr a-z A-Z <<<"$v")"
	# gcc -E only preprocesses: no aarch64 compiler needed
	gcc -E $def -x assembler-with-cpp aarch64.S -o "$tmp/$v.s"
	"$AS" -g --debug-prefix-map "$PWD=." -o "$tmp/$v.o" "$tmp/$v.s"
	# fixed build-id-free, deterministic static executable
	"$LD" --build-id=none -o "aarch64/$v" "$tmp/$v.o"
	echo "aarch64/$v"
done
