# shellcheck shell=bash
# A Debian source package fetched at configure time and checked against a
# sha256 manifest: the part gmp/gmp-source and openssl/openssl-source share.
# Sourced by them after they set
#   here          the script's directory (its manifest is $here/manifest)
#   debsrc_name   the cache's directory for it (gmp-source, openssl-source)
#   debsrc_points the kernels it is for ("GNU MP points"), in stop's line
#
# The manifest's lines read here: "package NAME VERSION SUITE COMPONENT", and
# "KIND SHA256 PATH" (differ; KIND source, expansion, generated...).
# The cache: ${NICEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nicemu}/$debsrc_name,
# a directory NAME_VERSION (without the epoch) each version.
# The Debian archive: the one the system's apt sources use for its own
# release (apt-get indextargets), or NICEMU_DEBIAN_ARCHIVE; the system's
# apt configuration is left as it is (a private sources list and lists).
# shellcheck disable=SC2154  # here, debsrc_name, debsrc_points: the script's
manifest=$here/manifest
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

field() { awk -v k="$1" -v n="$2" '$1 == k { print $n; exit }' "$manifest"; }
pkg_name=$(field package 2)
pkg_version=$(field package 3)
pkg_suite=$(field package 4)
pkg_component=$(field package 5)
cache=${NICEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nicemu}/$debsrc_name

# pkg_dir VERSION: that version's directory in the cache.
pkg_dir() { echo "$cache/${pkg_name}_${1#*:}"; }

# stop CODE MESSAGE: the one line of a prepare that did not finish, in
# $out/not-run (CODE 3: the package could not be fetched) or $out/failed.
stop() {
    local file=failed
    [ "$1" = 3 ] && file=not-run
    echo "$debsrc_points not run: $2" | tee "$out/$file" >&2
    exit "$1"
}

# begin DIR TOOL...: the start of a prepare into DIR; stops unless the
# tools (and those of fetch and check) are installed.
begin() {
    out=$1
    mkdir -p "$out"
    rm -f "$out/not-run" "$out/failed"
    local t
    for t in apt-get dpkg-source dpkg-parsechangelog "${@:2}" sha256sum; do
        command -v "$t" >/dev/null || stop 1 "$t not installed (scripts/setup installs it)"
    done
}

# The system's Debian archive: the URI its apt sources give the release it
# runs (the suite named by os-release's VERSION_CODENAME).
system_archive() {
    local codename
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || return 0
    # shellcheck disable=SC2016  # apt-get's own $(FIELD) syntax
    apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null |
        awk -v c="$codename" '$2 == c { print $1; exit }'
}

# The line of an apt log that says what went wrong.
apt_error() {
    { grep -m1 '^E:' "$1" || grep -v unsandboxed "$1" | grep -m1 '^W:' || tail -1 "$1"; } | cut -c1-300
}

# fetch exact|newest: apt-get source into the cache (pkg_dir: its .dsc,
# its tarballs and src/, the tree dpkg-source -x unpacks) of the manifest's
# version; if the suite no longer has it, exact stops, newest takes the
# suite's newest.  Prints the version.  apt checks the archive's signature
# (the InRelease file, against Debian's keyring) and the files' checksums
# (the signed Sources index); dpkg-source checks them against the .dsc.
fetch() {
    local tmp uri got want pkgdir
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # apt's downloads run as its own user (_apt) where they can.
    chmod 755 "$tmp"
    uri=${NICEMU_DEBIAN_ARCHIVE:-$(system_archive)}
    [ -n "$uri" ] || stop 3 "no Debian archive in the system's apt sources (set NICEMU_DEBIAN_ARCHIVE)"
    [ -r "$keyring" ] || stop 1 "$keyring missing (scripts/setup installs debian-archive-keyring)"
    mkdir -p "$tmp/lists/partial" "$tmp/archives/partial" "$tmp/parts" "$tmp/pkg"
    echo "deb-src [signed-by=$keyring] $uri $pkg_suite $pkg_component" >"$tmp/sources.list"
    local apt=(-q -o "Dir::Etc::SourceList=$tmp/sources.list" -o "Dir::Etc::SourceParts=$tmp/parts"
               -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp" -o "Dir::Cache::archives=$tmp/archives")
    apt-get "${apt[@]}" --error-on=any update >"$tmp/log" 2>&1 ||
        stop 3 "cannot fetch Debian's $pkg_suite sources index ($(apt_error "$tmp/log"))"
    got=$(apt-cache "${apt[@]}" showsrc "$pkg_name" 2>/dev/null | awk '$1 == "Version:" { print $2 }' | sort -V)
    want=$pkg_version
    if ! grep -qxF "$pkg_version" <<<"$got"; then
        local all=${got//$'\n'/ }
        [ "$1" = newest ] ||
            stop 1 "Debian's $pkg_suite has $pkg_name ${all:-(none)}, not $pkg_version of tests/hardware/${here##*/}/manifest (check the new version's files and update it)"
        [ -n "$got" ] || stop 1 "Debian's $pkg_suite has no $pkg_name source package"
        want=$(tail -1 <<<"$got")
    fi
    (cd "$tmp/pkg" && apt-get "${apt[@]}" source --download-only "$pkg_name=$want") >>"$tmp/log" 2>&1 ||
        stop 3 "cannot fetch Debian's source package $pkg_name $want ($(apt_error "$tmp/log"))"
    dpkg-source -x "$tmp/pkg/${pkg_name}_${want#*:}.dsc" "$tmp/pkg/src" >>"$tmp/log" 2>&1 ||
        stop 1 "dpkg-source -x of $pkg_name $want failed ($(tail -1 "$tmp/log"))"
    pkgdir=$(pkg_dir "$want")
    # Another prepare may have put it there meanwhile: the same files.
    mv -T "$tmp/pkg" "$pkgdir" 2>/dev/null || [ -f "$pkgdir/src/debian/changelog" ] ||
        stop 1 "cannot make $pkgdir (a partial one there? remove it)"
    rm -rf "$tmp"
    trap - EXIT
    echo "$want"
}

# differ DIR KIND: the manifest's KIND checksums of the files under DIR;
# one line naming those that differ (or are missing).
differ() {
    local bad
    bad=$(awk -v k="$2" '$1 == k { print $2 "  " $3 }' "$manifest" | (cd "$1" && sha256sum -c 2>/dev/null) |
          sed -n 's/: FAILED.*$//p' | tr '\n' ' ')
    [ -z "$bad" ] || { echo "$1: not as the manifest's checksums: ${bad% }"; return 1; }
}

# check_prepared DIR: the start of a check: exit 1 if prepare failed, 77
# (CTest's skip; 1 under CI=true) if it could not fetch the package.
check_prepared() {
    if [ -f "$1/failed" ]; then
        cat "$1/failed"
        exit 1
    fi
    if [ -f "$1/not-run" ]; then
        cat "$1/not-run"
        [ "${CI:-}" = true ] && { echo "(CI=true: a failure)"; exit 1; }
        exit 77
    fi
}

# check_made DIR KIND PATTERN WHAT: the files PATTERN under DIR are those
# the manifest lists as KIND (no other), with its checksums.
check_made() {
    local listed made status=0
    listed=$(awk -v k="$2" '$1 == k { print $3 }' "$manifest" | sort)
    made=$(cd "$1" && find . -name "$3" | sed 's|^\./||' | sort)
    [ "$listed" = "$made" ] ||
        { echo "$4 made and listed differ:"; diff <(echo "$listed") <(echo "$made") || true; status=1; }
    differ "$1" "$2" || status=1
    return $status
}
