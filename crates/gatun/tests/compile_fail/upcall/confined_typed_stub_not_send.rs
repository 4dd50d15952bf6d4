// A confined typed stub (closure not Send + Sync) stays on the thread that made it.
use std::rc::Rc;

use gatun::{Arena, Linker};

fn main() {
    let counter = Rc::new(0);
    let stub = Linker::native()
        .upcall_typed_confined(move |x: i32| x + *counter, Arena::global())
        .unwrap();
    std::thread::spawn(move || drop(stub));
}
