import Dispatch
import Foundation
import RefreshQueue
import TestSupport
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("FileAuthenticationStore", .timeLimit(.minutes(5)))
struct FileAuthenticationStoreTests {
    typealias Store = FileAuthenticationStore<StoredCredentials>

    // MARK: - Round trip and format

    @Test func aSavedValueLoadsBackWithTheFractionalSecondsOfItsDate() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        let saved = StoredCredentials.sample()

        try store.save(saved)
        // A second store object reads what the first wrote: it is on disk, not in memory.
        let loaded = try #require(try Store(fileURL: directory.file("auth.json")).load())

        #expect(loaded.accessToken == saved.accessToken)
        #expect(loaded.refreshToken == saved.refreshToken)
        #expect(loaded.scopes == saved.scopes)
        // Seconds since 1970 as a JSON number: sub-microsecond precision, not whole seconds.
        #expect(abs(loaded.expiresAt.timeIntervalSince(saved.expiresAt)) < 1e-6)
        #expect(log.events == [.saved(directory.file("auth.json"))])
    }

    @Test func aDateWhoseSecondsAreExactInBinaryRoundTripsExactly() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        var saved = StoredCredentials.sample()
        saved.expiresAt = Date(timeIntervalSince1970: 1_700_000_000.25)

        try store.save(saved)

        #expect(store.load() == saved)
    }

    @Test func theFileIsAVersionedJSONObjectWithSortedKeysAndDatesAsSecondsSince1970() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        var saved = StoredCredentials.sample()
        saved.expiresAt = Date(timeIntervalSince1970: 1_700_000_000.5)

        try store.save(saved)

        let text = try String(contentsOf: store.fileURL, encoding: .utf8)
        #expect(text.hasPrefix(#"{"formatVersion":1,"value":{"accessToken":"#))
        #expect(text.contains(#""expiresAt":1700000000.5"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["formatVersion", "value"])
        #expect(object["formatVersion"] as? Int == 1)
    }

    @Test func savingAgainReplacesTheValue() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))

        try store.save(.sample(1))
        try store.save(.sample(2))

        #expect(store.load() == .sample(2))
        #expect(try directory.entries() == [".auth.json.write.lock", "auth.json"])
    }

    // MARK: - Reading what is not there or not right

    @Test func aMissingFileLoadsAsNilWithoutAnEvent() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)

        #expect(store.load() == nil)
        #expect(log.events.isEmpty)
    }

    @Test(arguments: [
        "",
        "not json at all: s3cret-token",
        #"{"formatVersion":1,"value":{"accessToken":"s3cret-token""#,
        "[1, 2, 3]",
        "null",
        #"{"formatVersion":1}"#,
        #"{"formatVersion":1,"value":{"unexpected":"s3cret-token"}}"#,
        #"{"value":{"accessToken":"s3cret-token","refreshToken":"r","expiresAt":1,"scopes":[]}}"#,
        #"{"formatVersion":"1","value":{"accessToken":"s3cret-token","refreshToken":"r","expiresAt":1,"scopes":[]}}"#,
        #"{"formatVersion":1.5,"value":{"accessToken":"s3cret-token","refreshToken":"r","expiresAt":1,"scopes":[]}}"#,
        #"{"formatVersion":0,"value":{"accessToken":"s3cret-token","refreshToken":"r","expiresAt":1,"scopes":[]}}"#,
        #"{"formatVersion":-3,"value":{"accessToken":"s3cret-token","refreshToken":"r","expiresAt":1,"scopes":[]}}"#,
    ])
    func aFileThatIsNotAStoredAuthenticationLoadsAsNilAndIsReportedCorrupt(contents: String) throws {
        try expectCorrupt(Data(contents.utf8))
    }

    @Test func aFileOfBinaryGarbageLoadsAsNilAndIsReportedCorrupt() throws {
        var generator = SystemRandomNumberGenerator()
        let garbage = Data((0..<4096).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        try expectCorrupt(Data([0xFF, 0xFE, 0x00, 0x7B]) + garbage)
    }

    private func expectCorrupt(_ contents: Data) throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let url = directory.file("auth.json")
        try contents.write(to: url)
        #expect(chmod(url.path, 0o600) == 0)
        let store = try Store(fileURL: url, onEvent: log.handler)

        #expect(store.load() == nil)
        #expect(log.events == [.corruptFile(url)])
        #expect(log.events.allSatisfy { !$0.description.contains("s3cret") })
        // The file is left for a person to look at; the next save replaces it.
        #expect(try Data(contentsOf: url) == contents)
        try store.save(.sample())
        #expect(store.load() == .sample())
    }

    @Test func aFileFromANewerFormatVersionLoadsAsNilAndSaveRefusesToOverwriteIt() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let url = directory.file("auth.json")
        let future = Data(#"{"formatVersion":2,"value":{"keyID":"s3cret-token","wrapped":[1,2,3]}}"#.utf8)
        try future.write(to: url)
        #expect(chmod(url.path, 0o600) == 0)
        let store = try Store(fileURL: url, onEvent: log.handler)

        #expect(store.load() == nil)
        #expect(log.events == [.futureFormatVersion(url, found: 2, supported: 1)])

        #expect(throws: AuthenticationStoreError.futureFormatVersion(found: 2, supported: 1)) {
            try store.save(.sample())
        }
        #expect(try Data(contentsOf: url) == future)
        #expect(try directory.entries() == [".auth.json.write.lock", "auth.json"])
        #expect(log.events.allSatisfy { !$0.description.contains("s3cret") })

        // Logging out still works: remove deletes whatever is there.
        try store.remove()
        try store.save(.sample())
        #expect(store.load() == .sample())
    }

    @Test func aPathThatCannotBeReadLoadsAsNilAndReportsTheErrno() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        // A directory where the file should be, made after the store (which refuses one made
        // before): opening works, reading fails with EISDIR.
        let url = directory.file("auth.json")
        let store = try Store(fileURL: url, onEvent: log.handler)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)

        #expect(store.load() == nil)
        #expect(log.events == [.unreadableFile(url, errno: EISDIR)])
        #expect(log.events.first?.description.contains("EISDIR") == true)
    }

    @Test func aFIFOAtThePathLoadsAsNilWithoutBlocking() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let url = directory.file("auth.json")
        #expect(mkfifo(url.path, 0o600) == 0)
        let store = try Store(fileURL: url, onEvent: log.handler)

        // Opening a FIFO for reading would wait for a writer; the store must not.
        #expect(store.load() == nil)
        #expect(log.events == [.unreadableFile(url, errno: EINVAL)])
    }

    @Test func aDirectoryThatCannotBeCreatedFailsSaveAndLockButNotTheStoresCreation() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        try Data("a file, not a directory".utf8).write(to: directory.file("blocker"))
        let url = directory.file("blocker/nested/auth.json")

        let store = try Store(fileURL: url, onEvent: log.handler)

        #expect(store.load() == nil)
        #expect(log.events == [.unreadableFile(url, errno: ENOTDIR)])
        #expect(throws: AuthenticationStoreError.io(operation: "create the directory", errno: ENOTDIR)) {
            try store.save(.sample())
        }
        #expect(throws: AuthenticationStoreError.io(operation: "create the directory", errno: ENOTDIR)) {
            try store.lock(timeout: 0)
        }
    }

    @Test(.enabled(if: geteuid() != 0, "root reads files whatever their mode"))
    func aFileWithoutReadPermissionLoadsAsNilAndReportsEACCES() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let url = directory.file("auth.json")
        let store = try Store(fileURL: url, onEvent: log.handler)
        try store.save(.sample())
        #expect(chmod(url.path, 0) == 0)

        #expect(store.load() == nil)
        #expect(log.events.last == .unreadableFile(url, errno: EACCES))
    }

    // MARK: - Permissions and directories

    @Test func theSavedFileHasMode0600AlsoWhenItReplacesA0644File() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let fresh = try Store(fileURL: directory.file("fresh.json"))
        try fresh.save(.sample())
        #expect(storeTestMode(of: fresh.fileURL) == 0o600)

        let existing = try Store(fileURL: directory.file("existing.json"))
        try Data("{}".utf8).write(to: existing.fileURL)
        #expect(chmod(existing.fileURL.path, 0o644) == 0)
        try existing.save(.sample())
        #expect(storeTestMode(of: existing.fileURL) == 0o600)
    }

    @Test func aMissingDirectoryIsCreatedWithMode0700WhenTheStoreIsCreated() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let url = directory.file("Application Support/MyApp/auth.json")

        let store = try Store(fileURL: url)

        #expect(storeTestMode(of: directory.file("Application Support")) == 0o700)
        #expect(storeTestMode(of: directory.file("Application Support/MyApp")) == 0o700)
        #expect(storeTestMode(of: url) == nil)
        try store.save(.sample())
        #expect(store.load() == .sample())
    }

    @Test func anExistingDirectoryKeepsItsMode() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let shared = directory.file("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        #expect(chmod(shared.path, 0o755) == 0)

        try Store(fileURL: shared.appendingPathComponent("auth.json")).save(.sample())

        #expect(storeTestMode(of: shared) == 0o755)
    }

    @Test func saveCreatesTheDirectoryAgainIfItWasDeleted() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("nested/auth.json"))
        try FileManager.default.removeItem(at: directory.file("nested"))

        try store.save(.sample())

        #expect(store.load() == .sample())
        #expect(storeTestMode(of: directory.file("nested")) == 0o700)
    }

    @Test func aURLThatCannotNameAFileIsRefusedWithoutShowingItsCredentials() throws {
        let remote = try #require(URL(string: "https://user:s3cret@example.com/auth.json"))
        #expect(throws: AuthenticationStoreError.invalidFileURL(remote)) { try Store(fileURL: remote) }
        #expect(!AuthenticationStoreError.invalidFileURL(remote).description.contains("s3cret"))

        let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        #expect(throws: AuthenticationStoreError.invalidFileURL(directory)) { try Store(fileURL: directory) }
    }

    /// A token made now (its dates are whatever the clock says) reads back `==` to the one saved:
    /// its dates survive being written as seconds since 1970. Before, about half did not.
    @Test func anOAuth2TokenMadeNowReadsBackEqual() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<OAuth2Token>(fileURL: directory.file("token.json"))
        var different = 0
        for index in 0..<200 {
            var token = OAuth2Token(accessToken: "access-\(index)", refreshToken: "refresh", expiresIn: 3600)
            if index.isMultiple(of: 2) { token.issuedAt = Date(timeIntervalSinceNow: Double(index) / 7) }
            try store.save(token)
            if store.load() != token { different += 1 }
        }
        #expect(different == 0, "\(different) of 200 tokens read back different")
    }

    /// A URL without the final slash that names a directory that exists is refused too: saving
    /// would replace the directory, or fail on every save.
    @Test func theURLOfAnExistingDirectoryIsRefusedWithoutItsFinalSlash() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.file("dir"), withIntermediateDirectories: false)
        let url = directory.file("dir")
        #expect(!url.hasDirectoryPath)
        #expect(throws: AuthenticationStoreError.invalidFileURL(url)) { try Store(fileURL: url) }
    }

    @Test func theLockFileIsTheStoredFileWithLockAppendedInTheSameDirectory() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))

        #expect(store.lockFileURL.path == directory.file("auth.json.lock").path)
    }

    // MARK: - Remove

    @Test func removeDeletesTheFileAndRemovingAMissingFileSucceedsSilently() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let url = directory.file("auth.json")
        let store = try Store(fileURL: url, onEvent: log.handler)
        try store.save(.sample())

        try store.remove()
        try store.remove()

        #expect(store.load() == nil)
        #expect(storeTestMode(of: url) == nil)
        #expect(log.events == [.saved(url), .removed(url)])
    }

    @Test func removeKeepsTheLockFile() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try Store(fileURL: directory.file("auth.json"))
        try store.save(.sample())
        try store.lock(timeout: 0).unlock()

        try store.remove()

        #expect(try directory.entries() == [".auth.json.write.lock", "auth.json.lock"])
    }

    // MARK: - Failures and secrets

    @Test func aValueThatCannotBeEncodedThrowsWithoutWritingAnythingOrShowingTheValue() throws {
        struct Reading: Codable, Sendable {
            let label: String
            let value: Double
        }
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let store = try FileAuthenticationStore<Reading>(fileURL: directory.file("auth.json"))
        try store.save(Reading(label: "before", value: 1))
        let before = try Data(contentsOf: store.fileURL)

        let error = #expect(throws: AuthenticationStoreError.encodingFailed) {
            try store.save(Reading(label: "s3cret-token", value: .nan))
        }

        #expect(error?.description.contains("s3cret") == false)
        #expect(try Data(contentsOf: store.fileURL) == before)
        #expect(try directory.entries() == [".auth.json.write.lock", "auth.json"])
    }

    @Test func errorAndEventTextsNameTheFileOrTheCauseButNeverTheValue() {
        let url = URL(fileURLWithPath: "/tmp/auth.json")
        let errors: [AuthenticationStoreError] = [
            .lockTimedOut(after: 0.5), .futureFormatVersion(found: 2, supported: 1),
            .io(operation: "replace the stored file", errno: EACCES), .encodingFailed,
            .invalidFileURL(url),
        ]
        let events: [AuthenticationStoreEvent] = [
            .corruptFile(url), .unreadableFile(url, errno: EACCES),
            .futureFormatVersion(url, found: 2, supported: 1), .saved(url), .removed(url),
        ]
        for text in errors.map(\.description) + events.map(\.description) {
            #expect(!text.isEmpty)
        }
        #expect(
            AuthenticationStoreError.io(operation: "write the new file", errno: ENOSPC).description.contains("ENOSPC"))
        #expect(AuthenticationStoreEvent.unreadableFile(url, errno: EACCES).description.contains("/tmp/auth.json"))
    }

    // MARK: - Concurrency

    @Test(.exclusive) func concurrentSavesAndLoadsNeverSeeAPartialFileNorLeaveTemporaryFiles() throws {
        let directory = try StoreTestDirectory()
        defer { directory.remove() }
        let log = StoreEventLog()
        let store = try Store(fileURL: directory.file("auth.json"), onEvent: log.handler)
        let writers = 8
        let savesPerWriter = 50
        let readers = 4
        let loadsPerReader = 100
        try store.save(.sample(-1))
        let written = Set((-1..<(writers * savesPerWriter)).map { StoredCredentials.sample($0).accessToken })
        let failures = Protected<[String]>([])

        DispatchQueue.concurrentPerform(iterations: writers + readers) { worker in
            if worker < writers {
                for save in 0..<savesPerWriter {
                    do {
                        try store.save(.sample(worker * savesPerWriter + save))
                    } catch {
                        failures.withLock { $0.append("save failed: \(error)") }
                    }
                }
            } else {
                for _ in 0..<loadsPerReader {
                    guard let loaded = store.load() else {
                        failures.withLock { $0.append("a load returned nil") }
                        continue
                    }
                    if !written.contains(loaded.accessToken) {
                        failures.withLock { $0.append("a load returned a value nobody saved") }
                    }
                }
            }
        }

        // Counts, not lists: a broken save makes hundreds of these.
        #expect(failures.current.count == 0, "first failure: \(failures.current.first ?? "")")
        #expect(log.problems.count == 0, "first problem: \(log.problems.first?.description ?? "")")
        #expect(log.events.count == writers * savesPerWriter + 1)
        let final = try #require(store.load())
        #expect(written.contains(final.accessToken))
        #expect(try directory.entries() == [".auth.json.write.lock", "auth.json"])
    }
}
