#!/usr/bin/python3
"""stranger-flood.py ADAPTER_PATH COUNT_FILE [--adverts N] [--period-ms MS]

Part of the monitor benchmark (Tests/e2e/guest-monitor.sh, scripts/bench-monitor.sh); runs
inside the guest. Plays busy strangers near a laptop: it registers N non-connectable
advertisements (LEAdvertisement1, Type "broadcast") on ADAPTER_PATH through bluetoothd, none of
them a handoff beacon, and changes each one's manufacturer data every MS milliseconds with
PropertiesChanged (a live update: bluetoothd puts the new data on the air at once). The changes
are spread evenly over the period, one advertisement at a time, so the air carries N * 1000 / MS
changes per second. Each data is new (a running counter and random bytes), so a listener's
bluetoothd sees a stream of distinct reports rather than repeats of one.

The advertisements, in turn (N at most the adapter's SupportedInstances: on btvirt 3 with extended
advertising, as the rig runs it, 5 with legacy; 3 by default):
  0  company 0x0075 (another company's ID), 24 bytes
  1  company 0xFFFF (the test ID handoff uses), header 0x2_ (a version nibble of 2: not a beacon,
     which has 1, and not a pairing offer, 0x30), 24 bytes: the length of a real beacon
  2  company 0x0006 (another company's ID), 24 bytes
  3  company 0xFFFF, header 0xA_, 24 bytes
  4  company 0x0075 again
On the discovery path handoffd gets every one of them from bluetoothd and drops the other
companies' at once and rejects the 0xFFFF ones as beacons; an advertisement monitor with
handoff's patterns lets none of them through.

COUNT_FILE gets one JSON line on start ({"event": "ready", ...} once every advertisement is
registered, or {"event": "failed", ...} and exit 1) and one on each SIGUSR1 and at the end:
  {"t": ..., "event": "count", "sent": TOTAL, "byCompany": {"0x0075": ..., ...}, "refused": ...}
"sent" counts the PropertiesChanged signals emitted; "refused" counts live updates bluetoothd
could not have taken because the advertisement was released (0 normally). SIGTERM unregisters
everything and exits 0. Use /usr/bin/python3: it has dbus and gi.
"""
import json
import os
import random
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
AD = "org.bluez.LEAdvertisement1"
ROOT = "/org/handoff/bench/stranger"
KINDS = [(0x0075, None), (0xFFFF, 0x20), (0x0006, None), (0xFFFF, 0xA0), (0x0075, None)]

args = sys.argv[1:]
adapter, count_file = args[0], args[1]
adverts, period_ms = 3, 150
i = 2
while i < len(args):
    if args[i] == "--adverts":
        adverts = int(args[i + 1]); i += 2
    elif args[i] == "--period-ms":
        period_ms = int(args[i + 1]); i += 2
    else:
        sys.exit("stranger-flood: unknown argument %s" % args[i])
if not 1 <= adverts <= len(KINDS):
    sys.exit("stranger-flood: --adverts 1 to %d" % len(KINDS))

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
out = open(count_file, "a")
rng = random.Random(os.getpid())


def say(record):
    record["t"] = time.time()
    out.write(json.dumps(record) + "\n")
    out.flush()


class Advertisement(dbus.service.Object):
    def __init__(self, index):
        self.path = "%s/ad%d" % (ROOT, index)
        dbus.service.Object.__init__(self, bus, self.path)
        self.company, self.header = KINDS[index]
        self.serial = 0
        self.sent = 0
        self.registered = False
        self.released = False
        self.payload = self.next_payload()

    def next_payload(self):
        """24 bytes: [header] a 32-bit counter, then random bytes."""
        self.serial += 1
        body = self.serial.to_bytes(4, "big") + bytes(rng.getrandbits(8) for _ in range(19))
        head = (self.header | rng.getrandbits(4)) if self.header is not None else rng.getrandbits(8)
        return bytes([head]) + body

    def manufacturer_data(self):
        return dbus.Dictionary(
            {dbus.UInt16(self.company): dbus.Array(list(self.payload), signature="y")}, signature="qv")

    def properties(self):
        return {"Type": dbus.String("broadcast"), "ManufacturerData": self.manufacturer_data()}

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != AD:
            raise dbus.exceptions.DBusException("org.freedesktop.DBus.Error.InvalidArgs")
        return self.properties()

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[name]

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    @dbus.service.method(AD, in_signature="", out_signature="")
    def Release(self):
        self.released = True
        say({"event": "released", "path": self.path})

    def change(self):
        self.payload = self.next_payload()
        self.PropertiesChanged(AD, {"ManufacturerData": self.manufacturer_data()}, dbus.Array([], signature="s"))
        self.sent += 1


manager = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1")
ads = [Advertisement(i) for i in range(adverts)]
state = {"pending": adverts, "failed": False, "next": 0, "refused": 0}


def counts(event="count"):
    by = {}
    for ad in ads:
        key = "0x%04X" % ad.company
        by[key] = by.get(key, 0) + ad.sent
    say({"event": event, "sent": sum(ad.sent for ad in ads), "byCompany": by, "refused": state["refused"],
         "adverts": adverts, "periodMs": period_ms})


def tick():
    ad = ads[state["next"]]
    state["next"] = (state["next"] + 1) % len(ads)
    if ad.released:
        state["refused"] += 1
    else:
        ad.change()
    return True


def registered(ad):
    def done():
        ad.registered = True
        state["pending"] -= 1
        if state["pending"] == 0 and not state["failed"]:
            say({"event": "ready", "adverts": adverts, "periodMs": period_ms,
                 "companies": ["0x%04X" % a.company for a in ads]})
            GLib.timeout_add(max(1, period_ms // adverts), tick)
    return done


def refused(ad):
    def done(error):
        state["failed"] = True
        say({"event": "failed", "path": ad.path,
             "reason": "RegisterAdvertisement: %s" % (error.get_dbus_message() or error.get_dbus_name())})
        loop.quit()
    return done


def stop(*_):
    counts()
    for ad in ads:
        if ad.registered and not ad.released:
            try:
                manager.UnregisterAdvertisement(dbus.ObjectPath(ad.path), timeout=5)
            except dbus.exceptions.DBusException:
                pass
    loop.quit()
    return False


for ad in ads:
    manager.RegisterAdvertisement(dbus.ObjectPath(ad.path), {}, reply_handler=registered(ad),
                                  error_handler=refused(ad), timeout=30)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda *_: (counts(), True)[1])
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, stop)
loop.run()
sys.exit(1 if state["failed"] else 0)
