#!/usr/bin/env bash
# Builds the Debian package handoff_<version>_<arch>.deb with dpkg-deb, from the
# release binaries in BIN_DIR (make deb builds them first), into OUT_DIR
# (default dist/). Prints the path of the package on its last line.
#
# The files are staged by scripts/install.sh (PREFIX=/usr, units in
# /lib/systemd/system as bookworm has them), so make install and the package
# install the same things; this script adds what Debian wants on top: the
# example app, fully stripped binaries, compressed manual pages and documents,
# the copyright file and changelog, control files (dependencies from
# dpkg-shlibdeps) and the maintainer scripts of packaging/deb/, into which it
# copies scripts/bluetooth-privacy.sh (a purge runs after the package's own
# files are gone). Then it runs lintian, which must report no errors.
#
# BIN_DIR is normally the release build (make deb); make test packages its
# debug build, linked with the Swift runtime, for the install test.
#
# Environment: BIN_DIR (required), OUT_DIR, DEB_MAINTAINER, LINTIAN=no to skip
# lintian, SWIFT (for building generate-manual), GENERATE_MANUAL (one already
# built; scripts/manpages.sh), DEB_COMPRESS (dpkg-deb's compression options,
# default -Zxz; make test's package of the debug build, four times the size of
# the release's, takes -Zgzip -z1: seconds rather than minutes).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
: "${BIN_DIR:?BIN_DIR must name the directory of the release build}"
BIN_DIR=$(realpath "$BIN_DIR")
OUT_DIR=${OUT_DIR:-$root/dist}
DEB_MAINTAINER=${DEB_MAINTAINER:-handoff maintainers <handoff@packages.invalid>}
version=$("$root/scripts/version.sh")
date=$("$root/scripts/version.sh" --date)
arch=$(dpkg --print-architecture)
say() { printf 'deb: %s\n' "$*" >&2; }

for program in handoffd handoffctl handoff-agent; do
    [[ -x "$BIN_DIR/$program" ]] || { say "$BIN_DIR/$program is missing: build it first (make deb does)"; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/handoff-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/root
mkdir -p "$stage/DEBIAN" "$OUT_DIR"

# MARK: Files, staged as make install would put them under /usr

say "manual pages"
SWIFT="${SWIFT:-swift}" "$root/scripts/manpages.sh" "$work/man" "$BIN_DIR" >&2
say "staging with scripts/install.sh"
BIN_DIR="$BIN_DIR" MAN_DIR="$work/man" PREFIX=/usr DESTDIR="$stage" UNIT_DIR=/lib/systemd/system \
    BLUETOOTH_CONFIG=no STRIP=true "$root/scripts/install.sh" > "$work/install.log" \
    || { cat "$work/install.log" >&2; exit 1; }
if [[ -x "$BIN_DIR/handoff-example-viewer" ]]; then
    install -D -m 0755 "$BIN_DIR/handoff-example-viewer" "$stage/usr/bin/handoff-example-viewer"
    install -D -m 0644 "$work/man/handoff-example-viewer.1" "$stage/usr/share/man/man1/handoff-example-viewer.1"
fi
# install.sh keeps the symbol table (for backtraces); Debian's policy strips it.
for binary in "$stage"/usr/bin/*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$binary"
done
find "$stage/usr/share/man" -type f -exec gzip -9n {} +

doc=$stage/usr/share/doc/handoff
install -d -m 0755 "$doc/examples"
install -m 0644 "$root/packaging/deb/copyright" "$doc/copyright"
install -m 0644 "$root/README.md" "$doc/README.md"
for page in protocol privacy beacon-format continuation pairing devices desktop; do
    install -m 0644 "$root/docs/$page.md" "$doc/$page.md"
done
install -m 0644 "$root/Config/handoffd.toml" "$doc/examples/handoffd.toml"
install -m 0644 "$root/Examples/ViewingURL/README.md" "$doc/examples/handoff-example-viewer.md"
# The changelog of a native package, in Debian's format, from CHANGELOG.md.
python3 "$root/scripts/debian-changelog.py" "$root/CHANGELOG.md" "$DEB_MAINTAINER" > "$doc/changelog"
find "$doc" -type f ! -name copyright ! -path "$doc/examples/*" -size +4k -exec gzip -9n {} +
gzip -9n "$doc/changelog"

# MARK: Control files

# dpkg-shlibdeps wants a debian/control to read; it looks only at the package name.
mkdir -p "$work/shlibs/debian"
printf 'Source: handoff\n\nPackage: handoff\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$stage"/usr/bin/* 2>"$work/shlibdeps.log") \
    || { cat "$work/shlibdeps.log" >&2; exit 1; }
shlibs=${shlibs#shlibs:Depends=}
say "shared libraries: $shlibs"

find "$stage" -path "$stage/DEBIAN" -prune -o -type d -exec chmod 0755 {} +
installed_size=$(du -k -s --apparent-size --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@MAINTAINER@/$DEB_MAINTAINER/" \
    -e "s/@INSTALLED_SIZE@/$installed_size/" -e "s/@SHLIBS_DEPENDS@/$shlibs/" \
    "$root/packaging/deb/control.in" > "$stage/DEBIAN/control"
# Every file in /etc is a conffile: handoffd.toml and handoff-agent's autostart entry.
(cd "$stage" && find etc -type f -printf '/%p\n' | sort) > "$stage/DEBIAN/conffiles"

# The maintainer scripts, with set_bluetooth_privacy copied in where they say #BLUETOOTH_PRIVACY#.
for script in postinst prerm postrm; do
    source_file=$root/packaging/deb/$script
    [[ -e "$source_file.in" ]] && source_file=$source_file.in
    awk -v helper="$root/scripts/bluetooth-privacy.sh" '
        $0 == "#BLUETOOTH_PRIVACY#" { while ((getline line < helper) > 0) print line; next }
        { print }
    ' "$source_file" > "$stage/DEBIAN/$script"
    chmod 0755 "$stage/DEBIAN/$script"
    bash -n "$stage/DEBIAN/$script"
done
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"

# MARK: The package

deb=$OUT_DIR/handoff_${version}_${arch}.deb
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$date" +%s)} \
    dpkg-deb --root-owner-group ${DEB_COMPRESS:--Zxz} --build "$stage" "$deb" >&2
say "$(du -h "$deb" | cut -f1) $(basename "$deb") in $SECONDS s"

if [[ "${LINTIAN:-yes}" != no ]]; then
    say "lintian"
    started=$SECONDS
    lintian --display-info --tag-display-limit 0 "$deb" > "$work/lintian.log" 2>&1 || true
    grep -v '^running with root privileges' "$work/lintian.log" | sed 's/^/  /' >&2
    if grep -q '^E: ' "$work/lintian.log"; then
        say "lintian reports errors"
        exit 1
    fi
    say "lintian: no errors ($(grep -c '^W: ' "$work/lintian.log" || true) warnings) in $((SECONDS - started)) s"
fi
echo "$deb"
