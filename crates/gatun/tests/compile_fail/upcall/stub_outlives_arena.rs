// An upcall stub borrows its arena: it cannot outlive it.
use gatun::{Arena, FunctionDescriptor, Linker, Value, ValueLayout};

fn main() {
    let stub;
    {
        let arena = Arena::confined();
        stub = Linker::native()
            .upcall_stub(
                &FunctionDescriptor::of_void([ValueLayout::I32]),
                |_| Ok(Value::Void),
                &arena,
            )
            .unwrap();
    }
    let _ = stub.address();
}
