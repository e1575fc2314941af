// CBluetooth: the Linux Bluetooth socket headers from libbluetooth-dev, for
// - the kernel's management interface (AF_BLUETOOTH, BTPROTO_HCI, struct sockaddr_hci,
//   HCI_CHANNEL_CONTROL, HCI_DEV_NONE);
// - LE L2CAP connection-oriented channels (BTPROTO_L2CAP, struct sockaddr_l2 with its
//   little-endian PSM and reversed address bytes, SOL_BLUETOOTH options BT_SECURITY,
//   BT_MODE, BT_SNDMTU, BT_RCVMTU, and the LE address types).
// - and for waiting on those sockets: eventfd (close and cancel wake-ups) and accept4,
//   which Swift's Glibc module does not export (accept4 is declared only with _GNU_SOURCE).
// Only the headers are used: nothing links libbluetooth. Imported only by the
// BluetoothManagement module.
#ifndef HANDOFF_CBLUETOOTH_SHIM_H
#define HANDOFF_CBLUETOOTH_SHIM_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>

/// The management channel's address: no device, control channel.
static inline struct sockaddr_hci cbluetooth_control_address(void) {
    struct sockaddr_hci address = {0};
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = HCI_DEV_NONE;
    address.hci_channel = HCI_CHANNEL_CONTROL;
    return address;
}

/// An L2CAP address: `bytes` is the address as written (AA:BB:… is bytes[0] = 0xAA),
/// stored reversed as the kernel wants it; `psm` in host order, stored little-endian;
/// `type` is BDADDR_LE_PUBLIC or BDADDR_LE_RANDOM. No CID: the channel is found by PSM.
static inline struct sockaddr_l2 cbluetooth_l2cap_address(const uint8_t bytes[6], uint16_t psm, uint8_t type) {
    struct sockaddr_l2 address;
    memset(&address, 0, sizeof(address));
    address.l2_family = AF_BLUETOOTH;
    address.l2_psm = htobs(psm);
    for (int i = 0; i < 6; i++) address.l2_bdaddr.b[i] = bytes[5 - i];
    address.l2_bdaddr_type = type;
    return address;
}

/// The PSM of an L2CAP address, in host order.
static inline uint16_t cbluetooth_l2cap_psm(const struct sockaddr_l2 *address) {
    return btohs(address->l2_psm);
}

/// The address of an L2CAP address as written (bytes[0] is the most significant).
static inline void cbluetooth_l2cap_address_bytes(const struct sockaddr_l2 *address, uint8_t bytes[6]) {
    for (int i = 0; i < 6; i++) bytes[i] = address->l2_bdaddr.b[5 - i];
}

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK, for an L2CAP listener.
extern int accept4(int, struct sockaddr *, socklen_t *, int);
static inline int cbluetooth_accept_l2cap(int socket, struct sockaddr_l2 *address) {
    socklen_t length = sizeof(*address);
    return accept4(socket, (struct sockaddr *)address, &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

/// A new eventfd (counter 0, close-on-exec, non-blocking): -1 and errno on failure.
static inline int cbluetooth_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Adds 1 to an eventfd: it stays readable until read.
static inline void cbluetooth_eventfd_signal(int fd) { (void)eventfd_write(fd, 1); }

static const int CBLUETOOTH_AF_BLUETOOTH = AF_BLUETOOTH;
static const int CBLUETOOTH_BTPROTO_HCI = BTPROTO_HCI;
static const int CBLUETOOTH_BTPROTO_L2CAP = BTPROTO_L2CAP;
static const int CBLUETOOTH_SOL_BLUETOOTH = SOL_BLUETOOTH;
static const int CBLUETOOTH_BT_SECURITY = BT_SECURITY;
static const uint8_t CBLUETOOTH_BT_SECURITY_LOW = BT_SECURITY_LOW;
static const int CBLUETOOTH_BT_MODE = BT_MODE;
static const uint8_t CBLUETOOTH_BT_MODE_LE_FLOWCTL = BT_MODE_LE_FLOWCTL;
static const int CBLUETOOTH_BT_SNDMTU = BT_SNDMTU;
static const int CBLUETOOTH_BT_RCVMTU = BT_RCVMTU;
static const uint8_t CBLUETOOTH_BDADDR_LE_PUBLIC = BDADDR_LE_PUBLIC;
static const uint8_t CBLUETOOTH_BDADDR_LE_RANDOM = BDADDR_LE_RANDOM;

#endif
