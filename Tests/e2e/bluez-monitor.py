#!/usr/bin/python3
"""bluez-monitor.py ADAPTER_PATH COMPANY_ID OUT.jsonl

Part of the end-to-end suite (docs/e2e.md); runs inside the guest. Records, independently
of handoffd, what the real bluetoothd reports as Manufacturer Specific Data heard by one
adapter, and when adapters power on and off: one JSON object per line, appended to
OUT.jsonl and flushed at once.

  {"t": 1718000000.123, "event": "added" | "changed" | "removed" | "snapshot",
   "path": "/org/bluez/hci1/dev_…", "address": "…", "addressType": "random",
   "data": "10a3…"  (hex of the bytes filed under COMPANY_ID; null when absent)}
  {"t": …, "event": "bluez", "owner": ":1.7" | ""}   org.bluez appeared or vanished
  {"t": …, "event": "adapter", "path": "/org/bluez/hci0", "powered": true}
                                                     an adapter appeared or its Powered changed
  {"t": …, "event": "ready"}                          the signal matches are in place

It only listens: it calls nothing on bluetoothd except GetManagedObjects (at start, and
when org.bluez comes back) and never changes discovery or advertising.
Use /usr/bin/python3: it has dbus and gi.
"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
ADAPTER = "org.bluez.Adapter1"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"

adapter, company, out_path = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
out = open(out_path, "a", buffering=1)
known = {}  # device path -> (address, addressType)


def write(record):
    record = dict(t=round(time.time(), 6), **record)
    out.write(json.dumps(record, sort_keys=True) + "\n")


def ours(path):
    return str(path).startswith(adapter + "/")


def data_of(manufacturer_data):
    value = manufacturer_data.get(dbus.UInt16(company)) if manufacturer_data is not None else None
    return bytes(bytearray(value)).hex() if value is not None else None


def device_record(event, path, props):
    address, address_type = known.get(path, (None, None))
    if "Address" in props:
        address = str(props["Address"])
    if "AddressType" in props:
        address_type = str(props["AddressType"])
    known[path] = (address, address_type)
    write({"event": event, "path": path, "address": address, "addressType": address_type,
           "data": data_of(props.get("ManufacturerData"))})


def snapshot():
    try:
        objects = dbus.Interface(bus.get_object(BLUEZ, "/"), OM).GetManagedObjects(timeout=20)
    except dbus.DBusException:
        return
    for path, interfaces in objects.items():
        if ours(path) and DEVICE in interfaces:
            device_record("snapshot", str(path), interfaces[DEVICE])


def on_added(path, interfaces):
    if ours(path) and DEVICE in interfaces:
        device_record("added", str(path), interfaces[DEVICE])
    if ADAPTER in interfaces and "Powered" in interfaces[ADAPTER]:
        write({"event": "adapter", "path": str(path), "powered": bool(interfaces[ADAPTER]["Powered"])})


def on_removed(path, names):
    if ours(path) and DEVICE in names:
        address, address_type = known.pop(str(path), (None, None))
        write({"event": "removed", "path": str(path), "address": address, "addressType": address_type,
               "data": None})


def on_changed(interface, changed, invalidated, path=None):
    if interface == DEVICE and ours(path) and "ManufacturerData" in changed:
        device_record("changed", str(path), changed)
    if interface == ADAPTER and "Powered" in changed:
        write({"event": "adapter", "path": str(path), "powered": bool(changed["Powered"])})


def on_owner(name, old, new):
    if name == BLUEZ:
        write({"event": "bluez", "owner": str(new)})
        if new:
            snapshot()


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
bus.add_signal_receiver(on_added, dbus_interface=OM, signal_name="InterfacesAdded")
bus.add_signal_receiver(on_removed, dbus_interface=OM, signal_name="InterfacesRemoved")
bus.add_signal_receiver(on_changed, dbus_interface=PROPS, signal_name="PropertiesChanged", path_keyword="path")
bus.add_signal_receiver(on_owner, dbus_interface="org.freedesktop.DBus", signal_name="NameOwnerChanged",
                        arg0=BLUEZ)
snapshot()
write({"event": "ready"})
GLib.MainLoop().run()
