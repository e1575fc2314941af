#!/usr/bin/python3
"""stranger-stream.py ADAPTER_PATH LO HI ORIGIN_LOG CONTINUING_LOG SECONDS

Part of the end-to-end suite (docs/e2e.md, scenario streams); runs inside the guest. Plays a
program without the account key that tries to open a continuation stream (docs/continuation.md
10.6) on the origin, over an LE link that is already up.

It reads the adapter's address, then follows ORIGIN_LOG (the origin handoffd's log, from its end
as it is now) for at most SECONDS until a line says "offering a stream for". Then it takes the
origin's address as ADAPTER_PATH's bluetoothd knows it from the last "connecting to
/org/bluez/hciN/dev_..." line of CONTINUING_LOG (the continuing handoffd's log; a resolvable private
address, type random), and opens LE L2CAP channels to it (kernel sockets bound to the adapter's
address, so over the existing link: no second link) on the PSMs from LO up, one after the other,
until one connects; on that channel it sends one frame shaped as a hello (length 62, then 62 random
bytes: a hello sealed with a key it does not have) and waits 3 s for an answer.

Prints "following ...", "offer seen HH:MM:SS.mmm", then "psm 0x0080 ADDRESS HH:MM:SS.mmm refused|closed|silent|DATA
..." for each channel tried, then a summary line starting "OK" or "FAIL". Exits 0 when no channel
gave back a byte (refused: a connect error such as ECONNREFUSED, nobody listens there; closed: the
origin ended the channel without a byte; silent: nothing within 3 s); 1 when any did, or when no
offer came.
Use /usr/bin/python3: it has dbus.
"""
import ctypes
import errno
import os
import re
import select
import socket
import struct
import sys
import time

import dbus

BLUEZ = "org.bluez"
ADAPTER = "org.bluez.Adapter1"
AF_BLUETOOTH, BTPROTO_L2CAP = 31, 0  # linux/socket.h, bluetooth.h: not every Python names them

adapter, low, high = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3], 0)
origin_log, continuing_log, seconds = sys.argv[4], sys.argv[5], int(sys.argv[6])
bus = dbus.SystemBus()
libc = ctypes.CDLL(None, use_errno=True)
libc.socket.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
libc.socket.restype = ctypes.c_int
for call in (libc.bind, libc.connect):
    call.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
    call.restype = ctypes.c_int
libc.setsockopt.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
libc.setsockopt.restype = ctypes.c_int


class SockaddrL2(ctypes.Structure):
    """struct sockaddr_l2 (bluetooth/l2cap.h): family, psm (little-endian), bdaddr (reversed), cid, type."""
    _fields_ = [("family", ctypes.c_ushort), ("psm", ctypes.c_ushort), ("bdaddr", ctypes.c_ubyte * 6),
                ("cid", ctypes.c_ushort), ("bdaddr_type", ctypes.c_ubyte)]


def sockaddr(address, address_type, psm):
    """An LE address (type 1 public, 2 random): Python's own L2CAP addresses before 3.12 carry no
    address type, and a socket bound without one would be BR/EDR."""
    raw = (ctypes.c_ubyte * 6)(*reversed(bytes.fromhex(address.replace(":", ""))))
    return SockaddrL2(AF_BLUETOOTH, psm, raw, 0, 2 if address_type == "random" else 1)


def name(err):
    return errno.errorcode.get(err, str(err))


def probe(local, remote, psm):
    """How a channel to PSM psm ended: refused (...), closed (...), silent (...) or DATA n bytes."""
    fd = libc.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET, BTPROTO_L2CAP)
    if fd < 0:
        return "refused (socket: %s)" % name(ctypes.get_errno())
    try:
        timeout = struct.pack("ll", 5, 0)
        libc.setsockopt(fd, socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeout, len(timeout))
        src = sockaddr(local[0], local[1], 0)
        if libc.bind(fd, ctypes.byref(src), ctypes.sizeof(src)) != 0:
            return "refused (bind: %s)" % name(ctypes.get_errno())
        dst = sockaddr(remote[0], remote[1], psm)
        started = time.monotonic()
        if libc.connect(fd, ctypes.byref(dst), ctypes.sizeof(dst)) != 0:
            return "refused (%s after %.2f s)" % (name(ctypes.get_errno()), time.monotonic() - started)
        try:
            os.write(fd, struct.pack(">H", 62) + os.urandom(62))
        except OSError as error:
            return "closed (send: %s)" % name(error.errno)
        if not select.select([fd], [], [], 3)[0]:
            return "silent (connected, a 64-byte hello sent, nothing in 3 s)"
        try:
            data = os.read(fd, 65536)
        except OSError as error:
            return "closed (%s after a 64-byte hello, no data)" % name(error.errno)
        return "DATA %d bytes" % len(data) if data else "closed (EOF after a 64-byte hello, no data)"
    finally:
        os.close(fd)


def stamp():
    now = time.time()
    return time.strftime("%H:%M:%S", time.localtime(now)) + ".%03d" % (now * 1000 % 1000)


own = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.freedesktop.DBus.Properties")
local = (str(own.Get(ADAPTER, "Address")), str(own.Get(ADAPTER, "AddressType")))
deadline = time.monotonic() + seconds
with open(origin_log, "rb") as log:
    log.seek(0, os.SEEK_END)
    print("following %s from byte %d" % (origin_log, log.tell()), flush=True)
    pending = b""
    while b"offering a stream for" not in pending:
        if time.monotonic() > deadline:
            print("FAIL no offer in %s within %d s" % (origin_log, seconds), flush=True)
            sys.exit(1)
        chunk = log.read()
        if chunk:
            pending = pending[-200:] + chunk
        else:
            time.sleep(0.005)
print("offer seen %s" % stamp(), flush=True)
with open(continuing_log, "rb") as log:
    devices = re.findall(rb"connecting to /org/bluez/hci[0-9]+/dev_([0-9A-F_]{17})", log.read())
if not devices:
    print("FAIL no \"connecting to\" line in %s" % continuing_log, flush=True)
    sys.exit(1)
remote = (devices[-1].decode().replace("_", ":"), "random")
kinds = {}
for psm in range(low, high + 1):
    outcome = probe(local, remote, psm)
    kind = outcome.split(" ", 1)[0]
    kinds[kind] = kinds.get(kind, 0) + 1
    print("psm 0x%04x %s %s %s" % (psm, remote[0], stamp(), outcome), flush=True)
    if kind != "refused":
        break
summary = ", ".join("%d %s" % (n, kind) for kind, n in sorted(kinds.items()))
print("%s from %s over the link to %s, PSMs from 0x%02x: %s" % (
    "FAIL" if "DATA" in kinds else "OK", adapter.rsplit("/", 1)[-1], remote[0], low, summary), flush=True)
sys.exit(1 if "DATA" in kinds else 0)
