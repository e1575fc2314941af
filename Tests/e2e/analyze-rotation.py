#!/usr/bin/python3
"""analyze-rotation.py MONITOR.jsonl FROM TO EPOCH

Part of the end-to-end suite (docs/e2e.md). Reads what bluez-monitor.py recorded (the
payloads hci1's bluetoothd reported) between the unix times FROM and TO, while one
advertiser was on the air rotating every EPOCH seconds, and checks the rotation as a
stranger would see it. Payload layout (docs/beacon-format.md): byte 0 is the header
(version nibble 1, random nibble), bytes 1-4 the recognition tag, fixed for one device
for one epoch; within an epoch the advertiser renews the beacon, which changes every
other byte. So the epochs are told apart by their tag.

Prints one line and exits 0 when:
  - the epoch boundaries inside the window (at least three) each brought a new tag,
    first heard within one epoch of the boundary;
  - across one payload per epoch, no byte but the version nibble stays the same;
  - every payload's version nibble is 1;
  - no sender address carried payloads of two epochs (two tags): an address that outlives
    its epoch would let a stranger link the beacons either side of the boundary, however
    well the payload rotates.
Otherwise prints the reason and exits 1. Figures: the delay from each boundary to the
first payload with the new tag, the number of payloads and of sender addresses.
"""
import json
import statistics
import sys

path, start, end, epoch = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
payloads = []  # (time, hex, address), first sighting of each distinct payload
seen = set()
with open(path) as lines:
    for line in lines:
        record = json.loads(line)
        data = record.get("data")
        if data is None or not (start <= record["t"] <= end) or data in seen:
            continue
        seen.add(data)
        payloads.append((record["t"], data, record.get("address")))


def fail(reason):
    print("FAIL " + reason)
    sys.exit(1)


if len(payloads) < 2:
    fail("only %d payload(s) heard between %.1f and %.1f" % (len(payloads), start, end))
tags = {}  # tag -> first time, first payload
for t, data, _ in payloads:
    if not data.startswith("1"):
        fail("payload %s has version nibble %s, not 1" % (data, data[0]))
    tags.setdefault(data[2:10], (t, data))
# The boundaries after the window opens with at least half an epoch left to hear them.
first_boundary = (int(start // epoch) + 1) * epoch
boundaries = [b for b in range(first_boundary, int(end) + 1, epoch) if b + epoch // 2 <= end]
if len(boundaries) < 3:
    fail("the window %.1f..%.1f holds %d epoch boundaries, not 3" % (start, end, len(boundaries)))
delays = []
for b in boundaries:
    new = [t for t, _ in tags.values() if b <= t < b + epoch]
    if not new:
        fail("no new recognition tag was heard in the epoch starting at %d (tags: %d)" % (b, len(tags)))
    delays.append(min(new) - b)
per_epoch = [data for _, data in sorted(tags.values())]
length = len(per_epoch[0]) // 2
constant = [i for i in range(1, length)
            if len({p[2 * i:2 * i + 2] for p in per_epoch}) == 1]
if any(len(p) != len(per_epoch[0]) for p in per_epoch):
    fail("payload lengths differ: %s" % sorted({len(p) // 2 for p in per_epoch}))
if constant:
    fail("byte(s) %s stayed the same across %d epochs' payloads" % (constant, len(per_epoch)))
addresses = {a for _, _, a in payloads}
tags_of = {}  # address -> the tags (epochs) heard from it
for _, data, address in payloads:
    tags_of.setdefault(address, set()).add(data[2:10])
linked = {a: t for a, t in tags_of.items() if len(t) > 1}
if linked:
    a, t = sorted(linked.items(), key=lambda item: -len(item[1]))[0]
    fail("the address %s carried the payloads of %d epochs: it links them (%d address(es) spanned a boundary)"
         % (a, len(t), len(linked)))
print("rotations %d, boundary -> new tag heard: median %.2f s, max %.2f s; %d epochs' payloads differ in "
      "every byte but the version nibble; %d payloads, %d sender addresses, each within one epoch"
      % (len(boundaries), statistics.median(delays), max(delays), len(per_epoch), len(payloads), len(addresses)))
