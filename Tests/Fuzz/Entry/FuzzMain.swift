import Foundation

// The libFuzzer entry point. Built only by Tests/Fuzz/run, in one module with the sources under
// test, so that their internal parsers are in reach; FUZZ_TARGET names the target to run.

#if FUZZ_STUB
private let targets = StubFuzzTargets.all
#elseif FUZZ_REDIS
private let targets = RedisFuzzTargets.all
#else
private let targets = LibraryFuzzTargets.all
#endif

private let selected: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? ""
    guard let target = targets.first(where: { $0.name == name }) else {
        let names = targets.map(\.name).joined(separator: ", ")
        FileHandle.standardError.write(Data("FUZZ_TARGET must be one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let findings = selected.check(data)
    if !findings.isEmpty {
        FileHandle.standardError.write(Data("\(selected.name): \(findings.joined(separator: "; "))\n".utf8))
        abort()
    }
    return 0
}
