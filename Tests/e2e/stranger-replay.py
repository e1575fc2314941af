#!/usr/bin/python3
"""stranger-replay.py ADAPTER_PATH COMPANY_ID GO_FILE

Part of the end-to-end suite (docs/e2e.md); runs inside the guest. Plays a device without
the account key that records handoff beacons off the air and sends one again, through
bluetoothd as any program could (issue 19):

  1. discovers on ADAPTER_PATH (DuplicateData) and records every Manufacturer Specific Data
     payload filed under COMPANY_ID that it hears, with the sender's address;
  2. once GO_FILE exists, stops discovering and registers a non-connectable advertisement on
     ADAPTER_PATH carrying the newest payload it recorded: a copy, sent from its own adapter
     (with LE privacy on, from that adapter's own private address);
  3. keeps it on the air until SIGTERM, then unregisters it and exits 0.

One JSON object per line on stdout, flushed at once:
  {"t": …, "event": "recording"}                          discovery runs
  {"t": …, "event": "payload", "data": "10a3…", "address": "…"}   a payload heard for the first time
  {"t": …, "event": "replaying", "data": "10a3…", "heardFrom": "…", "heardAt": …}
  {"t": …, "event": "failed", "reason": "…"}              and exit 1
Use /usr/bin/python3: it has dbus and gi.
"""
import json
import os
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
AD = "org.bluez.LEAdvertisement1"
AD_PATH = "/org/handoff/e2e/replay"

adapter, company, go_file = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
heard = {}       # hex payload -> (first time, address)
newest = [None]  # hex payload heard last
addresses = {}   # device path -> address
state = {"replaying": False, "registered": False}


def say(record):
    record["t"] = time.time()
    print(json.dumps(record), flush=True)


def fail(reason):
    say({"event": "failed", "reason": reason})
    sys.exit(1)


def note(path, props):
    if not str(path).startswith(adapter + "/") or state["replaying"]:
        return
    if "Address" in props:
        addresses[str(path)] = str(props["Address"])
    data = props.get("ManufacturerData", {}).get(dbus.UInt16(company))
    if data is None:
        return
    payload = bytes(bytearray(data)).hex()
    if len(payload) != 48:
        return
    address = addresses.get(str(path), str(path).rsplit("dev_", 1)[-1].replace("_", ":"))
    if payload not in heard:
        heard[payload] = (time.time(), address)
        say({"event": "payload", "data": payload, "address": address})
    newest[0] = payload


def added(path, interfaces):
    if DEVICE in interfaces:
        note(path, interfaces[DEVICE])


def changed(interface, props, _invalidated, path=None):
    if interface == DEVICE and path:
        note(path, props)


class Advertisement(dbus.service.Object):
    def __init__(self, payload):
        dbus.service.Object.__init__(self, bus, AD_PATH)
        self.payload = payload

    def properties(self):
        return {
            "Type": dbus.String("broadcast"),
            "ManufacturerData": dbus.Dictionary(
                {dbus.UInt16(company): dbus.Array(self.payload, signature="y")}, signature="qv"),
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != AD:
            raise dbus.exceptions.DBusException("org.freedesktop.DBus.Error.InvalidArgs")
        return self.properties()

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties()[name]

    @dbus.service.method(AD, in_signature="", out_signature="")
    def Release(self):
        say({"event": "released"})


adapter_iface = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.Adapter1")
ad_manager = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1")
advertisement = None


def go():
    """Polled: once GO_FILE exists, advertise the newest payload heard."""
    global advertisement
    if not os.path.exists(go_file):
        return True
    state["replaying"] = True
    payload = newest[0]
    if payload is None:
        fail("%s heard no handoff beacon to replay" % adapter)
    try:
        adapter_iface.StopDiscovery()
    except dbus.exceptions.DBusException:
        pass
    advertisement = Advertisement(list(bytes.fromhex(payload)))

    def registered():
        state["registered"] = True
        first, address = heard[payload]
        say({"event": "replaying", "data": payload, "heardFrom": address, "heardAt": first})

    def refused(error):
        fail("RegisterAdvertisement on %s: %s" % (adapter, error.get_dbus_message() or error.get_dbus_name()))

    ad_manager.RegisterAdvertisement(
        dbus.ObjectPath(AD_PATH), {}, reply_handler=registered, error_handler=refused, timeout=30)
    return False


def stop(*_):
    if state["registered"]:
        try:
            ad_manager.UnregisterAdvertisement(dbus.ObjectPath(AD_PATH), timeout=10)
        except dbus.exceptions.DBusException:
            pass
    loop.quit()


bus.add_signal_receiver(added, "InterfacesAdded", OM, BLUEZ)
bus.add_signal_receiver(changed, "PropertiesChanged", PROPS, BLUEZ, path_keyword="path")
adapter_iface.SetDiscoveryFilter({"Transport": dbus.String("le"), "DuplicateData": dbus.Boolean(True)})
adapter_iface.StartDiscovery()
say({"event": "recording"})
GLib.timeout_add(100, go)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, stop)
loop.run()
