/// Builds `org.freedesktop.DBus.Introspectable` XML.
enum Introspection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    static func xml(interfaces: [DBusInterface], isManager: Bool, children: [String]) -> String {
        var out = doctype + "\n<node>\n"
        out += """
              <interface name="org.freedesktop.DBus.Introspectable">
                <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Peer">
                <method name="Ping"/>
                <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
              </interface>

            """
        if !interfaces.isEmpty {
            out += """
                  <interface name="org.freedesktop.DBus.Properties">
                    <method name="Get"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
                    <method name="GetAll"><arg name="interface_name" type="s" direction="in"/><arg name="props" type="a{sv}" direction="out"/></method>
                    <method name="Set"><arg name="interface_name" type="s" direction="in"/><arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
                    <signal name="PropertiesChanged"><arg name="interface_name" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
                  </interface>

                """
        }
        if isManager {
            out += """
                  <interface name="org.freedesktop.DBus.ObjectManager">
                    <method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>
                    <signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>
                    <signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>
                  </interface>

                """
        }
        for interface in interfaces {
            out += "  <interface name=\"\(escape(interface.name))\">\n"
            for method in interface.methods {
                out += "    <method name=\"\(escape(method.name))\">"
                var names = method.argumentNames.makeIterator()
                for type in method.inputs.types { out += arg(names.next(), type, direction: "in") }
                for type in method.outputs.types { out += arg(names.next(), type, direction: "out") }
                out += "</method>\n"
            }
            for signal in interface.signals {
                out += "    <signal name=\"\(escape(signal.name))\">"
                var names = signal.argumentNames.makeIterator()
                for type in signal.signature.types { out += arg(names.next(), type, direction: nil) }
                out += "</signal>\n"
            }
            for property in interface.properties {
                out += "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.signature))\" access=\"\(property.access.rawValue)\""
                if property.changeSignal == .true {
                    out += "/>\n"
                } else {
                    out += ">"
                    out += "<annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(property.changeSignal.rawValue)\"/>"
                    out += "</property>\n"
                }
            }
            out += "  </interface>\n"
        }
        for child in children { out += "  <node name=\"\(escape(child))\"/>\n" }
        out += "</node>\n"
        return out
    }

    private static func arg(_ name: String?, _ type: DBusType, direction: String?) -> String {
        var out = "<arg"
        if let name { out += " name=\"\(escape(name))\"" }
        out += " type=\"\(escape(type.signature))\""
        if let direction { out += " direction=\"\(direction)\"" }
        return out + "/>"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(ch)
            }
        }
        return out
    }
}
