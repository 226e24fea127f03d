import Foundation

// A child process for the soak and crash-kill tests: one closure on a shared token file, sending
// requests to the stub until told to stop, and reporting what happened on standard output.
// Usage: RefreshWorker soak|kill|burst --base URL (--file PATH | --redis-port PORT) [options]; see
// WorkerOptions.

let options: WorkerOptions
do {
    options = try WorkerOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("RefreshWorker: \(error)\n".utf8))
    exit(64)
}

switch options.mode {
case .soak: await SoakRun(options: options).run()
case .kill: await KillRun(options: options).run()
case .burst: await BurstRun(options: options).run()
}
exit(0)
