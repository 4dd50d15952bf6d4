/* Targets for the Windows capture tests (tests/win64_capture.rs): functions that leave the
 * thread's last error (GetLastError), its Winsock error (WSAGetLastError) and the C runtime's
 * errno set when they return, and nothing after the failing call that could change them.
 * Windows only (the build links ws2_32); empty elsewhere. */
#ifdef _WIN32
#include <winsock2.h>
#include <windows.h>
#include <errno.h>
#include <stdint.h>

/* Opens a file that does not exist: `which` 0 names a missing file in C:\windows
 * (ERROR_FILE_NOT_FOUND, 2), anything else a file in a missing directory
 * (ERROR_PATH_NOT_FOUND, 3). Returns -1 straight after the failing CreateFileW, or 0 if the
 * file unexpectedly opened. */
int32_t w64_open_missing(int32_t which) {
    const wchar_t *path = which == 0 ? L"C:\\windows\\gatun-no-such-file.txt"
                                     : L"C:\\gatun-no-such-directory\\no-such-file.txt";
    HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) return -1;
    CloseHandle(h);
    return 0;
}

/* socket() without WSAStartup: fails with WSANOTINITIALISED (10093); returns -1 straight
 * after it (0 if a socket was made, which is then closed). */
int32_t w64_socket_without_startup(void) {
    SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (s == INVALID_SOCKET) return -1;
    closesocket(s);
    return 0;
}

/* Sets errno to `err`, then the last error to `code`, and returns -1. */
int32_t w64_fail_with(uint32_t code, int32_t err) {
    errno = err;
    SetLastError(code);
    return -1;
}

/* Writes what the thread's states are on entry (out[0] = GetLastError(), out[1] =
 * WSAGetLastError(), out[2] = errno) and returns 0, changing none of them. */
int32_t w64_read_states(int32_t *out) {
    out[0] = (int32_t)GetLastError();
    out[1] = WSAGetLastError();
    out[2] = errno;
    return 0;
}

/* Calls cb(ctx) (which makes captured calls of its own), then sets the last error to `code`
 * and returns -1: a captured call in progress around a nested one. */
int32_t w64_fail_around(void (*cb)(void *), void *ctx, uint32_t code) {
    cb(ctx);
    SetLastError(code);
    return -1;
}
#endif
