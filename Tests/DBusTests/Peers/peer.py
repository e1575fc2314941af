#!/usr/bin/python3
"""An independent D-Bus peer for handoff's DBus tests and benchmark.

Written against python3-dbus (libdbus through dbus-python) and GLib, not our
Swift code, so that our marshalling is checked against another implementation.
Run it with /usr/bin/python3 and DBUS_SESSION_BUS_ADDRESS pointing at the bus.

    peer.py server NAME              the test peer (see class Peer), owns NAME
    peer.py bench-serve NAME         Echo(s)->s server for the benchmark
    peer.py bench-call NAME SECONDS DEPTH
                                     calls NAME's Echo for SECONDS; DEPTH calls in
                                     flight (1 = sequential); prints "calls N seconds S"
    peer.py bench-receive NAME       owns NAME, counts Tick signals until Stop;
                                     prints "signals N seconds S"
    peer.py bench-emit RECEIVER SECONDS
                                     emits Tick signals for SECONDS (pausing for a
                                     Peer.Ping round trip to RECEIVER every 256), then Stop

A value's canonical description (`describe`) is shared with the Swift tests
(DescribeValue.swift); both sides must produce the same text for the same value:
  y42 btrue n-5 q5 i-5 u5 x-5 t5 d<16 hex digits of the IEEE bits> s<hex of UTF-8>
  o/path g<sig> h<st_dev>:<st_ino>  a<elem sig>[e,e]  a{kv}[{k=v},{k=v}]  (f,f)
  v<inner sig>inner
"""

import os
import struct
import sys
import time

import dbus
import dbus.exceptions
import dbus.lowlevel
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = 'org.handoff.Test.Peer'
PATH = '/peer'
PROPS = 'org.freedesktop.DBus.Properties'
BENCH_IFACE = 'org.handoff.Bench'
BENCH_PATH = '/bench'

# --- canonical descriptions -------------------------------------------------

BASIC = [
    (dbus.Byte, 'y'), (dbus.Boolean, 'b'), (dbus.Int16, 'n'), (dbus.UInt16, 'q'),
    (dbus.Int32, 'i'), (dbus.UInt32, 'u'), (dbus.Int64, 'x'), (dbus.UInt64, 't'),
    (dbus.Double, 'd'), (dbus.String, 's'), (dbus.ObjectPath, 'o'),
    (dbus.Signature, 'g'), (dbus.types.UnixFd, 'h'),
]


def type_sig(value, outer_variants=True):
    """The D-Bus signature of one dbus-python value (a plain str counts as 's')."""
    if outer_variants and getattr(value, 'variant_level', 0) > 0:
        return 'v'
    kind = type(value)
    if kind is str:
        return 's'
    for cls, code in BASIC:
        if kind is cls:
            return code
    if kind is dbus.Array:
        return 'a' + value.signature
    if kind is dbus.Dictionary:
        return 'a{' + value.signature + '}'
    if kind is dbus.Struct:
        return '(' + ''.join(type_sig(f) for f in value) + ')'
    raise TypeError('no D-Bus type for %r' % (value,))


def describe(value, level=None):
    if level is None:
        level = getattr(value, 'variant_level', 0)
    if level > 0:
        inner = 'v' if level > 1 else type_sig(value, outer_variants=False)
        return 'v<' + inner + '>' + describe(value, level - 1)
    kind = type(value)
    if kind is dbus.Boolean:
        return 'btrue' if value else 'bfalse'
    for cls, code in BASIC[:8]:
        if kind is cls and code != 'b':
            return code + str(int(value))
    if kind is dbus.Double:
        return 'd%016x' % struct.unpack('<Q', struct.pack('<d', float(value)))[0]
    if kind is dbus.String or kind is str:
        return 's' + str(value).encode('utf-8').hex()
    if kind is dbus.ObjectPath:
        return 'o' + str(value)
    if kind is dbus.Signature:
        return 'g' + str(value)
    if kind is dbus.types.UnixFd:
        fd = value.take()
        st = os.fstat(fd)
        os.close(fd)
        return 'h%d:%d' % (st.st_dev, st.st_ino)
    if kind is dbus.Array:
        return 'a' + value.signature + '[' + ','.join(describe(e) for e in value) + ']'
    if kind is dbus.Dictionary:
        return 'a{' + value.signature + '}[' + ','.join(
            '{' + describe(k) + '=' + describe(v) + '}' for k, v in value.items()) + ']'
    if kind is dbus.Struct:
        return '(' + ','.join(describe(f) for f in value) + ')'
    raise TypeError('cannot describe %r' % (value,))


def describe_args(args):
    return ' '.join(describe(a) for a in args)


# --- values python builds itself --------------------------------------------

def basics():
    """Signature ybnqiuxtdsog: the extremes of every basic type."""
    return (dbus.Byte(255), dbus.Boolean(True), dbus.Int16(-32768), dbus.UInt16(65535),
            dbus.Int32(-2147483648), dbus.UInt32(4294967295),
            dbus.Int64(-9223372036854775808), dbus.UInt64(18446744073709551615),
            dbus.Double(-1.5), dbus.String('gr\u00fc\u00dfe \u2713 \U0001F600'),
            dbus.ObjectPath('/org/handoff/a_1/B2'), dbus.Signature('a{sv}(iay)'))


def containers():
    """Signature a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas."""
    S = dbus.String
    props = dbus.Dictionary({
        S('Name'): S('peer', variant_level=1),
        S('Count'): dbus.UInt32(3, variant_level=1),
        S('Data'): dbus.Array([dbus.Byte(1), dbus.Byte(2)], signature='y', variant_level=1),
        S('Nested'): dbus.Dictionary({S('k'): dbus.Int64(-1, variant_level=1)}, signature='sv',
                                     variant_level=1),
    }, signature='sv')
    manufacturer = dbus.Dictionary({
        dbus.UInt16(0x004C): dbus.Array([dbus.Byte(0x12), dbus.Byte(0x34)], signature='y',
                                        variant_level=1),
    }, signature='qv')
    managed = dbus.Dictionary({
        dbus.ObjectPath('/org/bluez/hci0'): dbus.Dictionary({
            S('org.bluez.Adapter1'): dbus.Dictionary({
                S('Address'): S('AA:BB:CC:DD:EE:FF', variant_level=1),
                S('Powered'): dbus.Boolean(True, variant_level=1),
            }, signature='sv'),
            S('org.freedesktop.DBus.Properties'): dbus.Dictionary({}, signature='sv'),
        }, signature='sa{sv}'),
    }, signature='oa{sa{sv}}')
    pair = dbus.Struct((dbus.Int32(7), dbus.Array([S('a'), S('b')], signature='s')), signature='ias')
    deep = S('deep', variant_level=3)
    struct_variant = dbus.Struct((dbus.Int32(1), S('x')), signature='is', variant_level=1)
    pairs = dbus.Array([
        dbus.Struct((dbus.Byte(1), dbus.Int32(2, variant_level=1)), signature='yv'),
        dbus.Struct((dbus.Byte(2), S('two', variant_level=1)), signature='yv'),
    ], signature='(yv)')
    byte_arrays = dbus.Array([dbus.Array([dbus.Byte(9)], signature='y'),
                              dbus.Array([], signature='y')], signature='ay')
    empty = dbus.Array([], signature='s')
    return (props, manufacturer, managed, pair, deep, struct_variant, pairs, byte_arrays, empty)


# --- the test peer ------------------------------------------------------------

class Peer(dbus.service.Object):
    """org.handoff.Test.Peer at /peer. Echo and Describe take any signature and
    are answered by a message filter (see install_filter)."""

    def __init__(self, bus):
        super().__init__(bus, PATH)
        self.bus = bus
        self.pending = []   # NeverReply callbacks, kept so they are never called
        self.received = []  # signals matched by Watch rules, described
        self.value = dbus.Int32(1)

    @dbus.service.method(IFACE, in_signature='', out_signature='ybnqiuxtdsog')
    def MakeBasics(self):
        return basics()

    @dbus.service.method(IFACE, in_signature='', out_signature='a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas')
    def MakeContainers(self):
        return containers()

    @dbus.service.method(IFACE, in_signature='', out_signature='h')
    def MakeFD(self):
        r, w = os.pipe()
        os.write(w, b'hello from python')
        os.close(w)
        fd = dbus.types.UnixFd(r)  # duplicates r
        os.close(r)
        return fd

    @dbus.service.method(IFACE, in_signature='h', out_signature='s')
    def ReadFD(self, fd):
        raw = fd.take()
        with os.fdopen(raw, 'rb') as f:
            return f.read().decode('utf-8')

    @dbus.service.method(IFACE, in_signature='ss', out_signature='')
    def Fail(self, name, message):
        raise dbus.exceptions.DBusException(message, name=name)

    @dbus.service.method(IFACE, in_signature='', out_signature='i')
    def Version(self):
        return dbus.Int32(3)

    @dbus.service.method(IFACE, in_signature='s', out_signature='', async_callbacks=('ok', 'err'))
    def NeverReply(self, tag, ok, err):
        self.pending.append((ok, err))
        self.CallReceived(tag)

    @dbus.service.signal(IFACE, signature='s')
    def CallReceived(self, tag):
        pass

    @dbus.service.method(IFACE, in_signature='sos', out_signature='a{sv}', async_callbacks=('ok', 'err'))
    def GetAllFrom(self, destination, path, interface, ok, err):
        """Asks the caller for its properties before answering (what bluetoothd
        does during RegisterAdvertisement)."""
        self.bus.call_async(destination, path, PROPS, 'GetAll', 's', (interface,),
                            reply_handler=ok, error_handler=err)

    @dbus.service.method(IFACE, in_signature='soss', out_signature='s', async_callbacks=('ok', 'err'))
    def CallBack(self, destination, path, interface, member, ok, err):
        """Calls a method returning `s` on the caller before answering with its result."""
        self.bus.call_async(destination, path, interface, member, '', (),
                            reply_handler=ok, error_handler=err)

    @dbus.service.method(IFACE, in_signature='us', out_signature='')
    def Emit(self, count, tag):
        for i in range(count):
            self.Tick(dbus.UInt32(i), tag)

    @dbus.service.signal(IFACE, signature='us')
    def Tick(self, index, tag):
        pass

    @dbus.service.method(IFACE, in_signature='', out_signature='')
    def EmitTyped(self):
        self.Typed(*containers()[:3])

    @dbus.service.signal(IFACE, signature='a{sv}a{qv}a{oa{sa{sv}}}')
    def Typed(self, props, manufacturer, managed):
        pass

    @dbus.service.method(IFACE, in_signature='s', out_signature='')
    def Watch(self, rule):
        """Records every signal matching `rule` (see Received)."""
        self.bus.add_match_string(rule)

    @dbus.service.method(IFACE, in_signature='', out_signature='as')
    def Received(self):
        """The signals recorded so far as 'interface.member describe(args)'; clears the list."""
        out, self.received = self.received, []
        return dbus.Array(out, signature='s')

    @dbus.service.method(IFACE, in_signature='sso', out_signature='a{ss}')
    def Check(self, scenario, destination, path):
        """Runs python-side checks against an object we (the Swift side) export."""
        results = {}

        def check(name, fn):
            try:
                outcome = fn()
                results[name] = 'ok' if outcome is None else str(outcome)
            except Exception as e:  # noqa: BLE001 - reported to the Swift test
                results[name] = 'raised %s: %s' % (type(e).__name__, e)

        CHECKS[scenario](self.bus, destination, path, check)
        return dbus.Dictionary(results, signature='ss')

    def install_filter(self):
        def on_message(bus, msg):
            kind = msg.get_type()
            if kind == dbus.lowlevel.MESSAGE_TYPE_SIGNAL:
                if msg.get_sender() != bus.get_unique_name():
                    self.received.append('%s.%s %s' % (msg.get_interface(), msg.get_member(),
                                                       describe_args(msg.get_args_list())))
                return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
            if (kind != dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL or msg.get_path() != PATH
                    or msg.get_interface() != IFACE or msg.get_member() not in ('Echo', 'Describe')):
                return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
            args = msg.get_args_list()
            reply = dbus.lowlevel.MethodReturnMessage(msg)
            if msg.get_member() == 'Echo':
                reply.append(signature=msg.get_signature(), *args)
            else:
                reply.append(describe_args(args), signature='s')
            bus.send_message(reply)
            return dbus.lowlevel.HANDLER_RESULT_HANDLED
        self.bus.add_message_filter(on_message)


# --- checks python runs against our exported objects --------------------------

def expect_error(name, fn):
    try:
        fn()
    except dbus.exceptions.DBusException as e:
        if e.get_dbus_name() == name:
            return None
        return 'got %s (%s), wanted %s' % (e.get_dbus_name(), e.get_dbus_message(), name)
    return 'no error, wanted %s' % name


def expect_equal(actual, expected):
    a, e = describe_args(actual), describe_args(expected)
    return None if a == e else 'got %s, wanted %s' % (a, e)


LOCAL = 'org.handoff.Test.Local'


def checks_values(bus, destination, path, check):
    """Our object: EchoBasics(ybnqiuxtdsog), EchoContainers(a{sv}…as), Describe(v)->s,
    ReadFD(h)->s, Fail() raising org.handoff.Test.Error.Custom."""
    obj = bus.get_object(destination, path, introspect=False)

    def call(member, *args, signature=None):
        return obj.get_dbus_method(member, LOCAL)(*args, signature=signature)

    check('echo-basics', lambda: expect_equal(
        call('EchoBasics', *basics(), signature='ybnqiuxtdsog'), basics()))
    check('echo-containers', lambda: expect_equal(
        call('EchoContainers', *containers(), signature='a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas'),
        containers()))

    def describe_each():
        wrong = []
        for value in list(basics()) + list(containers()):
            wrapped = dbus.Struct((value,), signature=type_sig(value), variant_level=1)
            ours = str(call('Describe', wrapped, signature='v'))
            theirs = describe(wrapped)
            if ours != theirs:
                wrong.append('%s: ours %s, python %s' % (type_sig(value), ours, theirs))
        return '; '.join(wrong) or None
    check('describe', describe_each)

    def read_fd():
        r, w = os.pipe()
        os.write(w, b'hello from python')
        os.close(w)
        text = call('ReadFD', dbus.types.UnixFd(r), signature='h')
        os.close(r)
        return None if text == 'hello from python' else 'read %r' % text
    check('read-fd', read_fd)

    check('custom-error', lambda: expect_error(
        'org.handoff.Test.Error.Custom', lambda: call('Fail', signature='')))

    def custom_error_message():
        try:
            call('Fail', signature='')
        except dbus.exceptions.DBusException as e:
            return None if e.get_dbus_message() == 'custom failure' else repr(e.get_dbus_message())
        return 'no error'
    check('custom-error-message', custom_error_message)
    check('wrong-signature', lambda: expect_error(
        'org.freedesktop.DBus.Error.InvalidArgs',
        lambda: call('EchoBasics', dbus.Int32(1), signature='i')))
    check('unknown-method', lambda: expect_error(
        'org.freedesktop.DBus.Error.UnknownMethod', lambda: call('Nope', signature='')))
    check('unknown-object', lambda: expect_error(
        'org.freedesktop.DBus.Error.UnknownObject',
        lambda: bus.call_blocking(destination, '/no/such/object', LOCAL, 'EchoBasics', '', ())))
    check('unknown-interface', lambda: expect_error(
        'org.freedesktop.DBus.Error.UnknownInterface',
        lambda: bus.call_blocking(destination, path, 'org.handoff.Nope', 'EchoBasics', '', ())))
    check('peer-ping', lambda: bus.call_blocking(destination, path, 'org.freedesktop.DBus.Peer',
                                                  'Ping', '', ()) and None)


def checks_properties(bus, destination, path, check):
    """Our object: LOCAL with Name (s, read), Level (i, readwrite), Secret (s, write)."""
    def get(name, iface=LOCAL):
        return bus.call_blocking(destination, path, PROPS, 'Get', 'ss', (iface, name))

    def set_(name, value, iface=LOCAL):
        return bus.call_blocking(destination, path, PROPS, 'Set', 'ssv', (iface, name, value))

    check('get', lambda: expect_equal([get('Name')], [dbus.String('local', variant_level=1)]))
    check('get-all', lambda: expect_equal(
        [bus.call_blocking(destination, path, PROPS, 'GetAll', 's', (LOCAL,))],
        [dbus.Dictionary({'Level': dbus.Int32(5, variant_level=1),
                          'Name': dbus.String('local', variant_level=1)}, signature='sv')]))
    check('set', lambda: (set_('Level', dbus.Int32(6)) or None) or expect_equal(
        [get('Level')], [dbus.Int32(6, variant_level=1)]))
    check('set-read-only', lambda: expect_error(
        'org.freedesktop.DBus.Error.PropertyReadOnly', lambda: set_('Name', dbus.String('x'))))
    check('set-unknown', lambda: expect_error(
        'org.freedesktop.DBus.Error.UnknownProperty', lambda: set_('Nope', dbus.Int32(1))))
    check('set-wrong-type', lambda: expect_error(
        'org.freedesktop.DBus.Error.InvalidArgs', lambda: set_('Level', dbus.String('six'))))
    check('set-vetoed', lambda: expect_error(
        'org.freedesktop.DBus.Error.InvalidArgs', lambda: set_('Level', dbus.Int32(-1))))
    check('get-write-only', lambda: expect_error(
        'org.freedesktop.DBus.Error.AccessDenied', lambda: get('Secret')))
    check('get-unknown-interface', lambda: expect_error(
        'org.freedesktop.DBus.Error.UnknownInterface', lambda: get('Name', 'org.handoff.Nope')))
    check('get-wrong-args', lambda: expect_error(
        'org.freedesktop.DBus.Error.InvalidArgs',
        lambda: bus.call_blocking(destination, path, PROPS, 'Get', 's', (LOCAL,))))


def checks_object_manager(bus, destination, path, check):
    """Our manager at `path` with /…/child1 (LOCAL, Name='one') below it."""
    def managed():
        return bus.call_blocking(destination, path, 'org.freedesktop.DBus.ObjectManager',
                                 'GetManagedObjects', '', ())
    check('get-managed-objects', lambda: expect_equal([managed()], [dbus.Dictionary({
        dbus.ObjectPath(path + '/child1'): dbus.Dictionary({
            LOCAL: dbus.Dictionary({'Name': dbus.String('one', variant_level=1)}, signature='sv'),
        }, signature='sa{sv}'),
    }, signature='oa{sa{sv}}')]))


CHECKS = {'values': checks_values, 'properties': checks_properties,
          'object-manager': checks_object_manager}


def serve(name):
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    peer = Peer(bus)
    peer.install_filter()
    keep = dbus.service.BusName(name, bus, do_not_queue=True)  # noqa: F841 - owns the name
    GLib.MainLoop().run()


# --- benchmark roles ------------------------------------------------------------

class BenchServer(dbus.service.Object):
    @dbus.service.method(BENCH_IFACE, in_signature='s', out_signature='s')
    def Echo(self, text):
        return text


def bench_serve(name):
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    BenchServer(bus, BENCH_PATH)
    keep = dbus.service.BusName(name, bus, do_not_queue=True)  # noqa: F841
    GLib.MainLoop().run()


def bench_call(name, seconds, depth):
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    proxy = bus.get_object(name, BENCH_PATH, introspect=False)
    echo = proxy.get_dbus_method('Echo', BENCH_IFACE)
    payload = 'handoff'
    echo(payload)  # warm up
    if depth <= 1:
        count = 0
        start = time.monotonic()
        deadline = start + seconds
        while True:
            for _ in range(100):
                if echo(payload) != payload:
                    raise SystemExit('wrong reply')
            count += 100
            if time.monotonic() >= deadline:
                break
        print('calls %d seconds %.6f' % (count, time.monotonic() - start))
        return
    loop = GLib.MainLoop()
    state = {'done': 0, 'inflight': 0, 'stop': False}
    start = time.monotonic()
    deadline = start + seconds

    def issue():
        state['inflight'] += 1
        echo(payload, reply_handler=on_reply, error_handler=on_error)

    def on_reply(reply):
        state['inflight'] -= 1
        state['done'] += 1
        if not state['stop'] and (state['done'] % 100 != 0 or time.monotonic() < deadline):
            issue()
        else:
            state['stop'] = True
            if state['inflight'] == 0:
                loop.quit()

    def on_error(error):
        print('error %s' % error, file=sys.stderr)
        state['stop'] = True
        loop.quit()

    for _ in range(depth):
        issue()
    loop.run()
    print('calls %d seconds %.6f' % (state['done'], time.monotonic() - start))


class BenchEmitter(dbus.service.Object):
    @dbus.service.signal(BENCH_IFACE, signature='u')
    def Tick(self, index):
        pass

    @dbus.service.signal(BENCH_IFACE, signature='')
    def Stop(self):
        pass


def bench_emit(receiver, seconds):
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    emitter = BenchEmitter(bus, BENCH_PATH)
    deadline = time.monotonic() + seconds
    i = 0
    while time.monotonic() < deadline:
        for _ in range(256):
            emitter.Tick(dbus.UInt32(i))
            i += 1
        bus.call_blocking(receiver, '/', 'org.freedesktop.DBus.Peer', 'Ping', '', ())
    emitter.Stop()
    bus.flush()
    print('emitted %d' % i)


def bench_receive(name):
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    loop = GLib.MainLoop()
    state = {'count': 0, 'start': None}

    def on_tick(index):
        if state['start'] is None:
            state['start'] = time.monotonic()
        state['count'] += 1

    def on_stop():
        elapsed = time.monotonic() - state['start'] if state['start'] else 0.0
        print('signals %d seconds %.6f' % (state['count'], elapsed))
        sys.stdout.flush()
        loop.quit()

    bus.add_signal_receiver(on_tick, 'Tick', BENCH_IFACE, path=BENCH_PATH)
    bus.add_signal_receiver(on_stop, 'Stop', BENCH_IFACE, path=BENCH_PATH)
    keep = dbus.service.BusName(name, bus, do_not_queue=True)  # noqa: F841 - signals readiness
    loop.run()


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    mode = argv[1]
    if mode == 'server':
        serve(argv[2])
    elif mode == 'bench-serve':
        bench_serve(argv[2])
    elif mode == 'bench-call':
        bench_call(argv[2], float(argv[3]), int(argv[4]))
    elif mode == 'bench-receive':
        bench_receive(argv[2])
    elif mode == 'bench-emit':
        bench_emit(argv[2], float(argv[3]))
    else:
        raise SystemExit('unknown mode %r\n%s' % (mode, __doc__))


if __name__ == '__main__':
    main(sys.argv)
