#!/usr/bin/env python3
"""Independent reference of the continuation streams (docs/continuation.md, section 10, written from the
document alone), and of the continuation exchange that carries a stream offer (sections 4, 5 and 10.2: the
request kind 0x13 and the payload's flag bit 4); writes stream-v1.json next to itself.

It shares no code with the Swift implementation: HMAC, SHA-256 and HKDF come from Python's standard library,
ChaCha20-Poly1305 from the `cryptography` package. The Swift tests (StreamVectorTests.swift) check that
HandoffCore reproduces every byte of the JSON.

Run: python3 Tests/HandoffCoreTests/Vectors/generate_stream_vectors.py
"""
import hashlib
import hmac
import json
import os
import struct

from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

SCHEDULE_SALT = b"handoff account key schedule"
STREAM_LABEL = b"handoff v1 stream"
DIRECTION_LABELS = {
    "continuingToOrigin": b"handoff v1 stream continuing to origin",
    "originToContinuing": b"handoff v1 stream origin to continuing",
}
FRAME_TYPES = {"hello": 0x01, "data": 0x02, "end": 0x03, "abort": 0x04}
MAX_FRAME = 2048
MAX_DATA = MAX_FRAME - 2 - 1 - 16


def hmac256(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()


def hkdf(ikm, salt, info, length=32):
    prk = hmac256(salt, ikm)
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac256(prk, block + info + bytes([counter]))
        out += block
        counter += 1
    return out[:length]


def epoch_context(length, index):
    return struct.pack(">IQ", length, index)


def offer_bytes(psm, secret):
    return bytes([1]) + struct.pack(">H", psm) + secret


def decode_offer(data):
    """The outcome the document gives for `data`: `psm 0x....` or the error's label."""
    if len(data) != 19:
        return "wrongLength %d" % len(data)
    if data[0] != 1:
        return "unsupportedVersion %d" % data[0]
    psm = struct.unpack(">H", data[1:3])[0]
    if not 0x0080 <= psm <= 0x00FF:
        return "psmOutOfRange %d" % psm
    return "psm 0x%04x" % psm


def stream_keys(case):
    k_stream = hkdf(case["secret"], SCHEDULE_SALT, STREAM_LABEL)
    salt = case["requestNonce"] + case["streamSecret"]
    binding = epoch_context(case["epochLength"], case["epochIndex"]) + case["tag"] + struct.pack(">H", case["psm"])
    keys = {name: hkdf(k_stream, salt, label + binding) for name, label in DIRECTION_LABELS.items()}
    return k_stream, keys


def nonce(counter):
    return bytes(4) + struct.pack(">Q", counter)


def seal(key, counter, frame_type, body):
    length = 1 + len(body) + 16
    header = struct.pack(">H", length)
    assert 17 <= length <= MAX_FRAME - 2
    return header + ChaCha20Poly1305(key).encrypt(nonce(counter), bytes([FRAME_TYPES[frame_type]]) + body, header)


CASES = [
    {
        "name": "secret 00…1f, epoch 2900000 of 600 s, lowest PSM",
        "secret": bytes(range(32)), "epochLength": 600, "epochIndex": 2_900_000, "tag": bytes.fromhex("a1b2c3d4"),
        "requestNonce": bytes(range(0x10, 0x20)), "psm": 0x0080, "streamSecret": bytes(range(0xC0, 0xD0)),
    },
    {
        "name": "secret b0…, epoch 0 of 1 s, highest PSM, zero stream secret",
        "secret": bytes([0xB0]) * 32, "epochLength": 1, "epochIndex": 0, "tag": bytes(4),
        "requestNonce": bytes([0xFF]) * 16, "psm": 0x00FF, "streamSecret": bytes(16),
    },
    {
        "name": "hashed inputs, epoch 123456789 of 900 s",
        "secret": hashlib.sha256(b"stream vector C secret").digest(), "epochLength": 900, "epochIndex": 123_456_789,
        "tag": hashlib.sha256(b"stream vector C tag").digest()[:4],
        "requestNonce": hashlib.sha256(b"stream vector C request nonce").digest()[:16], "psm": 0x00C5,
        "streamSecret": hashlib.sha256(b"stream vector C stream secret").digest()[:16],
    },
]

# Frames each direction seals, in order, from counter 0: (type, body).
TRANSCRIPTS = [
    {
        "case": 0,
        "continuingToOrigin": [("hello", b""), ("data", b"hello, origin"), ("data", bytes(i % 251 for i in range(MAX_DATA))),
                               ("data", b"\x00"), ("end", b"")],
        "originToContinuing": [("hello", b""), ("data", b"hello, continuing"), ("end", b"")],
    },
    {
        "case": 1,
        "continuingToOrigin": [("hello", b""), ("abort", bytes([3]))],
        "originToContinuing": [("hello", b""), ("data", bytes([0xFF]) * 300), ("abort", bytes([1]))],
    },
]

OFFER_INPUTS = [
    ("lowest PSM", offer_bytes(0x0080, bytes(range(16)))),
    ("highest PSM", offer_bytes(0x00FF, bytes([0xEE]) * 16)),
    ("PSM below the dynamic range", offer_bytes(0x007F, bytes(16))),
    ("PSM above the dynamic range", offer_bytes(0x0100, bytes(16))),
    ("PSM 0", offer_bytes(0x0000, bytes(16))),
    ("version 0", bytes([0]) + offer_bytes(0x0080, bytes(16))[1:]),
    ("version 2", bytes([2]) + offer_bytes(0x0080, bytes(16))[1:]),
    ("one byte short", offer_bytes(0x0080, bytes(16))[:-1]),
    ("one byte over", offer_bytes(0x0080, bytes(16)) + b"\x00"),
    ("empty", b""),
]


def payload_key(secret):
    return hkdf(secret, SCHEDULE_SALT, b"handoff v1 payload sealing")


def recognition_tag(secret, ctx, slot):
    return hmac256(hkdf(secret, SCHEDULE_SALT, b"handoff v1 beacon recognition tag"), ctx + bytes([slot]))[:4]


def activity_payload(type_name, title, offer):
    """Version 1 payload (section 5) with a title and, when `offer` is not None, flag bit 4 and the offer."""
    flags = 0x01 | (0x10 if offer is not None else 0)
    out = bytes([1, flags, len(type_name)]) + type_name + struct.pack(">H", len(title)) + title
    return out + (offer if offer is not None else b"")


EXCHANGES = [
    {"name": "takes streams, offer PSM 0x0080", "secret": bytes(range(32)), "epochLength": 600,
     "epochIndex": 2_900_000, "slot": 3, "sequence": 0x1234, "originDevice": 0xDEADBEEF, "requesterDevice": 0x0B0B0B0B,
     "requestNonce": bytes([0x41]) * 16, "requestAEADNonce": bytes([0x51]) * 12, "responseNonce": bytes([0x61]) * 12,
     "type": b"org.handoff.example.browse", "title": b"Release notes",
     "offer": offer_bytes(0x0080, bytes(range(0xC0, 0xD0)))},
    {"name": "takes streams, the activity offers none", "secret": bytes([0xB0]) * 32, "epochLength": 900,
     "epochIndex": 123_456, "slot": 0, "sequence": 0x0001, "originDevice": 0x01020304, "requesterDevice": 0xFFFFFFFF,
     "requestNonce": bytes(range(0x20, 0x30)), "requestAEADNonce": bytes(range(12)), "responseNonce": bytes([0xEE]) * 12,
     "type": b"org.handoff.example.edit", "title": b"", "offer": None},
]


def exchange(v):
    """The request of kind 0x13 (a continuation whose requester takes streams) and the origin's ok response."""
    ctx = epoch_context(v["epochLength"], v["epochIndex"])
    tag = recognition_tag(v["secret"], ctx, v["slot"])
    key = payload_key(v["secret"])
    plaintext = (v["requestNonce"] + struct.pack(">H", v["sequence"]) + struct.pack(">I", v["originDevice"])
                 + struct.pack(">I", v["requesterDevice"]))
    sealed = ChaCha20Poly1305(key).encrypt(
        v["requestAEADNonce"], plaintext, b"handoff v1 continue with streams request" + ctx + tag)
    request = bytes([0x13]) + tag + v["requestAEADNonce"] + sealed
    assert len(request) == 59
    payload = activity_payload(v["type"], v["title"], v["offer"])
    sealed = ChaCha20Poly1305(key).encrypt(
        v["responseNonce"], payload, b"handoff v1 continue with streams response" + ctx + tag + v["requestNonce"])
    response = bytes([0x13, 0]) + v["responseNonce"] + sealed
    entry = {
        "name": v["name"], "accountSecret": v["secret"].hex(), "epochLength": v["epochLength"],
        "epochIndex": v["epochIndex"], "slot": v["slot"], "sequence": v["sequence"],
        "originDevice": "%08x" % v["originDevice"], "requesterDevice": "%08x" % v["requesterDevice"],
        "requestNonce": v["requestNonce"].hex(), "requestAEADNonce": v["requestAEADNonce"].hex(),
        "responseNonce": v["responseNonce"].hex(), "tag": tag.hex(), "request": request.hex(),
        "type": v["type"].decode(), "title": v["title"].decode(), "payload": payload.hex(), "response": response.hex(),
        "offer": v["offer"].hex() if v["offer"] is not None else None,
    }
    if v["offer"] is not None:
        psm = struct.unpack(">H", v["offer"][1:3])[0]
        _, direction_keys = stream_keys({"secret": v["secret"], "requestNonce": v["requestNonce"],
                                         "streamSecret": v["offer"][3:], "epochLength": v["epochLength"],
                                         "epochIndex": v["epochIndex"], "tag": tag, "psm": psm})
        entry["continuingToOrigin"] = direction_keys["continuingToOrigin"].hex()
        entry["originToContinuing"] = direction_keys["originToContinuing"].hex()
    return entry


def main():
    keys = []
    derived = []
    for case in CASES:
        k_stream, direction_keys = stream_keys(case)
        derived.append(direction_keys)
        keys.append({
            "name": case["name"],
            "accountSecret": case["secret"].hex(),
            "epochLength": case["epochLength"],
            "epochIndex": case["epochIndex"],
            "epochContext": epoch_context(case["epochLength"], case["epochIndex"]).hex(),
            "tag": case["tag"].hex(),
            "requestNonce": case["requestNonce"].hex(),
            "psm": case["psm"],
            "streamSecret": case["streamSecret"].hex(),
            "offer": offer_bytes(case["psm"], case["streamSecret"]).hex(),
            "streamKey": k_stream.hex(),
            "continuingToOrigin": direction_keys["continuingToOrigin"].hex(),
            "originToContinuing": direction_keys["originToContinuing"].hex(),
        })
    transcripts = []
    for transcript in TRANSCRIPTS:
        frames = []
        for direction in DIRECTION_LABELS:
            key = derived[transcript["case"]][direction]
            for counter, (frame_type, body) in enumerate(transcript[direction]):
                frames.append({
                    "direction": direction, "counter": counter, "type": frame_type, "body": body.hex(),
                    "nonce": nonce(counter).hex(), "frame": seal(key, counter, frame_type, body).hex(),
                })
        transcripts.append({"keys": transcript["case"], "frames": frames})
    document = {
        "comment": "Written by generate_stream_vectors.py from docs/continuation.md, section 10; do not edit.",
        "maximumFrameLength": MAX_FRAME,
        "maximumDataLength": MAX_DATA,
        "keys": keys,
        "transcripts": transcripts,
        "offers": [{"name": name, "bytes": data.hex(), "result": decode_offer(data)} for name, data in OFFER_INPUTS],
        "exchanges": [exchange(v) for v in EXCHANGES],
    }
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "stream-v1.json"), "w") as out:
        json.dump(document, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
