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
    tag_input = ctx + bytes([v["slot"]])  # the slot is one byte: 13 bytes in all
    tag = hmac256(keys["recognitionTag"], tag_input)[:4]
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
        "recognitionTagInput": tag_input.hex(),
        "recognitionTag": tag.hex(),
        "epochEncryptionKey": epoch_key.hex(),
        "typeHash": type_hash.hex(),
        "keystream": stream.hex(),
        "payload": payload.hex(),
        "advertisingData": advertising_data(payload, 0xFFFF).hex(),
    })
    return out


def advertising_data(payload, company_id):
    """The 31-byte legacy advertising data (section 1): Flags, then Manufacturer Specific Data."""
    flags = bytes([0x02, 0x01, 0x06])
    return flags + bytes([len(payload) + 3, 0xFF]) + struct.pack("<H", company_id) + payload


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_VERSION = 2
CRC_POLY = 0x2C3F  # x^15 + x^13 + x^11 + x^10 + x^5 + x^4 + x^3 + x^2 + x + 1, without x^15
RETIRED_PRIME = 32749


def crc15_bits(bits):
    """CRC-15, MSB first, register 0: the remainder of M(x)*x^15 mod G(x) for a string of '0'/'1'."""
    register = 0
    for bit in bits:
        feedback = ((register >> 14) & 1) ^ int(bit)
        register = (register << 1) & 0x7FFF
        if feedback:
            register ^= CRC_POLY
    return register


def crc15_bytes(data):
    return crc15_bits("".join(f"{b:08b}" for b in data))


def symbols_bits(symbols):
    return "".join(f"{s:05b}" for s in symbols)


def secret_symbols(secret):
    bits = "".join(f"{b:08b}" for b in secret) + "0000"
    return [int(bits[i:i + 5], 2) for i in range(0, 260, 5)]


def render(symbols):
    text = "".join(CROCKFORD[s] for s in symbols)
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def with_check(data):
    check = crc15_bits(symbols_bits(data))
    return data + [check >> 10, (check >> 5) & 31, check & 31]


def export_code(secret, version=CODE_VERSION):
    return render(with_check([version] + secret_symbols(secret)))


def retired_export_code(secret):
    """A version-1 code (weighted sum modulo 32749), as older builds wrote it."""
    symbols = [1] + secret_symbols(secret)
    check = (-sum((i + 2) * s for i, s in enumerate(symbols))) % RETIRED_PRIME
    return render(symbols + [check // 1024, (check // 32) % 32, check % 32])


def decode_export_code(text):
    """Section 11's decoder: returns the secret's hex, or the error as 'name [value]'."""
    symbols = []
    for position, char in enumerate(text, start=1):  # Python iterates code points
        if char in " -\t\n\r":
            continue
        upper = char.upper() if char.isascii() else char
        if upper in "IL":
            symbols.append(1)
        elif upper == "O":
            symbols.append(0)
        elif char.isascii() and upper in CROCKFORD:
            symbols.append(CROCKFORD.index(upper))
        else:
            return f"invalidCharacter {position}"
    if len(symbols) != 56:
        return f"wrongLength {len(symbols)}"
    if with_check(symbols[:53]) != symbols:
        retired_sum = sum((i + 2) * s for i, s in enumerate(symbols[:53]))
        t = symbols[53] * 1024 + symbols[54] * 32 + symbols[55]
        if symbols[0] == 1 and t < RETIRED_PRIME and (retired_sum + t) % RETIRED_PRIME == 0:
            return "unsupportedVersion 1"
        return "checksumMismatch"
    if symbols[0] != CODE_VERSION:
        return f"unsupportedVersion {symbols[0]}"
    if symbols[52] & 0x0F:
        return "nonZeroPadding"
    bits = symbols_bits(symbols[1:53])[:256]
    return bytes(int(bits[i:i + 8], 2) for i in range(0, 256, 8)).hex()


def export_code_inputs():
    code_a = export_code(SECRET_A)
    plain = code_a.replace("-", "")
    symbols_a = [CROCKFORD.index(c) for c in plain]
    cases = [
        ("canonical", code_a),
        ("no separators", plain),
        ("lower case", code_a.lower()),
        ("spaces, as handoffctl prints it", code_a.replace("-", " ")),
        ("two lines with tabs and CRLF", "\t" + code_a[:34].replace("-", " ") + "\r\n\t" + code_a[35:].replace("-", " ") + "\n"),
        ("I, L, O read as 1, 1, 0", plain.replace("1", "I", 1).replace("1", "l", 1).replace("0", "O", 1).replace("0", "o", 1)),
        ("one symbol short", plain[:-1]),
        ("one symbol long", plain + "0"),
        ("empty", ""),
        ("U is not a symbol", "2U"),
        ("no-break space is not a separator", code_a.replace("-", "\u00a0", 1)),
        ("en dash is not a separator", code_a.replace("-", "\u2013", 1)),
        ("underscore is not a separator", code_a.replace("-", "_", 1)),
        ("fullwidth digit is not a symbol", "\uff12" + plain[1:]),
        ("single substitution", plain[:10] + ("Z" if plain[10] != "Z" else "Y") + plain[11:]),
        ("adjacent swap", plain[:20] + plain[21] + plain[20] + plain[22:]),
        ("version-1 code from an older build", retired_export_code(SECRET_A)),
        ("version-1 code with a typo", retired_export_code(SECRET_A)[:-1] + "0"),
        ("version 3 with a valid check", render(with_check([3] + symbols_a[1:53]))),
        ("version 0 with a valid check", render(with_check([0] + symbols_a[1:53]))),
        ("non-zero padding with a valid check", render(with_check(symbols_a[:52] + [symbols_a[52] | 1]))),
    ]
    assert plain[20] != plain[21], "pick another swap position"
    return [{"name": name, "input": text, "result": decode_export_code(text)} for name, text in cases]


def key_file_body(name, stamp, secret_hex):
    return f"handoff-account-key: 1\nname: {name}\ncreated: {stamp}\nsecret: {secret_hex}\n"


def key_file_checksum(body):
    return hashlib.sha256(body.encode()).digest()[:4].hex()


def key_file(name, created, secret):
    import datetime
    stamp = datetime.datetime.fromtimestamp(created, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = key_file_body(name, stamp, secret.hex())
    header = "# handoff account key. Keep it secret: mode 0600. Format: docs/beacon-format.md\n"
    return header + body + f"checksum: {key_file_checksum(body)}\n"


WHITE_SPACE = set(range(0x09, 0x0E)) | {0x20, 0x85, 0xA0, 0x1680} | set(range(0x2000, 0x200B)) | {
    0x2028, 0x2029, 0x202F, 0x205F, 0x3000}


def name_problem(name):
    """Section 10's name rules, on code points; None when the name is valid."""
    if not name:
        return "empty"
    if len(name) > 64 or len(name.encode()) > 200:
        return "tooLong"
    if ord(name[0]) in WHITE_SPACE or ord(name[-1]) in WHITE_SPACE:
        return "surroundingWhitespace"
    for char in name:
        c = ord(char)
        if c <= 0x1F or 0x7F <= c <= 0x9F or c in (0x2028, 0x2029):
            return "controlCharacter"
        if char in "/\\":
            return "pathSeparator"
    if name[0] == ".":
        return "leadingDot"
    return None


def parse_key_file(text):
    """Section 10's parser: returns (name, created, secret hex) or the error as 'name [value]'."""
    import datetime
    fields = ["handoff-account-key", "name", "created", "secret", "checksum"]
    values = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if all(c in " \t" for c in line) or line.startswith("#"):
            continue
        if ": " not in line:
            return "malformedLine %d" % number if values else "notAnAccountKeyFile"
        field, value = line.split(": ", 1)
        if field not in fields:
            return "unknownField %d" % number if values else "notAnAccountKeyFile"
        if len(values) == len(fields):
            return "trailingContent %d" % number
        if field != fields[len(values)]:
            return "unexpectedField %d" % number if values else "notAnAccountKeyFile"
        values[field] = (value, number)
        if field == "handoff-account-key" and value != "1":
            return "unsupportedVersion"
    if not values:
        return "notAnAccountKeyFile"
    if len(values) < len(fields):
        return "missingField " + fields[len(values)]
    name, created, secret, checksum = (values[f] for f in fields[1:])
    try:
        stamp = datetime.datetime.strptime(created[0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        assert len(created[0]) == 20 and stamp.year >= 1970
    except (ValueError, AssertionError):
        return "invalidDate %d" % created[1]
    lower_hex = set("0123456789abcdef")
    if len(secret[0]) != 64 or not set(secret[0]) <= lower_hex:
        return "invalidSecret %d" % secret[1]
    if len(checksum[0]) != 8 or not set(checksum[0]) <= lower_hex:
        return "invalidChecksum %d" % checksum[1]
    if key_file_checksum(key_file_body(name[0], created[0], secret[0])) != checksum[0]:
        return "checksumMismatch"
    problem = name_problem(name[0])
    if problem:
        return "invalidName " + problem
    return {"name": name[0], "created": int(stamp.timestamp()), "accountSecret": secret[0]}


def key_file_inputs():
    home = key_file("Home", 1_750_000_000, SECRET_A)
    lines = home.split("\n")

    def with_name(name):
        return key_file(name, 1_750_000_000, SECRET_A)

    def edited(index, new_line, fix_checksum=True):
        edited_lines = list(lines)
        edited_lines[index] = new_line
        if fix_checksum:
            body = "".join(line + "\n" for line in edited_lines[1:5])
            edited_lines[5] = "checksum: " + key_file_checksum(body)
        return "\n".join(edited_lines)

    cases = [
        ("CRLF line ends: the checksum covers each line with one LF, not the CR", home.replace("\n", "\r\n")),
        ("no final line end", home[:-1]),
        ("comments and blank lines of spaces and tabs anywhere",
         "\n \t\n# mine\n" + home.replace("\nsecret", "\n# note\n  \nsecret") + "\t\n# end\n"),
        ("a lone CR does not end a line", home.replace("\n", "\r")),
        ("a CR inside a CRLF line belongs to the value", edited(2, "name: Ho\rme").replace("\n", "\r\n")),
        ("separator is colon and one space", edited(2, "name:Home")),
        ("a second space belongs to the value", edited(2, "name:  Home")),
        ("upper-case secret digits", edited(4, lines[4].upper().replace("SECRET", "secret"))),
        ("upper-case checksum digits", edited(5, lines[5].upper().replace("CHECKSUM", "checksum"), fix_checksum=False)),
        ("checksum of other content", edited(5, "checksum: 00000000", fix_checksum=False)),
        ("leading space before a field name", edited(2, " name: Home")),
        ("byte order mark", "\ufeff" + home[home.index("\n") + 1:]),
        ("version 2", edited(1, "handoff-account-key: 2")),
        ("64 code points", with_name("n" * 64)),
        ("65 code points", with_name("n" * 65)),
        ("32 graphemes of 2 code points each: 64 code points", with_name("e\u0301" * 32)),
        ("33 graphemes of 2 code points each: 66 code points", with_name("e\u0301" * 33)),
        ("200 UTF-8 bytes in 53 code points", with_name("\U0001f600" * 49 + "nnnn")),
        ("201 UTF-8 bytes in 54 code points", with_name("\U0001f600" * 49 + "nnnnn")),
        ("U+0085 next line is a control character", with_name("Ho\u0085me")),
        ("U+007F delete is a control character", with_name("Ho\u007fme")),
        ("U+2028 line separator", with_name("Ho\u2028me")),
        ("U+200B zero width space is allowed", with_name("Ho\u200bme")),
        ("U+00A0 no-break space at the end", with_name("Home\u00a0")),
        ("U+3000 ideographic space at the start", with_name("\u3000Home")),
        ("combining mark first is not white space", with_name("\u0301Home")),
        ("backslash", with_name("Ho\\me")),
        ("leading dot", with_name(".Home")),
    ]
    return [{"name": name, "text": text, "result": parse_key_file(text)} for name, text in cases]


def replay_window(sequences):
    """Section 6 for one origin: whether each sequence number in turn is accepted."""
    newest, seen, out = None, 0, []
    for sequence in sequences:
        if newest is None:
            newest, seen = sequence, 1
            out.append(True)
            continue
        d = (sequence - newest) % 65536
        if 1 <= d <= 32767:
            seen = ((seen << d) | 1) & (2**64 - 1) if d < 64 else 1
            newest = sequence
            out.append(True)
        else:
            behind = (65536 - d) % 65536
            if behind < 64 and not seen >> behind & 1:
                seen |= 1 << behind
                out.append(True)
            else:
                out.append(False)
    return out


# Newest 1005, then exactly 2^15 ahead (behind, refused), 2^15 - 1 ahead (accepted), 63 and 64 behind,
# wrap-around, and exactly 2^15 again.
REPLAY_SEQUENCES = [1000, 1000, 1005, 1001, 1001, 1005 + 32768, 1005 + 32767, 1005, 1005 + 32767 - 63,
                    1005 + 32767 - 64, 65535, 0, 65535, 1, 0, 1 + 32768]


def seal(secret, length, index, slot, nibble, salt, type_string, flags, sequence, device):
    return bytes.fromhex(beacon(dict(accountSecret=secret.hex(), epochLength=length, epochIndex=index,
                                     activityType=type_string, slot=slot, salt="%06x" % salt, headerNibble=nibble,
                                     deviceID="%08x" % device, sequence=sequence, flags=flags))["payload"])


class Receiver:
    """Section 2's "Opening" and sections 5-6, for one known account: an independent model of the recogniser."""

    def __init__(self, secret, length, index):
        self.keys = schedule(secret)
        self.length, self.index = length, index
        self.windows = {}

    def receive(self, payload):
        if not payload:
            return "tooShort 0"
        if payload[0] >> 4 != 1:
            return "unsupportedVersion %d" % (payload[0] >> 4)
        if len(payload) < 24:
            return "tooShort %d" % len(payload)
        if len(payload) > 24:
            return "tooLong %d" % len(payload)
        matches = []
        for offset in range(-2, 3):
            ctx = epoch_context(self.length, self.index + offset)
            for slot in range(8):
                if hmac256(self.keys["recognitionTag"], ctx + bytes([slot]))[:4] == payload[1:5]:
                    matches.append((offset, ctx))
        if not matches:
            return "unknownTag"
        for offset, ctx in matches:
            if hmac.compare_digest(hmac256(self.keys["authentication"], ctx + payload[:19])[:5], payload[19:]):
                break
        else:
            return "authenticationFailed"
        if offset < -1:
            return "epochTooOld %d" % (self.index + offset)
        if offset > 1:
            return "epochTooNew %d" % (self.index + offset)
        stream = chacha20_block(hmac256(self.keys["encryption"], ctx), 0, payload[:8] + bytes(4))[:11]
        plain = bytes(a ^ b for a, b in zip(payload[8:19], stream))
        sequence, device = struct.unpack(">HI", plain[5:11])
        origin = (self.index + offset, device)
        history = self.windows.setdefault(origin, [])
        accepted = replay_window(history + [sequence])[-1]
        if not accepted:
            return "replayed %d" % sequence
        history.append(sequence)
        return "accepted %d" % sequence


def receptions():
    """Payloads received in turn by one receiver, and the expected outcome of each."""
    length, index = 600, 2_900_000
    browse = "org.handoff.example.browse"
    genuine = seal(SECRET_A, length, index, 3, 5, 0xA1B2C3, browse, 0b101, 0x1234, 0xDEADBEEF)

    def flip(payload, position, mask=0x01):
        changed = bytearray(payload)
        changed[position] ^= mask
        return bytes(changed)

    cases = []

    def case(name, receiver_index, payloads):
        receiver = Receiver(SECRET_A, length, receiver_index)
        cases.append({"name": name, "accountSecret": SECRET_A.hex(), "epochLength": length,
                      "receiverEpochIndex": receiver_index,
                      "receptions": [{"payload": p.hex(), "result": receiver.receive(p)} for p in payloads]})

    case("version comes before length", index, [b"", bytes([0x20]), bytes([0x2F]) + genuine[1:], bytes([0x05]) + genuine[1:],
                                                 bytes([0xF5]) + genuine[1:] + b"\0"])
    case("length", index, [genuine[:1], genuine[:23], genuine + b"\0"])
    case("unknown tag", index, [flip(genuine, 1), flip(genuine, 4, 0x80),
                                seal(SECRET_B, length, index, 3, 5, 0xA1B2C3, browse, 0b101, 0x1234, 0xDEADBEEF)])
    case("the MAC covers every byte", index, [flip(genuine, 0), flip(genuine, 5), flip(genuine, 8), flip(genuine, 18, 0x80),
                                              flip(genuine, 19), flip(genuine, 23, 0x80)])
    case("accepted once, then a replay", index, [genuine, genuine])
    case("receiver one epoch later accepts", index + 1, [genuine])
    case("receiver one epoch earlier accepts", index - 1, [genuine])
    case("receiver two epochs later: too old", index + 2, [genuine])
    case("receiver two epochs earlier: too new", index - 2, [genuine])
    case("receiver three epochs later: unknown tag", index + 3, [genuine])
    case("sequence window, including a distance of exactly 2^15", index,
         [seal(SECRET_A, length, index, 6, 2, 0x10000 + n, browse, 0, sequence, 0x0BADF00D)
          for n, sequence in enumerate(REPLAY_SEQUENCES)])
    return cases


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
    global INPUTS_PAYLOAD_0
    INPUTS_PAYLOAD_0 = bytes.fromhex(beacon(INPUTS[0])["payload"])
    here = os.path.dirname(os.path.abspath(__file__))
    document = {
        "description": "handoff beacon format version 1 test vectors; see docs/beacon-format.md. "
                       "Hex is lowercase; multi-byte integers in hex fields are big-endian.",
        "generator": "Tests/HandoffCoreTests/Vectors/generate_beacon_vectors.py",
        "beacons": [beacon(v) for v in INPUTS],
        "exportCodes": [
            {"accountSecret": s.hex(), "code": export_code(s)} for s in (SECRET_A, SECRET_B, SECRET_C, bytes(32))
        ],
        "exportCodeInputs": export_code_inputs(),
        "keyFiles": [
            {"name": "Home", "created": 1_750_000_000, "accountSecret": SECRET_A.hex(),
             "text": key_file("Home", 1_750_000_000, SECRET_A)},
            {"name": "Work laptop \u00e9t\u00e9 \u2615", "created": 0, "accountSecret": SECRET_C.hex(),
             "text": key_file("Work laptop \u00e9t\u00e9 \u2615", 0, SECRET_C)},
        ],
        "keyFileInputs": key_file_inputs(),
        "advertisements": [
            {"payload": INPUTS_PAYLOAD_0.hex(), "companyID": company, "advertisingData": advertising_data(INPUTS_PAYLOAD_0, company).hex()}
            for company in (0xFFFF, 0x1234, 0x004C)
        ],
        "replayWindow": [{"sequence": n, "accepted": a} for n, a in zip(REPLAY_SEQUENCES, replay_window(REPLAY_SEQUENCES))],
        "receptions": receptions(),
        "crc15Check": {"input": "123456789", "crc": "%04x" % crc15_bytes(b"123456789")},
    }
    with open(os.path.join(here, "beacon-v1.json"), "w") as out:
        json.dump(document, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
