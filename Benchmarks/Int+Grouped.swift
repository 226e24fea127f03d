/// Thousands separators for the figures people read.
extension Int {
    /// `100,000`.
    var grouped: String {
        let digits = String(self)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index).isMultiple(of: 3) { result.append(",") }
            result.append(digit)
        }
        return result
    }
}
