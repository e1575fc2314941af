#!/usr/bin/python3
"""btsnoop-l2cap.py FILE [--all]

Reads a btmon capture (btsnoop, the monitor datalink 2001, as the e2e suite's btmon.snoop) and prints,
one line each, the LE L2CAP signalling (CID 0x0005) of every controller in order, and the LE
connections made and dropped: the part of a capture that explains a refused or cut LE L2CAP channel
(docs/e2e.md). The host's btmon -r crashed on some of the rig's captures; this reads them whole.

  HH:MM:SS.mmm hciN TX|RX handle  what

Connection and disconnection requests and responses (with PSM, source and destination CID and the
result: 0 success, 2 "SPSM not supported", 10 "source CID already allocated", ...), LE Connection
Complete and Disconnection Complete. LE Flow Control Credit packets (code 0x16) are left out unless
--all, as there are thousands in a stream. Standard library only.
"""
import datetime
import struct
import sys

# btsnoop's timestamps count microseconds from 0000-01-01; this is 1970-01-01 on that scale.
EPOCH_DELTA = 0x00E03AB44A676000
ACL_TX, ACL_RX, EVENT = 4, 5, 3     # the monitor datalink's opcodes
CODES = {0x01: "command reject", 0x06: "disconnect req", 0x07: "disconnect rsp", 0x12: "update req",
         0x13: "update rsp", 0x14: "LE conn req", 0x15: "LE conn rsp", 0x16: "credits",
         0x17: "ECRED conn req", 0x18: "ECRED conn rsp", 0x19: "ECRED reconf req", 0x1A: "ECRED reconf rsp"}


def stamp(ts):
    when = datetime.datetime.fromtimestamp((ts - EPOCH_DELTA) / 1e6, datetime.timezone.utc)
    return when.strftime("%H:%M:%S.%f")[:-3]


def describe(code, body):
    if code == 0x14 and len(body) >= 10:
        psm, scid, mtu, mps, credits = struct.unpack("<HHHHH", body[:10])
        return "psm 0x%x scid 0x%x mtu %d mps %d credits %d" % (psm, scid, mtu, mps, credits)
    if code == 0x15 and len(body) >= 10:
        dcid, mtu, mps, credits, result = struct.unpack("<HHHHH", body[:10])
        return "dcid 0x%x mtu %d mps %d credits %d result %d" % (dcid, mtu, mps, credits, result)
    if code in (0x06, 0x07) and len(body) >= 4:
        dcid, scid = struct.unpack("<HH", body[:4])
        return "dcid 0x%x scid 0x%x" % (dcid, scid)
    if code == 0x16 and len(body) >= 4:
        cid, credits = struct.unpack("<HH", body[:4])
        return "cid 0x%x credits %d" % (cid, credits)
    return body.hex()


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--all"):
        sys.exit(__doc__)
    everything = len(sys.argv) == 3
    data = open(sys.argv[1], "rb").read()
    if data[:8] != b"btsnoop\0":
        sys.exit("%s is not a btsnoop file" % sys.argv[1])
    offset = 16
    while offset + 24 <= len(data):
        _, length, flags, _, ts = struct.unpack(">IIIIq", data[offset:offset + 24])
        packet = data[offset + 24:offset + 24 + length]
        offset += 24 + length
        index, opcode = flags >> 16, flags & 0xFFFF
        if opcode == EVENT and len(packet) >= 6 and packet[0] == 0x05:
            status, handle, reason = struct.unpack("<BHB", packet[2:6])
            print("%s hci%d    h%03x  Disconnection Complete status %d reason 0x%02x" % (
                stamp(ts), index, handle & 0xFFF, status, reason))
        elif opcode == EVENT and len(packet) >= 6 and packet[0] == 0x3E and packet[2] in (0x01, 0x0A):
            status, handle, role = struct.unpack("<BHB", packet[3:7])
            print("%s hci%d    h%03x  LE Connection Complete status %d role %s" % (
                stamp(ts), index, handle & 0xFFF, status, "central" if role == 0 else "peripheral"))
        elif opcode in (ACL_TX, ACL_RX) and len(packet) >= 12:
            handle, _ = struct.unpack("<HH", packet[:4])
            _, cid = struct.unpack("<HH", packet[4:8])
            if cid != 0x0005:
                continue
            code, ident, _ = struct.unpack("<BBH", packet[8:12])
            if code == 0x16 and not everything:
                continue
            print("%s hci%d %s h%03x  %s ident %d: %s" % (
                stamp(ts), index, "TX" if opcode == ACL_TX else "RX", handle & 0xFFF,
                CODES.get(code, "code 0x%02x" % code), ident, describe(code, packet[12:])))


if __name__ == "__main__":
    main()
