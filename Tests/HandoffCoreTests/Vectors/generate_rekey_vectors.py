#!/usr/bin/env python3
"""Independent reference of the rekey (docs/devices.md, section 7; docs/continuation.md, section 11),
written from the documents alone; writes rekey-v1.json next to itself. X25519 and ChaCha20-Poly1305 come
from the `cryptography` package, HMAC, SHA-256 and HKDF from Python's standard library. The Swift tests
(RekeyVectorTests) check that HandoffCore reproduces every byte.

Run: python3 Tests/HandoffCoreTests/Vectors/generate_rekey_vectors.py
"""
import hashlib
import hmac
import json
import os

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

SCHEDULE_SALT = b"handoff account key schedule"


def h(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()


def hkdf(ikm, salt, info, length=32):
    prk = h(salt, ikm)
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = h(prk, block + info + bytes([counter]))
        out += block
        counter += 1
    return out[:length]


def account_id(secret):
    return hkdf(secret, SCHEDULE_SALT, b"handoff v1 account id", 8)


def payload_key(secret):
    return hkdf(secret, SCHEDULE_SALT, b"handoff v1 payload sealing")


def recognition_tag(secret, ctx, slot):
    return h(hkdf(secret, SCHEDULE_SALT, b"handoff v1 beacon recognition tag"), ctx + bytes([slot]))[:4]


def public_key(private):
    return X25519PrivateKey.from_private_bytes(private).public_key().public_bytes_raw()


def fingerprint(public):
    return hashlib.sha256(b"handoff v1 device key" + public).digest()[:8]


def envelope(v):
    pk_s, pk_r = public_key(v["sender"]), public_key(v["recipient"])
    shared = X25519PrivateKey.from_private_bytes(v["sender"]).exchange(X25519PublicKey.from_public_bytes(pk_r))
    assert shared == X25519PrivateKey.from_private_bytes(v["recipient"]).exchange(X25519PublicKey.from_public_bytes(pk_s))
    salt = b"handoff v1 rekey" + account_id(v["old"])
    info_env = b"handoff v1 rekey envelope key" + pk_s + pk_r
    info_ack = b"handoff v1 rekey acknowledgement key" + pk_s + pk_r
    k_env, k_ack = hkdf(shared, salt, info_env), hkdf(shared, salt, info_ack)
    removed = [bytes.fromhex(f) for f in v["removed"]]
    plaintext = v["new"] + bytes([len(removed)]) + b"".join(removed)
    plaintext += bytes(32 + 1 + 8 * 8 - len(plaintext))
    aad = b"handoff v1 rekey envelope" + bytes([1])
    sealed = ChaCha20Poly1305(k_env).encrypt(v["nonce"], plaintext, aad)
    env = bytes([1]) + v["nonce"] + sealed
    assert len(env) == 126
    return {
        "name": v["name"],
        "senderPrivateKey": v["sender"].hex(),
        "recipientPrivateKey": v["recipient"].hex(),
        "oldAccountSecret": v["old"].hex(),
        "newAccountSecret": v["new"].hex(),
        "removed": v["removed"],
        "envelopeNonce": v["nonce"].hex(),
        "senderPublicKey": pk_s.hex(),
        "recipientPublicKey": pk_r.hex(),
        "senderFingerprint": fingerprint(pk_s).hex(),
        "recipientFingerprint": fingerprint(pk_r).hex(),
        "oldAccountID": account_id(v["old"]).hex(),
        "newAccountID": account_id(v["new"]).hex(),
        "sharedSecret": shared.hex(),
        "salt": salt.hex(),
        "envelopeKeyInfo": info_env.hex(),
        "envelopeKey": k_env.hex(),
        "acknowledgementKey": k_ack.hex(),
        "plaintext": plaintext.hex(),
        "envelope": env.hex(),
    }, k_ack


def exchange(v, env, k_ack):
    """The rekey request (kind 0x12) delivering `env`, and the origin's `ok` response."""
    old = v["old"]
    ctx = v["epochLength"].to_bytes(4, "big") + v["epochIndex"].to_bytes(8, "big")
    tag = recognition_tag(old, ctx, v["slot"])
    k_payload = payload_key(old)
    sender_fp = fingerprint(public_key(v["sender"]))
    plaintext = (v["requestNonce"] + v["sequence"].to_bytes(2, "big") + v["originDevice"].to_bytes(4, "big")
                 + v["requesterDevice"].to_bytes(4, "big") + sender_fp + env)
    sealed = ChaCha20Poly1305(k_payload).encrypt(
        v["requestAEADNonce"], plaintext, b"handoff v1 rekey request" + ctx + tag)
    request = bytes([0x12]) + tag + v["requestAEADNonce"] + sealed
    assert len(request) == 193
    ack = h(k_ack, b"handoff v1 rekey installed" + v["requestNonce"] + account_id(v["new"]))
    sealed = ChaCha20Poly1305(k_payload).encrypt(
        v["responseNonce"], ack, b"handoff v1 rekey response" + ctx + tag + v["requestNonce"])
    response = bytes([0x12, 0]) + v["responseNonce"] + sealed
    assert len(response) == 62
    return {
        "epochLength": v["epochLength"],
        "epochIndex": v["epochIndex"],
        "slot": v["slot"],
        "sequence": v["sequence"],
        "originDevice": "%08x" % v["originDevice"],
        "requesterDevice": "%08x" % v["requesterDevice"],
        "requestNonce": v["requestNonce"].hex(),
        "requestAEADNonce": v["requestAEADNonce"].hex(),
        "responseNonce": v["responseNonce"].hex(),
        "epochContext": ctx.hex(),
        "tag": tag.hex(),
        "requestPlaintext": plaintext.hex(),
        "request": request.hex(),
        "acknowledgement": ack.hex(),
        "response": response.hex(),
    }


def main():
    sk_r, sk_d, sk_e, sk_x = bytes([0x21]) * 32, bytes([0x22]) * 32, bytes([0x23]) * 32, bytes([0x24]) * 32
    fp_x = fingerprint(public_key(sk_x)).hex()
    old = bytes(range(32))
    cases = [
        {"name": "one removed", "sender": sk_r, "recipient": sk_d, "old": old,
         "new": bytes(range(0x40, 0x60)), "removed": [fp_x], "nonce": bytes([0x31]) * 12},
        {"name": "eight removed, other recipient", "sender": sk_r, "recipient": sk_e, "old": old,
         "new": bytes([0xA5]) * 32, "removed": [fp_x] + ["%016x" % (0x0102030405060700 + i) for i in range(7)],
         "nonce": bytes(range(12))},
        {"name": "none removed, another old account", "sender": sk_d, "recipient": sk_r, "old": bytes([0xB0]) * 32,
         "new": bytes(range(0x60, 0x80)), "removed": [], "nonce": bytes([0xFF]) * 12},
    ]
    envelopes = []
    exchanges = []
    for index, case in enumerate(cases):
        env, k_ack = envelope(case)
        envelopes.append(env)
        ex = {
            "old": case["old"], "new": case["new"], "sender": case["sender"],
            "epochLength": 600, "epochIndex": 2900000 + index, "slot": 3 + index, "sequence": 0x1234 + index,
            "originDevice": 0xDEADBEEF - index, "requesterDevice": 0x0B0B0B0B + index,
            "requestNonce": bytes([0x40 + index]) * 16, "requestAEADNonce": bytes([0x50 + index]) * 12,
            "responseNonce": bytes([0x60 + index]) * 12,
        }
        exchanges.append(dict(exchange(ex, bytes.fromhex(env["envelope"]), k_ack), envelope=index))
    document = {"envelopes": envelopes, "exchanges": exchanges}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "rekey-v1.json"), "w") as out:
        json.dump(document, out, indent=2)
        out.write("\n")


if __name__ == "__main__":
    main()
