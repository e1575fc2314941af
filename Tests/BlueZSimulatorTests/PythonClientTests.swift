import BlueZSimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

/// The simulator driven by an independent client: python3-dbus, as bluetoothctl-style
/// scripts and the VM rig's guest script use BlueZ.
@Suite struct PythonClientTests {
    static let python = "/usr/bin/python3"
    static var pythonHasDBus: Bool {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        guard let child = try? ChildProcess(python, ["-c", "import dbus, dbus.service, gi"]) else { return false }
        return child.process.waitForExit() == 0
    }

    @Test(.enabled(if: pythonHasDBus, "needs /usr/bin/python3 with python3-dbus and python3-gi"))
    func aPythonClientAdvertisesScansAndSurvivesARestart() async throws {
        try await SimulatorHarness.run { h in
            let script = FileManager.default.temporaryDirectory
                .appendingPathComponent("bluez-sim-client-\(UUID().uuidString).py")
            try Self.script.write(to: script, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: script) }
            let child = try ChildProcess(Self.python, [script.path, h.bus.address])
            let output = await child.readAll(timeout: .seconds(60))
            let status = await child.process.exitCode(within: .seconds(10))
            #expect(status == 0, "python client output:\n\(output)")
            #expect(output.contains("events: ['GetAll', 'Registered']"), "\(output)")
            #expect(output.hasSuffix("PASS\n"), "\(output)")
        }
    }

    @Test(.enabled(if: pythonHasDBus, "needs /usr/bin/python3 with python3-dbus and python3-gi"))
    func aPythonClientDecodesTheFloodAsBluetoothdSignals() async throws {
        try await SimulatorHarness.run { h in
            let script = FileManager.default.temporaryDirectory
                .appendingPathComponent("bluez-sim-flood-\(UUID().uuidString).py")
            try Self.floodScript.write(to: script, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: script) }
            let child = try ChildProcess(Self.python, [script.path, h.bus.address])
            let output = await child.readAll(timeout: .seconds(60))
            let status = await child.process.exitCode(within: .seconds(10))
            #expect(status == 0, "python client output:\n\(output)")
            #expect(output.hasSuffix("PASS\n"), "\(output)")
        }
    }

    /// Starts a flood of 2 devices × 10 reports through the control interface and checks
    /// each signal as libdbus-python decodes it: signature, interface, keys and types.
    static let floodScript = #"""
#!/usr/bin/python3
import sys, time
import dbus, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
ctx = GLib.MainLoop().get_context()
added, changes = [], []
bus.add_signal_receiver(lambda path, ifaces: added.append((str(path), ifaces)),
                        dbus_interface='org.freedesktop.DBus.ObjectManager', signal_name='InterfacesAdded')
bus.add_signal_receiver(lambda *args, **kw: changes.append((args, kw)),
                        dbus_interface='org.freedesktop.DBus.Properties', signal_name='PropertiesChanged',
                        path_keyword='path', message_keyword='message', sender_keyword='sender')
ctl = dbus.Interface(bus.get_object('org.handoff.Simulator', '/org/handoff/Simulator'), 'org.handoff.Simulator1')
ctl.StartFlood('hci1', dbus.UInt32(2), dbus.UInt32(0), dbus.UInt32(10))
end = time.monotonic() + 20
while len(changes) < 10 and time.monotonic() < end:
    ctx.iteration(False)
    time.sleep(0.005)

def fail(msg):
    print('FAIL:', msg, flush=True)
    sys.exit(1)

if len(changes) != 10:
    fail('expected 10 PropertiesChanged, got %d' % len(changes))
paths = {p for p, i in added if 'org.bluez.Device1' in i}
if len(paths) != 2:
    fail('expected InterfacesAdded for 2 devices, got %r' % paths)
owner = bus.get_name_owner('org.bluez')
for (iface, changed, invalidated), kw in changes:
    msg = kw['message']
    if msg.get_signature() != 'sa{sv}as' or iface != 'org.bluez.Device1' or kw['sender'] != owner:
        fail('bad signal %s %r from %s' % (msg.get_signature(), iface, kw['sender']))
    if kw['path'] not in paths or len(invalidated) != 0 or sorted(changed.keys()) != ['ManufacturerData', 'RSSI']:
        fail('bad body %r %r on %s' % (dict(changed), list(invalidated), kw['path']))
    md = changed['ManufacturerData']
    if not isinstance(changed['RSSI'], dbus.Int16) or md.signature != 'qv' or list(md.keys()) != [0xffff]:
        fail('bad types %r' % dict(changed))
    data = md[0xffff]
    if not isinstance(data, dbus.Array) or data.signature != 'y' or len(data) != 24:
        fail('bad ManufacturerData value %r' % data)
print('PASS', flush=True)
"""#

    /// Registers an advertisement (checking that bluetoothd read it with GetAll before
    /// replying), scans for it from the other adapter, then restarts the simulator
    /// gracefully through the control interface and expects Release and a fresh org.bluez.
    static let script = #"""
#!/usr/bin/python3
# An independent BlueZ client (python3-dbus) for the simulated bluetoothd.
import sys, time
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

BLUEZ = 'org.bluez'
PROPS = 'org.freedesktop.DBus.Properties'
OM = 'org.freedesktop.DBus.ObjectManager'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'
ADV = 'org.bluez.LEAdvertisement1'
ADVMGR = 'org.bluez.LEAdvertisingManager1'
HCI0, HCI1 = '/org/bluez/hci0', '/org/bluez/hci1'

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
loop = GLib.MainLoop()
events = []

def log(*a):
    print(*a, flush=True)

def fail(msg):
    log('FAIL:', msg)
    sys.exit(1)

def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    ctx = loop.get_context()
    while time.monotonic() < end:
        r = cond()
        if r:
            return r
        ctx.iteration(False)
        time.sleep(0.005)
    return cond()

class Advertisement(dbus.service.Object):
    def __init__(self, path, data):
        self.path = path
        self.data = data
        self.released = 0
        super().__init__(bus, path)
    def props(self):
        return {'Type': 'peripheral',
                'ManufacturerData': dbus.Dictionary({dbus.UInt16(0xFFFF): dbus.Array(self.data, signature='y')}, signature='qv'),
                'LocalName': 'pyclient'}
    @dbus.service.method(PROPS, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        events.append('GetAll')
        return self.props()
    @dbus.service.method(ADV, in_signature='', out_signature='')
    def Release(self):
        events.append('Release')
        self.released += 1

seen = {}
def on_added(path, ifaces):
    d = ifaces.get(DEVICE)
    if d and str(path).startswith(HCI1 + '/') and 'ManufacturerData' in d:
        seen[str(path)] = {int(k): bytes(bytearray(v)) for k, v in d['ManufacturerData'].items()}
bus.add_signal_receiver(on_added, dbus_interface=OM, signal_name='InterfacesAdded')
owners = []
bus.add_signal_receiver(lambda n, o, new: owners.append(str(new)) if n == BLUEZ else None,
                        dbus_interface='org.freedesktop.DBus', signal_name='NameOwnerChanged')

adv = Advertisement('/org/pyclient/adv0', [1, 2, 3])
mgr = dbus.Interface(bus.get_object(BLUEZ, HCI0), ADVMGR)
done = []
mgr.RegisterAdvertisement(adv.path, dbus.Dictionary({}, signature='sv'),
                          reply_handler=lambda: (events.append('Registered'), done.append(1)),
                          error_handler=lambda e: (events.append('Error ' + str(e)), done.append(1)))
wait_for(lambda: done, 10)
log('events:', events)
if events[:2] != ['GetAll', 'Registered']:
    fail('expected GetAll before the reply, got %r' % events)

a1 = dbus.Interface(bus.get_object(BLUEZ, HCI1), ADAPTER)
a1.SetDiscoveryFilter({'Transport': 'le', 'DuplicateData': dbus.Boolean(True)})
a1.StartDiscovery()
if not wait_for(lambda: any(d.get(0xFFFF) == b'\x01\x02\x03' for d in seen.values()), 10):
    fail('hci1 did not see the advertisement: %r' % seen)
path = list(seen)[0]
props = dbus.Interface(bus.get_object(BLUEZ, path), PROPS).GetAll(DEVICE)
log('device', path, 'AddressType', props['AddressType'], 'Name', props.get('Name'), 'RSSI', props.get('RSSI'))
if props['AddressType'] != 'random' or props.get('Name') != 'pyclient':
    fail('unexpected device properties %r' % dict(props))

ctl = dbus.Interface(bus.get_object('org.handoff.Simulator', '/org/handoff/Simulator'), 'org.handoff.Simulator1')
ctl.Restart(dbus.UInt32(300), dbus.Boolean(True))
if not wait_for(lambda: adv.released > 0, 5):
    fail('no Release on graceful restart')
if not wait_for(lambda: len(owners) >= 2 and owners[-1] != '', 10):
    fail('org.bluez did not come back: %r' % owners)
# As bluetoothd, the simulator takes the name first; the adapters follow (InterfacesAdded).
def advertising_manager():
    try:
        return dbus.Interface(bus.get_object(BLUEZ, HCI0, introspect=False), PROPS).GetAll(ADVMGR)
    except dbus.exceptions.DBusException:
        return None
am = wait_for(advertising_manager, 10)
if am is None:
    fail('hci0 did not come back after the restart')
if int(am['ActiveInstances']) != 0:
    fail('ActiveInstances after restart: %d' % int(am['ActiveInstances']))
log('PASS')
"""#
}
