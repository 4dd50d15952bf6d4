//! `buffer_stack/*`: the seed table `BufferStackBench` (PR 24829 v6): a stack-backed frame
//! against a confined heap arena, per `ELEM_SIZE`.
//!
//! `ELEM_SIZE` is a const generic, so each row's loop is compiled for its size (JMH's JIT sees
//! the `@Param` value as a constant too).

use gatun::memory::{Arena, BufferStack, SegmentAllocator};

use crate::{repeat, Body, Row};

/// `buffer_stack/buffer/{8,16,32}`: push a 64-byte frame (alignment 1) on a 128-byte
/// `BufferStack`, allocate `ELEM_SIZE` bytes (alignment 1), return the address, close.
/// `buffer_stack/confined/{8,16,32}`: a confined arena, allocate `ELEM_SIZE` bytes, return the
/// address, drop.
pub fn rows() -> Vec<Row> {
    vec![
        buffer::<8>(),
        buffer::<16>(),
        buffer::<32>(),
        confined::<8>(),
        confined::<16>(),
        confined::<32>(),
    ]
}

fn buffer<const ELEM_SIZE: usize>() -> Row {
    Row::new("buffer_stack", "buffer", || -> Body {
        let stack = BufferStack::new(128, 1).expect("BufferStack");
        Box::new(move |iters| {
            repeat(iters, || {
                let frame = stack.push_frame(64, 1).expect("push_frame");
                let address = frame.allocate(ELEM_SIZE, 1).expect("allocate").address();
                frame.close().expect("close");
                address
            })
        })
    })
    .with_param("ELEM_SIZE", ELEM_SIZE)
}

fn confined<const ELEM_SIZE: usize>() -> Row {
    Row::new("buffer_stack", "confined", || -> Body {
        Box::new(|iters| {
            repeat(iters, || {
                let arena = Arena::confined();
                let address = arena.allocate(ELEM_SIZE, 1).expect("allocate").address();
                drop(arena);
                address
            })
        })
    })
    .with_param("ELEM_SIZE", ELEM_SIZE)
}
