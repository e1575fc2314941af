# handoff: Apple-style Handoff for Linux.
#
#   make demo    two simulated laptops find each other's activity (no Bluetooth needed)
#   make test    install what is missing, build, run the whole suite (CI runs this)
#   make check   the fast subset: build and run the unit tests
#   make e2e     the end-to-end suite on real bluetoothd in a qemu guest (root; docs/e2e.md)
#   make bench   measure, and write the figures to docs/BENCHMARKS.md
#   make bench-continue   continue latency on real bluetoothd in the VM rig (root)
#   make fuzz    run the beacon decoder and the protocol dispatch under libFuzzer, FUZZ_SECONDS each (default 60)

SWIFT ?= swift
SWIFT_FLAGS ?=

# Build: libdbus and BlueZ headers. Tests and benchmarks: a real dbus-daemon,
# python3-dbus as an independent D-Bus peer, strace for the idle-wakeup count.
APT_PACKAGES := pkg-config libdbus-1-dev libbluetooth-dev \
                dbus-daemon dbus-bin python3 python3-dbus python3-gi strace systemd

# The end-to-end suite: qemu and Debian's kernel for the guest, and what runs inside it
# (the guest sees the host's files): BlueZ with btvirt, a system bus, python3-dbus, jq.
E2E_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static cpio kmod \
                bluez bluez-test-tools dbus python3-dbus python3-gi jq
# Scenarios to run (default: all eight), e.g. make e2e E2E_SCENARIOS="discovery rotation".
E2E_SCENARIOS ?=
# Bluetooth configurations to run them in (docs/e2e.md): private (Privacy = device, extended
# advertising: what make install sets up), legacy (privacy off, legacy advertising), where
# continuing is impossible by design, and legacy-private (privacy on, legacy advertising), where
# handoffd must stay off the air. Unless E2E_SCENARIOS is set, the last two run their own lists.
E2E_CONFIGS ?= private legacy legacy-private
E2E_LEGACY_SCENARIOS ?= discovery rotation bluetoothd-restart power-cycle
E2E_LEGACY_PRIVATE_SCENARIOS ?= legacy-privacy

.PHONY: all deps build test check bench bench-continue fuzz demo clean e2e

all: build

deps:
	@scripts/deps.sh $(APT_PACKAGES)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# Tests run one at a time: many start daemons and buses, and on a two-core machine
# running them all at once only measures the scheduler (the whole suite takes ~45 s).
# Then the end-to-end suite on real bluetoothd (a few minutes; it fails, never skips,
# when the VM cannot run).
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build --no-parallel $(SWIFT_FLAGS)
	$(MAKE) e2e

# Boots a qemu guest with real bluetoothd on virtual radios and runs the handoffd and
# handoffctl built here against it; logs go to e2e-logs/<timestamp>/.
e2e: deps
	@scripts/deps.sh $(E2E_PACKAGES)
	$(SWIFT) build --product handoffd $(SWIFT_FLAGS)
	$(SWIFT) build --product handoffctl $(SWIFT_FLAGS)
	@worst=0; for config in $(E2E_CONFIGS); do \
	    scenarios="$(E2E_SCENARIOS)"; \
	    if [ -z "$$scenarios" ] && [ "$$config" = legacy ]; then scenarios="$(E2E_LEGACY_SCENARIOS)"; fi; \
	    if [ -z "$$scenarios" ] && [ "$$config" = legacy-private ]; then scenarios="$(E2E_LEGACY_PRIVATE_SCENARIOS)"; fi; \
	    SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" E2E_CONFIG=$$config scripts/e2e.sh $$scenarios; \
	    rc=$$?; [ $$rc -gt $$worst ] && worst=$$rc; \
	done; exit $$worst

check: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --skip-build --filter 'HandoffCoreTests|HandoffStoreTests|HandoffProtocolTests|DBusTests' $(SWIFT_FLAGS)

demo: build
	scripts/demo.sh

bench: deps
	scripts/bench.sh

# Continue latency on real bluetoothd in the VM rig (root: qemu boots /boot's kernel).
bench-continue: deps
	SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" INSTALL_BUILD_FLAGS="$(INSTALL_BUILD_FLAGS)" scripts/bench-continue.sh

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf .build .build-*

# Installation: `sudo make install`, then `sudo systemctl enable --now handoffd`.
# Builds release binaries with the Swift runtime linked in (they need no
# toolchain at run time) and hands over to scripts/install.sh. DESTDIR stages
# the files into a tree for packaging; PREFIX picks where binaries go. The
# configuration is always /etc/handoffd/handoffd.toml, where handoffd looks.
PREFIX ?= /usr/local
DESTDIR ?=
# "no" leaves /etc/bluetooth/main.conf alone; by default install sets [General]
# Privacy = device there (LE address privacy, which continuing activities needs).
BLUETOOTH_CONFIG ?= yes
# Cross-module optimisation lets swift-crypto's generic entry points be specialised into
# HandoffCore: about twice the beacon recognitions per second (docs/BENCHMARKS.md).
INSTALL_BUILD_FLAGS ?= -c release --static-swift-stdlib -Xswiftc -cross-module-optimization

.PHONY: install uninstall

install: deps
	$(SWIFT) build $(INSTALL_BUILD_FLAGS) --product handoffd $(SWIFT_FLAGS)
	$(SWIFT) build $(INSTALL_BUILD_FLAGS) --product handoffctl $(SWIFT_FLAGS)
	BIN_DIR="$$($(SWIFT) build $(INSTALL_BUILD_FLAGS) --show-bin-path $(SWIFT_FLAGS))" \
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BLUETOOTH_CONFIG="$(BLUETOOTH_CONFIG)" scripts/install.sh

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh --uninstall
