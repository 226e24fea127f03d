#ifndef HEAP_STATISTICS_H
#define HEAP_STATISTICS_H

#include <stddef.h>

/// The bytes the process's allocator has handed out and not taken back (blocks in use, including
/// those it mapped on their own), or 0 where the allocator does not tell: glibc 2.33 or later,
/// Apple's malloc and the allocator of the thread or address sanitizer tell.
///
/// Unlike resident memory, this does not grow with the sanitizer's shadow memory, with thread
/// stacks or with the free space the allocator keeps, so it shows what a program keeps rather than
/// how the allocator and the tools lay it out.
size_t heap_bytes_in_use(void);

#endif
