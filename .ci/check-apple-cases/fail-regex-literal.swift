// expect: a regex literal
func isBearer(_ header: String) -> Bool {
    header.contains(/^Bearer [A-Za-z0-9._~+\/-]+=*$/)
}
