#!/usr/bin/python3
"""wire-client.py SOCKET

Part of the end-to-end suite (docs/e2e.md); runs inside the guest. A bare client of
handoffd's socket protocol (docs/protocol.md), for the requests handoffctl has no command
for (such as `update`): every line read on stdin is sent to the socket as it is (one JSON
frame), and every frame received is printed on stdout as "<unix time> <frame>". It exits
when stdin ends (closing the connection, as an app that quits would) or the daemon closes.
Only the standard library, so it starts quickly.
"""
import os
import socket
import sys
import threading
import time

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])


def receive():
    buffered = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            print("%.6f closed" % time.time(), flush=True)
            os._exit(0)
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            print("%.6f %s" % (time.time(), line.decode("utf-8", "replace")), flush=True)


threading.Thread(target=receive, daemon=True).start()
for line in sys.stdin:
    line = line.strip()
    if line:
        sock.sendall(line.encode("utf-8") + b"\n")
sock.close()
