import HeapStatistics

/// The heap bytes the process keeps in use, where the allocator tells it (glibc 2.33 or later,
/// Apple's malloc, the thread or address sanitizer's allocator).
///
/// What a leak makes grow. Resident memory also grows with things that are not kept: the thread
/// sanitizer's shadow and records, each new thread's stack, and the free space the allocator keeps
/// in its arenas and seldom gives back to the system.
public enum HeapInUse {
    /// Bytes in use now, or 0 where the allocator does not tell.
    public static func bytes() -> Int { Int(heap_bytes_in_use()) }
}
