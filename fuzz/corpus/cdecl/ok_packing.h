// expect: ok
#pragma pack(push, 1)
struct wire_header { uint8_t version; uint32_t length; uint16_t kind; };
#pragma pack(pop)
#pragma GCC visibility push(default)
#pragma once
struct __attribute__((packed, aligned(2))) reg { uint8_t a; uint16_t b; };
struct s { char c; } __attribute__((aligned));
