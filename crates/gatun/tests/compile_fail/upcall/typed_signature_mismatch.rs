// A typed upcall's closure must have exactly the signature's argument and return types.
use gatun::memory::Arena;
use gatun::Linker;

fn main() {
    let arena = Arena::confined();
    let _ = Linker::native()
        .upcall_typed::<unsafe extern "C" fn(i32) -> i32>(|x: i64| x, &arena);
}
