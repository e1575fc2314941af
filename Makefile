# handoff: Apple-style Handoff for Linux.
#
#   make demo    two simulated laptops find each other's activity (no Bluetooth needed)
#   make test    install what is missing, build, run the whole suite (CI runs this)
#   make check   the fast subset: build and run the unit tests
#   make e2e     the end-to-end suite on real bluetoothd in a qemu guest (root; docs/e2e.md)
#   make bench   measure, and write the figures to docs/BENCHMARKS.md
#   make bench-continue   continue latency, LE L2CAP and streams on real bluetoothd in the VM rig (root)
#   make bench-desktop    heard -> notification and Continue -> app on real bluetoothd (root)
#   make bench-monitor    the advertisement monitor against discovery, a stranger flooding, on real bluetoothd (root)
#   make fuzz    run the beacon decoder and the protocol dispatch under libFuzzer, FUZZ_SECONDS each (default 60)
#   make deb     the Debian package dist/handoff_<version>_<arch>.deb (lintian-clean)
#   make deb-test  install, run and purge that package in a throwaway Debian root (root)
#   make deb-test-debug  the same on a package of the debug build (make test runs it)

SWIFT ?= swift
SWIFT_FLAGS ?=

# Build: libdbus and BlueZ headers. Tests and benchmarks: a real dbus-daemon,
# python3-dbus as an independent D-Bus peer, strace for the idle-wakeup count, Xvfb and
# dunst as a real notification server for the desktop agent's tests.
APT_PACKAGES := pkg-config libdbus-1-dev libbluetooth-dev \
                dbus-daemon dbus-bin python3 python3-dbus python3-gi strace systemd \
                xvfb dunst

# The end-to-end suite: qemu and Debian's kernel for the guest, and what runs inside it
# (the guest sees the host's files): BlueZ with btvirt, a system bus, python3-dbus, jq.
E2E_PACKAGES := qemu-system-x86 linux-image-amd64 busybox-static cpio kmod \
                bluez bluez-test-tools dbus python3-dbus python3-gi jq
# Scenarios to run (default: all fifteen in config private), e.g. make e2e E2E_SCENARIOS="discovery rotation".
E2E_SCENARIOS ?=
# Bluetooth configurations to run them in, one guest boot each (docs/e2e.md): private (Privacy =
# device, extended advertising: what make install sets up) and legacy (legacy advertising). legacy
# runs its scenarios with privacy off, where continuing is impossible by design, then, last and in the
# same boot, legacy-privacy: bluetoothd restarted with Privacy = device on the same controllers, where
# handoffd must stay off the air. legacy-private (privacy on from the boot, legacy advertising) runs
# legacy-privacy in a boot of its own: not in the default list (one boot more), for running it alone,
# e.g. make e2e E2E_CONFIGS=legacy-private. Unless E2E_SCENARIOS is set, the last two run their own lists.
E2E_CONFIGS ?= private legacy
E2E_LEGACY_SCENARIOS ?= discovery rotation bluetoothd-restart power-cycle legacy-privacy
E2E_LEGACY_PRIVATE_SCENARIOS ?= legacy-privacy
# The desktop scenario (config private: all of its default list, or when named) also runs
# handoff-agent and the example app it launches, on a session bus of its own in the guest
# (dbus-daemon, dbus-send and python3-dbus, from APT_PACKAGES).
E2E_DESKTOP_PRODUCTS := $(if $(or $(filter desktop,$(E2E_SCENARIOS)),$(if $(strip $(E2E_SCENARIOS)),,$(filter private,$(E2E_CONFIGS)))),handoff-agent handoff-example-reader)
# E2E_BUILD=no: the programs are built already (make test's swift build --build-tests builds them all),
# which saves five no-op swift build runs of about 5 s each.
E2E_BUILD ?= yes
# The streams scenario (config private: all of its default list, or when named) runs the example
# app that serves and fetches a document.
E2E_STREAMS_PRODUCTS := $(if $(or $(filter streams,$(E2E_SCENARIOS)),$(if $(strip $(E2E_SCENARIOS)),,$(filter private,$(E2E_CONFIGS)))),handoff-example-document)

.PHONY: all deps build test check bench bench-continue bench-desktop bench-monitor fuzz demo clean e2e deb deb-test deb-test-debug

all: build

deps:
	@scripts/deps.sh $(APT_PACKAGES)

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# Tests run one at a time: many start daemons and buses, and on a two-core machine
# running them all at once only measures the scheduler (the whole suite takes ~2 min).
# scripts/check-no-foundation.sh first: handoffd's own code links FoundationEssentials only.
# Then the end-to-end suite on real bluetoothd (a few minutes; it fails, never skips,
# when the VM cannot run), and the Debian package's install test (make deb-test) on a
# package of the debug build above, relinked with the Swift runtime inside
# (DEB_TEST_BUILD_FLAGS): the same scripts and files as make deb, without the release
# build with cross-module optimisation, which alone would take longer than CI allows
# (19 min from a fresh clone). The install test adds 2-4 min: relinking ~20 s, the
# package and lintian ~70 s, the throwaway root from Debian's mirror 30-60 s.
test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	@SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/check-no-foundation.sh handoffd
	@scripts/suite.sh $(SWIFT) test --skip-build --no-parallel $(SWIFT_FLAGS)
	$(MAKE) e2e E2E_BUILD=no
	$(MAKE) deb-test-debug

# Boots a qemu guest with real bluetoothd on virtual radios and runs the handoffd and
# handoffctl built here against it (and handoff-agent for the desktop scenario); logs go
# to e2e-logs/<timestamp>/.
e2e: deps
	@scripts/deps.sh $(E2E_PACKAGES)
	@[ "$(E2E_BUILD)" = no ] || for product in handoffd handoffctl $(E2E_DESKTOP_PRODUCTS) $(E2E_STREAMS_PRODUCTS); do \
	    echo "$(SWIFT) build --product $$product $(SWIFT_FLAGS)"; \
	    $(SWIFT) build --product $$product $(SWIFT_FLAGS) || exit 1; \
	done
	@worst=0; export E2E_DIGEST=$$(mktemp); for config in $(E2E_CONFIGS); do \
	    scenarios="$(E2E_SCENARIOS)"; \
	    if [ -z "$$scenarios" ] && [ "$$config" = legacy ]; then scenarios="$(E2E_LEGACY_SCENARIOS)"; fi; \
	    if [ -z "$$scenarios" ] && [ "$$config" = legacy-private ]; then scenarios="$(E2E_LEGACY_PRIVATE_SCENARIOS)"; fi; \
	    SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" E2E_CONFIG=$$config scripts/e2e.sh $$scenarios; \
	    rc=$$?; [ $$rc -gt $$worst ] && worst=$$rc; \
	done; \
	if [ -s "$$E2E_DIGEST" ]; then echo "e2e: what failed"; cat "$$E2E_DIGEST"; fi; \
	rm -f "$$E2E_DIGEST"; exit $$worst

check: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	@SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/check-no-foundation.sh handoffd
	$(SWIFT) test --skip-build --filter 'HandoffCoreTests|HandoffStoreTests|HandoffProtocolTests|DBusTests|DesktopEntriesTests' $(SWIFT_FLAGS)

demo: build
	scripts/demo.sh

bench: deps
	SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" INSTALL_BUILD_FLAGS="$(INSTALL_BUILD_FLAGS)" scripts/bench.sh

# Continue latency on real bluetoothd in the VM rig (root: qemu boots /boot's kernel), then
# the LE L2CAP channel that continuation streams use: time to first byte and 1 MiB throughput,
# then continuation streams through both daemons (1 MB, compared with that channel).
# BENCH_SECTIONS picks some of them: continue, l2cap, streams (default all three, in that order).
bench-continue: deps
	@for s in $(or $(BENCH_SECTIONS),continue l2cap streams); do \
	    case $$s in continue|l2cap|streams) ;; *) echo "bench-continue: unknown section $$s (continue, l2cap, streams)" >&2; exit 2 ;; esac; \
	done
	@set -e; export BENCH_CONTINUE_STARTED=$$(date +%s); for s in continue l2cap streams; do \
	    case " $(or $(BENCH_SECTIONS),continue l2cap streams) " in *" $$s "*) ;; *) continue ;; esac; \
	    SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" INSTALL_BUILD_FLAGS="$(INSTALL_BUILD_FLAGS)" scripts/bench-$$s.sh; \
	done

# Desktop latency on real bluetoothd in the VM rig (root): beacon heard -> notification,
# Continue -> the app has the activity (the e2e desktop scenario, release builds, quiet).
bench-desktop: deps
	@scripts/deps.sh $(E2E_PACKAGES)
	SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" INSTALL_BUILD_FLAGS="$(INSTALL_BUILD_FLAGS)" scripts/bench-desktop.sh

# The advertisement monitor against filtered discovery on real bluetoothd -E in the VM rig (root):
# B's scan path "auto" and "off" in turn while a stranger floods from another controller; CPU of
# handoffd, the dbus-daemon and bluetoothd, D-Bus signals, scan counters (BENCH_MONITOR_SECONDS a
# phase, default 60; BENCH_MONITOR_LOGS=DIR writes the section again from an earlier run).
bench-monitor: deps
	@scripts/deps.sh $(E2E_PACKAGES)
	SWIFT="$(SWIFT)" SWIFT_FLAGS="$(SWIFT_FLAGS)" INSTALL_BUILD_FLAGS="$(INSTALL_BUILD_FLAGS)" scripts/bench-monitor.sh

fuzz: deps
	scripts/fuzz.sh

clean:
	rm -rf .build .build-* dist

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
# No $ORIGIN run path: with the Swift runtime linked in, the programs load nothing from
# their own directory (and Debian's lintian rejects custom library search paths).
# --no-export-dynamic undoes the -export-dynamic that the toolchain's static runtime links with
# (static-stdlib-args.lnk): nothing looks the programs' symbols up, and the 30,000 of them cost
# handoffd about 3 MiB of resident memory (docs/BENCHMARKS.md).
INSTALL_BUILD_FLAGS ?= -c release --static-swift-stdlib -Xswiftc -cross-module-optimization --disable-local-rpath -Xlinker --no-export-dynamic

# The programs make install installs (scripts/install.sh wants all three).
INSTALL_PRODUCTS := handoffd handoffctl handoff-agent
# Manual pages: go-md2man turns man/*.md and docs/protocol.md into troff.
MAN_PACKAGES := go-md2man python3

.PHONY: install uninstall

install: deps
	@scripts/deps.sh $(MAN_PACKAGES)
	@for product in $(INSTALL_PRODUCTS); do \
	    $(SWIFT) build $(INSTALL_BUILD_FLAGS) --product $$product $(SWIFT_FLAGS) || exit 1; \
	done
	bin="$$($(SWIFT) build $(INSTALL_BUILD_FLAGS) --show-bin-path $(SWIFT_FLAGS))" && \
	SWIFT="$(SWIFT)" scripts/manpages.sh "$$bin/handoff-man" "$$bin" && \
	BIN_DIR="$$bin" MAN_DIR="$$bin/handoff-man" \
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BLUETOOTH_CONFIG="$(BLUETOOTH_CONFIG)" scripts/install.sh

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh --uninstall

# The Debian package, built with dpkg-deb from the same release binaries and the same
# staging (scripts/install.sh) as make install: scripts/build-deb.sh. It holds the
# example app too, and fails when lintian reports an error. The version comes from
# Sources/HandoffProtocol/HandoffVersion.swift (scripts/version.sh).
DEB_DIR ?= dist
DEB_PRODUCTS := $(INSTALL_PRODUCTS) handoff-example-viewer
# How the packaged programs are built: as make install builds them. make test packages
# its debug build instead, linked with the Swift runtime and without a run path as the
# release is (only the programs are linked again: scripts/static-stdlib-link-flags.sh
# names the libraries the static Foundation needs), into that build's directory (deb/),
# never into dist/: that package is for the install test, not for users.
DEB_BUILD_FLAGS ?= $(INSTALL_BUILD_FLAGS)
DEB_COMPRESS ?= -Zxz
DEB_TEST_BUILD_FLAGS = --static-swift-stdlib --disable-local-rpath -Xlinker --no-export-dynamic $(shell SWIFT="$(SWIFT)" scripts/static-stdlib-link-flags.sh)
DEB_PACKAGES := $(MAN_PACKAGES) dpkg-dev lintian
# The install test's throwaway root (mmdebstrap, from Debian's mirror) and its simulator bus.
DEB_TEST_PACKAGES := mmdebstrap dbus-daemon

deb: deps
	@scripts/deps.sh $(DEB_PACKAGES)
	@for product in $(DEB_PRODUCTS); do \
	    $(SWIFT) build $(DEB_BUILD_FLAGS) --product $$product $(SWIFT_FLAGS) || exit 1; \
	done
	BIN_DIR="$$($(SWIFT) build $(DEB_BUILD_FLAGS) --show-bin-path $(SWIFT_FLAGS))" \
	OUT_DIR="$(DEB_DIR)" SWIFT="$(SWIFT)" DEB_COMPRESS="$(DEB_COMPRESS)" GENERATE_MANUAL="$(GENERATE_MANUAL)" \
	scripts/build-deb.sh

# Installs the package in a throwaway Debian root (never here), runs its maintainer
# scripts, verifies its units, starts handoffd and handoff-agent against the simulated
# bluetoothd and purges it again: scripts/deb-install-test.sh. Root. The simulator is
# built as the packaged programs are, so that it reuses their build.
deb-test: deb
	@scripts/deps.sh $(DEB_TEST_PACKAGES)
	$(SWIFT) build $(DEB_BUILD_FLAGS) --product handoff-sim-bluez $(SWIFT_FLAGS)
	scripts/deb-install-test.sh "$(DEB_DIR)/handoff_$$(scripts/version.sh)_$$(dpkg --print-architecture).deb" \
	    "$$($(SWIFT) build $(DEB_BUILD_FLAGS) --show-bin-path $(SWIFT_FLAGS))/handoff-sim-bluez"

# What make test runs: make deb-test on a package of the debug build (DEB_TEST_BUILD_FLAGS)
# written into that build's directory, .build/debug/deb/, compressed fast, with manual
# pages from a generate-manual built on the debug build's swift-argument-parser.
# The programs are first built as usual, so that the static link below compiles nothing:
# a module compiled under --static-swift-stdlib names the static runtime's libraries, and
# the next plain build would link it as it is and fail ("cannot find -lCoreFoundation").
deb-test-debug: deps
	$(SWIFT) build --product generate-manual $(SWIFT_FLAGS)
	@for product in $(DEB_PRODUCTS) handoff-sim-bluez; do \
	    echo "$(SWIFT) build --product $$product $(SWIFT_FLAGS)"; \
	    $(SWIFT) build --product $$product $(SWIFT_FLAGS) || exit 1; \
	done
	bin="$$($(SWIFT) build --show-bin-path $(SWIFT_FLAGS))" && \
	$(MAKE) deb-test DEB_BUILD_FLAGS="$(DEB_TEST_BUILD_FLAGS)" DEB_DIR="$$bin/deb" \
	    DEB_COMPRESS="-Zgzip -z1" GENERATE_MANUAL="$$bin/generate-manual"
