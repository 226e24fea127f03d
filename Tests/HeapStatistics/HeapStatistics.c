#include "HeapStatistics.h"

// Any C library header defines the library's identity (__GLIBC__ and its version on glibc).
#include <stdlib.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define HEAP_STATISTICS_FROM_SANITIZER 1
#endif
#endif

#if defined(HEAP_STATISTICS_FROM_SANITIZER)
// A sanitizer replaces malloc and answers glibc's statistics with zeros; its own allocator counts.
#include <sanitizer/allocator_interface.h>
#elif defined(__APPLE__)
#include <malloc/malloc.h>
#elif defined(__GLIBC__)
#include <malloc.h>
#endif

size_t heap_bytes_in_use(void) {
#if defined(HEAP_STATISTICS_FROM_SANITIZER)
    return __sanitizer_get_current_allocated_bytes();
#elif defined(__APPLE__)
    malloc_statistics_t statistics;
    malloc_zone_statistics(NULL, &statistics);
    return statistics.size_in_use;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}
