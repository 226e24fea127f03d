// expect: Task.sleep(for:)
// Task.sleep(for:) takes a Duration: iOS 16 / macOS 13 / tvOS 16 / watchOS 9.
func pause() async throws {
    try await Task.sleep(for: .seconds(1))
}
