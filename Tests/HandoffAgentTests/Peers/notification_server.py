#!/usr/bin/env python3
"""A notification server written from the freedesktop Desktop Notifications
Specification 1.2, independent of handoff's code, for the agent's tests.

    notification_server.py CAPABILITIES [LOG]

CAPABILITIES is a comma-separated list such as "actions,body,body-markup" (or "-"
for none). It owns org.freedesktop.Notifications on the session bus and serves
/org/freedesktop/Notifications. For the tests, the same object also has the
interface org.handoff.Test.Notifications:

    Calls() -> s            every Notify and CloseNotification so far, as JSON
    Invoke(u id, s key)     emits ActionInvoked(id, key), as a click would
    Dismiss(u id)           emits NotificationClosed(id, 2), as the user closing it would

Every record carries "t", the unix time the call arrived. With LOG (the e2e suite's
desktop scenario), each is also appended to that file as one JSON line as it happens,
and so are Invoke and Dismiss; the first line, {"event": "ready", ...}, says that the
server owns its name.
"""
import json
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"
TEST = "org.handoff.Test.Notifications"


def plain(value):
    """A D-Bus value as plain JSON-able Python."""
    if isinstance(value, (dbus.Boolean,)):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath, dbus.Signature, str)):
        return str(value)
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    return str(value)


class Server(dbus.service.Object):
    def __init__(self, bus, capabilities, log=None):
        super().__init__(bus, PATH)
        self.capabilities = capabilities
        self.calls = []
        self.next_id = 1
        self.open = set()
        self.log = log

    def record(self, entry, keep=True):
        entry["t"] = time.time()
        if keep:
            self.calls.append(entry)
        if self.log is not None:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()

    @dbus.service.method(IFACE, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return dbus.Array(self.capabilities, signature="s")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout):
        # Spec: a replaces_id of an open notification replaces it atomically and keeps its id.
        if replaces_id != 0 and int(replaces_id) in self.open:
            nid = int(replaces_id)
        else:
            nid = self.next_id
            self.next_id += 1
        self.open.add(nid)
        self.record({
            "method": "Notify", "id": nid, "app_name": str(app_name), "replaces_id": int(replaces_id),
            "app_icon": str(app_icon), "summary": str(summary), "body": str(body),
            "actions": [str(a) for a in actions], "hints": plain(hints), "expire_timeout": int(expire_timeout),
        })
        return dbus.UInt32(nid)

    @dbus.service.method(IFACE, in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        self.record({"method": "CloseNotification", "id": int(nid)})
        if int(nid) in self.open:
            self.open.discard(int(nid))
            self.NotificationClosed(nid, dbus.UInt32(3))

    @dbus.service.method(IFACE, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("handoff-test-notifications", "handoff", "1", "1.2")

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, nid, action_key):
        pass

    @dbus.service.method(TEST, in_signature="", out_signature="s")
    def Calls(self):
        return json.dumps(self.calls)

    @dbus.service.method(TEST, in_signature="us", out_signature="")
    def Invoke(self, nid, key):
        self.record({"method": "Invoke", "id": int(nid), "action": str(key)}, keep=False)
        self.ActionInvoked(dbus.UInt32(nid), key)

    @dbus.service.method(TEST, in_signature="u", out_signature="")
    def Dismiss(self, nid):
        self.record({"method": "Dismiss", "id": int(nid)}, keep=False)
        self.open.discard(int(nid))
        self.NotificationClosed(dbus.UInt32(nid), dbus.UInt32(2))


def main():
    capabilities = [] if sys.argv[1] == "-" else sys.argv[1].split(",")
    log = open(sys.argv[2], "a") if len(sys.argv) > 2 else None
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    server = Server(bus, capabilities, log)
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    if log is not None:
        log.write(json.dumps({"event": "ready", "t": time.time(), "capabilities": capabilities}) + "\n")
        log.flush()
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
