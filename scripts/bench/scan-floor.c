/*
 * scan-floor: the floor for the scanner benchmark (scripts/bench.sh, "Scanning").
 *
 * A minimal libdbus client that does only what any BlueZ scanner must do: it
 * subscribes to org.bluez's InterfacesAdded and PropertiesChanged, decodes
 * org.bluez.Device1's ManufacturerData (a{qv} of ay) and RSSI (n) from each, and
 * counts the reports that carry the given company ID. No object tree, no
 * threads, no allocation per report. It prints the same figures as ScanBench:
 *
 *   scan-floor BUS_ADDRESS COMPANY EXPECTED IDLE_SECONDS
 *
 * The flood's payload starts with the report number (8 bytes, big-endian); the
 * InterfacesAdded that announce the flood's devices all carry number 0. The
 * measured window opens at the first report numbered 1 or more and closes at
 * the report that makes EXPECTED, or at the last one before IDLE_SECONDS
 * without a report.
 *
 * Built by scripts/bench.sh: cc -O2 scan-floor.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static unsigned company;
static uint64_t counted;      /* flood reports (number >= 1) in the window */
static uint64_t initial;      /* reports numbered 0: the InterfacesAdded of the flood's devices */
static uint64_t highest;      /* highest report number seen */
static uint64_t sample_count; /* `counted` at the last CPU sample */
static double first_cpu, last_cpu, first_wall, last_wall, last_report_wall;
static long rss_mid;
static uint64_t expected;
static int64_t rssi_sum; /* consumed, so that the decoding cannot be optimised away */

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
        + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* VmRSS or VmHWM from /proc/self/status, in KiB. */
static long status_kib(const char *key) {
    FILE *file = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    size_t length = strlen(key);
    if (!file) return -1;
    while (fgets(line, sizeof line, file)) {
        if (strncmp(line, key, length) == 0 && line[length] == ':') {
            value = strtol(line + length + 1, NULL, 10);
            break;
        }
    }
    fclose(file);
    return value;
}

static void sample(void) {
    sample_count = counted;
    last_cpu = cpu_seconds();
    last_wall = wall_seconds();
}

static void count_report(const unsigned char *bytes, int length) {
    uint64_t number = 0;
    last_report_wall = wall_seconds();
    if (length < 8) return;
    for (int i = 0; i < 8; i++) number = number << 8 | bytes[i];
    if (number == 0) {
        initial++;
        return;
    }
    if (number > highest) highest = number;
    if (counted == 0) {
        first_cpu = cpu_seconds();
        first_wall = last_report_wall;
    }
    counted++;
    if (counted == expected / 2) rss_mid = status_kib("VmRSS");
    if (counted % 1024 == 0 || counted == expected) sample();
}

/* ManufacturerData: a{qv}, each variant an ay. */
static void decode_manufacturer_data(DBusMessageIter *array) {
    DBusMessageIter entry, variant, bytes;
    for (; dbus_message_iter_get_arg_type(array) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(array)) {
        dbus_uint16_t id;
        const unsigned char *data;
        int length = 0;
        dbus_message_iter_recurse(array, &entry);
        if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_UINT16) return;
        dbus_message_iter_get_basic(&entry, &id);
        dbus_message_iter_next(&entry);
        if (dbus_message_iter_get_arg_type(&entry) != DBUS_TYPE_VARIANT) return;
        dbus_message_iter_recurse(&entry, &variant);
        if (dbus_message_iter_get_arg_type(&variant) != DBUS_TYPE_ARRAY
            || dbus_message_iter_get_element_type(&variant) != DBUS_TYPE_BYTE)
            continue;
        dbus_message_iter_recurse(&variant, &bytes);
        dbus_message_iter_get_fixed_array(&bytes, &data, &length);
        if (id == company) count_report(data, length);
    }
}

/* A Device1 property dictionary a{sv}: ManufacturerData and RSSI. */
static void decode_device_properties(DBusMessageIter *array) {
    DBusMessageIter entry, value, inner;
    for (; dbus_message_iter_get_arg_type(array) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(array)) {
        const char *name;
        dbus_message_iter_recurse(array, &entry);
        dbus_message_iter_get_basic(&entry, &name);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &value);
        if (strcmp(name, "RSSI") == 0 && dbus_message_iter_get_arg_type(&value) == DBUS_TYPE_INT16) {
            dbus_int16_t rssi;
            dbus_message_iter_get_basic(&value, &rssi);
            rssi_sum += rssi;
        } else if (strcmp(name, "ManufacturerData") == 0 && dbus_message_iter_get_arg_type(&value) == DBUS_TYPE_ARRAY) {
            dbus_message_iter_recurse(&value, &inner);
            decode_manufacturer_data(&inner);
        }
    }
}

static DBusHandlerResult filter(DBusConnection *connection, DBusMessage *message, void *data) {
    DBusMessageIter args, dict, entry, properties;
    const char *interface;
    (void)connection;
    (void)data;
    if (dbus_message_is_signal(message, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged")) {
        /* (s interface, a{sv} changed, as invalidated) */
        if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING)
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_get_basic(&args, &interface);
        if (strcmp(interface, "org.bluez.Device1") != 0 || !dbus_message_iter_next(&args)
            || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY)
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_recurse(&args, &dict);
        decode_device_properties(&dict);
        return DBUS_HANDLER_RESULT_HANDLED;
    }
    if (dbus_message_is_signal(message, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded")) {
        /* (o object, a{sa{sv}} interfaces) */
        if (!dbus_message_iter_init(message, &args) || !dbus_message_iter_next(&args)
            || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY)
            return DBUS_HANDLER_RESULT_HANDLED;
        dbus_message_iter_recurse(&args, &dict);
        for (; dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY; dbus_message_iter_next(&dict)) {
            dbus_message_iter_recurse(&dict, &entry);
            dbus_message_iter_get_basic(&entry, &interface);
            if (strcmp(interface, "org.bluez.Device1") != 0) continue;
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &properties);
            decode_device_properties(&properties);
        }
        return DBUS_HANDLER_RESULT_HANDLED;
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

int main(int argc, char **argv) {
    DBusError error;
    DBusConnection *connection;
    double idle;
    long rss_start;

    if (argc != 5) {
        fprintf(stderr, "usage: scan-floor BUS_ADDRESS COMPANY EXPECTED IDLE_SECONDS\n");
        return 2;
    }
    company = (unsigned)strtoul(argv[2], NULL, 0);
    expected = strtoull(argv[3], NULL, 10);
    idle = atof(argv[4]);

    dbus_error_init(&error);
    connection = dbus_connection_open_private(argv[1], &error);
    if (!connection || !dbus_bus_register(connection, &error)) {
        fprintf(stderr, "scan-floor: %s\n", error.message);
        return 1;
    }
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    dbus_bus_add_match(connection,
        "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
        &error);
    if (!dbus_error_is_set(&error))
        dbus_bus_add_match(connection,
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'",
            &error);
    if (dbus_error_is_set(&error)) {
        fprintf(stderr, "scan-floor: AddMatch: %s\n", error.message);
        return 1;
    }
    dbus_connection_add_filter(connection, filter, NULL, NULL);

    rss_start = status_kib("VmRSS");
    printf("ready %d\n", (int)getpid());
    fflush(stdout);

    last_report_wall = wall_seconds();
    while (counted < expected) {
        if (!dbus_connection_read_write_dispatch(connection, 100)) break;
        if (counted + initial > 0 && wall_seconds() - last_report_wall > idle) break;
    }
    /* With reports lost, the window closes at the last sample, not at the idle timeout. */
    printf("receiver=c-libdbus\n");
    printf("received=%llu\n", (unsigned long long)counted);
    printf("window_reports=%llu\n", (unsigned long long)(sample_count > 0 ? sample_count - 1 : 0));
    printf("initial=%llu\n", (unsigned long long)initial);
    printf("highest=%llu\n", (unsigned long long)highest);
    printf("dropped=0\n");
    printf("cpu_seconds=%.6f\n", sample_count > 0 ? last_cpu - first_cpu : 0.0);
    printf("wall_seconds=%.6f\n", sample_count > 0 ? last_wall - first_wall : 0.0);
    printf("rss_start_kib=%ld\n", rss_start);
    printf("rss_mid_kib=%ld\n", rss_mid);
    printf("rss_end_kib=%ld\n", status_kib("VmRSS"));
    printf("rss_peak_kib=%ld\n", status_kib("VmHWM"));
    printf("rssi_sum=%lld\n", (long long)rssi_sum);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
