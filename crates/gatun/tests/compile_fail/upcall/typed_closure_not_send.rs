// A typed upcall's closure may run on any thread C chooses, so it must be Send + Sync:
// capturing an `Rc` is rejected (`upcall_typed_confined` takes it).
use std::rc::Rc;

use gatun::{Arena, Linker};

fn main() {
    let arena = Arena::confined();
    let counter = Rc::new(0);
    let _stub = Linker::native().upcall_typed(move |x: i32| x + *counter, &arena);
}
