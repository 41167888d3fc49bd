# Shared by the set-up scripts (sourced, never run). Two rules it serves:
#
#  - A command whose non-zero exit is an answer (dpkg-query for a package
#    that is not installed, grep that finds nothing, apt-cache for an unknown
#    package) is asked through a function here that turns the answer into
#    output, so that `set -euo pipefail` never ends a script on an answer.
#  - A step that fails says what failed: on_error prints the script, the
#    line and the command before the script exits with that command's status.

# on_error is the ERR trap of every set-up script.
on_error() {
	local rc=$? line=${BASH_LINENO[0]} cmd=$BASH_COMMAND
	echo "${0##*/}: line $line: '$cmd' failed (exit $rc)" >&2
	exit "$rc"
}
trap on_error ERR
set -o errtrace

# missing_packages PKG... prints, one per line, the packages of PKG that are
# not installed. dpkg-query exits 1 when any is unknown to dpkg: that is the
# answer, not a failure.
missing_packages() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) || st=
		[ "$st" = installed ] || echo "$p"
	done
}

# as_root CMD... runs CMD as root: directly when we are root, else by sudo
# (and says so plainly when there is no sudo).
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "${0##*/}: '$*' needs root and there is no sudo; run the script as root" >&2
		return 1
	fi
}

# apt_install WHO PKG... installs the packages of PKG that are missing, with a
# refresh of the package lists first (a fresh machine may have none). WHO
# prefixes the messages. Quiet when all are installed; on failure apt's own
# output is shown, not swallowed.
apt_install() {
	local who=$1 log
	shift
	local missing
	missing=$(missing_packages "$@")
	[ -n "$missing" ] || return 0
	# shellcheck disable=SC2086
	echo "$who: installing $(echo $missing)"
	export DEBIAN_FRONTEND=noninteractive
	log=$(mktemp)
	if ! as_root timeout 300 apt-get update -q >"$log" 2>&1; then
		cat "$log" >&2; rm -f "$log"
		echo "$who: apt-get update failed" >&2
		return 1
	fi
	# shellcheck disable=SC2086
	if ! as_root timeout 900 apt-get install -y -q --no-install-recommends $missing >"$log" 2>&1; then
		cat "$log" >&2; rm -f "$log"
		# shellcheck disable=SC2086
		echo "$who: apt-get install $(echo $missing) failed" >&2
		return 1
	fi
	rm -f "$log"
}

# debian_mirror prints the base URI of the Debian archive this machine's apt
# uses for its own release (the first source of suite $1, default the
# running release's codename, that is not a security archive): debootstrap
# and the private apt of another release use the same mirror, so nothing
# names a registry host. Both source formats are read: one-line
# sources.list entries and deb822 .sources stanzas.
debian_mirror() {
	local suite=${1:-} f
	if [ -z "$suite" ]; then
		suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	fi
	[ -n "$suite" ] || { echo "debian_mirror: no release codename in /etc/os-release" >&2; return 1; }
	local files=()
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || { echo "debian_mirror: no apt sources on this machine" >&2; return 1; }
	local uri
	uri=$(awk -v suite="$suite" '
		function take(u) { if (u !~ /security/ && !done) { print u; done = 1 } }
		# deb822: a stanza ends at a blank line or at the end of its file.
		function flush(  k) { if (types && hassuite && enabled) for (k = 1; k <= nu; k++) take(u[k]); types = hassuite = nu = 0; enabled = 1 }
		FNR == 1 { flush() }
		FILENAME ~ /\.list$/ {
			if ($1 != "deb") next
			i = 2
			if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			if ($(i+1) == suite) take($i)
			next
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		tolower($1) == "types:" { for (k = 2; k <= NF; k++) if ($k == "deb") types = 1 }
		tolower($1) == "uris:" { for (k = 2; k <= NF; k++) u[++nu] = $k }
		tolower($1) == "suites:" { for (k = 2; k <= NF; k++) if ($k == suite) hassuite = 1 }
		tolower($1) == "enabled:" && tolower($2) == "no" { enabled = 0 }
		END { flush() }
	' "${files[@]}" 2>/dev/null) || uri=
	[ -n "$uri" ] || { echo "debian_mirror: no apt source for suite $suite" >&2; return 1; }
	echo "${uri%/}"
}
