// expect: import Synchronization
#if canImport(Synchronization)
import Synchronization
#endif
