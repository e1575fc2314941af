#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Testing

@Suite struct ConnectErrorTests {
    @Test func aMissingSocketMeansTheDaemonIsNotRunning() async throws {
        let path = FakeDaemon.temporarySocketPath()
        let error = await #expect(throws: HandoffClientError.self) {
            try await HandoffConnection.connect(socketPath: path)
        }
        #expect(error == .daemonNotRunning(path))
        #expect(error?.description == "handoffd is not running (start it with: systemctl start handoffd)")
    }

    @Test func aSocketNobodyListensOnMeansTheDaemonIsNotRunning() async throws {
        let path = FakeDaemon.temporarySocketPath()
        let fd = try UnixSocket.bound(at: path)
        defer {
            close(fd)
            unlink(path)
        }
        let error = await #expect(throws: HandoffClientError.self) {
            try await HandoffConnection.connect(socketPath: path)
        }
        #expect(error == .daemonNotRunning(path))
    }

    @Test func accessErrorsMeanPermissionDenied() {
        let error = HandoffClientError.connectFailure(errno: EACCES, socketPath: "/run/handoffd/handoffd.sock")
        #expect(error == .permissionDenied("/run/handoffd/handoffd.sock"))
        #expect(error.description == "permission denied on /run/handoffd/handoffd.sock: add yourself to group handoff")
        #expect(HandoffClientError.connectFailure(errno: EPERM, socketPath: "/s") == .permissionDenied("/s"))
        #expect(HandoffClientError.connectFailure(errno: ENOENT, socketPath: "/s") == .daemonNotRunning("/s"))
        #expect(HandoffClientError.connectFailure(errno: ECONNREFUSED, socketPath: "/s") == .daemonNotRunning("/s"))
    }

    @Test func otherErrnoValuesSayWhatHappened() {
        let error = HandoffClientError.connectFailure(errno: ENAMETOOLONG, socketPath: "/s")
        #expect(error == .connectFailed("/s", reason: String(cString: strerror(ENAMETOOLONG))))
        #expect(error.description.hasPrefix("cannot connect to handoffd at /s: "))
    }

    @Test(.enabled(if: getuid() != 0, "root may connect to any socket"))
    func aSocketWithoutPermissionsIsReportedAsSuch() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        chmod(daemon.socketPath, 0)
        let error = await #expect(throws: HandoffClientError.self) {
            try await HandoffConnection.connect(socketPath: daemon.socketPath)
        }
        #expect(error == .permissionDenied(daemon.socketPath))
    }

    @Test func aPathTooLongForAUnixSocketIsExplained() async throws {
        let path = "/tmp/" + String(repeating: "a", count: 200)
        let error = await #expect(throws: HandoffClientError.self) {
            try await HandoffConnection.connect(socketPath: path)
        }
        guard case .connectFailed(let reported, _) = error else {
            Issue.record("expected connectFailed, got \(String(describing: error))")
            return
        }
        #expect(reported == path)
    }

    @Test func theSocketPathComesFromTheEnvironmentWhenSet() {
        #expect(HandoffConnection.defaultSocketPath(environment: [:]) == "/run/handoffd/handoffd.sock")
        #expect(HandoffConnection.defaultSocketPath(environment: ["HANDOFF_SOCKET": ""]) == "/run/handoffd/handoffd.sock")
        #expect(HandoffConnection.defaultSocketPath(environment: ["HANDOFF_SOCKET": "/tmp/h.sock"]) == "/tmp/h.sock")
    }
}
