#!/usr/bin/python3
"""bus-count.py ADAPTER COUNT_FILE

Part of the monitor benchmark (Tests/e2e/guest-monitor.sh); runs inside the guest. Counts the
signals bluetoothd sends on the system bus, with the same match rule handoffd uses for them
(type='signal', sender='org.bluez'), so it gets every signal handoffd gets from bluetoothd, and
sorts those about ADAPTER's devices (e.g. hci1):
  deviceChanged   PropertiesChanged of org.bluez.Device1 on /org/bluez/ADAPTER/dev_*
  deviceAdded     InterfacesAdded with org.bluez.Device1 for such a path
  deviceRemoved   InterfacesRemoved with org.bluez.Device1 for such a path
  and, of deviceChanged and deviceAdded, by the ManufacturerData they carry: ownHeader (company
  0xFFFF, header 0x1_ or 0x30: what handoff's patterns let through), ffffForeign (0xFFFF, any other
  header), otherCompany, noManufacturerData (RSSI, flags and the like only)
  adapterOther    any other signal about ADAPTER (its Adapter1, e.g. Discovering)
  all             every signal from org.bluez, whatever adapter it is about
COUNT_FILE gets {"event": "ready"} once the match rule is in place, and the counts as one JSON
line on each SIGUSR1 and on SIGTERM (then exit 0). Use /usr/bin/python3 (dbus and gi).
"""
import json
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

adapter, count_file = sys.argv[1], sys.argv[2]
prefix = "/org/bluez/%s/dev_" % adapter
adapter_path = "/org/bluez/%s" % adapter
DEVICE = "org.bluez.Device1"
KEYS = ("all", "deviceChanged", "deviceAdded", "deviceRemoved", "adapterOther",
        "ownHeader", "ffffForeign", "otherCompany", "noManufacturerData")
counts = dict.fromkeys(KEYS, 0)

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
out = open(count_file, "a")


def say(record):
    record["t"] = time.time()
    out.write(json.dumps(record) + "\n")
    out.flush()


def kind(props):
    data = props.get("ManufacturerData")
    if not data:
        return "noManufacturerData"
    kinds = []
    for company, value in data.items():
        value = bytes(bytearray(value))
        if int(company) == 0xFFFF:
            head = value[0] if value else -1
            kinds.append("ownHeader" if (head >> 4 == 1 or head == 0x30) else "ffffForeign")
        else:
            kinds.append("otherCompany")
    return "ownHeader" if "ownHeader" in kinds else kinds[0]


def on_message(_bus, message):
    if message.get_type() != 4:  # signal
        return
    counts["all"] += 1
    member, path = message.get_member(), message.get_path() or ""
    try:
        if member == "PropertiesChanged" and path.startswith(prefix):
            args = message.get_args_list()
            if args and args[0] == DEVICE:
                counts["deviceChanged"] += 1
                counts[kind(args[1])] += 1
                return
        elif member in ("InterfacesAdded", "InterfacesRemoved"):
            args = message.get_args_list()
            if args and str(args[0]).startswith(prefix):
                if member == "InterfacesAdded" and DEVICE in args[1]:
                    counts["deviceAdded"] += 1
                    counts[kind(args[1][DEVICE])] += 1
                    return
                if member == "InterfacesRemoved" and DEVICE in args[1]:
                    counts["deviceRemoved"] += 1
                    return
            if args and (str(args[0]) == adapter_path or str(args[0]).startswith(adapter_path + "/")):
                counts["adapterOther"] += 1
            return
        if path == adapter_path or path.startswith(adapter_path + "/"):
            counts["adapterOther"] += 1
    except Exception as error:  # a malformed signal: count it, say it, go on
        say({"event": "error", "member": member, "path": path, "error": str(error)})


def dump(event="count"):
    record = dict(counts)
    record["event"] = event
    say(record)


def stop(*_):
    dump()
    loop.quit()
    return False


bus.add_match_string("type='signal',sender='org.bluez'")
bus.add_message_filter(on_message)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda *_: (dump(), True)[1])
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, stop)
say({"event": "ready", "adapter": adapter})
loop.run()
