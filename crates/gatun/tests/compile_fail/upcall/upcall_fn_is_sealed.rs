// A crate cannot implement `UpcallFn` for a type of its own: the trait is sealed, because its
// trampoline address is put into machine code.
use gatun::upcall::{UpcallArgs, UpcallFn};
use gatun::layout::ScalarKind;
use gatun::{Result, Value};

struct Local;

impl UpcallFn<unsafe extern "C" fn(i32) -> i32> for Local {
    fn trampoline(_: bool) -> usize {
        0xdead
    }
    fn call_values<'a>(&self, _: &UpcallArgs<'a>, _: Option<ScalarKind>) -> Result<Value<'a>> {
        Ok(Value::Void)
    }
}

fn main() {}
