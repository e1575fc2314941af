// CBluetooth: the Linux Bluetooth socket headers from libbluetooth-dev, for the
// kernel's management interface (AF_BLUETOOTH, BTPROTO_HCI, struct sockaddr_hci,
// HCI_CHANNEL_CONTROL, HCI_DEV_NONE). Only the headers are used: nothing links
// libbluetooth. Imported only by the BluetoothManagement module.
#ifndef HANDOFF_CBLUETOOTH_SHIM_H
#define HANDOFF_CBLUETOOTH_SHIM_H

#include <sys/socket.h>
#include <poll.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>

/// The management channel's address: no device, control channel.
static inline struct sockaddr_hci cbluetooth_control_address(void) {
    struct sockaddr_hci address = {0};
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = HCI_DEV_NONE;
    address.hci_channel = HCI_CHANNEL_CONTROL;
    return address;
}

static const int CBLUETOOTH_AF_BLUETOOTH = AF_BLUETOOTH;
static const int CBLUETOOTH_BTPROTO_HCI = BTPROTO_HCI;

#endif
