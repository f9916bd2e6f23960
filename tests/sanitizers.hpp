// Test helper: QCHECK_TEST_ASAN is defined when the tests are built with AddressSanitizer (GCC
// says so with __SANITIZE_ADDRESS__, clang with __has_feature), for tests that cannot run there.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define QCHECK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QCHECK_TEST_ASAN 1
#endif
#endif

// QCHECK_TEST_TSAN likewise for ThreadSanitizer, which refuses threads started in a child forked
// from a process with threads.
#if defined(__SANITIZE_THREAD__)
#define QCHECK_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QCHECK_TEST_TSAN 1
#endif
#endif
