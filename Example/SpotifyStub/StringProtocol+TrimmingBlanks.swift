extension StringProtocol {
    /// The string without leading and trailing spaces and horizontal tabs (HTTP's "OWS").
    func trimmingBlanks() -> String {
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, first == " " || first == "\t" {
            scalars = scalars.dropFirst()
        }
        while let last = scalars.last, last == " " || last == "\t" {
            scalars = scalars.dropLast()
        }
        return String(String.UnicodeScalarView(scalars))
    }
}
