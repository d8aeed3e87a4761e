# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Shared by the kernel matrix scripts: where kernels are cached, the private apt configuration
# that fetches them, and how a line of the list names a kernel.
set -u
KTOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The guests' architecture, as Debian names it: amd64 (this machine's) or arm64, whose
# kernels are listed in list-arm64 and run an arm64 userland of their own (userland.sh).
KARCH=${RSEQDBG_KERNEL_ARCH:-amd64}
case $KARCH in
amd64) KLIST=${RSEQDBG_KERNEL_LIST:-$KTOP/tests/kernels/list} ;;
arm64) KLIST=${RSEQDBG_KERNEL_LIST:-$KTOP/tests/kernels/list-arm64} ;;
*) echo "kernels: RSEQDBG_KERNEL_ARCH=$KARCH is not amd64 or arm64" >&2; exit 2 ;;
esac
# Outside the clone, so that a fresh checkout or `make clean` does not download them again.
KCACHE=${RSEQDBG_KERNEL_CACHE:-/var/cache/rseqdbg-kernels}
KAPT=$KCACHE/apt${KARCH/#amd64/}
KAPT=${KAPT/%arm64/-arm64}
# The suite of the guests' userland (arm64), beside the list's suites
KUSUITE=bookworm

kdie() { echo "kernels: $*" >&2; exit 2; }

# The Debian mirror of this machine, read from its apt sources by apt itself (one-line
# sources.list and deb822 .sources alike). Prints "ARCHIVE_URI SECURITY_URI".
kmirrors() {
	local targets archive security
	targets=$(apt-get indextargets --no-release-info \
		--format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null | sort -u)
	# the archive: any URI serving a Debian suite that is not a security suite
	archive=$(awk '$3 == "deb" && $2 !~ /-security$/ &&
		$2 ~ /^(oldoldstable|oldstable|stable|testing|unstable|sid|experimental|bullseye|bookworm|trixie|forky|duke)(-updates|-backports|-proposed-updates)?$/ \
		{ print $1; exit }' <<<"$targets")
	security=$(awk '$3 == "deb" && $2 ~ /-security$/ { print $1; exit }' <<<"$targets")
	[ -n "$archive" ] || kdie "no Debian archive in this machine's apt sources"
	archive=${archive%/}
	# a machine without security sources: the archive's usual sibling
	[ -n "$security" ] || security=${archive%/debian}/debian-security
	echo "$archive ${security%/}"
}

# Options that make apt-get/apt-cache use only the private configuration under $KAPT.
kapt_opts() {
	KAPT_OPTS=(-o "Dir::Etc::SourceList=$KAPT/sources.list"
		-o "Dir::Etc::SourceParts=$KAPT/sources.list.d"
		-o "Dir::Etc::Preferences=$KAPT/preferences"
		-o "Dir::Etc::PreferencesParts=$KAPT/preferences.d"
		-o "Dir::State=$KAPT/state" -o "Dir::State::Lists=$KAPT/lists"
		-o "Dir::State::status=$KAPT/status" -o "Dir::Cache=$KAPT/cache"
		-o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=0"
		-o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
		-o "APT::Architecture=$KARCH" -o "APT::Architectures=$KARCH")
}

# The private sources: every suite the list names, from this machine's mirror. A suite
# ending in -security comes from the security archive.
kapt_setup() {
	local m archive security suites s kr=/usr/share/keyrings/debian-archive-keyring.gpg
	m=$(kmirrors) || exit 2
	read -r archive security <<<"$m"
	mkdir -p "$KAPT"/{sources.list.d,preferences.d,state,lists/partial,cache/archives/partial}
	: >"$KAPT/status"
	suites=$( (awk '!/^#/ && NF >= 3 { print $1 }' "$KLIST"
		[ "$KARCH" = amd64 ] || echo "$KUSUITE") | sort -u)
	for s in $suites; do
		case $s in
		*-security) echo "deb [signed-by=$kr] $security $s main" ;;
		*) echo "deb [signed-by=$kr] $archive $s main" ;;
		esac
	done >"$KAPT/sources.list.new"
	# a changed mirror or suite set invalidates the indexes
	if ! cmp -s "$KAPT/sources.list.new" "$KAPT/sources.list"; then
		mv "$KAPT/sources.list.new" "$KAPT/sources.list"
		rm -f "$KAPT"/lists/*_Packages* "$KAPT"/lists/*Release*
	else
		rm -f "$KAPT/sources.list.new"
	fi
	kapt_opts
}

kapt_update() { apt-get "${KAPT_OPTS[@]}" -qq update; }

# A list line: SUITE PACKAGE VERSION. PACKAGE holds the image: linux-image-RELEASE-unsigned
# (6.x, /boot/vmlinuz-RELEASE) or linux-binary-RELEASE (7.x, /usr/lib/modules/RELEASE/vmlinuz,
# the modules in linux-modules-RELEASE).
krelease() { # PACKAGE -> kernel release (uname -r)
	local r=${1#linux-image-}
	r=${r#linux-binary-}
	echo "${r%-unsigned}"
}
kflavour() { # RELEASE -> cloud-amd64, rt-amd64, amd64, cloud-arm64, arm64
	case $1 in
	*-cloud-amd64) echo cloud-amd64 ;;
	*-rt-amd64) echo rt-amd64 ;;
	*-cloud-arm64) echo cloud-arm64 ;;
	*-arm64) echo arm64 ;;
	*) echo amd64 ;;
	esac
}
# Where RELEASE is unpacked
kroot() { echo "$KCACHE/root/$1"; }

# Lines of the list (SUITE PACKAGE VERSION [TESTS]), comments and blanks dropped; with names
# given, only the lines whose release or package contains one of them.
klines() {
	local l n
	awk '!/^#/ && NF >= 3 { print $1, $2, $3, $4 }' "$KLIST" | while read -r l; do
		[ $# -eq 0 ] && { echo "$l"; continue; }
		for n in "$@"; do
			case $l in *"$n"*) echo "$l"; break ;; esac
		done
	done
}
