#!/usr/bin/python3
"""l2cap-peer.py: bluetoothd's side of the L2CAP probe runs (Tests/e2e/guest-l2cap.sh, docs/e2e.md).
Runs inside the guest; use /usr/bin/python3 (it has dbus and gi).

  advertise ADAPTER_PATH COMPANY HEX READY_FILE
      Registers a connectable advertisement (Type "peripheral", Manufacturer Specific Data HEX
      under COMPANY), as handoffd's beacon is with advertisement_type = "peripheral"; touches
      READY_FILE once bluetoothd accepted it, and keeps it until SIGTERM.
  find ADAPTER_PATH COMPANY HEX TIMEOUT [hold]
      Discovers (Transport le, DuplicateData) until a device sends HEX under COMPANY and prints
      "ADDRESS TYPE SECONDS" (bluetoothd's Device1.Address and AddressType: with privacy, the
      sender's resolvable private address). With "hold" it then connects to it (Device1.Connect,
      as handoffd does before GATT), prints "connected SECONDS", keeps the link until a line on
      stdin (or its end), disconnects and prints "disconnected SECONDS".
Exits 1 with a reason on stderr when something fails or TIMEOUT passes.
"""
import os
import signal
import sys
import threading
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
loop = GLib.MainLoop()
T0 = time.monotonic()


def fail(reason):
    print(f"l2cap-peer: {reason}", file=sys.stderr, flush=True)
    os._exit(1)


class Advertisement(dbus.service.Object):
    PATH = "/org/handoff/l2cap/adv0"

    def __init__(self, company, data):
        super().__init__(bus, self.PATH)
        self.props = {
            "Type": dbus.String("peripheral"),
            "ManufacturerData": dbus.Dictionary({dbus.UInt16(company): dbus.Array(data, signature="y")}, signature="qv"),
        }

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.props

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def advertise(adapter, company, data, ready):
    adv = Advertisement(company, data)
    manager = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1")

    def ok():
        open(ready, "w").close()

    manager.RegisterAdvertisement(adv.PATH, {}, reply_handler=ok,
                                  error_handler=lambda e: fail(f"RegisterAdvertisement: {e}"))
    signal.signal(signal.SIGTERM, lambda *_: loop.quit())
    loop.run()


def find(adapter, company, data, timeout, hold):
    manager = dbus.Interface(bus.get_object(BLUEZ, "/"), OM)
    adapter_obj = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.Adapter1")
    found = {}

    def check(path, props):
        if found or not path.startswith(adapter + "/") or "ManufacturerData" not in props:
            return
        md = props["ManufacturerData"]
        if company in md and bytes(md[company]) == bytes(data):
            device = bus.get_object(BLUEZ, path)
            every = dbus.Interface(device, PROPS).GetAll("org.bluez.Device1")
            found["path"] = path
            print(f"{every['Address']} {every['AddressType']} {time.monotonic() - T0:.3f}", flush=True)
            if hold:
                connect(path)
            else:
                os._exit(0)  # may run before loop.run() (a device bluetoothd already knew)

    def added(path, interfaces):
        if "org.bluez.Device1" in interfaces:
            check(str(path), interfaces["org.bluez.Device1"])

    def changed(interface, props, _invalidated, path=None):
        if interface == "org.bluez.Device1":
            full = dbus.Interface(bus.get_object(BLUEZ, path), PROPS).GetAll("org.bluez.Device1")
            check(str(path), full)

    def connect(path):
        device = dbus.Interface(bus.get_object(BLUEZ, path), "org.bluez.Device1")
        started = time.monotonic()

        def connected():
            print(f"connected {time.monotonic() - started:.3f}", flush=True)
            threading.Thread(target=wait_stdin, args=(device,), daemon=True).start()

        device.Connect(reply_handler=connected, error_handler=lambda e: fail(f"Device1.Connect: {e}"), timeout=60)

    def wait_stdin(device):
        sys.stdin.readline()
        GLib.idle_add(disconnect, device)

    def disconnect(device):
        started = time.monotonic()
        try:
            device.Disconnect(timeout=30)
        except dbus.DBusException as e:
            fail(f"Device1.Disconnect: {e}")
        print(f"disconnected {time.monotonic() - started:.3f}", flush=True)
        loop.quit()

    bus.add_signal_receiver(added, "InterfacesAdded", OM, BLUEZ)
    bus.add_signal_receiver(changed, "PropertiesChanged", PROPS, BLUEZ, path_keyword="path")
    adapter_obj.SetDiscoveryFilter({"Transport": "le", "DuplicateData": True})
    adapter_obj.StartDiscovery()
    for path, interfaces in manager.GetManagedObjects().items():
        added(path, interfaces)
    def expire():
        if not found:
            fail(f"no device sent that data within {timeout} s")
        return False

    GLib.timeout_add(int(timeout * 1000), expire)
    loop.run()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "advertise" and len(sys.argv) == 6:
        advertise(sys.argv[2], int(sys.argv[3], 0), bytes.fromhex(sys.argv[4]), sys.argv[5])
    elif mode == "find" and len(sys.argv) in (6, 7):
        find(sys.argv[2], int(sys.argv[3], 0), bytes.fromhex(sys.argv[4]), float(sys.argv[5]),
             len(sys.argv) == 7 and sys.argv[6] == "hold")
    else:
        fail(__doc__)


main()
