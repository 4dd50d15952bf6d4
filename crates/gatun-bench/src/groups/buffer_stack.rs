//! `buffer_stack/*`: the seed table `BufferStackBench` (PR 24829 v6): a stack-backed frame
//! against a confined heap arena, per `ELEM_SIZE`.

use gatun::memory::{Arena, BufferStack, SegmentAllocator};

use crate::{repeat, Body, Row};

const ELEM_SIZES: [usize; 3] = [8, 16, 32];

/// `buffer_stack/buffer/{8,16,32}`: push a 64-byte frame (alignment 1) on a 128-byte
/// `BufferStack`, allocate `ELEM_SIZE` bytes (alignment 1), return the address, close.
/// `buffer_stack/confined/{8,16,32}`: a confined arena, allocate `ELEM_SIZE` bytes, return the
/// address, drop.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for size in ELEM_SIZES {
        rows.push(
            Row::new("buffer_stack", "buffer", move || -> Body {
                let stack = BufferStack::new(128, 1).expect("BufferStack");
                Box::new(move |iters| {
                    repeat(iters, || {
                        let frame = stack.push_frame(64, 1).expect("push_frame");
                        let address = frame.allocate(size, 1).expect("allocate").address();
                        frame.close().expect("close");
                        address
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
    }
    for size in ELEM_SIZES {
        rows.push(
            Row::new("buffer_stack", "confined", move || -> Body {
                Box::new(move |iters| {
                    repeat(iters, || {
                        let arena = Arena::confined();
                        let address = arena.allocate(size, 1).expect("allocate").address();
                        drop(arena);
                        address
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
    }
    rows
}
