//! `arena/*`: the heap arena against plain `Box` allocation (the baseline every pooled and
//! stack allocator is compared with).

use gatun::memory::{Arena, SegmentAllocator};

use crate::{repeat, Body, Row};

const SIZES: [usize; 2] = [8, 64];

/// `arena/confined/{8,64}`: a confined arena, one allocation, address taken, dropped;
/// `arena/box/{8,64}`: `Box<[u8; N]>`-equivalent heap allocation and drop.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for size in SIZES {
        rows.push(
            Row::new("arena", "confined", move || -> Body {
                Box::new(move |iters| {
                    repeat(iters, || {
                        let arena = Arena::confined();
                        let seg = arena.allocate(size, 8).expect("allocate");
                        seg.address()
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
        rows.push(
            Row::new("arena", "box", move || -> Body {
                Box::new(move |iters| {
                    repeat(iters, || {
                        let b = vec![0u8; size].into_boxed_slice();
                        std::hint::black_box(&b);
                        b.as_ptr() as usize
                    })
                })
            })
            .with_param("ELEM_SIZE", size),
        );
    }
    rows
}
