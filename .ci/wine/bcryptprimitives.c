/* A stand-in for Windows' bcryptprimitives.dll under Wine 8, which lacks ProcessPrng.
 *
 * Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll for
 * its random numbers (HashMap seeds); Debian 12's Wine 8 has no such export, so every Rust
 * program built for x86_64-pc-windows-gnu exits at start-up with status 53. This DLL exports
 * ProcessPrng and fills the buffer from RtlGenRandom (SystemFunction036 in advapi32.dll), which
 * Wine has. It is built by .ci/wine/build-shim and loaded from beside the test executables (the
 * runner .ci/wine/run prefers it over Wine's builtin with WINEDLLOVERRIDES). Never used on
 * Windows itself. */
#include <windows.h>

/* advapi32's RtlGenRandom, exported under this name. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Fills data[0..len) with random bytes; TRUE (1) always on Windows, here FALSE if
 * RtlGenRandom fails. RtlGenRandom takes a ULONG (32-bit) length, so larger requests are
 * split. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
