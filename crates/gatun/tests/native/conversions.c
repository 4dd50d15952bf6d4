/* Integer parameters of every kind, for tests/linker_conversions.rs: each returns the number its
 * parameter holds as the C compiler sees it (widened to a 64-bit integer of the same
 * signedness), so a test can check the value C received after gatun converted an integer of
 * another kind. */
#include <stdint.h>

int64_t conv_i8(int8_t x) { return x; }
int64_t conv_u8(uint8_t x) { return x; }
int64_t conv_i16(int16_t x) { return x; }
int64_t conv_u16(uint16_t x) { return x; }
int64_t conv_i32(int32_t x) { return x; }
int64_t conv_u32(uint32_t x) { return x; }
int64_t conv_i64(int64_t x) { return x; }
uint64_t conv_u64(uint64_t x) { return x; }
