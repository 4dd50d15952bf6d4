// An upcall closure may run on any thread C chooses, so it must be Send + Sync: capturing an
// `Rc` is rejected.
use std::rc::Rc;

use gatun::{Arena, FunctionDescriptor, Linker, Value, ValueLayout};

fn main() {
    let arena = Arena::confined();
    let counter = Rc::new(0);
    let _stub = Linker::native().upcall_stub(
        &FunctionDescriptor::of_void([ValueLayout::I32]),
        move |_| {
            let _ = Rc::strong_count(&counter);
            Ok(Value::Void)
        },
        &arena,
    );
}
