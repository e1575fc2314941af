#!/usr/bin/python3
"""flood-payloads.py BUS_ADDRESS [FILE]: sets the simulator's flood payloads.

Reads hex payloads, one per line, from FILE (none: back to the numbered
pattern) and calls org.handoff.Simulator1.SetFloodPayloads (docs/simulator.md)
on the bus at BUS_ADDRESS. dbus-send cannot send an array of arrays.
"""
import sys

import dbus

bus = dbus.bus.BusConnection(sys.argv[1])
payloads = []
if len(sys.argv) > 2:
    with open(sys.argv[2]) as source:
        payloads = [dbus.ByteArray(bytes.fromhex(line.strip())) for line in source if line.strip()]
control = bus.get_object("org.handoff.Simulator", "/org/handoff/Simulator")
control.SetFloodPayloads(dbus.Array(payloads, signature="ay"), dbus_interface="org.handoff.Simulator1")
