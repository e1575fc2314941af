#!/usr/bin/env python3
"""Independent reference implementation of the handoff v1 beacon, key file and
export code (docs/beacon-format.md); writes beacon-v1.json next to itself.

It shares no code with the Swift implementation: HMAC, SHA-256 and HKDF come
from Python's standard library, and ChaCha20 is a direct transcription of
RFC 8439 checked against the `cryptography` package when it is installed.
The Swift tests check that HandoffCore reproduces every byte of the JSON.

Run: python3 Tests/HandoffCoreTests/Vectors/generate_beacon_vectors.py
"""
import hashlib
import hmac
import json
import os
import struct

SALT = b"handoff account key schedule"
LABELS = {
    "recognitionTag": b"handoff v1 beacon recognition tag",
    "encryption": b"handoff v1 beacon encryption",
    "authentication": b"handoff v1 beacon authentication",
    "activityTypeHash": b"handoff v1 activity type hash",
    "payload": b"handoff v1 payload sealing",
}
ACCOUNT_ID_LABEL = b"handoff v1 account id"


def hmac256(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()


def hkdf(ikm, salt, info, length):
    prk = hmac256(salt, ikm)
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = hmac256(prk, block + info + bytes([counter]))
        out += block
        counter += 1
    return out[:length]


def rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF


def chacha20_block(key, counter, nonce):
    constants = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state = constants + list(struct.unpack("<8I", key)) + [counter] + list(struct.unpack("<3I", nonce))
    x = list(state)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & 0xFFFFFFFF; x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & 0xFFFFFFFF; x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & 0xFFFFFFFF; x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & 0xFFFFFFFF; x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(10):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return struct.pack("<16I", *[(a + b) & 0xFFFFFFFF for a, b in zip(x, state)])


def check_chacha20():
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    except ImportError:
        print("note: 'cryptography' not installed; ChaCha20 not cross-checked")
        return
    for seed in range(8):
        key = hashlib.sha256(b"key %d" % seed).digest()
        nonce = hashlib.sha256(b"nonce %d" % seed).digest()[:12]
        counter = seed * 0x01020304 & 0xFFFFFFFF
        full_nonce = struct.pack("<I", counter) + nonce
        encryptor = Cipher(algorithms.ChaCha20(key, full_nonce), mode=None).encryptor()
        assert encryptor.update(bytes(64)) == chacha20_block(key, counter, nonce), "ChaCha20 mismatch"


def schedule(secret):
    keys = {name: hkdf(secret, SALT, label, 32) for name, label in LABELS.items()}
    keys["accountID"] = hkdf(secret, SALT, ACCOUNT_ID_LABEL, 8)
    return keys


def epoch_context(length, index):
    return struct.pack(">IQ", length, index)


def beacon(v):
    keys = schedule(bytes.fromhex(v["accountSecret"]))
    ctx = epoch_context(v["epochLength"], v["epochIndex"])
    tag = hmac256(keys["recognitionTag"], ctx + bytes([v["slot"]]))[:4]
    epoch_key = hmac256(keys["encryption"], ctx)
    type_hash = hmac256(keys["activityTypeHash"], v["activityType"].encode())[:4]
    header = bytes([0x10 | v["headerNibble"]])
    salt = int(v["salt"], 16).to_bytes(3, "big")
    clear = header + tag + salt
    plain = type_hash + bytes([v["flags"]]) + struct.pack(">H", v["sequence"]) + bytes.fromhex(v["deviceID"])
    stream = chacha20_block(epoch_key, 0, clear + bytes(4))[:11]
    cipher = bytes(a ^ b for a, b in zip(plain, stream))
    mac = hmac256(keys["authentication"], ctx + clear + cipher)[:5]
    payload = clear + cipher + mac
    assert len(payload) == 24
    out = dict(v)
    out.update({
        "accountID": keys["accountID"].hex(),
        "subkeys": {name: keys[name].hex() for name in LABELS},
        "epochContext": ctx.hex(),
        "recognitionTag": tag.hex(),
        "epochEncryptionKey": epoch_key.hex(),
        "typeHash": type_hash.hex(),
        "keystream": stream.hex(),
        "payload": payload.hex(),
    })
    return out


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_PRIME = 32749


def export_code(secret):
    bits = "".join(f"{b:08b}" for b in secret) + "0000"
    symbols = [1] + [int(bits[i:i + 5], 2) for i in range(0, 260, 5)]
    total = sum((i + 2) * s for i, s in enumerate(symbols)) % CODE_PRIME
    check = (-total) % CODE_PRIME
    symbols += [check // 1024, (check // 32) % 32, check % 32]
    text = "".join(CROCKFORD[s] for s in symbols)
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def key_file(name, created, secret):
    import datetime
    stamp = datetime.datetime.fromtimestamp(created, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = f"handoff-account-key: 1\nname: {name}\ncreated: {stamp}\nsecret: {secret.hex()}\n"
    checksum = hashlib.sha256(body.encode()).digest()[:4].hex()
    header = "# handoff account key. Keep it secret: mode 0600. Format: docs/beacon-format.md\n"
    return header + body + f"checksum: {checksum}\n"


SECRET_A = bytes(range(32))
SECRET_B = bytes.fromhex("f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff")
SECRET_C = hashlib.sha256(b"handoff vector C").digest()

INPUTS = [
    # The first vector is the fuzz harness's account, epoch length and epoch.
    dict(name="default epoch, typical fields", accountSecret=SECRET_A.hex(), epochLength=600, epochIndex=2_900_000,
         activityType="org.handoff.example.browse", slot=3, salt="a1b2c3", headerNibble=5, deviceID="deadbeef",
         sequence=0x1234, flags=0b101),
    dict(name="same account and epoch, other slot", accountSecret=SECRET_A.hex(), epochLength=600, epochIndex=2_900_000,
         activityType="org.handoff.example.browse", slot=7, salt="000001", headerNibble=0, deviceID="00000001",
         sequence=0, flags=0),
    dict(name="next epoch", accountSecret=SECRET_A.hex(), epochLength=600, epochIndex=2_900_001,
         activityType="org.handoff.example.browse", slot=3, salt="a1b2c3", headerNibble=5, deviceID="deadbeef",
         sequence=0x1235, flags=0b101),
    dict(name="all-ones fields, unknown flag bits", accountSecret=SECRET_B.hex(), epochLength=60,
         epochIndex=29_000_000, activityType="com.example.Editor.document-1", slot=0, salt="ffffff", headerNibble=15,
         deviceID="ffffffff", sequence=0xFFFF, flags=0xFF),
    dict(name="epoch zero, one-second epochs", accountSecret=SECRET_B.hex(), epochLength=1, epochIndex=0,
         activityType="a.b", slot=4, salt="000000", headerNibble=9, deviceID="00000000", sequence=1, flags=0b010),
    dict(name="huge epoch index, one-day epochs", accountSecret=SECRET_C.hex(), epochLength=86_400,
         epochIndex=(1 << 40) + 5, activityType="net.example.media_player.now-playing", slot=6, salt="5a5a5a",
         headerNibble=10, deviceID="0badf00d", sequence=0x8000, flags=0b100),
    dict(name="long activity type (255 bytes)", accountSecret=SECRET_C.hex(), epochLength=600, epochIndex=2_900_000,
         activityType=".".join(["x" * 63] * 4), slot=1, salt="123456", headerNibble=1, deviceID="12345678",
         sequence=0x7FFF, flags=0b111),
]


def main():
    check_chacha20()
    here = os.path.dirname(os.path.abspath(__file__))
    document = {
        "description": "handoff beacon format version 1 test vectors; see docs/beacon-format.md. "
                       "Hex is lowercase; multi-byte integers in hex fields are big-endian.",
        "generator": "Tests/HandoffCoreTests/Vectors/generate_beacon_vectors.py",
        "beacons": [beacon(v) for v in INPUTS],
        "exportCodes": [
            {"accountSecret": s.hex(), "code": export_code(s)} for s in (SECRET_A, SECRET_B, SECRET_C, bytes(32))
        ],
        "keyFiles": [
            {"name": "Home", "created": 1_750_000_000, "accountSecret": SECRET_A.hex(),
             "text": key_file("Home", 1_750_000_000, SECRET_A)},
            {"name": "Work laptop \u00e9t\u00e9 \u2615", "created": 0, "accountSecret": SECRET_C.hex(),
             "text": key_file("Work laptop \u00e9t\u00e9 \u2615", 0, SECRET_C)},
        ],
    }
    with open(os.path.join(here, "beacon-v1.json"), "w") as out:
        json.dump(document, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
