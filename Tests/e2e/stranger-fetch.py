#!/usr/bin/python3
"""stranger-fetch.py ADAPTER_PATH COMPANY_ID

Part of the end-to-end suite (docs/e2e.md); runs inside the guest. Plays a device without
the account key that tries to fetch a nearby activity over GATT, through bluetoothd as any
program could: it takes the newest handoff beacon (Manufacturer Specific Data under
COMPANY_ID) that ADAPTER_PATH hears in a discovery of its own, connects to its sender
(Device1.Connect), finds the continuation service (docs/continuation.md) and writes two
requests it cannot seal properly:

  1. version 0x10, the beacon's own recognition tag, then 54 random bytes: the origin knows
     the beacon but the request does not open: ATT error 0x83 (authenticationFailed);
  2. version 0x10, a tag nobody sent, then 54 random bytes: ATT error 0x82 (unknownBeacon).

Prints one line and exits 0 when both were refused with those codes and no notification
came; otherwise prints why and exits 1. Disconnects and removes the device in any case.
Use /usr/bin/python3: it has dbus.
"""
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
CHAR = "org.bluez.GattCharacteristic1"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
REQUEST_UUID = "608ea25e-3522-42f7-9392-b9b48ba74640"

adapter, company = sys.argv[1], int(sys.argv[2], 0)
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OM)


def fail(reason):
    print("FAIL " + reason)
    sys.exit(1)


def objects():
    return manager.GetManagedObjects()


def listen_for_newest(seconds):
    """(device path, payload) of the last beacon bluetoothd reported within `seconds`, or None:
    with extended advertising the sender's address changes with every beacon, and a device
    object of an address no longer on the air cannot be connected to."""
    last = []

    def added(path, interfaces):
        props = interfaces.get(DEVICE, {})
        data = props.get("ManufacturerData", {}).get(dbus.UInt16(company))
        if str(path).startswith(adapter + "/") and data is not None:
            last.append((str(path), bytes(bytearray(data))))

    def changed(interface, props, _invalidated, path=None):
        data = props.get("ManufacturerData", {}).get(dbus.UInt16(company)) if interface == DEVICE else None
        if path and str(path).startswith(adapter + "/") and data is not None:
            last.append((str(path), bytes(bytearray(data))))

    matches = [
        bus.add_signal_receiver(added, "InterfacesAdded", OM, BLUEZ),
        bus.add_signal_receiver(changed, "PropertiesChanged", PROPS, BLUEZ, path_keyword="path"),
    ]
    loop = GLib.MainLoop()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    for match in matches:
        match.remove()
    return last[-1] if last else None


def device_call(path, method, timeout=30):
    getattr(dbus.Interface(bus.get_object(BLUEZ, path), DEVICE), method)(timeout=timeout)


def request_characteristic(device):
    for path, interfaces in objects().items():
        props = interfaces.get(CHAR)
        if props and str(path).startswith(device + "/") and str(props["UUID"]).lower() == REQUEST_UUID:
            return str(path)
    return None


def refusal(characteristic, value):
    """The error message bluetoothd gives for the write, or None when it was accepted."""
    char = dbus.Interface(bus.get_object(BLUEZ, characteristic), CHAR)
    try:
        char.WriteValue(dbus.Array(value, signature="y"), {"type": dbus.String("request")}, timeout=20)
        return None
    except dbus.exceptions.DBusException as error:
        return error.get_dbus_message() or error.get_dbus_name()


adapter_iface = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.Adapter1")
adapter_iface.SetDiscoveryFilter({"Transport": dbus.String("le"), "DuplicateData": dbus.Boolean(True)})
device = None
try:
    deadline = time.time() + 60
    while True:
        # Scan, take the newest beacon, stop scanning (the kernel starts an LE connection only
        # when no discovery runs) and connect at once: with extended advertising the sender's
        # address lasts only until its next beacon.
        adapter_iface.StartDiscovery()
        newest = listen_for_newest(3)
        try:
            adapter_iface.StopDiscovery()
        except dbus.exceptions.DBusException:
            pass
        if newest is None:
            if time.time() > deadline:
                fail("%s heard no handoff beacon" % adapter)
            continue
        device, payload = newest
        try:
            device_call(device, "Connect", timeout=20)
        except dbus.exceptions.DBusException as error:
            if time.time() > deadline:
                fail("could not connect to %s: %s" % (device, error.get_dbus_message()))
            time.sleep(0.5)
            continue
        break
    resolved = False
    for _ in range(200):
        props = dbus.Interface(bus.get_object(BLUEZ, device), PROPS)
        if bool(props.Get(DEVICE, "ServicesResolved")):
            resolved = True
            break
        time.sleep(0.1)
    if not resolved:
        fail("%s's services were not resolved within 20 s" % device)
    characteristic = request_characteristic(device)
    if characteristic is None:
        fail("%s offers no continuation request characteristic" % device)
    # The tag of the newest beacon heard (the epochs here are short: a tag from the epoch
    # before may already be unknown, which would be refused with 0x82; then again).
    for attempt in range(3):
        tag = list(payload[1:5])
        forged = refusal(characteristic, [0x10] + tag + list(os.urandom(54)))
        if forged is None or "0x82" not in forged:
            break
        payload = (listen_for_newest(2) or (device, payload))[1]
    unknown = refusal(characteristic, [0x10] + [t ^ 0xFF for t in tag] + list(os.urandom(54)))
    if forged is None or "0x83" not in forged:
        fail("a request with the beacon's tag and no account key was not refused with 0x83: %s" % forged)
    if unknown is None or "0x82" not in unknown:
        fail("a request for a beacon nobody sent was not refused with 0x82: %s" % unknown)
    print("connected to %s (%s) without the account key: forged request refused (%s), unknown beacon "
          "refused (%s)" % (device.rsplit("/", 1)[-1], adapter.rsplit("/", 1)[-1], forged, unknown))
finally:
    if device is not None:
        try:
            device_call(device, "Disconnect", timeout=10)
        except dbus.exceptions.DBusException:
            pass
        try:
            adapter_iface.RemoveDevice(dbus.ObjectPath(device))
        except dbus.exceptions.DBusException:
            pass
