func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    let position = fraction * Double(sorted.count - 1)
    // check-apple: 32-bit safe (an index into `sorted`, below its count)
    let lower = Int(position.rounded(.down))
    let upper = Int(position.rounded(.up))  // check-apple: 32-bit safe (an index into `sorted`, below its count)
    return (sorted[lower] + sorted[upper]) / 2
}
