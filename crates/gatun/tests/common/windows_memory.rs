//! `VirtualQuery` for the tests of executable memory on Windows: the type and protection of
//! the memory at an address, and the bytes of the process's execute-read views of sections.
//! Shared by the integration tests (through `common`) and the code module's unit tests
//! (through `#[path]`).

use std::ffi::c_void;

/// `MEMORY_BASIC_INFORMATION` (winnt.h, 64-bit).
#[repr(C)]
pub struct MemoryInfo {
    pub base: *mut c_void,
    pub allocation_base: *mut c_void,
    pub allocation_protect: u32,
    pub partition: u16,
    pub region_size: usize,
    pub state: u32,
    pub protect: u32,
    pub kind: u32,
}

pub const MEM_COMMIT: u32 = 0x1000;
pub const MEM_PRIVATE: u32 = 0x20000;
pub const MEM_MAPPED: u32 = 0x40000;
pub const PAGE_READWRITE: u32 = 0x04;
pub const PAGE_EXECUTE_READ: u32 = 0x20;

#[link(name = "kernel32")]
extern "system" {
    fn VirtualQuery(address: *const c_void, info: *mut MemoryInfo, size: usize) -> usize;
}

/// The region holding `address`, or `None` past the highest user address.
pub fn query(address: *const u8) -> Option<MemoryInfo> {
    // SAFETY: all-zero is a valid MEMORY_BASIC_INFORMATION (pointers and integers).
    let mut info: MemoryInfo = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is writable and its size is passed; any address may be queried.
    let n = unsafe { VirtualQuery(address.cast(), &mut info, std::mem::size_of::<MemoryInfo>()) };
    (n != 0 && info.region_size != 0).then_some(info)
}

/// Bytes of this process's committed execute-read views of sections (`MEM_MAPPED`,
/// `PAGE_EXECUTE_READ`: the code arena's chunks; loaded modules are `MEM_IMAGE`), walking the
/// address space.
pub fn execute_read_view_bytes() -> usize {
    let mut bytes = 0;
    let mut at = 0usize;
    while let Some(info) = query(at as *const u8) {
        if info.state == MEM_COMMIT && info.kind == MEM_MAPPED && info.protect == PAGE_EXECUTE_READ
        {
            bytes += info.region_size;
        }
        match (info.base as usize).checked_add(info.region_size) {
            Some(next) => at = next,
            None => break,
        }
    }
    bytes
}
