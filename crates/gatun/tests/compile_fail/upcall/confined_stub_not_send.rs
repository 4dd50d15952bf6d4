// A confined stub (closure not Send + Sync) stays on the thread that made it.
use gatun::{Arena, FunctionDescriptor, Linker, Value, ValueLayout};

fn main() {
    let stub = Linker::native()
        .upcall_stub_confined(
            &FunctionDescriptor::of_void([ValueLayout::I32]),
            |_| Ok(Value::Void),
            Arena::global(),
        )
        .unwrap();
    std::thread::spawn(move || drop(stub));
}
