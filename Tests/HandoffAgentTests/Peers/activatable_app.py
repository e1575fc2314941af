#!/usr/bin/env python3
"""A D-Bus activatable app (Desktop Entry spec, "D-Bus Activation"), for the agent's tests.

    activatable_app.py BUS_NAME RECORD_FILE

Owns BUS_NAME and serves org.freedesktop.Application at the path derived from it
('.' to '/', '-' to '_'); each Open(as uris, a{sv} platform_data) appends the URIs,
one per line, to RECORD_FILE.
"""
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.freedesktop.Application"


class App(dbus.service.Object):
    def __init__(self, bus, path, record):
        super().__init__(bus, path)
        self.record = record

    @dbus.service.method(IFACE, in_signature="asa{sv}", out_signature="")
    def Open(self, uris, platform_data):
        with open(self.record, "a") as f:
            for uri in uris:
                f.write(str(uri) + "\n")

    @dbus.service.method(IFACE, in_signature="a{sv}", out_signature="")
    def Activate(self, platform_data):
        pass


def main():
    name, record = sys.argv[1], sys.argv[2]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    App(bus, "/" + name.replace(".", "/").replace("-", "_"), record)
    owned = dbus.service.BusName(name, bus, do_not_queue=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
