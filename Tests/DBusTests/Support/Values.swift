#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

/// The canonical description of a value, identical to `describe` in Peers/peer.py:
/// comparing the two is how a test checks that python decoded what we encoded
/// (and the reverse) without trusting our own decoder. Doubles are compared by
/// their bits, file descriptors by the open file they refer to.
func describe(_ value: DBusValue) -> String {
    switch value {
    case .byte(let v): "y\(v)"
    case .boolean(let v): v ? "btrue" : "bfalse"
    case .int16(let v): "n\(v)"
    case .uint16(let v): "q\(v)"
    case .int32(let v): "i\(v)"
    case .uint32(let v): "u\(v)"
    case .int64(let v): "x\(v)"
    case .uint64(let v): "t\(v)"
    case .double(let v):
        "d" + String(repeating: "0", count: 16 - String(v.bitPattern, radix: 16).count)
            + String(v.bitPattern, radix: 16)
    case .string(let s): "s" + s.utf8.map { String(format: "%02x", $0) }.joined()
    case .objectPath(let p): "o\(p.rawValue)"
    case .signature(let g): "g\(g.rawValue)"
    case .unixFD(let fd):
        {
            var st = stat()
            guard fstat(fd.fileDescriptor, &st) == 0 else { return "h-bad" }
            return "h\(st.st_dev):\(st.st_ino)"
        }()
    case .array(let element, let elements): "a\(element.signature)[" + elements.map(describe).joined(separator: ",") + "]"
    case .structure(let fields): "(" + fields.map(describe).joined(separator: ",") + ")"
    case .dictEntry(let key, let value): "{\(describe(key))=\(describe(value))}"
    case .variant(let inner): "v<\(inner.type.signature)>" + describe(inner)
    }
}

func describe(_ body: [DBusValue]) -> String { body.map(describe).joined(separator: " ") }

/// Values worth a round trip: every basic type at its extremes, awkward strings and
/// doubles, and the container shapes BlueZ uses.
enum Samples {
    static let basics: [DBusValue] = [
        .byte(0), .byte(255),
        .boolean(false), .boolean(true),
        .int16(.min), .int16(.max), .uint16(0), .uint16(.max),
        .int32(.min), .int32(.max), .uint32(0), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(0), .uint64(.max),
        .double(0), .double(-0.0), .double(.pi), .double(.infinity), .double(-.infinity), .double(.nan),
        .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude),
        .string(""), .string("plain"), .string("grüße ✓ 😀"), .string(String(String.UnicodeScalarView([0xFFFF, 0xFDD0, 0x10FFFF].compactMap(Unicode.Scalar.init)))),  // noncharacters
        .string(String(repeating: "long ", count: 20_000)),
        .objectPath(.root), .objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"),
        .signature(.empty), .signature("a{oa{sa{sv}}}(ybnqiuxtdsogh)av"),
    ]

    static let containers: [DBusValue] = [
        .array(element: .int32, []),
        .array(element: .string, []),
        .bytes([]),
        .bytes(0...255),
        .array(element: .int16, [.int16(-1), .int16(2)]),
        .array(element: .uint64, [.uint64(.max), .uint64(1)]),
        .array(element: .double, [.double(1.5), .double(-2)]),
        .array(element: .boolean, [.boolean(true), .boolean(false)]),
        .strings(["a", "", "ç"]),
        .array(element: .objectPath, [.objectPath("/a"), .objectPath("/b/c")]),
        .array(element: .signature, [.signature("s"), .signature("a{sv}")]),
        .array(element: .array(.byte), [.bytes([1, 2]), .bytes([])]),
        .array(element: .array(.array(.string)), [.array(element: .array(.string), [.strings(["x"])])]),
        .vardict([:]),
        .vardict([
            "Name": .string("handoff"), "Count": .uint32(3), "Data": .bytes([1, 2, 3]),
            "Nested": .vardict(["Deeper": .vardict(["Flag": .boolean(true)])]),
            "Variant": .variant(.variant(.int16(-7))),
        ]),
        .dictionary(key: .uint16, value: .variant, [(.uint16(0x004C), .variant(.bytes([0x12, 0x34])))]),
        .dictionary(
            key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))),
            [
                (
                    .objectPath("/org/bluez/hci0"),
                    .dictionary(
                        key: .string, value: .array(.dictEntry(key: .string, value: .variant)),
                        [
                            (.string("org.bluez.Adapter1"), .vardict(["Powered": .boolean(true), "Address": .string("AA:BB")])),
                            (.string("org.freedesktop.DBus.Properties"), .vardict([:])),
                        ])
                ),
                (.objectPath("/org/bluez/hci1"), .dictionary(key: .string, value: .array(.dictEntry(key: .string, value: .variant)), [])),
            ]),
        .dictionary(key: .byte, value: .string, [(.byte(1), .string("one")), (.byte(2), .string("two"))]),
        .dictionary(key: .int64, value: .double, [(.int64(.min), .double(-1))]),
        .dictionary(key: .boolean, value: .int32, [(.boolean(true), .int32(1))]),
        .dictionary(key: .double, value: .byte, [(.double(0.5), .byte(1))]),
        .dictionary(key: .signature, value: .objectPath, [(.signature("a{sv}"), .objectPath("/"))]),
        .structure([.int32(1)]),
        .structure([.byte(1), .string("two"), .structure([.double(3), .array(element: .int32, [.int32(4)])])]),
        .array(element: .structure([.byte, .variant]), [.structure([.byte(1), .variant(.string("x"))])]),
        .variant(.int32(5)),
        .variant(.variant(.variant(.string("deep")))),
        .variant(.vardict(["k": .variant(.structure([.int32(1), .strings(["s"])]))])),
        .variant(.array(element: .structure([.string, .variant]), [])),
        .array(element: .variant, [.variant(.byte(1)), .variant(.string("s")), .variant(.bytes([1])), .variant(.vardict([:]))]),
    ]

    static var all: [DBusValue] { basics + containers }
}

/// What `peer.py`'s basics() and containers() build, as we expect to decode them.
enum PythonValues {
    /// `MakeBasics`: ybnqiuxtdsog.
    static let basics: [DBusValue] = [
        .byte(255), .boolean(true), .int16(-32768), .uint16(65535), .int32(-2_147_483_648), .uint32(4_294_967_295),
        .int64(.min), .uint64(.max), .double(-1.5), .string("grüße ✓ 😀"),
        .objectPath("/org/handoff/a_1/B2"), .signature("a{sv}(iay)"),
    ]

    /// `MakeContainers`: a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas, in python's dict order.
    static let containers: [DBusValue] = [
        .dictionary(
            key: .string, value: .variant,
            [
                (.string("Name"), .variant(.string("peer"))),
                (.string("Count"), .variant(.uint32(3))),
                (.string("Data"), .variant(.bytes([1, 2]))),
                (.string("Nested"), .variant(.vardict(["k": .int64(-1)]))),
            ]),
        .dictionary(key: .uint16, value: .variant, [(.uint16(0x004C), .variant(.bytes([0x12, 0x34])))]),
        .dictionary(
            key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))),
            [
                (
                    .objectPath("/org/bluez/hci0"),
                    .dictionary(
                        key: .string, value: .array(.dictEntry(key: .string, value: .variant)),
                        [
                            (
                                .string("org.bluez.Adapter1"),
                                .dictionary(
                                    key: .string, value: .variant,
                                    [
                                        (.string("Address"), .variant(.string("AA:BB:CC:DD:EE:FF"))),
                                        (.string("Powered"), .variant(.boolean(true))),
                                    ])
                            ),
                            (.string("org.freedesktop.DBus.Properties"), .vardict([:])),
                        ])
                )
            ]),
        .structure([.int32(7), .strings(["a", "b"])]),
        .variant(.variant(.variant(.string("deep")))),
        .variant(.structure([.int32(1), .string("x")])),
        .array(
            element: .structure([.byte, .variant]),
            [.structure([.byte(1), .variant(.int32(2))]), .structure([.byte(2), .variant(.string("two"))])]),
        .array(element: .array(.byte), [.bytes([9]), .bytes([])]),
        .strings([]),
    ]
}
