import Foundation

/// Counts the heap blocks and bytes that a stretch of code allocates and keeps, with glibc's
/// allocation trace (`mtrace`), which lives in `libc_malloc_debug.so.0` since glibc 2.34 and is
/// loaded into a child process with `LD_PRELOAD`.
///
/// The child calls ``start()`` before the code and ``markEnd()`` after it; every `malloc`,
/// `realloc` and `free` in between is written to the file named by `MALLOC_TRACE`, and
/// ``live(inTrace:)`` adds up what was allocated there and not freed. The child then leaves with
/// ``flushAndExit()``.
///
/// The trace is never stopped with `muntrace`: that closes the trace file while other threads
/// (a dispatch worker, a thread ending) may be writing an allocation to it, and the process then
/// crashes in `flockfile`. Everything after the end mark is ignored instead.
enum HeapTrace {
    /// The library that carries the trace, where Debian and Ubuntu install it.
    static let library = "libc_malloc_debug.so.0"

    /// The environment of a child process that traces its allocations into `path`, or `nil` where
    /// the trace is not available (not glibc, or the library is missing).
    static func environment(tracingInto path: String) -> [String: String]? {
        #if os(Linux)
        let directories = ["/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib"]
        guard directories.contains(where: { FileManager.default.fileExists(atPath: "\($0)/\(library)") }) else {
            return nil
        }
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = library
        environment["MALLOC_TRACE"] = path
        return environment
        #else
        return nil
        #endif
    }

    /// Starts writing the trace; `false` when this process was not started with the library.
    static func start() -> Bool {
        guard let function = function(named: "mtrace") else { return false }
        function()
        return true
    }

    /// The size of the block that marks the end of the traced code: odd and large (about 2.7 MB),
    /// so that nothing else allocates exactly that much.
    static let endMarkSize = 0x2A_F3_1B

    /// Marks the end of the traced code with an allocation of ``endMarkSize`` bytes, freed at once.
    static func markEnd() {
        let mark = malloc(endMarkSize)
        blackHole(mark)
        free(mark)
    }

    /// Writes out the trace and standard output, then ends the process at once: without the exit
    /// handlers, one of which frees the C library's own memory while other threads may still use it.
    static func flushAndExit() -> Never {
        fflush(nil)
        _exit(0)
    }

    /// What a trace allocated and did not free.
    struct Live: Sendable {
        /// Blocks still allocated.
        var blocks = 0
        /// Bytes asked for by those blocks (the allocator adds its own header and rounding).
        var bytes = 0
    }

    /// Adds up the blocks a trace allocated before its end mark and did not free before it; `nil`
    /// when the trace has no end mark (it was cut short). Lines look like
    /// `@ caller + 0xADDRESS 0xSIZE` (allocated), `@ caller - 0xADDRESS` (freed), and a `<`
    /// then `>` pair for a `realloc`.
    static func live(inTrace text: String) -> Live? {
        var sizes: [UInt: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let operation = fields.firstIndex(where: { ["+", "-", "<", ">"].contains($0) }),
                operation + 1 < fields.count, let address = hexadecimal(fields[operation + 1])
            else { continue }
            switch fields[operation] {
            case "+", ">":
                guard operation + 2 < fields.count, let size = hexadecimal(fields[operation + 2]) else { continue }
                if size == endMarkSize {
                    return Live(blocks: sizes.count, bytes: sizes.values.reduce(0, +))
                }
                sizes[address] = Int(size)
            default:
                sizes[address] = nil
            }
        }
        return nil
    }

    private static func hexadecimal(_ field: Substring) -> UInt? {
        guard field.hasPrefix("0x") else { return nil }
        return UInt(field.dropFirst(2), radix: 16)
    }

    private typealias Function = @convention(c) () -> Void
    private typealias VersionedLookup =
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>
        ) -> UnsafeMutableRawPointer?

    /// `name` in the trace library. libc itself exports a `mtrace` that does nothing as the default
    /// version, so a plain `dlsym` finds that one; the library's is asked for by its version with
    /// `dlvsym` (looked up itself, since the C module does not declare it).
    private static func function(named name: String) -> Function? {
        #if os(Linux)
        guard let library = dlopen(library, RTLD_NOW | RTLD_NOLOAD),
            let lookup = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dlvsym"),
            let symbol = unsafeBitCast(lookup, to: VersionedLookup.self)(library, name, "GLIBC_2.2.5")
        else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
        #else
        return nil
        #endif
    }
}
