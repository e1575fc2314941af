#!/usr/bin/env python3
"""Independent reference of the pairing protocol (docs/pairing.md, written from the document alone);
prints the vectors of its section 9. X25519 and ChaCha20-Poly1305 come from the `cryptography` package,
HMAC, SHA-256 and HKDF from Python's standard library.

Run: python3 Tests/HandoffCoreTests/Vectors/generate_pairing_vectors.py
"""
import hashlib
import hmac

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305


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


def raw(public):
    return public.public_bytes_raw()


pairing_id = bytes.fromhex("a0a1a2a3a4a5a6a7")
sk_j = bytes([1]) * 32
sk_o = bytes([2]) * 32
n_j = bytes([0x11]) * 16
n_o = bytes([0x22]) * 16
aead_nonce = bytes([0x33]) * 12
secret = bytes(range(32))
name = "Vector A".encode()

pk_j = raw(X25519PrivateKey.from_private_bytes(sk_j).public_key())
pk_o = raw(X25519PrivateKey.from_private_bytes(sk_o).public_key())
dh = X25519PrivateKey.from_private_bytes(sk_j).exchange(X25519PublicKey.from_public_bytes(pk_o))
assert dh == X25519PrivateKey.from_private_bytes(sk_o).exchange(X25519PublicKey.from_public_bytes(pk_j))
co = h(n_o, b"handoff v1 pairing commitment" + pk_j + pk_o)
number = int.from_bytes(h(n_j, b"handoff v1 pairing number" + pk_j + pk_o + n_o)[:4], "big") % 1000000
t = hashlib.sha256(b"handoff v1 pairing transcript" + pairing_id + pk_j + pk_o + n_j + n_o).digest()
k_confirm = hkdf(dh, t, b"handoff v1 pairing confirmation key")
k_seal = hkdf(dh, t, b"handoff v1 pairing account sealing key")
ej = h(k_confirm, b"handoff v1 pairing joiner confirms")
dj = h(k_confirm, b"handoff v1 pairing joiner stored the key")
sealed = ChaCha20Poly1305(k_seal).encrypt(
    aead_nonce, secret + bytes([len(name)]) + name, bytes([0x10, 0x06]) + b"handoff v1 pairing account")

rows = [
    ("advertisement", bytes([0x30]) + pairing_id),
    ("PKj", pk_j), ("PKo", pk_o), ("DH", dh), ("Co", co), ("T", t), ("K_confirm", k_confirm),
    ("K_seal", k_seal), ("Ej", ej), ("Dj", dj),
    ("start", bytes([0x10, 0x01]) + pairing_id + pk_j),
    ("commit", bytes([0x10, 0x02]) + pk_o + co),
    ("nonceJ", bytes([0x10, 0x03]) + n_j),
    ("nonceO", bytes([0x10, 0x04]) + n_o),
    ("confirm", bytes([0x10, 0x05]) + ej),
    ("account", bytes([0x10, 0x06]) + aead_nonce + sealed),
    ("done", bytes([0x10, 0x07]) + dj),
]
print(f"number    {number:06d}")
for label, value in rows:
    print(f"{label:<9} {value.hex()}")
