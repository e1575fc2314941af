#!/usr/bin/env bash
# make demo: two "laptops" on a simulated air, with no Bluetooth hardware and no root.
#
# It starts a private D-Bus, the simulated BlueZ (handoff-sim-bluez) with two adapters
# that hear each other, and one handoffd per adapter, each with its own socket and
# state directory. The two share one account (created on A, imported on B with its
# export code, as you would on two real laptops). Then laptop A publishes an activity,
# `handoffctl list` on laptop B finds it and `handoffctl continue` fetches it. Laptop B also has a desktop:
# a real notification server (dunst, on an Xvfb display) and handoff-agent, which shows the activity as a
# notification; picking Continue there (dunstctl action 0, as a click) starts the example app from its
# desktop entry with the activity. Every process started here is stopped on exit or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=$(swift build --show-bin-path)
for tool in handoffd handoffctl handoff-sim-bluez handoff-agent handoff-example-reader; do
    [[ -x "$BIN/$tool" ]] || { echo "demo: $BIN/$tool is missing; run 'make build' first" >&2; exit 1; }
done
for tool in Xvfb dunst dunstctl; do
    command -v "$tool" >/dev/null || { echo "demo: $tool is missing; run 'make deps' (packages xvfb, dunst)" >&2; exit 1; }
done
TYPE=org.handoff.demo.reading
work=$(mktemp -d /tmp/handoff-demo.XXXXXX)
pids=()

cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 0.5
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ $status -ne 0 ]]; then
        echo "demo: failed; logs were in $work:" >&2
        tail -n 20 "$work"/*.log >&2 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
laptop() { local name=$1; shift; printf '\033[2m%s$\033[0m handoffctl %s\n' "laptop-$name" "$*"; "$BIN/handoffctl" "$@" --socket "$work/$name/handoffd.sock"; }
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
    local deadline=$((SECONDS + $1)) what=$2; shift 2
    until "$@" >/dev/null 2>&1; do
        (( SECONDS < deadline )) || { echo "demo: timed out waiting for $what" >&2; return 1; }
        sleep 0.1
    done
}

step "A private D-Bus and a simulated BlueZ with two adapters (hci0, hci1) on one virtual air"
cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*"/><allow eavesdrop="true"/><allow own="*"/><allow user="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --nosyslog >"$work/dbus.log" 2>&1 &
pids+=($!)
wait_for 10 "the private bus" test -S "$work/bus"
BUS="unix:path=$work/bus"
"$BIN/handoff-sim-bluez" --bus "$BUS" --adapters 2 --extended-advertising >"$work/sim.log" 2>&1 &
pids+=($!)
wait_for 20 "the simulated BlueZ" grep -q "org.bluez" "$work/sim.log"
head -n 1 "$work/sim.log"

for name in a b; do
    adapter=$([[ $name == a ]] && echo hci0 || echo hci1)
    mkdir -p "$work/$name/accounts"
    # handoffd advertises connectably only with LE privacy on. Where the kernel cannot be
    # asked (no Bluetooth in it, as on a build machine) it relies on bluetoothd's main.conf.
    printf '[General]\nPrivacy = device\n' > "$work/$name/main.conf"
    cat > "$work/$name/handoffd.toml" <<CONF
[bluetooth]
adapter = "$adapter"
# The simulated BlueZ gives every advertisement a random address, so advertising
# connectably (needed to continue) reveals nothing there.
advertisement_type = "peripheral"
bluetoothd_main_conf = "$work/$name/main.conf"
[socket]
path = "$work/$name/handoffd.sock"
mode = "0600"
group = ""
[accounts]
directory = "$work/$name/accounts"
[dbus]
bus = "$BUS"
[device]
name = "laptop-$name"
CONF
    "$BIN/handoffd" --config "$work/$name/handoffd.toml" >"$work/$name.log" 2>&1 &
    pids+=($!)
done
step "Two handoffd instances: laptop-a on hci0, laptop-b on hci1"
for name in a b; do wait_for 20 "handoffd on laptop-$name" test -S "$work/$name/handoffd.sock"; done
echo "laptop-a: $work/a/handoffd.sock    laptop-b: $work/b/handoffd.sock"

step "Pair them: create an account on laptop-a, import its code on laptop-b"
laptop a account create demo
export_text=$(laptop a account export demo)
echo "$export_text"
code=$(sed -n "s/.*account import '\(.*\)'.*/\1/p" <<<"$export_text")
laptop b account import "$code" --name demo

step "laptop-b's desktop: a notification server (dunst on an Xvfb display) and handoff-agent"
desk="$work/desktop"
mkdir -p "$desk/data/applications" "$desk/none" "$desk/run" "$desk/home"
chmod 0700 "$desk/run"
Xvfb -displayfd 1 -nolisten tcp >"$desk/display" 2>"$work/xvfb.log" &
pids+=($!)
wait_for 15 "the Xvfb display" grep -q . "$desk/display"
# What dunst shows, as its rule scripts see it (dunst(5), SCRIPTING).
cat > "$desk/shown.sh" <<'SCRIPT'
#!/bin/sh
printf 'app:     %s\nsummary: %s\nbody:    %s\n' "$DUNST_APP_NAME" "$DUNST_SUMMARY" "$DUNST_BODY" > "$SHOWN.tmp"
mv "$SHOWN.tmp" "$SHOWN"
SCRIPT
chmod 0755 "$desk/shown.sh"
printf '[handoff]\n    category = "x-handoff.activity"\n    script = %s\n' "$desk/shown.sh" > "$desk/dunstrc"
DISPLAY=":$(cat "$desk/display")" DBUS_SESSION_BUS_ADDRESS="$BUS" HOME="$desk/home" XDG_RUNTIME_DIR="$desk/run" \
    SHOWN="$desk/shown.txt" WAYLAND_DISPLAY= dunst -config "$desk/dunstrc" >"$work/dunst.log" 2>&1 &
pids+=($!)
# The example app's desktop entry, as installed; its output goes to a file for this demo.
printf '#!/bin/sh\nexec "%s" "$@" > "%s" 2>&1\n' "$BIN/handoff-example-reader" "$desk/reader.out" > "$desk/reader"
chmod 0755 "$desk/reader"
sed "s|^Exec=.*|Exec=$desk/reader %u|" Examples/ContinuedReader/org.handoff.example.Reader.desktop \
    > "$desk/data/applications/org.handoff.example.Reader.desktop"
# The desktop's XDG directories, for handoff-agent and for handoffctl list below.
export XDG_DATA_HOME="$desk/data" XDG_DATA_DIRS="$desk/none"
HANDOFF_SOCKET="$work/b/handoffd.sock" DBUS_SESSION_BUS_ADDRESS="$BUS" XDG_RUNTIME_DIR="$desk/run" \
    "$BIN/handoff-agent" >"$work/agent.log" 2>&1 &
pids+=($!)
wait_for 20 "handoff-agent to read the desktop entry" grep -q "org.handoff.example.Reader" "$work/agent.log"
grep -o "activity types declared by desktop entries: .*" "$work/agent.log" | sed 's/^/laptop-b handoff-agent: /'

step "An app on laptop-b that handles $TYPE starts listening"
"$BIN/handoffctl" watch --type "$TYPE" --socket "$work/b/handoffd.sock" >"$work/b-watch.log" 2>&1 &
pids+=($!)
sleep 0.5

step "laptop-a publishes what its user is doing"
"$BIN/handoffctl" publish --type "$TYPE" --title "Reading the handoff README" \
    --url "https://example.org/handoff/README" --info page=3 --for 60 --socket "$work/a/handoffd.sock" >"$work/a-publish.log" 2>&1 &
pids+=($!)
printf '\033[2m%s$\033[0m handoffctl publish --type %s --title "Reading the handoff README" --url https://example.org/handoff/README --info page=3\n' laptop-a "$TYPE"
wait_for 10 "laptop-a to publish" grep -q "Publishing" "$work/a-publish.log"
cat "$work/a-publish.log"

step "laptop-b looks for nearby activities"
found() { "$BIN/handoffctl" list --json --socket "$work/b/handoffd.sock" | grep -q "\"$TYPE\""; }
wait_for 10 "laptop-b to hear laptop-a" found
laptop b list
echo
laptop b status

step "laptop-b's desktop shows it as a notification"
wait_for 15 "the notification" test -s "$desk/shown.txt"
sed 's/^/dunst shows: /' "$desk/shown.txt"

step "The first time laptop-b hears laptop-a, the two meet: a sealed exchange over GATT tells each the other's name"
wait_for 40 "laptop-b to learn laptop-a's name" grep -q "laptop-a" "$desk/shown.txt"
echo "handoff-agent replaced the notification:"
sed 's/^/dunst shows: /' "$desk/shown.txt"
laptop b devices

step "The user picks Continue: handoff-agent continues it and starts the app from its desktop entry"
printf '\033[2m%s$\033[0m dunstctl action 0    # what a click on the notification does\n' laptop-b
DBUS_SESSION_BUS_ADDRESS="$BUS" dunstctl action 0
wait_for 20 "the example app" grep -q "^Continued" "$desk/reader.out"
sed 's/^/handoff-example-reader: /' "$desk/reader.out"

step "laptop-b continues it: handoffd fetches the whole activity from laptop-a over GATT"
device=$("$BIN/handoffctl" list --json --socket "$work/b/handoffd.sock" | sed -n 's/.*"device" *: *"\([0-9a-f]*\)".*/\1/p' | head -n 1)
laptop b continue "$device"
wait_for 10 "laptop-a to be told" grep -q "was continued by device" "$work/a.log"
grep "was continued by device" "$work/a.log" | sed 's/^/laptop-a handoffd: /'
printf '\n\033[1mdemo: laptop-b found laptop-a'"'"'s activity over the simulated air and continued it.\033[0m\n'
