import Foundation

/// Counts the heap blocks and bytes that a stretch of code allocates and keeps, with glibc's
/// allocation trace (`mtrace`), which lives in `libc_malloc_debug.so.0` since glibc 2.34 and is
/// loaded into a child process with `LD_PRELOAD`.
///
/// The child calls ``start()`` and ``stop()`` around the code; every `malloc`, `realloc` and
/// `free` in between is written to the file named by `MALLOC_TRACE`, and ``live(inTrace:)`` adds
/// up what was allocated there and not freed.
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

    /// Stops writing the trace.
    static func stop() {
        function(named: "muntrace")?()
    }

    /// What a trace allocated and did not free.
    struct Live: Sendable {
        /// Blocks still allocated.
        var blocks = 0
        /// Bytes asked for by those blocks (the allocator adds its own header and rounding).
        var bytes = 0
    }

    /// Adds up the blocks a trace allocated and did not free. Lines look like
    /// `@ caller + 0xADDRESS 0xSIZE` (allocated), `@ caller - 0xADDRESS` (freed), and a `<`
    /// then `>` pair for a `realloc`.
    static func live(inTrace text: String) -> Live {
        var sizes: [UInt: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let operation = fields.firstIndex(where: { ["+", "-", "<", ">"].contains($0) }),
                operation + 1 < fields.count, let address = hexadecimal(fields[operation + 1])
            else { continue }
            switch fields[operation] {
            case "+", ">":
                guard operation + 2 < fields.count, let size = hexadecimal(fields[operation + 2]) else { continue }
                sizes[address] = Int(size)
            default:
                sizes[address] = nil
            }
        }
        return Live(blocks: sizes.count, bytes: sizes.values.reduce(0, +))
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
