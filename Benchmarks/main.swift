import Foundation

// `swift run -c release Benchmarks [--quick] [--json PATH] [--only LIST]`
//
// Every figure is a ratio to a baseline measured in the same process, in the same run: absolute
// times drift on shared machines. Each scenario runs its arms (scenario and baselines) in
// interleaved rounds, warm-up rounds first; the table shows the median of the measured rounds
// with their minimum and maximum, and the ratio is the median of the round-by-round ratios.
//
// To profile one scenario repeatably, count instructions rather than time:
//   valgrind --tool=callgrind --toggle-collect='$s10Benchmarks12SigningLoopsO9authorize__*' \
//       .build/release/Benchmarks --quick --only fast

let options: Options
do {
    options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    Runner.progress("error: \(error)\n\n\(Options.usage)")
    exit(2)
}
if options.help {
    print(Options.usage)
    exit(0)
}
if let role = options.memoryProbe {
    exit(MemoryProbe.runChild(role))
}

let loadBefore = LoadAverage.now()
let outcome = Runner.runAll(options)
let loadAfter = LoadAverage.now()
print(Report.table(outcome.rows))
print(
    "\n\(ProcessInfo.processInfo.activeProcessorCount) processors; load average (1, 5, 15 min) "
        + "\(loadBefore) before the run, \(loadAfter) after it")
var problems = outcome.problems
if let path = options.jsonPath {
    do {
        try Report.json(outcome.rows, quick: options.quick, load: (loadBefore, loadAfter))
            .write(to: URL(fileURLWithPath: path))
        Runner.progress("wrote \(path)")
    } catch {
        problems.append("cannot write \(path): \(error)")
    }
}
let missed = outcome.rows.filter { $0.met == false }.map(\.name)
if !missed.isEmpty {
    print("goals missed: \(missed.joined(separator: ", "))")
}
for problem in problems {
    Runner.progress("error: \(problem)")
}
exit(problems.isEmpty ? 0 : 1)
