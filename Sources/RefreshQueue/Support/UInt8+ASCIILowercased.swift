extension UInt8 {
    /// The byte with an ASCII capital letter made small; any other byte as it is. Comparing such
    /// bytes is how URL parsers and libcurl compare hosts: no Unicode case folding.
    var asciiLowercased: UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self) ? self | 0x20 : self
    }
}
