#!/usr/bin/python3
"""daemon-status.py SOCKET: handoffd's status counters, as key=value lines.

Says hello and asks for `status` on handoffd's socket (docs/protocol.md) and
prints the counters the whole-daemon bench reads: scanReportsHeard,
scanReportsDropped, beaconsRecognized, beaconsRejected, beaconCopiesRefused,
nearbyCount and scanning. Exits 1 when handoffd does not answer.
"""
import json
import socket
import sys


def main() -> int:
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.settimeout(5)
        connection.connect(sys.argv[1])
        requests = [
            {"id": 1, "method": "hello", "params": {"app": "bench", "versions": [1]}},
            {"id": 2, "method": "status", "params": {}},
        ]
        connection.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        buffer = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return 1
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                frame = json.loads(line)
                if frame.get("id") != 2:
                    continue
                result = frame.get("result") or {}
                for key in ("scanReportsHeard", "scanReportsDropped", "beaconsRecognized", "beaconsRejected",
                            "beaconCopiesRefused", "nearbyCount"):
                    print(f"{key}={result.get(key, '')}")
                print(f"scanning={'yes' if result.get('scanning') else 'no'}")
                return 0
    except OSError:
        return 1


sys.exit(main())
