import Testing

@testable import RefreshQueue

/// A future's storage is used through an address worked out from the object's; it must be where
/// the compiler put the property, whatever the value type.
@Suite("Future storage layout")
struct FutureStorageLayoutTests {
    @Test func theStorageLiesWhereFuturesWorkOutItsAddress() {
        #expect(storageOffset(of: Future(value: 1)) == FutureStorage.offset)
        #expect(storageOffset(of: Future(value: "a string")) == FutureStorage.offset)
        #expect(storageOffset(of: Future(value: (1, 2, 3, 4, 5))) == FutureStorage.offset)
        #expect(storageOffset(of: Future<Void>(error: ExampleError(code: 1))) == FutureStorage.offset)
    }

    private func storageOffset<Value>(of future: Future<Value>) -> Int {
        let start = UnsafeRawPointer(Unmanaged.passUnretained(future).toOpaque())
        return withUnsafeMutablePointer(to: &future.storage) { UnsafeRawPointer($0) - start }
    }
}
