#!/usr/bin/env bash
# The install test of the Debian package (make deb-test; make test runs it):
# in a throwaway Debian root made by mmdebstrap, never on this machine, it
#
#   1. installs the package with dpkg, running its maintainer scripts, and checks
#      what they did: the 'handoff' account, /var/lib/handoffd, Privacy = device
#      in bluetoothd's main.conf, the units installed but not enabled (handoffd's
#      system unit, handoff-agent's user unit), handoff-agent's XDG autostart
#      entry in /etc/xdg/autostart as a conffile;
#   2. runs systemd-analyze verify on the installed units, man on the pages, and
#      --version of the programs;
#   3. starts the installed handoffd as user 'handoff' against the simulated
#      bluetoothd (handoff-sim-bluez, on a private bus outside the root) and
#      checks that handoffctl status answers and an account can be created, then
#      the installed handoff-agent, which must connect to that handoffd and to a
#      D-Bus bus (the private one, as its session bus) and stop cleanly;
#   4. removes, then purges the package, and checks that the root is as before
#      it was installed, but for what Debian keeps: the system account, dpkg's
#      database and logs, man-db's index.
#
# usage: scripts/deb-install-test.sh DEB SIM
#   DEB  the package (make deb)     SIM  a handoff-sim-bluez binary (runs here)
#
# Needs root (mmdebstrap in root mode, chroot, mount namespaces) and Debian's
# mirror; it fails, never skips, when it cannot run. The root holds the
# package's dependencies (as its Depends field names them) on top of
# mmdebstrap's "essential" variant, plus man-db; it lives in a temporary
# directory and is deleted at the end, with every process started here.
# DEB_TEST_BASE=DIR copies DIR, a root made earlier by the same mmdebstrap call,
# instead (for iterating on this script; the root must not hold handoff).
set -euo pipefail

deb=$(realpath "${1:?usage: deb-install-test.sh DEB SIM}")
sim=$(realpath "${2:?usage: deb-install-test.sh DEB SIM}")
fail() { printf 'deb-install-test: FAIL: %s\n' "$*" >&2; exit 1; }
say() { printf 'deb-install-test: %s\n' "$*"; }

[[ $(id -u) -eq 0 ]] || fail "needs root (mmdebstrap --mode=root, chroot, mount namespaces)"
for tool in mmdebstrap unshare chroot dbus-daemon dpkg-deb; do
    command -v "$tool" >/dev/null || fail "$tool is missing (make deb-test installs mmdebstrap)"
done
[[ -f "$deb" ]] || fail "no package at $deb"
[[ -x "$sim" ]] || fail "no simulator at $sim"

suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n "$suite" ]] || fail "cannot tell the Debian suite from /etc/os-release"
version=$(dpkg-deb -f "$deb" Version)

work=$(mktemp -d "${TMPDIR:-/tmp}/handoff-deb-test.XXXXXX")
root=$work/root
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ $status -ne 0 && -d "$work" ]]; then
        for log in "$work"/*.log; do
            [[ -s "$log" ]] && { echo "--- $(basename "$log")" >&2; tail -n 40 "$log" >&2; }
        done
    fi
    # Nothing is mounted here: the mounts lived in the namespace of the steps inside.
    if [[ -d "$root/proc" ]] && mountpoint -q "$root/proc"; then
        echo "deb-install-test: $root/proc is still mounted; left $work in place" >&2
        return
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# MARK: The throwaway root

# The package's dependencies, first alternatives, without versions.
depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' \
    | grep -v '^$' | paste -sd, -)
started=$SECONDS
if [[ -n "${DEB_TEST_BASE:-}" ]]; then
    # For iterating on this test: a copy of a root made earlier by the mmdebstrap below.
    say "copying $DEB_TEST_BASE (DEB_TEST_BASE)"
    cp -a "$DEB_TEST_BASE" "$root"
else
    say "mmdebstrap $suite (essential + $depends,man-db)"
    mmdebstrap --mode=root --variant=essential --include="$depends,man-db" --quiet \
        "$suite" "$root" > "$work/mmdebstrap.log" 2>&1 \
        || fail "mmdebstrap could not make the root (is Debian's mirror reachable?)"
fi
say "root ready in $((SECONDS - started)) s ($(du -sh "$root" | cut -f1))"
cp "$deb" "$root/tmp/handoff.deb"

# What the root holds, to compare after the purge: path, type, mode, owner and content.
snapshot() {
    local prune=(\( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./tmp \) -prune -o)
    (cd "$root" && find . -xdev "${prune[@]}" -printf '%p %y %m %u:%g\n' \
        && find . -xdev "${prune[@]}" -type f -print0 | xargs -0 md5sum | awk '{ print $2 " md5 " $1 }') | sort
}
snapshot > "$work/before.txt"
cp "$root/etc/passwd" "$work/passwd.before"
cp "$root/etc/group" "$work/group.before"

# MARK: The simulated bluetoothd, here on a private bus whose socket the root sees

mkdir -p "$work/sim"
cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/sim/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/><allow user="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --nosyslog > "$work/dbus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -S "$work/sim/bus" ]] && break; sleep 0.1; done
[[ -S "$work/sim/bus" ]] || fail "the private bus did not start"
chmod 0755 "$work/sim" && chmod 0666 "$work/sim/bus"
"$sim" --bus "unix:path=$work/sim/bus" --adapters 1 --extended-advertising > "$work/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -qs "org.bluez" "$work/sim.log" && break; sleep 0.1; done
grep -q "org.bluez" "$work/sim.log" || fail "the simulated bluetoothd did not start"

# MARK: Inside the root, in a mount and PID namespace of its own

inside() {
    set -euo pipefail
    in_root() { chroot "$root" "$@"; }
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mount -t tmpfs -o mode=0755 tmpfs "$root/run"
    mkdir -p "$root/run/handoff-sim"
    mount --bind "$work/sim" "$root/run/handoff-sim"

    say "dpkg -i $(basename "$deb")"
    in_root dpkg -i /tmp/handoff.deb > "$work/install.log" 2>&1 || fail "dpkg -i failed"
    sed 's/^/    /' "$work/install.log"
    grep -q "Privacy = device" "$work/install.log" || fail "the postinst did not say what it did to main.conf"

    say "what the maintainer scripts did"
    in_root getent passwd handoff > /dev/null || fail "no user handoff"
    in_root getent group handoff > /dev/null || fail "no group handoff"
    [[ "$(in_root stat -c '%U:%G %a' /var/lib/handoffd)" == "handoff:handoff 700" ]] \
        || fail "/var/lib/handoffd is $(in_root stat -c '%U:%G %a' /var/lib/handoffd)"
    grep -qx "Privacy = device" "$root/etc/bluetooth/main.conf" || fail "main.conf has no Privacy = device"
    [[ -e "$root/etc/bluetooth/main.conf.handoff-orig" ]] || fail "main.conf's original was not kept"
    state=$(in_root systemctl is-enabled handoffd.service 2>&1 || true)
    [[ "$state" == disabled ]] || fail "handoffd.service is '$state' after install, not disabled"
    [[ -z "$(find "$root/etc/systemd" -name 'handoffd*' -print)" ]] || fail "something enabled handoffd"
    grep -qx /etc/handoffd/handoffd.toml "$root/var/lib/dpkg/info/handoff.conffiles" || fail "the configuration is no conffile"

    say "the desktop agent"
    [[ -x "$root/usr/bin/handoff-agent" ]] || fail "the package has no /usr/bin/handoff-agent"
    agent_unit=/usr/lib/systemd/user/handoff-agent.service
    [[ -f "$root$agent_unit" ]] || fail "the package has no $agent_unit"
    grep -qx 'ExecStart=/usr/bin/handoff-agent' "$root$agent_unit" || fail "$agent_unit does not start /usr/bin/handoff-agent"
    state=$(in_root systemctl --global is-enabled handoff-agent.service 2>&1 || true)
    [[ "$state" == disabled ]] || fail "handoff-agent.service is '$state' for every user after install, not disabled"
    [[ -z "$(find "$root/etc/systemd" -name 'handoff-agent*' -print)" ]] || fail "something enabled handoff-agent"
    autostart=/etc/xdg/autostart/handoff-agent.desktop
    [[ -f "$root$autostart" ]] || fail "the package has no $autostart"
    grep -qx "$autostart" "$root/var/lib/dpkg/info/handoff.conffiles" || fail "$autostart is no conffile"
    grep -qx 'Exec=/usr/bin/handoff-agent' "$root$autostart" || fail "$autostart does not start /usr/bin/handoff-agent"
    grep -qx 'TryExec=/usr/bin/handoff-agent' "$root$autostart" || fail "$autostart tries no /usr/bin/handoff-agent"
    # Where systemd runs the session, the user unit runs the agent, not this entry.
    grep -qx 'X-systemd-skip=true' "$root$autostart" || fail "$autostart lacks X-systemd-skip=true"
    say "    $agent_unit and $autostart installed; handoff-agent.service enabled for nobody"

    # What an administrator may do next; the purge below must undo it.
    in_root systemctl enable handoffd.service > "$work/enable.log" 2>&1 || { cat "$work/enable.log"; fail "systemctl enable handoffd"; }
    in_root systemctl --global enable handoff-agent.service >> "$work/enable.log" 2>&1 \
        || { cat "$work/enable.log"; fail "systemctl --global enable handoff-agent"; }
    [[ -n "$(find "$root/etc/systemd/user" -name handoff-agent.service -type l)" ]] \
        || fail "systemctl --global enable handoff-agent made no link in /etc/systemd/user"
    say "    enabled both as an administrator would (systemctl enable, systemctl --global enable): the purge must undo it"

    say "systemd-analyze verify"
    mapfile -t units < <(in_root dpkg -L handoff | grep -E '/systemd/(system|user)/[^/]+\.(service|socket|timer)$')
    [[ " ${units[*]} " == *" /lib/systemd/system/handoffd.service "* ]] || fail "the package has no handoffd.service"
    for unit in "${units[@]}"; do
        scope=--system
        if [[ $unit == */user/* ]]; then
            scope=--user
            mkdir -p "$root/run/user/0"
        fi
        XDG_RUNTIME_DIR=/run/user/0 in_root systemd-analyze "$scope" verify "$unit" > "$work/verify.log" 2>&1 \
            || { cat "$work/verify.log"; fail "systemd-analyze verify $unit"; }
        if [[ -s "$work/verify.log" ]]; then cat "$work/verify.log"; fail "systemd-analyze verify $unit warned"; fi
        say "    $unit: clean"
    done

    say "manual pages and versions"
    for page in handoffctl handoff-agent handoffd handoffd.toml handoff-protocol handoff-example-viewer; do
        in_root man -P cat "$page" > "$work/man.log" 2>&1 || { cat "$work/man.log"; fail "man $page"; }
        [[ $(wc -l < "$work/man.log") -gt 20 ]] || fail "man $page is nearly empty"
    done
    in_root man -P cat handoffctl | grep -q "handoffctl-status\|handoffctl status" || fail "man handoffctl lacks status"
    say "    man handoffctl: $(in_root man -P cat handoffctl | sed -n '/^NAME/{n;p;q}' | sed 's/^ *//')"
    for program in handoffd handoffctl handoff-agent handoff-example-viewer; do
        out=$(in_root "$program" --version 2>&1) || fail "$program --version failed: $(head -n 1 <<<"$out")"
        [[ "$out" == *"$version"* ]] || fail "$program --version says '$out', not $version"
        say "    $program --version: $out"
    done

    say "handoffd, as user handoff, against the simulated bluetoothd"
    # What the unit's RuntimeDirectory= does under systemd.
    install -d -m 0755 -o "$(in_root id -u handoff)" -g "$(in_root id -g handoff)" "$root/run/handoffd"
    # setpriv execs (runuser would fork): $! is handoffd itself, and wait gets its status.
    (exec chroot "$root" setpriv --reuid=handoff --regid=handoff --init-groups \
        /usr/bin/handoffd --bus unix:path=/run/handoff-sim/bus --adapter hci0) > "$work/handoffd.log" 2>&1 &
    daemon=$!
    for _ in $(seq 200); do [[ -S "$root/run/handoffd/handoffd.sock" ]] && break; sleep 0.1; done
    [[ -S "$root/run/handoffd/handoffd.sock" ]] || fail "handoffd did not open /run/handoffd/handoffd.sock"
    in_root handoffctl status > "$work/status.log" 2>&1 || { cat "$work/status.log"; fail "handoffctl status"; }
    sed 's/^/    /' "$work/status.log"
    grep -q "handoffd $version" "$work/status.log" || fail "status does not name handoffd $version"
    grep -q "hci0" "$work/status.log" || fail "status names no adapter hci0"
    in_root handoffctl account create install-test > /dev/null || fail "handoffctl account create"
    [[ -n "$(find "$root/var/lib/handoffd/accounts" -type f)" ]] || fail "no key file in /var/lib/handoffd/accounts"
    [[ "$(in_root ps -o user= -p "$daemon")" == handoff ]] || fail "handoffd does not run as user handoff"

    say "handoff-agent, against that handoffd and the private bus as its session bus"
    (exec chroot "$root" /usr/bin/handoff-agent --bus-address unix:path=/run/handoff-sim/bus \
        --socket /run/handoffd/handoffd.sock --no-watch) > "$work/agent.log" 2>&1 &
    agent=$!
    # Connected to the bus: it found no notification server there. Connected to handoffd:
    # the daemon counts two clients while handoffctl asks (the agent and handoffctl).
    clients=0
    for _ in $(seq 200); do
        clients=$(in_root handoffctl status --json | sed -n 's/.*"clientCount" *: *\([0-9]*\).*/\1/p' || true)
        [[ "${clients:-0}" -ge 2 ]] && grep -q 'no notification server yet' "$work/agent.log" && break
        kill -0 "$agent" 2>/dev/null || { cat "$work/agent.log"; fail "handoff-agent exited"; }
        sleep 0.1
    done
    [[ "${clients:-0}" -ge 2 ]] || { cat "$work/agent.log"; fail "handoff-agent did not connect to handoffd"; }
    grep -q 'no notification server yet' "$work/agent.log" \
        || { cat "$work/agent.log"; fail "handoff-agent did not connect to the bus"; }
    kill -TERM "$agent"
    agent_status=0
    wait "$agent" || agent_status=$?
    [[ $agent_status -eq 0 ]] || { cat "$work/agent.log"; fail "handoff-agent exited $agent_status on SIGTERM"; }
    say "    connected to handoffd ($clients clients with handoffctl) and to the bus; stopped on SIGTERM"

    kill -TERM "$daemon"
    wait "$daemon" || fail "handoffd exited $? on SIGTERM"
    rm -rf "$root/run/handoffd"

    say "dpkg -r, then dpkg -P"
    in_root dpkg -r handoff > "$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "dpkg -r"; }
    [[ ! -e "$root/usr/bin/handoffd" ]] || fail "handoffd is still there after dpkg -r"
    [[ -e "$root/etc/handoffd/handoffd.toml" ]] || fail "dpkg -r removed the conffile"
    in_root dpkg -P handoff > "$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "dpkg -P"; }
    sed 's/^/    /' "$work/purge.log"
    umount -R "$root/run/handoff-sim" "$root/run" "$root/sys" "$root/dev" "$root/proc"
}
export -f inside say fail
export root work deb version
started=$SECONDS
unshare --mount --pid --fork --propagation private bash -c inside || exit 1
say "installed, ran and purged in $((SECONDS - started)) s"

# MARK: After the purge

rm -f "$root/tmp/handoff.deb"
snapshot > "$work/after.txt"
# Debian keeps the system account (passwd, group and their shadows and backups),
# dpkg's database and logs, and man-db's index.
kept='^\./(etc/(passwd|group|shadow|gshadow)-?|var/lib/dpkg(/.*)?|var/log(/.*)?|var/cache/man(/.*)?|var/cache/ldconfig(/.*)?|etc/ld\.so\.cache) '
diff <(grep -Ev "$kept" "$work/before.txt") <(grep -Ev "$kept" "$work/after.txt") > "$work/leftovers.txt" \
    || { cat "$work/leftovers.txt"; fail "the purge left the root changed (< before, > after)"; }
for file in passwd group; do
    extra=$(diff <(cut -d: -f1 "$work/$file.before") <(cut -d: -f1 "$root/etc/$file") | grep '^[<>]' || true)
    [[ -z "$extra" || "$extra" == "> handoff" ]] || fail "/etc/$file changed by more than the account handoff: $extra"
done
grep -q '^Package: handoff$' "$root/var/lib/dpkg/status" && fail "dpkg still lists handoff after the purge"
say "purged to nothing but the system account 'handoff' (Debian keeps system accounts)"
say "PASS"
